/**
 * fetch for APIs we do not control: a hard deadline, a cap on the bytes we read (a hostile or
 * broken vendor can send gigabytes; we stop reading at the cap and cancel the stream, whatever
 * Content-Length claims), and every failure as an ExternalApiError of one kind. Nothing here
 * retries: the resilience policies (policies.ts) decide that on the error's kind.
 */
import { ExternalApiError, kindOfStatus, parseRetryAfter } from "./errors.js";

/** Default cap on a response body: search APIs answer in tens of kilobytes. */
export const DEFAULT_MAX_RESPONSE_BYTES = 2 * 1024 * 1024;

export interface BoundedFetchOptions {
  /** The provider's name, for errors. */
  provider: string;
  /** Cancels the call (the caller's deadline, or the request going away). */
  signal: AbortSignal;
  /** Largest body read, in bytes. Default DEFAULT_MAX_RESPONSE_BYTES. */
  maxBytes?: number;
}

export interface BoundedResponse {
  status: number;
  headers: Headers;
  /** The body, read whole (it fit under the cap). */
  body: Uint8Array;
  text(): string;
  /** The body as JSON; BAD_RESPONSE when it is not. */
  json(): unknown;
}

/**
 * Sends the request and reads the whole body under the cap. A non-2xx status is an
 * ExternalApiError of the status's kind (Retry-After honoured for 429 and 503); a 2xx body is
 * returned for the caller to check against the vendor's documented shape.
 */
export async function boundedFetch(url: string, init: RequestInit, options: BoundedFetchOptions): Promise<BoundedResponse> {
  const { provider, signal } = options;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal, redirect: "error" });
  } catch (error) {
    throw networkError(provider, error, signal);
  }
  const body = await readCapped(response, maxBytes, provider, signal);
  if (response.status < 200 || response.status >= 300) {
    const kind = kindOfStatus(response.status);
    const retryAfterMs = kind === "RATE_LIMITED" || response.status === 503 ? parseRetryAfter(response.headers.get("retry-after")) : undefined;
    throw new ExternalApiError(kind, provider, describeStatus(response.status), retryAfterMs, response.status);
  }
  return {
    status: response.status,
    headers: response.headers,
    body,
    text: () => new TextDecoder().decode(body),
    json: () => {
      try {
        return JSON.parse(new TextDecoder().decode(body)) as unknown;
      } catch {
        throw new ExternalApiError("BAD_RESPONSE", provider, "answered with something that is not JSON", undefined, response.status);
      }
    },
  };
}

/** Reads at most `maxBytes`; more is TOO_LARGE and the rest of the stream is cancelled unread. */
export async function readCapped(response: Response, maxBytes: number, provider: string, signal: AbortSignal): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new ExternalApiError("TOO_LARGE", provider, `answered with ${declared} bytes, more than the ${maxBytes} this call reads`, undefined, response.status);
  }
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new ExternalApiError("TOO_LARGE", provider, `answered with more than the ${maxBytes} bytes this call reads`, undefined, response.status);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof ExternalApiError) throw error;
    throw networkError(provider, error, signal);
  } finally {
    reader.releaseLock();
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

function networkError(provider: string, error: unknown, signal: AbortSignal): ExternalApiError {
  if (signal.aborted || (error as Error)?.name === "AbortError" || (error as Error)?.name === "TimeoutError") {
    return new ExternalApiError("TIMEOUT", provider, "did not answer in time");
  }
  return new ExternalApiError("UPSTREAM_ERROR", provider, "could not be reached (connection refused, reset or DNS failure)");
}

function describeStatus(status: number): string {
  switch (kindOfStatus(status)) {
    case "UNAUTHORIZED":
      return `refused the credentials (HTTP ${status}): check the API key`;
    case "RATE_LIMITED":
      return `is rate limiting these calls (HTTP ${status})`;
    case "TIMEOUT":
      return `timed out (HTTP ${status})`;
    case "UPSTREAM_ERROR":
      return `is failing (HTTP ${status})`;
    default:
      return `refused the request (HTTP ${status})`;
  }
}
