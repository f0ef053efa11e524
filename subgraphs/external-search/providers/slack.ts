/**
 * Slack: messages matching a query, through `search.messages` with the organization's user
 * token (search needs a user token, `xoxp-…`, with the `search:read` scope; bot tokens are
 * refused), called with `@slack/web-api`'s WebClient.
 *
 * How the WebClient is tamed, and why:
 * - `retryConfig: { retries: 0 }` and `rejectRateLimitedCalls: true`: its default retries ten
 *   times over about thirty minutes and sleeps through every 429; our policies retry instead,
 *   on the failure's kind, honouring Retry-After.
 * - Response size: WebClient 8.x sends requests with `fetch` (no axios, so there is no
 *   `maxContentLength` to set); its `fetch` option is the one place to bound a body, and gets
 *   capped-fetch.ts, which also joins the call's deadline to the client's own timeout.
 * - Slack answers failures as HTTP 200 with `{ ok: false, error: "<code>" }`; the client throws
 *   those as WebAPIPlatformError, and every error class it has is mapped to our kinds below.
 */
import { ErrorCode, LogLevel, WebClient, type Logger } from "@slack/web-api";
import { DEFAULT_MAX_RESPONSE_BYTES } from "../../../lib/external-apis/bounded-fetch.js";
import { ExternalApiError, MAX_RETRY_AFTER_MS, kindOfStatus, parseRetryAfter } from "../../../lib/external-apis/errors.js";
import { plainText, safeUrl } from "../../../lib/external-apis/sanitize.js";
import { cappedFetch } from "./capped-fetch.js";
import type { CallOptions, SlackApi, SlackCredentials, SlackMessageData } from "./types.js";

const PROVIDER = "slack";
export const SLACK_API_URL = "https://slack.com/api/";
/** search.messages returns at most 100 matches a page. */
const MAX_COUNT = 100;
const MAX_TEXT_CHARS = 4_000;
const MAX_NAME_CHARS = 200;

/** `error` codes that mean the token is wrong, gone or lacks what search needs. */
const UNAUTHORIZED_CODES = new Set([
  "not_authed",
  "invalid_auth",
  "token_revoked",
  "token_expired",
  "account_inactive",
  "missing_scope",
  "no_permission",
  "not_allowed_token_type",
  "team_access_not_granted",
  "ekm_access_denied",
  "org_login_required",
]);
/** `error` codes that mean Slack itself is failing; anything else is something we sent. */
const UPSTREAM_CODES = new Set(["internal_error", "fatal_error", "service_unavailable", "request_timeout"]);
// Slack's error codes are short snake_case words. When the client cannot parse a body as JSON
// it puts the body's text in `error` instead, so anything else there is a body we cannot read.
const SLACK_ERROR_CODE = /^[a-z0-9_]{1,64}$/;

const QUIET_LOGGER: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  setLevel: () => undefined,
  getLevel: () => LogLevel.ERROR,
  setName: () => undefined,
};

export interface SlackClientOptions {
  /** Default https://slack.com/api/ (a stand-in's URL in tests). */
  slackApiUrl?: string;
  /** Largest response body read, in bytes. Default DEFAULT_MAX_RESPONSE_BYTES. */
  maxResponseBytes?: number;
  /** The WebClient's own per-request timeout, a backstop to the call's signal. Default 60 s. */
  timeoutMs?: number;
}

export class SlackClient implements SlackApi {
  private readonly slackApiUrl: string;
  private readonly maxResponseBytes: number;
  private readonly timeoutMs: number;

  constructor(options: SlackClientOptions = {}) {
    this.slackApiUrl = options.slackApiUrl ?? SLACK_API_URL;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.timeoutMs = options.timeoutMs ?? 60_000;
  }

  async searchMessages(query: string, credentials: SlackCredentials, options: CallOptions): Promise<SlackMessageData[]> {
    const { signal } = options;
    const limit = Math.max(1, Math.min(MAX_COUNT, Math.floor(options.limit)));
    // The client hides a 429 without a readable Retry-After behind a plain Error: the status
    // seen by the fetch says what it was.
    let lastStatus = 0;
    // One WebClient per call: each organization has its own token (given to the constructor it
    // goes in the Authorization header only, never in the form body), and the fetch carries this
    // call's deadline.
    const client = new WebClient(credentials.token, {
      slackApiUrl: this.slackApiUrl,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      timeout: this.timeoutMs,
      // The client logs every failed request, and Slack's `[ERROR]` response notes, to the
      // console; each of those reaches our caller as an ExternalApiError instead, reported once.
      logger: QUIET_LOGGER,
      fetch: cappedFetch({
        provider: PROVIDER,
        maxBytes: this.maxResponseBytes,
        signal,
        onStatus: (status) => (lastStatus = status),
      }),
    });
    let result: unknown;
    try {
      result = await client.search.messages({ query, count: limit, sort: "score", highlight: false });
    } catch (error) {
      throw slackFailure(error, signal, lastStatus);
    }
    return parseMatches(result, limit);
  }
}

/** The WebClient's errors (by their `code`, as the package documents them) as our kinds. */
export function slackFailure(error: unknown, signal: AbortSignal, lastStatus = 0): ExternalApiError {
  if (error instanceof ExternalApiError) return error;
  const code = (error as { code?: unknown })?.code;
  if (code === ErrorCode.PlatformError) {
    const data = (error as { data?: { error?: unknown; response_metadata?: { retryAfter?: unknown } } }).data;
    const slackCode = typeof data?.error === "string" ? data.error : "";
    if (!SLACK_ERROR_CODE.test(slackCode)) {
      return new ExternalApiError("BAD_RESPONSE", PROVIDER, "answered with something that is not JSON");
    }
    if (UNAUTHORIZED_CODES.has(slackCode)) {
      return new ExternalApiError("UNAUTHORIZED", PROVIDER, `refused the token (${slackCode}): reconnect Slack with a user token that has search:read`);
    }
    if (slackCode === "ratelimited" || slackCode === "rate_limited") {
      return new ExternalApiError("RATE_LIMITED", PROVIDER, `is rate limiting these calls (${slackCode})`, retryAfterSeconds(data?.response_metadata?.retryAfter));
    }
    if (UPSTREAM_CODES.has(slackCode)) {
      return new ExternalApiError(slackCode === "request_timeout" ? "TIMEOUT" : "UPSTREAM_ERROR", PROVIDER, `is failing (${slackCode})`);
    }
    return new ExternalApiError("BAD_REQUEST", PROVIDER, `refused the search (${slackCode})`);
  }
  if (code === ErrorCode.RateLimitedError) {
    const retryAfter = (error as { retryAfter?: unknown }).retryAfter;
    return new ExternalApiError("RATE_LIMITED", PROVIDER, "is rate limiting these calls (HTTP 429)", retryAfterSeconds(retryAfter), 429);
  }
  if (code === ErrorCode.HTTPError) {
    const { statusCode, headers } = error as { statusCode: number; headers?: Record<string, string> };
    const kind = kindOfStatus(statusCode);
    const retryAfterMs = statusCode === 503 ? parseRetryAfter(headers?.["retry-after"]) : undefined;
    return new ExternalApiError(kind, PROVIDER, `is failing (HTTP ${statusCode})`, retryAfterMs, statusCode);
  }
  if (code === ErrorCode.RequestError) {
    const original = (error as { original?: unknown }).original;
    // TOO_LARGE, or a deadline reached while reading the body, from capped-fetch.
    if (original instanceof ExternalApiError) return original;
    const name = (original as Error | undefined)?.name;
    if (signal.aborted || name === "AbortError" || name === "TimeoutError") {
      return new ExternalApiError("TIMEOUT", PROVIDER, "did not answer in time");
    }
    return new ExternalApiError("UPSTREAM_ERROR", PROVIDER, "could not be reached (connection refused, reset or DNS failure)");
  }
  if (lastStatus === 429) {
    // 429 with a Retry-After the client could not read: rate limited, wait unknown.
    return new ExternalApiError("RATE_LIMITED", PROVIDER, "is rate limiting these calls (HTTP 429)", undefined, 429);
  }
  if (signal.aborted) return new ExternalApiError("TIMEOUT", PROVIDER, "did not answer in time");
  return new ExternalApiError("UPSTREAM_ERROR", PROVIDER, "failed in an unexpected way");
}

/**
 * `messages.matches[]` as SlackMessageData: a match without a channel id or a readable `ts` is
 * dropped (it could not be linked or ordered), text is cleaned of Slack's markup and of HTML.
 */
export function parseMatches(result: unknown, limit: number): SlackMessageData[] {
  const messages = isRecord(result) ? result.messages : undefined;
  if (!isRecord(messages) || (messages.matches !== undefined && !Array.isArray(messages.matches))) {
    throw new ExternalApiError("BAD_RESPONSE", PROVIDER, "answered without `messages.matches`: not a search.messages result");
  }
  const matches: unknown[] = Array.isArray(messages.matches) ? messages.matches : [];
  const hits: SlackMessageData[] = [];
  const seen = new Set<string>();
  for (const match of matches) {
    if (hits.length >= limit) break;
    if (!isRecord(match) || !isRecord(match.channel)) continue;
    const channelId = typeof match.channel.id === "string" && /^[A-Z0-9]{1,32}$/.test(match.channel.id) ? match.channel.id : null;
    const postedAt = timeOfTs(match.ts);
    if (!channelId || !postedAt) continue;
    const id = `${channelId}:${match.ts as string}`;
    if (seen.has(id)) continue;
    seen.add(id);
    hits.push({
      id,
      channelId,
      channelName: plainText(match.channel.name, MAX_NAME_CHARS) || null,
      author: plainText(match.username, MAX_NAME_CHARS) || plainText(match.user, MAX_NAME_CHARS) || null,
      text: plainText(slackMarkupToText(match.text), MAX_TEXT_CHARS),
      permalink: safeUrl(match.permalink),
      postedAt,
    });
  }
  return hits;
}

/**
 * Slack's message markup (https://docs.slack.dev/messaging/formatting-message-text) as text:
 * `<https://…|label>` → label, `<https://…>` → the URL, `<@U123>` → @U123, `<#C123|general>` →
 * #general, `<!here>` → @here. Slack escapes a literal &, < and > typed in a message (&amp;
 * &lt; &gt;); those are left for plainText, which decodes them into text (a "<b>" someone typed
 * stays visible as text) while removing any raw tag, which Slack itself never sends.
 */
export function slackMarkupToText(value: unknown): string {
  if (typeof value !== "string") return "";
  // Only Slack's own forms; any other raw tag is left for plainText to remove as HTML.
  return value.replace(/<((?:https?:\/\/|mailto:|[@#!])[^<>]*)>/g, (_whole, inner: string) => {
    const [target, label] = splitOnce(inner, "|");
    if (target.startsWith("@")) return `@${label ?? target.slice(1)}`;
    if (target.startsWith("#")) return `#${label ?? target.slice(1)}`;
    if (target.startsWith("!")) return label ?? `@${target.slice(1).split("^")[0]}`;
    return label ?? target;
  });
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

/** A message `ts` ("1508284197.000015": seconds and a per-channel sequence) as a Date. */
function timeOfTs(ts: unknown): Date | null {
  if (typeof ts !== "string" || !/^\d{1,12}\.\d{1,9}$/.test(ts)) return null;
  return new Date(Math.floor(Number(ts) * 1000));
}

function retryAfterSeconds(value: unknown): number | undefined {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, value * 1000);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
