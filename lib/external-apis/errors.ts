/**
 * What a failed call to an API we do not control means to the caller. Serper, Perplexity,
 * DataForSEO and Slack each fail in their own words (HTTP statuses, `{ ok: false, error }`,
 * `status_code` inside a 200); the code that calls them turns every failure into one of these
 * kinds, so retries, breakers and provider reports decide on the kind and never on a vendor's
 * message. The message is one line a user can act on, never a key, a body or a stack.
 */

export type ExternalFailureKind =
  /** No answer within the call's time budget. */
  | "TIMEOUT"
  /** 401/403, `invalid_auth`, `not_authed`: the key is wrong, revoked or lacks a scope. */
  | "UNAUTHORIZED"
  /** 429 or a vendor's rate-limit error; `retryAfterMs` when the vendor said when. */
  | "RATE_LIMITED"
  /** 5xx, connection refused or reset: the vendor is failing. */
  | "UPSTREAM_ERROR"
  /** The vendor answered something we cannot read: not JSON, or not the documented shape. */
  | "BAD_RESPONSE"
  /** The body was larger than the call's size limit; it was cut off unread. */
  | "TOO_LARGE"
  /** We sent something the vendor refused (400/422): a bug on our side or a query it rejects. */
  | "BAD_REQUEST";

export class ExternalApiError extends Error {
  /** Whether trying again later may succeed without anyone changing anything. */
  readonly retryable: boolean;

  constructor(
    readonly kind: ExternalFailureKind,
    /** The provider's name ("serper", "slack", …), for messages and logs. */
    readonly provider: string,
    message: string,
    /** How long the vendor asked us to wait (Retry-After), when it said. */
    readonly retryAfterMs?: number,
    /** The HTTP status, when there was one. */
    readonly httpStatus?: number,
  ) {
    super(`${provider}: ${message}`);
    this.name = "ExternalApiError";
    this.retryable = kind === "TIMEOUT" || kind === "RATE_LIMITED" || kind === "UPSTREAM_ERROR";
  }
}

/** The longest wait a vendor's Retry-After may impose on us; longer asks are treated as this. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Retry-After as milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3), bounded to
 * [0, MAX_RETRY_AFTER_MS]; undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Math.min(MAX_RETRY_AFTER_MS, Number(text) * 1000);
  if (text.length > 64) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, at - now));
}

/** The kind an HTTP status means (for statuses that are failures). */
export function kindOfStatus(status: number): ExternalFailureKind {
  if (status === 401 || status === 403) return "UNAUTHORIZED";
  if (status === 429) return "RATE_LIMITED";
  if (status === 408 || status === 504) return "TIMEOUT";
  if (status >= 500) return "UPSTREAM_ERROR";
  return "BAD_REQUEST";
}
