/**
 * The plumbing the vendor stand-ins share: a node:http server on an ephemeral loopback port, the
 * request body read whole, the faults every vendor can show (a request left hanging until the
 * client gives up, an answer bigger than any client's cap, sent in chunks without a
 * Content-Length so the cap is met while reading), and a close() that ends hanging requests and
 * open sockets so a test run leaves nothing behind. Each stand-in (perplexity-stand-in.ts,
 * slack-stand-in.ts) speaks its vendor's protocol on top of this; none of them is the vendor.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** Failures a test can switch on; each stand-in answers them in its vendor's own words. */
export type VendorFault =
  /** Never answers: the client's deadline must end the call. */
  | "hang"
  /** The credentials are refused (Perplexity: HTTP 401; Slack: 200 with ok:false invalid_auth). */
  | "unauthorized"
  /** HTTP 429 with Retry-After (`retryAfterSeconds`). */
  | "rate-limited"
  /** HTTP 500. */
  | "internal"
  /** HTTP 200 with a JSON content type and a body cut off mid-object. */
  | "malformed-json"
  /** A well-formed answer with nothing in it. */
  | "empty"
  /** A well-formed answer of `oversizedBytes` bytes. */
  | "oversized"
  /** A well-formed answer whose fields carry HTML, javascript: URLs and NUL characters. */
  | "hostile";

export interface RecordedVendorRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  /** The raw body as received. */
  rawBody: string;
}

export type VendorHandler = (request: IncomingMessage, rawBody: string, response: ServerResponse) => void;

export class StandInServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly hanging = new Set<ServerResponse>();

  private constructor(private readonly port: number, server: Server) {
    this.server = server;
  }

  /** Starts listening on 127.0.0.1 and an ephemeral port. */
  static async start(handler: VendorHandler): Promise<StandInServer> {
    let standIn: StandInServer | undefined;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => handler(request, Buffer.concat(chunks).toString("utf8"), response));
    });
    server.on("connection", (socket) => {
      standIn?.sockets.add(socket);
      socket.on("close", () => standIn?.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    standIn = new StandInServer((server.address() as AddressInfo).port, server);
    return standIn;
  }

  /** http://127.0.0.1:<port> (no trailing slash). */
  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Keeps the request open unanswered until the client aborts it or close() runs. */
  hang(response: ServerResponse): void {
    this.hanging.add(response);
    response.on("close", () => this.hanging.delete(response));
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(text)), ...headers });
  response.end(text);
}

/** JSON whose only padding is `padding` repeated inside `wrap`'s one string: valid, and too big. */
export function sendOversizedJson(response: ServerResponse, bytes: number, wrap: (padding: string) => unknown): void {
  // Chunked, no Content-Length: the client cannot refuse it up front and must count while reading.
  response.writeHead(200, { "content-type": "application/json; charset=utf-8" });
  const text = JSON.stringify(wrap("x".repeat(Math.max(0, bytes))));
  const chunkSize = 64 * 1024;
  let offset = 0;
  const writeMore = () => {
    while (offset < text.length) {
      const chunk = text.slice(offset, offset + chunkSize);
      offset += chunkSize;
      // The client may stop reading at its cap and reset the connection: stop writing then.
      if (response.destroyed) return;
      if (!response.write(chunk)) {
        response.once("drain", writeMore);
        return;
      }
    }
    response.end();
  };
  response.on("error", () => undefined);
  writeMore();
}

/** A JSON body cut off mid-object, with a JSON content type. */
export function sendMalformedJson(response: ServerResponse, prefixOf: unknown): void {
  const text = JSON.stringify(prefixOf);
  const cut = text.slice(0, Math.max(1, Math.floor(text.length / 2)));
  response.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(cut)) });
  response.end(cut);
}

export function bearerToken(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  const match = typeof header === "string" ? /^Bearer (\S+)$/.exec(header) : null;
  return match?.[1];
}
