/**
 * Bodies the gateway serves as files (the GraphiQL page, the web app's build): compressed once,
 * with Brotli and gzip, when prepared, and tagged with an ETag; each request then gets the
 * encoding it accepts, or a 304 when its copy is current, at no compression cost.
 */
import { createHash } from "node:crypto";
import type http from "node:http";
import { brotliCompressSync, constants as zlibConstants, gzipSync } from "node:zlib";

export interface CompressedBody {
  variants: Partial<Record<"br" | "gzip", Buffer>> & { identity: Buffer };
  etag: string;
}

/** Prepares `body`; `compress: false` for what is small or already compressed (images, fonts). */
export function compressBody(body: Buffer, compress = true): CompressedBody {
  return {
    variants: {
      identity: body,
      ...(compress
        ? {
            br: brotliCompressSync(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 9, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
            gzip: gzipSync(body, { level: 9 }),
          }
        : {}),
    },
    etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`,
  };
}

/** Answers with `body` (its ETag added to `headers`): 304 when the client's copy is current, else the best encoding it accepts. */
export function sendCompressed(request: http.IncomingMessage, response: http.ServerResponse, body: CompressedBody, headers: Record<string, string>): void {
  const sent: Record<string, string> = { ...headers, etag: body.etag };
  if (request.headers["if-none-match"] === body.etag) {
    response.writeHead(304, sent);
    response.end();
    return;
  }
  const accepted = String(request.headers["accept-encoding"] ?? "");
  const encoding = body.variants.br && /\bbr\b/.test(accepted) ? "br" : body.variants.gzip && /\bgzip\b/.test(accepted) ? "gzip" : "identity";
  const bytes = body.variants[encoding]!;
  if (encoding !== "identity") sent["content-encoding"] = encoding;
  sent["content-length"] = String(bytes.length);
  response.writeHead(200, sent);
  response.end(request.method === "HEAD" ? undefined : bytes);
}
