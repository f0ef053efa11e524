/**
 * Perplexity: a researched answer with its sources, through Perplexity's OpenAI-compatible chat
 * completions API (`POST {baseURL}/chat/completions`), called with the `openai` package.
 *
 * Beside the OpenAI shape, Perplexity's answer carries its sources at the top level: `citations`
 * (URLs, in the order the answer's [1], [2] markers refer to) and, in newer answers,
 * `search_results` ([{ title, url, date, last_updated, snippet }], the same sources with their
 * titles). Either, both or neither may come; both are read, and a citation keeps its position
 * in `citations` so the answer's markers still point at it.
 *
 * The SDK neither bounds a body nor speaks our failure kinds: the client gets a fetch that reads
 * under the size cap (capped-fetch.ts), no retries of its own (our policies retry, on the kind),
 * and every SDK error is mapped to an ExternalApiError here.
 */
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  InternalServerError,
  PermissionDeniedError,
  RateLimitError,
} from "openai";
import { DEFAULT_MAX_RESPONSE_BYTES } from "../../../lib/external-apis/bounded-fetch.js";
import { ExternalApiError, MAX_RETRY_AFTER_MS, kindOfStatus, parseRetryAfter } from "../../../lib/external-apis/errors.js";
import { plainText, safeUrl } from "../../../lib/external-apis/sanitize.js";
import { cappedFetch } from "./capped-fetch.js";
import type { PerplexityApi, PerplexityCredentials, CallOptions, ResearchAnswer, WebResultData } from "./types.js";

const PROVIDER = "perplexity";
export const PERPLEXITY_BASE_URL = "https://api.perplexity.ai";
export const DEFAULT_PERPLEXITY_MODEL = "sonar";

// An answer is a few paragraphs; 20,000 characters is far past what `sonar` writes and bounds
// what a hostile or broken answer can put in our responses and ledger.
const MAX_ANSWER_CHARS = 20_000;
const MAX_TITLE_CHARS = 300;
const MAX_SNIPPET_CHARS = 1_000;
const MAX_MODEL_CHARS = 100;
// Perplexity cites a handful of sources (5–20); more than this is not an answer we want to keep.
const MAX_CITATIONS = 50;

const SYSTEM_PROMPT =
  "Answer the question accurately and concisely from current web sources. Cite every claim with numbered references like [1].";

export interface PerplexityClientOptions {
  /** Default https://api.perplexity.ai (a stand-in's URL in tests). */
  baseURL?: string;
  /** Default "sonar". */
  model?: string;
  /** Largest response body read, in bytes. Default DEFAULT_MAX_RESPONSE_BYTES. */
  maxResponseBytes?: number;
  /**
   * A backstop per request, in milliseconds, should a caller pass a signal that never fires
   * (the SDK's own default is 10 minutes). The call's deadline is its signal. Default 60 s.
   */
  timeoutMs?: number;
  /** The clock for `fetchedAt` (tests pin it). */
  now?: () => Date;
}

export class PerplexityClient implements PerplexityApi {
  private readonly baseURL: string;
  private readonly model: string;
  private readonly maxResponseBytes: number;
  private readonly timeoutMs: number;
  private readonly now: () => Date;

  constructor(options: PerplexityClientOptions = {}) {
    this.baseURL = (options.baseURL ?? PERPLEXITY_BASE_URL).replace(/\/+$/, "");
    this.model = options.model ?? DEFAULT_PERPLEXITY_MODEL;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.now = options.now ?? (() => new Date());
  }

  async research(query: string, credentials: PerplexityCredentials, options: CallOptions): Promise<ResearchAnswer> {
    const { signal } = options;
    // One SDK client per call: each organization brings its own key, and the capped fetch
    // carries this call's deadline. Building one costs microseconds and holds no sockets.
    const client = new OpenAI({
      apiKey: credentials.apiKey,
      baseURL: this.baseURL,
      // Never send OpenAI's organization or project headers (read from OPENAI_* variables) to Perplexity.
      organization: null,
      project: null,
      maxRetries: 0,
      timeout: this.timeoutMs,
      fetch: cappedFetch({ provider: PROVIDER, maxBytes: this.maxResponseBytes, signal }),
    });
    let completion: unknown;
    try {
      completion = await client.chat.completions.create(
        {
          model: this.model,
          messages: [
            { role: "system", content: SYSTEM_PROMPT },
            { role: "user", content: query },
          ],
        },
        { signal, maxRetries: 0 },
      );
    } catch (error) {
      throw perplexityFailure(error);
    }
    return this.parse(completion, options.limit);
  }

  /** Reads the documented shape; anything else is BAD_RESPONSE, never a crash or raw text. */
  private parse(completion: unknown, limit: number): ResearchAnswer {
    if (!isRecord(completion) || !Array.isArray(completion.choices)) {
      throw new ExternalApiError("BAD_RESPONSE", PROVIDER, "answered without `choices`: not a chat completion");
    }
    const first: unknown = completion.choices[0];
    const message = isRecord(first) && isRecord(first.message) ? first.message : undefined;
    // No choice, or a choice without text, is an empty answer (nothing found), not a failure.
    const content = message?.content;
    if (content !== undefined && content !== null && typeof content !== "string") {
      throw new ExternalApiError("BAD_RESPONSE", PROVIDER, "answered with a message whose content is not text");
    }
    const usage = isRecord(completion.usage) ? completion.usage : {};
    return {
      answer: plainText(content ?? "", MAX_ANSWER_CHARS),
      citations: this.citations(completion, limit),
      model: plainText(completion.model, MAX_MODEL_CHARS) || this.model,
      usage: { promptTokens: tokenCount(usage.prompt_tokens), completionTokens: tokenCount(usage.completion_tokens) },
    };
  }

  private citations(completion: Record<string, unknown>, limit: number): WebResultData[] {
    const fetchedAt = this.now();
    const keep = Math.max(1, Math.min(limit, MAX_CITATIONS));
    const searchResults = Array.isArray(completion.search_results) ? completion.search_results.slice(0, MAX_CITATIONS) : [];
    const described = new Map<string, { title: string; snippet: string }>();
    for (const entry of searchResults) {
      if (!isRecord(entry)) continue;
      const url = safeUrl(entry.url);
      if (url && !described.has(url)) {
        described.set(url, { title: plainText(entry.title, MAX_TITLE_CHARS), snippet: plainText(entry.snippet, MAX_SNIPPET_CHARS) });
      }
    }
    // `citations` fixes the numbering the answer's markers use; without it, search_results' order does.
    const urls: unknown[] = Array.isArray(completion.citations)
      ? completion.citations.slice(0, MAX_CITATIONS)
      : searchResults.map((entry) => (isRecord(entry) ? entry.url : undefined));
    const results: WebResultData[] = [];
    const seen = new Set<string>();
    urls.forEach((raw, index) => {
      const url = safeUrl(raw);
      // A javascript: or malformed URL is dropped; its number stays taken so [n] still matches.
      if (!url || seen.has(url) || results.length >= keep) return;
      seen.add(url);
      const description = described.get(url);
      results.push({
        url,
        title: description?.title || hostOf(url),
        snippet: description?.snippet ?? "",
        position: index + 1,
        provider: PROVIDER,
        fetchedAt,
      });
    });
    return results;
  }
}

/**
 * The SDK's errors as our kinds. Order matters: APIUserAbortError and APIConnectionTimeoutError
 * are APIErrors without a status, and APIConnectionError wraps whatever our fetch threw.
 */
export function perplexityFailure(error: unknown): ExternalApiError {
  if (error instanceof ExternalApiError) return error;
  // Our signal is the call's deadline: the SDK reports its firing as a user abort.
  if (error instanceof APIUserAbortError || error instanceof APIConnectionTimeoutError) {
    return new ExternalApiError("TIMEOUT", PROVIDER, "did not answer in time");
  }
  if (error instanceof APIConnectionError) {
    const cause = (error as { cause?: unknown }).cause;
    // TOO_LARGE (or a deadline hit while reading the body) from capped-fetch, wrapped by the SDK.
    if (cause instanceof ExternalApiError) return cause;
    return new ExternalApiError("UPSTREAM_ERROR", PROVIDER, "could not be reached (connection refused, reset or DNS failure)");
  }
  if (error instanceof AuthenticationError || error instanceof PermissionDeniedError) {
    return new ExternalApiError("UNAUTHORIZED", PROVIDER, `refused the API key (HTTP ${error.status}): check the Perplexity key`, undefined, error.status);
  }
  if (error instanceof RateLimitError) {
    return new ExternalApiError("RATE_LIMITED", PROVIDER, "is rate limiting these calls (HTTP 429)", retryAfterOf(error.headers), 429);
  }
  if (error instanceof InternalServerError || (error instanceof APIError && typeof error.status === "number")) {
    const status = error.status as number;
    const kind = kindOfStatus(status);
    const retryAfterMs = status === 503 ? retryAfterOf(error.headers) : undefined;
    return new ExternalApiError(kind, PROVIDER, kind === "BAD_REQUEST" ? `refused the request (HTTP ${status})` : `is failing (HTTP ${status})`, retryAfterMs, status);
  }
  // A 200 whose body is not JSON: the SDK's response.json() throws a SyntaxError (tested by name:
  // it comes from the fetch implementation's realm, where `instanceof` may not see it).
  if ((error as Error | undefined)?.name === "SyntaxError") {
    return new ExternalApiError("BAD_RESPONSE", PROVIDER, "answered with something that is not JSON");
  }
  return new ExternalApiError("UPSTREAM_ERROR", PROVIDER, "failed in an unexpected way");
}

// The SDK itself honours `retry-after-ms` (an OpenAI extension) before `retry-after`; so do we.
function retryAfterOf(headers: Headers | undefined): number | undefined {
  const ms = headers?.get("retry-after-ms");
  if (ms && /^\d{1,10}(\.\d+)?$/.test(ms.trim())) return Math.min(MAX_RETRY_AFTER_MS, Math.ceil(Number(ms)));
  return parseRetryAfter(headers?.get("retry-after"));
}

function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;
}

function hostOf(url: string): string {
  return new URL(url).hostname.replace(/^www\./, "");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
