/**
 * `SearchHit.highlights`: the passages of each hit's text that matched the query. The search
 * subgraph reads no domain's tables: each domain answers for its own hits (DomainSearch.highlights,
 * one statement for all of a page's hits of that domain), and this per-request DataLoader gathers
 * the whole page's hits into one batch, so a page costs at most one statement per domain present
 * on it, however many hits it holds. Highlights are computed for the page being returned, also
 * when the page came from the result cache: the cache keeps references, not text.
 */
import DataLoader from "dataloader";
import { badUserInput } from "../../lib/graphql/errors.js";
import { MAX_HIGHLIGHTS_PER_HIT, type HighlightPassage } from "../../lib/retrieval/highlights.js";
import type { DomainSearch, EntityRef } from "../../lib/retrieval/search-provider.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { toPlainLines } from "./plain-text.js";
import { describeProviderError, type SearchResultData } from "./search-service.js";
import { SharedProviderCalls } from "./shared-provider-calls.js";

/** One domain's highlights for one batch of hits, as SharedProviderCalls keeps it. */
interface DomainHighlights {
  passages: Map<string, HighlightPassage[]>;
  keep: boolean;
}

/**
 * Highlight statements shared by identical batches in flight, across requests: a client that
 * streams a search with `@defer` sends the gateway one operation, which asks this subgraph twice
 * at once (the LOCAL providers' page, then every provider's), and where no slow provider adds a
 * hit the two pages are the same hits, so the second batch joins the first one's statements
 * rather than running them again: the biggest statements of a streamed search on PGlite, which
 * runs one statement at a time (measured in the `npm start` stack: 4 highlights statements of
 * about 10 ms per keystroke's search, 2 after). Only calls in flight are shared (nothing kept
 * after it arrived), keyed by the caller as provider calls are.
 */
export function createSharedHighlights(): SharedProviderCalls<DomainHighlights> {
  return new SharedProviderCalls<DomainHighlights>(0);
}

/** One hit's highlights as asked: its entity, the query it was found by, how many passages. */
export interface HighlightRequest {
  ref: EntityRef;
  query: string;
  limit: number;
  /** Longest passage, in UTF-16 code units (default: a results list's MAX_HIGHLIGHT_LENGTH; answers ask longer). */
  windowLength?: number;
}

/** What a result's highlights match: the query, and the words typo tolerance searched for its misspelled ones. */
export const highlightQuery = (result: Pick<SearchResultData, "query" | "corrections">): string =>
  result.corrections?.length ? `${result.query} ${result.corrections.flatMap((correction) => correction.searchedAs).join(" ")}` : result.query;

/** Requests that share a query and a window share a statement per domain. */
const groupOf = (request: HighlightRequest) => `${request.windowLength ?? 0}\u0000${request.query}`;

/** `SearchHit.highlights(limit:)`, checked: 1 to MAX_HIGHLIGHTS_PER_HIT. */
export function validateHighlightLimit(limit: number | null | undefined): number {
  const value = limit ?? 3;
  if (!Number.isInteger(value) || value < 1 || value > MAX_HIGHLIGHTS_PER_HIT) {
    throw badUserInput("limit", `highlights(limit:) must be between 1 and ${MAX_HIGHLIGHTS_PER_HIT}, got ${value}`);
  }
  return value;
}

/**
 * One per request (made after the tenant is known). Hits asked with different limits (aliases)
 * still share one statement per domain: each domain is asked for the largest, and each hit keeps
 * its own number. A domain whose statement fails fails only its own hits' highlights.
 */
export function createHighlightLoader(domains: readonly DomainSearch[], tenant: TenantContext, shared: SharedProviderCalls<DomainHighlights> = createSharedHighlights()): DataLoader<HighlightRequest, HighlightPassage[], string> {
  return new DataLoader<HighlightRequest, HighlightPassage[], string>(
    async (requests) => {
      // Grouped by query and window: each group is one statement per domain.
      const byQuery = new Map<string, HighlightRequest[]>();
      for (const request of requests) byQuery.set(groupOf(request), [...(byQuery.get(groupOf(request)) ?? []), request]);
      const answers = new Map<string, HighlightPassage[]>();
      // Which domain owns a reference is the domain's business: a failure is every unanswered hit's.
      const failures = new Map<string, Error>();
      await Promise.all(
        [...byQuery].map(async ([groupKey, group]) => {
          const { query, windowLength } = group[0]!;
          const refs = group.map((request) => request.ref);
          const limit = Math.max(...group.map((request) => request.limit));
          await Promise.all(
            domains.map(async (domain) => {
              if (!domain.highlights) return;
              try {
                const options = { limit, ...(windowLength ? { windowLength } : {}) };
                // The same batch in any order is the same statement.
                const batch = [...new Set(refs.map((ref) => `${ref.typename}:${ref.id}`))].sort();
                const { outcome } = await shared.run(`highlights:${domain.domain}`, tenant, query, { batch, options }, async () => ({
                  passages: await domain.highlights!(tenant, refs, query, options),
                  keep: true,
                }));
                for (const [key, passages] of outcome.passages) answers.set(`${groupKey}\u0000${key}`, passages);
              } catch (error) {
                const failure = new Error(`the ${domain.domain} highlights could not be read: ${describeProviderError(error)}`);
                for (const ref of refs) failures.set(`${groupKey}\u0000${ref.typename}:${ref.id}`, failure);
              }
            }),
          );
        }),
      );
      return requests.map((request) => {
        const key = `${groupOf(request)}\u0000${request.ref.typename}:${request.ref.id}`;
        // Domains name uuids as PostgreSQL prints them, in lowercase.
        const answer = answers.get(key) ?? answers.get(`${groupOf(request)}\u0000${request.ref.typename}:${request.ref.id.toLowerCase()}`);
        const failure = failures.get(key);
        if (!answer && failure) return failure;
        // Control characters but the line breaks between blocks become spaces (one code unit for
        // one), so the ranges stay where they were.
        return (answer ?? []).slice(0, request.limit).map((passage) => ({ ...passage, text: toPlainLines(passage.text) }));
      });
    },
    {
      cacheKeyFn: (request) => JSON.stringify([request.query, request.limit, request.windowLength ?? null, request.ref.typename, request.ref.id]),
      // A page holds at most 100 hits, and a saved search run's newHits repeats them.
      maxBatchSize: 200,
    },
  );
}
