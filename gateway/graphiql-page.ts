/**
 * The offline GraphiQL page, served compressed. The page bundles GraphiQL itself (no CDN, so it
 * works offline) and weighs about 9 MB; sent as it is on every load, it is most of what a
 * developer's browser downloads from us (Brotli: about 1.9 MB). It is rendered on the first
 * browser visit by the gateway runtime itself (so it is exactly the page Yoga would serve),
 * compressed once with Brotli and gzip (a few hundred milliseconds, not paid at start-up), and
 * answered with an ETag so a reload costs a 304. It carries the dev token in its default headers,
 * so it is `private`: no shared cache may keep it.
 */
import type http from "node:http";
import { compressBody, sendCompressed, type CompressedBody } from "./compressed-body.js";

export interface GraphiQLPage {
  /** Whether this request is a browser asking for the page (a GET that accepts HTML). */
  wants(request: http.IncomingMessage): boolean;
  serve(request: http.IncomingMessage, response: http.ServerResponse): Promise<void>;
}

export function graphiQLPage(render: () => Promise<Response>): GraphiQLPage {
  let prepared: Promise<CompressedBody> | null = null;
  const prepare = async (): Promise<CompressedBody> => compressBody(Buffer.from(await (await render()).arrayBuffer()));

  return {
    wants: (request) => request.method === "GET" && (request.headers.accept ?? "").includes("text/html"),
    async serve(request, response) {
      prepared ??= prepare().catch((error: unknown) => {
        prepared = null;
        throw error;
      });
      sendCompressed(request, response, await prepared, { "content-type": "text/html; charset=utf-8", "cache-control": "private, no-cache", vary: "Accept, Accept-Encoding" });
    },
  };
}
