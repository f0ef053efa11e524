/**
 * Serper (https://serper.dev): Google results as JSON. One call, `POST {baseUrl}/search` with
 * the key in `X-API-KEY` and `{ q, num }` as the body, answers with `organic[]` (title, link,
 * snippet, position), `peopleAlsoAsk[]` (question, snippet, title, link) and
 * `relatedSearches[]` (query), beside `searchParameters` echoing the request.
 *
 * Everything Serper sends is copied from someone else's web page, so every field goes through
 * lib/external-apis/sanitize.ts: text becomes bounded plain text, a link that is not a safe
 * http(s) URL drops its result (a result without a place to go is no result). Serper refuses a
 * wrong key with 403 `{"message":"Unauthorized.","statusCode":403}` and missing credits with
 * 400; boundedFetch turns those into UNAUTHORIZED and BAD_REQUEST.
 */
import { boundedFetch } from "../../../lib/external-apis/bounded-fetch.js";
import { ExternalApiError } from "../../../lib/external-apis/errors.js";
import { plainText, safeUrl } from "../../../lib/external-apis/sanitize.js";
import type { CallOptions, RelatedQuestion, SerpAnswer, SerperApi, SerperCredentials, WebResultData } from "./types.js";

export const SERPER_DEFAULT_BASE_URL = "https://google.serper.dev";

/** Serper's `num` goes up to 100 results per call. */
export const SERPER_MAX_RESULTS = 100;

/** Longest title, snippet, question and related query kept (characters, after cleaning). */
export const SERPER_TITLE_MAX_CHARS = 300;
export const SERPER_SNIPPET_MAX_CHARS = 1_000;
export const SERPER_QUESTION_MAX_CHARS = 300;
export const SERPER_RELATED_QUERY_MAX_CHARS = 200;

/** "People also ask" entries and related searches kept per call: Google shows a handful. */
export const SERPER_MAX_SUGGESTIONS = 50;

export interface SerperClientOptions {
  /** Default https://google.serper.dev; tests point it at a stand-in. */
  baseUrl?: string;
  /** Largest response body read (bytes); default boundedFetch's. */
  maxResponseBytes?: number;
}

const PROVIDER = "serper";

export class SerperClient implements SerperApi {
  private readonly searchUrl: string;
  private readonly maxResponseBytes: number | undefined;

  constructor(options: SerperClientOptions = {}) {
    this.searchUrl = `${(options.baseUrl ?? SERPER_DEFAULT_BASE_URL).replace(/\/+$/, "")}/search`;
    this.maxResponseBytes = options.maxResponseBytes;
  }

  /** One Google results page for `query`: organic results, "people also ask" and related searches. */
  async search(query: string, credentials: SerperCredentials, options: CallOptions): Promise<SerpAnswer> {
    if (!query.trim()) throw new ExternalApiError("BAD_REQUEST", PROVIDER, "was asked to search for an empty query");
    const limit = boundedLimit(options.limit);
    const response = await boundedFetch(
      this.searchUrl,
      {
        method: "POST",
        headers: { "X-API-KEY": credentials.apiKey, "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ q: query, num: limit }),
      },
      { provider: PROVIDER, signal: options.signal, maxBytes: this.maxResponseBytes },
    );
    return parseSerperAnswer(response.json(), limit, new Date());
  }
}

/** The call's limit as Serper's `num`: a whole number in 1..100 (10, Serper's default, when unusable). */
function boundedLimit(limit: number): number {
  if (!Number.isFinite(limit)) return 10;
  return Math.min(SERPER_MAX_RESULTS, Math.max(1, Math.floor(limit)));
}

/**
 * Serper's body as a SerpAnswer. The documented shape is an object with `searchParameters`;
 * `organic`, `peopleAlsoAsk` and `relatedSearches` may be missing (no such block on the page)
 * but, when present, are arrays. Anything else is BAD_RESPONSE. Single entries that are not
 * usable (not an object, no title, no safe link) are dropped, not the whole answer.
 */
export function parseSerperAnswer(body: unknown, limit: number, fetchedAt: Date): SerpAnswer {
  if (!isRecord(body) || !isRecord(body.searchParameters)) {
    throw badResponse("answered with a body that is not a Serper search result (no searchParameters)");
  }
  const organic = optionalArray(body, "organic");
  const peopleAlsoAsk = optionalArray(body, "peopleAlsoAsk");
  const relatedSearches = optionalArray(body, "relatedSearches");

  const results: WebResultData[] = [];
  organic.forEach((entry, index) => {
    if (results.length >= limit || !isRecord(entry)) return;
    const url = typeof entry.link === "string" ? safeUrl(entry.link) : null;
    const title = typeof entry.title === "string" ? plainText(entry.title, SERPER_TITLE_MAX_CHARS) : "";
    if (!url || !title) return;
    results.push({
      url,
      title,
      snippet: typeof entry.snippet === "string" ? plainText(entry.snippet, SERPER_SNIPPET_MAX_CHARS) : "",
      position: rankOf(entry.position, index),
      provider: "serper",
      fetchedAt,
    });
  });

  const questions: RelatedQuestion[] = [];
  for (const entry of peopleAlsoAsk) {
    if (questions.length >= SERPER_MAX_SUGGESTIONS) break;
    if (!isRecord(entry) || typeof entry.question !== "string") continue;
    const question = plainText(entry.question, SERPER_QUESTION_MAX_CHARS);
    if (!question) continue;
    const snippet = typeof entry.snippet === "string" ? plainText(entry.snippet, SERPER_SNIPPET_MAX_CHARS) : "";
    questions.push({ question, snippet: snippet || null, url: typeof entry.link === "string" ? safeUrl(entry.link) : null });
  }

  const related: string[] = [];
  for (const entry of relatedSearches) {
    if (related.length >= SERPER_MAX_SUGGESTIONS) break;
    if (!isRecord(entry) || typeof entry.query !== "string") continue;
    const text = plainText(entry.query, SERPER_RELATED_QUERY_MAX_CHARS);
    if (text) related.push(text);
  }

  return { organic: results, peopleAlsoAsk: questions, relatedSearches: related };
}

// Private: Serper numbers organic results itself; a missing or nonsensical position (a hostile
// or broken answer) falls back to the entry's place in the list, so ranks stay 1-based integers.
function rankOf(position: unknown, index: number): number {
  return typeof position === "number" && Number.isInteger(position) && position >= 1 && position <= 1_000 ? position : index + 1;
}

function optionalArray(body: Record<string, unknown>, field: string): unknown[] {
  const value = body[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw badResponse(`answered with \`${field}\` that is not a list`);
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function badResponse(message: string): ExternalApiError {
  return new ExternalApiError("BAD_RESPONSE", PROVIDER, message, undefined, 200);
}
