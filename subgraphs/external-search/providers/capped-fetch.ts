/**
 * A `fetch` to hand to a vendor SDK (the `openai` package, `@slack/web-api`) so that its
 * responses are read under our size cap. Neither SDK bounds a body itself: both accept a custom
 * fetch, so this one reads the whole body with readCapped (stopping and cancelling the stream at
 * the cap, whatever Content-Length says) and gives the SDK a new Response of the bytes read.
 * An oversized body becomes ExternalApiError TOO_LARGE, thrown from inside the SDK's call: each
 * client unwraps it from the SDK's connection-error class.
 */
import { readCapped } from "../../../lib/external-apis/bounded-fetch.js";

export interface CappedFetchOptions {
  provider: string;
  maxBytes: number;
  /** The caller's deadline, combined with whatever signal the SDK passes. */
  signal: AbortSignal;
  /** Told each response's status before its body is read (Slack's client hides some statuses). */
  onStatus?: (status: number) => void;
}

// Statuses whose Response may not carry a body (the Response constructor throws otherwise).
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

export function cappedFetch(options: CappedFetchOptions) {
  const { provider, maxBytes, onStatus } = options;
  return async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const signal = init?.signal ? AbortSignal.any([init.signal, options.signal]) : options.signal;
    // Redirects are refused: a vendor API that redirects is misconfigured or hijacked, and a
    // redirect would carry our Authorization header to wherever it points.
    const response = await fetch(url, { ...init, signal, redirect: "error" });
    onStatus?.(response.status);
    // readCapped allocates a fresh ArrayBuffer for the body (never a SharedArrayBuffer).
    const body = (await readCapped(response, maxBytes, provider, signal)) as Uint8Array<ArrayBuffer>;
    return new Response(NULL_BODY_STATUSES.has(response.status) ? null : body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
