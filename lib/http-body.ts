/**
 * Request bodies read with a bound, shared by the gateway's HTTP endpoints and every subgraph.
 *
 * A body over the limit is refused with 413 and `connection: close`, and the connection is
 * closed once that answer is out. Why closing matters: the client (for a subgraph, the
 * gateway's pooled keep-alive connection) may still be sending the rest of the body. Answering
 * and leaving the connection open left those unread bytes in front of the next request on the
 * same connection: the gateway's next call to that subgraph, from any organization, then waited
 * for an answer that never came and failed SUBGRAPH_UNAVAILABLE (issue 19, defect 5).
 */
import type http from "node:http";

/** The request body limit of the gateway and the subgraphs (docs/security.md: "request bodies"). */
export const MAX_REQUEST_BODY_BYTES = 16 * 1024 * 1024;

/** Room in an upload's GraphQL body for the mutation's text and the other input fields around the base64 file. */
export const UPLOAD_OVERHEAD_BYTES = 64 * 1024;

/**
 * The largest file whose `uploadDocument` body (the file as base64, 4 bytes per 3, plus the
 * mutation around it) fits the request body limit: a larger DOCUMENT_MAX_BYTES would admit files
 * that no upload can carry (12 MiB, the earlier maximum, is 16 MiB of base64 alone).
 */
export function largestUploadableDocument(maxBodyBytes = MAX_REQUEST_BODY_BYTES): number {
  return Math.floor((maxBodyBytes - UPLOAD_OVERHEAD_BYTES) / 4) * 3;
}

/** Resolves with the whole body, or with null as soon as it passes `limit` bytes (the rest is never read). */
export function readBoundedBody(request: http.IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: Buffer | null, error?: Error) => {
      request.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
      if (error) reject(error);
      else resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.pause();
        return finish(null);
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish(Buffer.concat(chunks, size));
    const onError = (error: Error) => finish(null, error);
    // A client that goes before the end: settled whether or not Node reports it as an error, so
    // nothing waits on (and holds a place for) a body that will never end. One that went before
    // this was called (while its caller was being admitted) has had all its events already: its
    // request is destroyed, even with every byte received, and will never emit another.
    const onClose = () => finish(null, new Error("The client went away before the body ended."));
    request.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
    if (request.destroyed) onClose();
  });
}

/** True when the request declares a Content-Length over `limit`: it can be refused before a byte of its body is read. */
export function declaresMoreThan(request: http.IncomingMessage, limit: number): boolean {
  const declared = Number(request.headers["content-length"] ?? NaN);
  return Number.isFinite(declared) && declared > limit;
}

/**
 * Whether the request declares a Content-Length of at most `limit`: a body refused before it is
 * read may then be drained on a kept connection; one not declared (chunked) or declared larger is
 * cut after the answer instead of read to whatever end the client chooses.
 */
export function declaresAtMost(request: http.IncomingMessage, limit: number): boolean {
  const declared = Number(request.headers["content-length"] ?? NaN);
  return Number.isFinite(declared) && declared <= limit;
}

/** What a refused body is told, at the gateway (request-body-limit.ts) and at every subgraph. */
export function oversizedBodyMessage(limit: number): string {
  return `The request body is larger than ${limit.toLocaleString("en-US")} bytes, the most accepted. Send less at once (split the request).`;
}

/**
 * Answers 413 with a coded GraphQL error and closes the connection after it, so no unread rest of
 * the body is ever taken for the next request on that connection.
 */
export function refuseOversizedBody(response: http.ServerResponse, limit: number, headers: Record<string, string> = {}, message?: string): void {
  const body = JSON.stringify({
    errors: [
      {
        message: message ?? oversizedBodyMessage(limit),
        extensions: { code: "REQUEST_ENTITY_TOO_LARGE", maxBytes: limit },
      },
    ],
  });
  response.shouldKeepAlive = false;
  response.writeHead(413, { "content-type": "application/json; charset=utf-8", connection: "close", ...headers });
  response.end(body, () => response.socket?.destroySoon());
}
