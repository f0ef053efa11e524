/**
 * DataForSEO's live Google SERP (https://docs.dataforseo.com/v3/serp/google/organic/live/advanced/):
 * `POST {baseUrl}/v3/serp/google/organic/live/advanced` with HTTP basic auth (the account's
 * API login and password) and a JSON array of exactly one task
 * (`keyword`, `location_code`, `language_code`, `depth`). The organic results are the items of
 * type "organic" in `tasks[0].result[0].items[]` (rank_group, rank_absolute, url, title,
 * description); the other item types (paid, people_also_ask, local_pack, …) are skipped.
 *
 * DataForSEO answers HTTP 200 to almost everything (401, 402, 404 and 500 are the documented
 * exceptions) and reports the outcome in `status_code` twice: once for the request and once per
 * task, 20000 meaning ok. Those codes are mapped below from the documented list
 * (https://docs.dataforseo.com/v3/appendix/errors); the vendor's `status_message` is not copied
 * into our messages (it is text we do not control).
 */
import { boundedFetch } from "../../../lib/external-apis/bounded-fetch.js";
import { ExternalApiError } from "../../../lib/external-apis/errors.js";
import type { ExternalFailureKind } from "../../../lib/external-apis/errors.js";
import { plainText, safeUrl } from "../../../lib/external-apis/sanitize.js";
import type { CallOptions, DataForSeoApi, DataForSeoCredentials, WebResultData } from "./types.js";

export const DATAFORSEO_DEFAULT_BASE_URL = "https://api.dataforseo.com";
export const DATAFORSEO_LIVE_ORGANIC_PATH = "/v3/serp/google/organic/live/advanced";

/** Results asked for per call. DataForSEO allows a depth of 700, billed per 10; we never need more than 100. */
export const DATAFORSEO_MAX_RESULTS = 100;

export const DATAFORSEO_TITLE_MAX_CHARS = 300;
export const DATAFORSEO_SNIPPET_MAX_CHARS = 1_000;

/** DataForSEO's "ok" status, for the request and for each task. */
const STATUS_OK = 20000;
/** The task ran and Google had nothing for the keyword: an empty result, not a failure. */
const STATUS_NO_SEARCH_RESULTS = 40102;

export interface DataForSeoClientOptions {
  /** Default https://api.dataforseo.com; tests point it at a stand-in. */
  baseUrl?: string;
  /** Where the search is run from, as DataForSEO's location code (default 2840, United States). */
  locationCode?: number;
  /** Interface language of the results (default "en"). */
  languageCode?: string;
  /** Largest response body read (bytes); default boundedFetch's. */
  maxResponseBytes?: number;
}

const PROVIDER = "dataforseo";

export class DataForSeoClient implements DataForSeoApi {
  private readonly url: string;
  private readonly locationCode: number;
  private readonly languageCode: string;
  private readonly maxResponseBytes: number | undefined;

  constructor(options: DataForSeoClientOptions = {}) {
    this.url = `${(options.baseUrl ?? DATAFORSEO_DEFAULT_BASE_URL).replace(/\/+$/, "")}${DATAFORSEO_LIVE_ORGANIC_PATH}`;
    this.locationCode = options.locationCode ?? 2840;
    this.languageCode = options.languageCode ?? "en";
    this.maxResponseBytes = options.maxResponseBytes;
  }

  /** Google's organic results for `query`, ranked as DataForSEO saw them, at most `options.limit` (1..100). */
  async search(query: string, credentials: DataForSeoCredentials, options: CallOptions): Promise<WebResultData[]> {
    if (!query.trim()) throw new ExternalApiError("BAD_REQUEST", PROVIDER, "was asked to search for an empty query");
    const limit = boundedLimit(options.limit);
    const task = {
      keyword: query,
      location_code: this.locationCode,
      language_code: this.languageCode,
      // DataForSEO bills depth per started 10 results, so ask for whole pages and cut to the limit.
      depth: Math.min(DATAFORSEO_MAX_RESULTS, Math.ceil(limit / 10) * 10),
    };
    const authorization = `Basic ${Buffer.from(`${credentials.login}:${credentials.password}`, "utf8").toString("base64")}`;
    let response;
    try {
      response = await boundedFetch(
        this.url,
        {
          method: "POST",
          headers: { Authorization: authorization, "Content-Type": "application/json", Accept: "application/json" },
          body: JSON.stringify([task]),
        },
        { provider: PROVIDER, signal: options.signal, maxBytes: this.maxResponseBytes },
      );
    } catch (error) {
      // HTTP 402 is DataForSEO's "we had a problem billing your account": nobody's request is
      // wrong, the account cannot pay, and it stays so until someone tops it up.
      if (error instanceof ExternalApiError && error.httpStatus === 402) {
        throw new ExternalApiError("UNAUTHORIZED", PROVIDER, "refused the call: the account's balance cannot pay for it (HTTP 402)", undefined, 402);
      }
      throw error;
    }
    return parseLiveOrganic(response.json(), limit, new Date());
  }
}

function boundedLimit(limit: number): number {
  if (!Number.isFinite(limit)) return 10;
  return Math.min(DATAFORSEO_MAX_RESULTS, Math.max(1, Math.floor(limit)));
}

/**
 * A live/advanced answer as web results: request status, then the first task's status, then
 * `result[0].items` of type "organic". Not that shape is BAD_RESPONSE; a status other than
 * 20000 is the kind `kindOfDataForSeoStatus` gives it, except "No Search Results" (40102), which
 * is an empty list.
 */
export function parseLiveOrganic(body: unknown, limit: number, fetchedAt: Date): WebResultData[] {
  if (!isRecord(body) || typeof body.status_code !== "number") {
    throw badResponse("answered with a body that is not a DataForSEO response (no status_code)");
  }
  if (body.status_code !== STATUS_OK) throw statusError(body.status_code, "request");
  if (!Array.isArray(body.tasks) || body.tasks.length === 0 || !isRecord(body.tasks[0]) || typeof body.tasks[0].status_code !== "number") {
    throw badResponse("answered without the task it was sent");
  }
  const task = body.tasks[0];
  if (task.status_code === STATUS_NO_SEARCH_RESULTS) return [];
  if (task.status_code !== STATUS_OK) throw statusError(task.status_code as number, "task");
  if (task.result === null || task.result === undefined) return [];
  if (!Array.isArray(task.result)) throw badResponse("answered with a task result that is not a list");
  const page = task.result[0];
  if (page === undefined || page === null) return [];
  if (!isRecord(page)) throw badResponse("answered with a task result that is not a results page");
  if (page.items === null || page.items === undefined) return [];
  if (!Array.isArray(page.items)) throw badResponse("answered with `items` that is not a list");

  const results: WebResultData[] = [];
  let organicSeen = 0;
  for (const item of page.items) {
    if (results.length >= limit) break;
    if (!isRecord(item) || item.type !== "organic") continue;
    organicSeen += 1;
    const url = typeof item.url === "string" ? safeUrl(item.url) : null;
    const title = typeof item.title === "string" ? plainText(item.title, DATAFORSEO_TITLE_MAX_CHARS) : "";
    if (!url || !title) continue;
    results.push({
      url,
      title,
      snippet: typeof item.description === "string" ? plainText(item.description, DATAFORSEO_SNIPPET_MAX_CHARS) : "",
      position: rankOf(item, organicSeen),
      provider: "dataforseo",
      fetchedAt,
    });
  }
  return results;
}

/**
 * What a DataForSEO status code means to us. Documented codes
 * (https://docs.dataforseo.com/v3/appendix/errors) with the kind chosen for each:
 * - 40100 not authorized, 40201 account blocked for suspicious activity, 40200 payment required,
 *   40203 cost limit reached, 40210 insufficient funds: UNAUTHORIZED — the account cannot be used
 *   until someone changes something; retrying only spends the breaker's patience;
 * - 40101 "Internal SE Server Error" (Google failed for DataForSEO; it already retried) and
 *   40601/40602 task handed/in queue (a live task should not report these): UPSTREAM_ERROR;
 * - 40202 rate limit per minute exceeded: RATE_LIMITED (DataForSEO says no Retry-After);
 * - 40000–40006 (task count, ids), 40400–40403 (not found, invalid path, expired), 40501 invalid
 *   field: BAD_REQUEST — our request is wrong;
 * - 50000 internal error, 50001 balance check failed, 50301 third-party service unavailable,
 *   50303 update in progress, 50304 function temporarily unavailable: UPSTREAM_ERROR.
 * Undocumented codes fall back by range: 4xxxx BAD_REQUEST, 5xxxx UPSTREAM_ERROR, others BAD_RESPONSE.
 */
export function kindOfDataForSeoStatus(code: number): ExternalFailureKind {
  switch (code) {
    case 40100:
    case 40200:
    case 40201:
    case 40203:
    case 40210:
      return "UNAUTHORIZED";
    case 40202:
      return "RATE_LIMITED";
    case 40101:
    case 40601:
    case 40602:
      return "UPSTREAM_ERROR";
  }
  if (code >= 40000 && code < 50000) return "BAD_REQUEST";
  if (code >= 50000 && code < 60000) return "UPSTREAM_ERROR";
  return "BAD_RESPONSE";
}

function statusError(code: number, level: "request" | "task"): ExternalApiError {
  const kind = kindOfDataForSeoStatus(code);
  return new ExternalApiError(kind, PROVIDER, `${describeKind(kind)} (${level} status ${code})`, undefined, 200);
}

function describeKind(kind: ExternalFailureKind): string {
  switch (kind) {
    case "UNAUTHORIZED":
      return "refused the account: check the API login and password, the balance and the cost limit in the DataForSEO dashboard";
    case "RATE_LIMITED":
      return "is rate limiting these calls";
    case "UPSTREAM_ERROR":
      return "is failing to fetch Google's results";
    case "BAD_REQUEST":
      return "refused the request";
    default:
      return "answered with a status it does not document";
  }
}

// Private: rank_group is the position among organic results (what a reader calls "third result");
// rank_absolute counts every SERP element. Prefer rank_group, then rank_absolute, then our count.
function rankOf(item: Record<string, unknown>, organicSeen: number): number {
  for (const value of [item.rank_group, item.rank_absolute]) {
    if (typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 1_000) return value;
  }
  return organicSeen;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function badResponse(message: string): ExternalApiError {
  return new ExternalApiError("BAD_RESPONSE", PROVIDER, message, undefined, 200);
}
