/**
 * Errors in words (errors.ts): each way a request fails reads as what happened and what to do,
 * with its code, from the shapes Apollo Client really reports: a ServerError for an answer refused
 * before GraphQL ran (its body as text), CombinedGraphQLErrors for GraphQL errors, a TypeError
 * when fetch got no answer at all.
 */
import { CombinedGraphQLErrors, ServerError, ServerParseError } from "@apollo/client/errors";
import { describe, expect, it } from "vitest";
import { readableError, retryAfterSeconds } from "../src/errors";

const NOW = Date.UTC(2026, 11, 2, 18, 0, 0);

function serverError(status: number, body: unknown, headers: Record<string, string> = {}): ServerError {
  const bodyText = typeof body === "string" ? body : JSON.stringify(body);
  return new ServerError(`Response not successful: Received status code ${status}`, { response: new Response(bodyText, { status, headers }), bodyText });
}

const graphQLErrors = (...errors: { message: string; extensions?: Record<string, unknown> }[]) => new CombinedGraphQLErrors({ errors, data: null });

describe("readableError", () => {
  it("401: the token was refused, with the token field as what to do", () => {
    const readable = readableError(serverError(401, { errors: [{ message: "Invalid token", extensions: { code: "UNAUTHENTICATED" } }] }), { now: NOW });
    expect(readable).toMatchObject({ title: "Your token was refused", code: "UNAUTHENTICATED", action: "token" });
    expect(readable.detail).toMatch(/token field/);
  });

  it("401 with a token whose exp has passed: says it expired, and when", () => {
    const expiredAt = NOW / 1000 - 3600;
    const readable = readableError(serverError(401, "unauthorized"), { now: NOW, tokenExpiresAt: expiredAt });
    expect(readable).toMatchObject({ title: "Your token has expired", code: "UNAUTHENTICATED", action: "token" });
    expect(readable.detail).toContain(new Date(expiredAt * 1000).toLocaleString());
    // A token still valid by its exp was refused for another reason.
    expect(readableError(serverError(401, ""), { now: NOW, tokenExpiresAt: NOW / 1000 + 60 }).title).toBe("Your token was refused");
  });

  it("UNAUTHENTICATED as a GraphQL error reads the same", () => {
    expect(readableError(graphQLErrors({ message: "no", extensions: { code: "UNAUTHENTICATED" } }), { now: NOW })).toMatchObject({ title: "Your token was refused", action: "token" });
  });

  it("429 before GraphQL ran: the wait from Retry-After, in seconds and as a clock time", () => {
    const body = { errors: [{ message: "Rate limit exceeded for this user: retry after 42 s.", extensions: { code: "RATE_LIMITED", limit: "user", retryAfterSeconds: 42 } }] };
    const readable = readableError(serverError(429, body, { "retry-after": "42", "content-type": "application/json" }), { now: NOW });
    expect(readable).toMatchObject({ title: "Too many requests", code: "RATE_LIMITED", retryAfterSeconds: 42, action: "retry" });
    expect(readable.detail).toContain("Try again in 42 s (at ");
    expect(readable.detail).toContain(new Date(NOW + 42_000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" }));
  });

  it("429 without the header: the wait from the error's extensions", () => {
    const body = { errors: [{ message: "Rate limit exceeded", extensions: { code: "RATE_LIMITED", retryAfterSeconds: 600 } }] };
    expect(readableError(serverError(429, body), { now: NOW })).toMatchObject({ retryAfterSeconds: 600, detail: expect.stringContaining("Try again in 10 min") });
  });

  it("RATE_LIMITED as a GraphQL error (charged by the operation's cost): the wait from its extensions", () => {
    const readable = readableError(graphQLErrors({ message: "Rate limit exceeded for this organization: retry after 7 s.", extensions: { code: "RATE_LIMITED", retryAfterSeconds: 7 } }), { now: NOW });
    expect(readable).toMatchObject({ title: "Too many requests", code: "RATE_LIMITED", retryAfterSeconds: 7, action: "retry" });
    expect(readable.detail).toContain("Try again in 7 s");
  });

  it("429 with no wait given or a nonsense one still says to wait, without a made-up time", () => {
    for (const error of [serverError(429, "slow down"), serverError(429, "", { "retry-after": "soon" }), graphQLErrors({ message: "x", extensions: { code: "RATE_LIMITED", retryAfterSeconds: -5 } })]) {
      const readable = readableError(error, { now: NOW });
      expect(readable.detail).toBe("You reached your rate limit. Try again in a moment.");
      expect(readable.retryAfterSeconds).toBeUndefined();
    }
  });

  it("no answer at all (the gateway is down, the network is off, a page's script could not load): the service cannot be reached, retry", () => {
    for (const message of ["Failed to fetch", "NetworkError when attempting to fetch resource.", "Load failed", "Failed to fetch dynamically imported module: http://x/assets/a.js", "The upload could not reach the gateway"]) {
      expect(readableError(new TypeError(message))).toMatchObject({ title: "The service cannot be reached", code: "NETWORK_ERROR", action: "retry" });
    }
  });

  it("a lazy page whose CSS could not be preloaded (Vite throws a plain Error for it) is the service unreachable too", () => {
    expect(readableError(new Error("Unable to preload CSS for http://127.0.0.1:4000/assets/CreditsPage-x.css"))).toMatchObject({ title: "The service cannot be reached", action: "retry" });
    expect(readableError(new Error("Unable to read the page")).title).toBe("Something went wrong");
  });

  it("a TypeError from the app's own code is a bug, not the network", () => {
    const readable = readableError(new TypeError("Cannot read properties of undefined (reading 'hits')"));
    expect(readable.title).toBe("Something went wrong");
    expect(readable.action).toBeUndefined();
  });

  it("503 (restarting, database down) and 502/504 (a proxy) offer a retry", () => {
    expect(readableError(serverError(503, "", { "retry-after": "5" }), { now: NOW })).toMatchObject({ code: "SERVICE_UNAVAILABLE", action: "retry", detail: expect.stringContaining("Try again in 5 s") });
    expect(readableError(serverError(502, "<html>Bad gateway</html>"))).toMatchObject({ title: "The gateway cannot reach the service", action: "retry" });
  });

  it("403 and other GraphQL errors keep their code and the server's words", () => {
    expect(readableError(serverError(403, ""))).toMatchObject({ title: "Not allowed", code: "FORBIDDEN" });
    const readable = readableError(graphQLErrors({ message: "input.query: must be at most 1000 characters", extensions: { code: "BAD_USER_INPUT" } }, { message: "second" }));
    expect(readable).toEqual({ title: "The request failed", detail: "input.query: must be at most 1000 characters · second", code: "BAD_USER_INPUT" });
  });

  it("an answer that is not GraphQL (a proxy's page) is said so", () => {
    const response = new Response("<html>", { status: 200 });
    expect(readableError(new ServerParseError(new SyntaxError("Unexpected token <"), { response, bodyText: "<html>" })).title).toBe("The gateway answered something unreadable");
  });

  it("anything else is shown by its message, never thrown over", () => {
    expect(readableError(new Error("boom")).detail).toBe("boom");
    expect(readableError("a string").detail).toBe("a string");
    expect(readableError(null).title).toBe("Something went wrong");
    expect(readableError(serverError(500, "{not json")).title).toBe("The request failed (HTTP 500)");
  });
});

describe("retryAfterSeconds", () => {
  it("reads seconds and HTTP dates, and nothing else", () => {
    expect(retryAfterSeconds("42", NOW)).toBe(42);
    expect(retryAfterSeconds("1.2", NOW)).toBe(2);
    expect(retryAfterSeconds(new Date(NOW + 30_000).toUTCString(), NOW)).toBe(30);
    expect(retryAfterSeconds(new Date(NOW - 30_000).toUTCString(), NOW)).toBeNull();
    for (const nonsense of ["", "0", "-3", "soon", null, undefined, NaN, Infinity, {}]) expect(retryAfterSeconds(nonsense, NOW)).toBeNull();
  });
});
