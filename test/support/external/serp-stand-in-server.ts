/**
 * The plumbing the SERP stand-ins (serper-stand-in.ts, dataforseo-stand-in.ts) share: a
 * node:http server on a free local port that records every request, the faults both vendors can
 * show (a call that never answers, a body that is not JSON, a body far over any size limit), and
 * the hostile field values a search API can relay from the web pages it indexes. It is not a
 * vendor: each stand-in decides what its vendor would answer.
 */
import { createServer } from "node:http";
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What a stand-in can be told to do instead of answering normally. */
export type SerpStandInFault =
  /** Accept the request and never answer (the client's deadline must fire). */
  | "hang"
  /** HTTP 401, as for a revoked key. */
  | "unauthorized"
  /** HTTP 429 with `Retry-After` (the stand-in's `retryAfter`). */
  | "rate-limited"
  /** HTTP 500. */
  | "server-error"
  /** HTTP 200 with a body cut off mid-JSON. */
  | "malformed-json"
  /** HTTP 200, valid JSON, but not the vendor's documented shape. */
  | "wrong-shape"
  /** HTTP 200 with the vendor's way of saying "no results". */
  | "empty"
  /** HTTP 200 streaming `oversizedBytes` of JSON without a Content-Length. */
  | "oversized"
  /** HTTP 200, the documented shape, with hostile values mixed into the real results. */
  | "hostile";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON, or the raw text when it was not JSON. */
  body: unknown;
}

export type StandInHandler = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

/** Hostile values as a SERP relays them from the pages it indexed. */
export const HOSTILE = {
  scriptTitle: `<script>alert("pwned")</script><b>Descaling</b> &amp; <i>cleaning</i> guide`,
  nulTitle: "Citric\u0000 acid\u0007 descaling\u0000 guide",
  nulSnippet: "Mix 30 g\u0000 of citric acid\u0000 per litre.\u001b[31m",
  /** About 100 KB of text in one snippet. */
  hugeSnippet: "limescale builds up in the boiler ".repeat(3_100),
  javascriptUrl: "javascript:alert(document.cookie)",
  dataUrl: "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
  htmlQuestion: `<img src=x onerror="alert(1)">Is vinegar <b>safe</b> for espresso machines?`,
  htmlRelated: `<a href="javascript:alert(1)">descale with lemon juice</a>`,
} as const;

export class SerpStandInServer {
  readonly requests: RecordedRequest[] = [];

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async listen(handler: StandInHandler): Promise<SerpStandInServer> {
    let standIn: SerpStandInServer | undefined;
    const server = createServer((req, res) => {
      readBody(req)
        .then(async (text) => {
          const recorded: RecordedRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: parseJson(text) };
          standIn!.requests.push(recorded);
          await handler(recorded, res);
        })
        .catch(() => {
          if (!res.headersSent) res.writeHead(500).end();
          else res.destroy();
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    standIn = new SerpStandInServer(server, `http://127.0.0.1:${port}`);
    return standIn;
  }

  /** Closes the server and every connection still open (hung calls included). */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** A JSON body cut off part way, as a proxy that dropped the connection or a vendor bug sends. */
export function sendTruncatedJson(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  const cut = text.slice(0, Math.floor(text.length / 2));
  res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(cut) });
  res.end(cut);
}

/**
 * Streams `totalBytes` of a JSON list in 64 KB chunks with no Content-Length, so only a reader
 * that counts bytes as they arrive can stop it. Stops early when the client hangs up.
 */
export async function streamOversized(res: ServerResponse, prefix: string, totalBytes: number): Promise<void> {
  res.writeHead(200, { "Content-Type": "application/json; charset=utf-8" });
  res.on("error", () => undefined);
  const chunk = Buffer.from(`{"title":"${"padding ".repeat(8_190)}"},`);
  res.write(prefix);
  let sent = prefix.length;
  while (sent < totalBytes && !res.destroyed) {
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          resolve();
        };
        res.on("drain", done);
        res.on("close", done);
      });
    }
    sent += chunk.length;
  }
  if (!res.destroyed) res.end(`{"title":"end"}]}`);
}

/** The value of a header the client sent, or undefined. */
export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
