/**
 * The offline GraphiQL page, served compressed. The page bundles GraphiQL itself (no CDN, so it
 * works offline) and weighs about 9 MB; sent as it is on every load, it is most of what a
 * developer's browser downloads from us (Brotli: about 1.9 MB). It is rendered on the first
 * browser visit by the gateway runtime itself (so it is exactly the page Yoga would serve),
 * compressed once with Brotli and gzip (a few hundred milliseconds, not paid at start-up), and
 * answered with an ETag so a reload costs a 304. It carries the dev token in its default headers,
 * so it is `private`: no shared cache may keep it.
 */
import { createHash } from "node:crypto";
import type http from "node:http";
import { brotliCompressSync, constants as zlibConstants, gzipSync } from "node:zlib";

export interface GraphiQLPage {
  /** Whether this request is a browser asking for the page (a GET that accepts HTML). */
  wants(request: http.IncomingMessage): boolean;
  serve(request: http.IncomingMessage, response: http.ServerResponse): Promise<void>;
}

interface PreparedPage {
  variants: Record<"br" | "gzip" | "identity", Buffer>;
  etag: string;
}

export function graphiQLPage(render: () => Promise<Response>): GraphiQLPage {
  let prepared: Promise<PreparedPage> | null = null;
  const prepare = async (): Promise<PreparedPage> => {
    const rendered = await render();
    const html = Buffer.from(await rendered.arrayBuffer());
    return {
      variants: {
        br: brotliCompressSync(html, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 9, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: html.length } }),
        gzip: gzipSync(html, { level: 9 }),
        identity: html,
      },
      etag: `"${createHash("sha256").update(html).digest("base64url").slice(0, 27)}"`,
    };
  };

  return {
    wants: (request) => request.method === "GET" && (request.headers.accept ?? "").includes("text/html"),
    async serve(request, response) {
      prepared ??= prepare().catch((error: unknown) => {
        prepared = null;
        throw error;
      });
      const { variants, etag } = await prepared;
      const headers: Record<string, string> = {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "private, no-cache",
        etag,
        vary: "Accept, Accept-Encoding",
      };
      if (request.headers["if-none-match"] === etag) {
        response.writeHead(304, headers);
        response.end();
        return;
      }
      const accepted = String(request.headers["accept-encoding"] ?? "");
      const encoding = /\bbr\b/.test(accepted) ? "br" : /\bgzip\b/.test(accepted) ? "gzip" : "identity";
      const body = variants[encoding];
      response.writeHead(200, { ...headers, ...(encoding !== "identity" ? { "content-encoding": encoding } : {}), "content-length": String(body.length) });
      response.end(body);
    },
  };
}
