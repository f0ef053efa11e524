/**
 * Errors a person can read. Every page shows what went wrong and what to do, never a blank page:
 * the gateway down, a token refused (401), a rate limit (429, with when to retry), a GraphQL
 * error with its code, and (in search) a provider that failed, from the provider's own report.
 */
import { CombinedGraphQLErrors, ServerError } from "@apollo/client/errors";

export interface ReadableError {
  title: string;
  detail: string;
  /** The machine code, when the gateway gave one (UNAUTHENTICATED, RATE_LIMITED, …). */
  code?: string;
}

function retryAfter(error: ServerError): string | null {
  const seconds = Number(error.response?.headers?.get("retry-after"));
  return Number.isFinite(seconds) && seconds > 0 ? `${Math.ceil(seconds)} s` : null;
}

export function readableError(error: unknown): ReadableError {
  if (ServerError.is(error)) {
    if (error.statusCode === 401) return { title: "Your token was refused", detail: "It has expired or is not valid. Enter a new token (Token, at the top right).", code: "UNAUTHENTICATED" };
    if (error.statusCode === 403) return { title: "Not allowed", detail: "Your token may not do this. Ask an administrator of your organization.", code: "FORBIDDEN" };
    if (error.statusCode === 429) {
      const wait = retryAfter(error);
      return { title: "Too many requests", detail: wait ? `You reached your rate limit. Try again in ${wait}.` : "You reached your rate limit. Try again in a moment.", code: "RATE_LIMITED" };
    }
    if (error.statusCode === 503) return { title: "The service is restarting", detail: "Try again in a few seconds.", code: "SHUTTING_DOWN" };
    return { title: `The gateway answered ${error.statusCode}`, detail: error.bodyText?.slice(0, 300) || error.message };
  }
  if (CombinedGraphQLErrors.is(error)) {
    const first = error.errors[0];
    const code = typeof first?.extensions?.code === "string" ? first.extensions.code : undefined;
    if (code === "UNAUTHENTICATED") return { title: "Your token was refused", detail: first?.message ?? "Enter a new token.", code };
    if (code === "RATE_LIMITED") return { title: "Too many requests", detail: first?.message ?? "Try again in a moment.", code };
    return { title: "The request failed", detail: error.errors.map((e) => e.message).join(" · ").slice(0, 500), ...(code ? { code } : {}) };
  }
  if (error instanceof TypeError) return { title: "The gateway cannot be reached", detail: "Check that the server is running (npm start) and your network, then try again." };
  return { title: "Something went wrong", detail: error instanceof Error ? error.message : String(error) };
}
