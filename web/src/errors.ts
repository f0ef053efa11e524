/**
 * Errors a person can read. Every page shows what went wrong and what to do, never a blank page:
 * the gateway down, a token refused (401), a rate limit (429, with when to retry), a GraphQL
 * error with its code, and (in search) a provider that failed, from the provider's own report.
 *
 * The gateway refuses some requests before GraphQL runs (a spent rate limit at the request's
 * start, a token that does not verify): Apollo Client then reports a ServerError with the status
 * and the body as text. Others come back as GraphQL errors (a rate limit charged by the
 * operation's cost, before execution). Both carry the same `extensions` (code, retryAfterSeconds),
 * so both read the same here.
 */
import { CombinedGraphQLErrors, ServerError, ServerParseError } from "@apollo/client/errors";

/** What the person can do about it, which ErrorMessage offers. */
export type ErrorAction = "retry" | "token";

export interface ReadableError {
  title: string;
  detail: string;
  /** The machine code, when the gateway gave one (UNAUTHENTICATED, RATE_LIMITED, …). */
  code?: string;
  /** Seconds until a rate limit lets the next request through, when the gateway said. */
  retryAfterSeconds?: number;
  action?: ErrorAction;
}

export interface ErrorContext {
  /** Now, in epoch milliseconds (tests pass a fixed one). */
  now?: number;
  /** The current token's `exp` (epoch seconds), to say "expired" rather than "refused" when it has. */
  tokenExpiresAt?: number | null;
}

interface GraphQLErrorShape {
  message?: unknown;
  extensions?: Record<string, unknown> | null;
}

/** Whole seconds from a Retry-After header (seconds or an HTTP date) or `extensions.retryAfterSeconds`; null for anything else. */
export function retryAfterSeconds(value: unknown, now = Date.now()): number | null {
  if (typeof value === "number") return Number.isFinite(value) && value > 0 ? Math.ceil(value) : null;
  if (typeof value !== "string" || value.trim() === "") return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds > 0 ? Math.ceil(seconds) : null;
  const date = Date.parse(value);
  return Number.isFinite(date) && date > now ? Math.ceil((date - now) / 1000) : null;
}

/** "in 42 s" or "in 3 min", and the clock time it is over. */
export function retryPhrase(seconds: number, now = Date.now()): string {
  const wait = seconds < 90 ? `${seconds} s` : `${Math.ceil(seconds / 60)} min`;
  const at = new Date(now + seconds * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  return `Try again in ${wait} (at ${at}).`;
}

/** The first GraphQL error in a refused answer's body, if the body is one. */
function firstErrorOfBody(bodyText: string | undefined): GraphQLErrorShape | undefined {
  if (!bodyText) return undefined;
  try {
    const body = JSON.parse(bodyText) as { errors?: unknown };
    const first = Array.isArray(body?.errors) ? body.errors[0] : undefined;
    return first && typeof first === "object" ? (first as GraphQLErrorShape) : undefined;
  } catch {
    return undefined;
  }
}

function codeOf(error: GraphQLErrorShape | undefined): string | undefined {
  const code = error?.extensions?.code;
  return typeof code === "string" && code ? code : undefined;
}

function tokenRefused(code: string, context: ErrorContext): ReadableError {
  const now = context.now ?? Date.now();
  const expiresAt = context.tokenExpiresAt;
  const expired = typeof expiresAt === "number" && Number.isFinite(expiresAt) && expiresAt * 1000 <= now;
  return {
    title: expired ? "Your token has expired" : "Your token was refused",
    detail: expired
      ? `It expired at ${new Date(expiresAt * 1000).toLocaleString()}. Enter a new token in the token field (get one with npm run token).`
      : "It has expired or is not valid. Enter a new token in the token field (get one with npm run token).",
    code,
    action: "token",
  };
}

function rateLimited(code: string, seconds: number | null, context: ErrorContext): ReadableError {
  const now = context.now ?? Date.now();
  return {
    title: "Too many requests",
    detail: `You reached your rate limit. ${seconds ? retryPhrase(seconds, now) : "Try again in a moment."}`,
    code,
    ...(seconds ? { retryAfterSeconds: seconds } : {}),
    action: "retry",
  };
}

/** The GraphQL errors' messages, at most 500 characters. */
function messagesOf(errors: readonly GraphQLErrorShape[]): string {
  return errors
    .map((error) => (typeof error.message === "string" ? error.message : ""))
    .filter(Boolean)
    .join(" · ")
    .slice(0, 500);
}

/** What browsers say when no answer came (Chromium, Firefox, Safari; a lazy page's script; upload.ts). Other TypeErrors are bugs, not the network. */
const NO_ANSWER = /fetch|network|load failed|import|could not reach/i;
/** A lazy page's files that did not load: Vite's preloader throws a plain Error for its CSS ("Unable to preload CSS for …"). */
const PAGE_FILES_NOT_LOADED = /^Unable to preload (CSS|JS) for |dynamically imported module|Importing a module script failed/;

export function readableError(error: unknown, context: ErrorContext = {}): ReadableError {
  const now = context.now ?? Date.now();
  if (ServerError.is(error)) {
    const first = firstErrorOfBody(error.bodyText);
    const code = codeOf(first);
    const status = error.statusCode;
    if (status === 401 || code === "UNAUTHENTICATED") return tokenRefused(code ?? "UNAUTHENTICATED", context);
    if (status === 403) return { title: "Not allowed", detail: "Your token may not do this. Ask an administrator of your organization.", code: code ?? "FORBIDDEN" };
    if (status === 429 || code === "RATE_LIMITED") {
      const seconds = retryAfterSeconds(error.response?.headers?.get("retry-after"), now) ?? retryAfterSeconds(first?.extensions?.retryAfterSeconds, now);
      return rateLimited(code ?? "RATE_LIMITED", seconds, context);
    }
    if (status === 503) {
      const seconds = retryAfterSeconds(error.response?.headers?.get("retry-after"), now);
      return { title: "The service is unavailable for a moment", detail: `It is restarting or its database cannot be reached. ${seconds ? retryPhrase(seconds, now) : "Try again in a few seconds."}`, code: code ?? "SERVICE_UNAVAILABLE", action: "retry" };
    }
    if (status === 502 || status === 504) return { title: "The gateway cannot reach the service", detail: "A proxy in front of it answered instead. Try again in a moment.", ...(code ? { code } : {}), action: "retry" };
    const detail = (first ? messagesOf([first]) : "") || `The gateway answered HTTP ${status}.`;
    return { title: `The request failed (HTTP ${status})`, detail, ...(code ? { code } : {}), ...(status >= 500 ? { action: "retry" as const } : {}) };
  }
  if (CombinedGraphQLErrors.is(error)) {
    const first = error.errors[0] as GraphQLErrorShape | undefined;
    const code = codeOf(first);
    if (code === "UNAUTHENTICATED") return tokenRefused(code, context);
    if (code === "RATE_LIMITED") return rateLimited(code, retryAfterSeconds(first?.extensions?.retryAfterSeconds, now), context);
    if (code === "FORBIDDEN") return { title: "Not allowed", detail: messagesOf(error.errors) || "Your token may not do this.", code };
    return { title: "The request failed", detail: messagesOf(error.errors) || "The gateway gave no reason.", ...(code ? { code } : {}) };
  }
  if (ServerParseError.is(error)) {
    return { title: "The gateway answered something unreadable", detail: `HTTP ${error.statusCode}: not a GraphQL answer (a proxy's error page?). Try again in a moment.`, action: "retry" };
  }
  // fetch rejects with a TypeError when no answer came at all (the gateway is down, the network
  // is off); so does a page's code that failed to load ("Failed to fetch dynamically imported module").
  if ((error instanceof TypeError && NO_ANSWER.test(error.message)) || (error instanceof Error && PAGE_FILES_NOT_LOADED.test(error.message))) {
    return { title: "The service cannot be reached", detail: "The gateway did not answer: check that the server is running (npm start) and your network, then try again.", code: "NETWORK_ERROR", action: "retry" };
  }
  return { title: "Something went wrong", detail: error instanceof Error ? error.message : String(error) };
}
