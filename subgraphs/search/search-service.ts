/**
 * The search pipeline behind `Query.search`: validate the input, look in the result cache, ask
 * every provider in parallel (each with its own timeout), fuse their lists with weighted RRF,
 * cut the page, cache it, and log the query without waiting for the write.
 */
import { createHash, randomUUID } from "node:crypto";
import { databaseFault, sqlStateOf } from "../../lib/database/faults.js";
import { badUserInput } from "../../lib/graphql/errors.js";
import { decodeCursor, encodeCursor, MAX_PAGE_SIZE, type PageInfo } from "../../lib/graphql/pagination.js";
import type { Logger } from "../../lib/logger.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { DEFAULT_FUSION, FUSION_METHODS, firstOfEachRanking, type FusedHit, providerWeight, stitchSegments, type Contribution, type EntityRef, type FusionMethod, type ProviderKind, type RankedList, type Segment } from "./fusion.js";
import { toPlainText } from "./plain-text.js";
import { SpanStatusCode, withSpan } from "../../lib/observability/tracing.js";
import { SearchProviderSkippedError, type ProviderHit, type ProviderLatency, type ProviderRequest, type SearchProvider } from "../../lib/retrieval/search-provider.js";
import { queryCorrections, suggestQuery, type QueryCorrection, type WordCorrection } from "../../lib/retrieval/typo-tolerance.js";
import { SharedProviderCalls } from "./shared-provider-calls.js";
import type { QueryLog } from "./query-log.js";
import type { ResultCache } from "../../lib/cache/result-cache.js";
import type { SubgraphMetrics } from "../../lib/observability/subgraph-metrics.js";
import { FairShareQueue } from "../../lib/workers/fair-share.js";
import { CONVENTIONAL_ALPHA, type DefaultAlpha } from "../../lib/retrieval/embeddings/default-alpha.js";
import { filterFieldsSet, type HitAttributes, type SearchFilter } from "../../lib/retrieval/search-filter.js";
import { computeFacets, type SearchFacetsData } from "./facets.js";
import { filterIdentity, normalizeFilter, type SearchFilterInput } from "./search-filter-input.js";

export const MAX_QUERY_LENGTH = 1_000;
/** Deepest provider window: results go at most half as deep (the window is 2 × (offset + limit)). */
export const MAX_WINDOW = 1_000;
/**
 * Shallowest provider window, whatever the page size: the first page of a search ranks the same
 * whether it asks for 1 hit or 20. A normalized fusion reads the spread of each provider's list
 * (fusion.ts), which two hits cannot show, and RRF sums ranks that a shallow window cuts off.
 */
export const MIN_WINDOW = 40;
/**
 * The relevance (ProviderHit.relevance: the share of what the query asks for that a hit's BM25
 * covers) below which a hit is a weak match, when the search names none (SearchInput.relevanceFloor).
 * Chosen by measurement (npm run eval -- --floor, docs/search.md "Relevance floor"): on SciFact,
 * where it balances the two errors (3 in 10 unanswerable queries pass it, 3 in 10 relevant top hits
 * fall below it), and on the demo, where all 20 judged questions pass it and the questions it does
 * not hold fall below it (test/integration/demo-judged-queries.test.ts).
 */
export const DEFAULT_RELEVANCE_FLOOR = 0.4;
/**
 * How many of the best candidates a NEWEST search orders by date (SearchInput.sort): each
 * provider's window, and the fused list's length at most. One fixed window, so every page of it
 * is cut from the same list.
 */
export const NEWEST_CANDIDATES = 100;
export const SEARCH_SORTS = ["RELEVANCE", "NEWEST"] as const;
export type SearchSort = (typeof SEARCH_SORTS)[number];
/** Windows at least double from MIN_WINDOW to MAX_WINDOW, so a genuine cursor never holds more segments than this. */
const MAX_SEGMENTS = 12;

export interface SearchInput {
  query: string;
  alpha?: number | null;
  limit?: number | null;
  after?: string | null;
  providers?: string[] | null;
  weights?: { provider: string; weight: number }[] | null;
  /** How the providers' lists are fused (fusion.ts); left out, the service's default. */
  fusion?: FusionMethod | null;
  /** Each document once, at its best chunk, the others as its moreMatches (default true). */
  distinct?: boolean | null;
  rrfK?: number | null;
  minScore?: number | null;
  /** The relevance below which hits count as weak matches (SearchResultData.weakMatches); default DEFAULT_RELEVANCE_FLOOR. */
  relevanceFloor?: number | null;
  filter?: SearchFilterInput | null;
  /** Expand misspelled words and suggest a corrected query (default true). */
  typoTolerance?: boolean | null;
  /** Only ask providers of this latency (LOCAL: the page a client shows before the `@defer`red full one). */
  latency?: ProviderLatency | null;
  /** RELEVANCE (default) or NEWEST: the best NEWEST_CANDIDATES, newest first. */
  sort?: SearchSort | null;
}

/** What the caller asked for beyond the page itself (the resolver knows from the selection). */
export interface SearchOptions {
  /** Count facets over the fused candidates; a search that does not ask pays nothing for them. */
  facets?: boolean;
}

export type ProviderStatus = "OK" | "TIMEOUT" | "ERROR" | "SKIPPED";

export interface ProviderReport {
  name: string;
  kind: ProviderKind;
  status: ProviderStatus;
  tookMs: number;
  returned: number;
  error: string | null;
}

export interface SearchHitData {
  score: number;
  ref: EntityRef;
  explanation: Contribution[];
  /** The hit's group's other members (a document's other matching chunks), best first. */
  moreMatches: EntityRef[];
  /** How much of the query it covers, 0 to 1 (ProviderHit.relevance, the best of its hits); null when no provider measured it. */
  relevance: number | null;
}

export interface SearchResultData {
  /**
   * This request's own id (a UUID): its query log row's, which clicks on its hits name
   * (`recordSearchClick`). Fresh for every request, a page from the result cache too: it is
   * never stored with a cached page (StoredPage), so no caller ever gets another's id.
   */
  searchId: string;
  /** The query as the providers saw it (control characters as spaces, trimmed): what highlights match. */
  query: string;
  hits: SearchHitData[];
  pageInfo: PageInfo;
  providers: ProviderReport[];
  tookMs: number;
  cached: boolean;
  /** Present when asked for (SearchOptions.facets). */
  facets?: SearchFacetsData;
  /** "Did you mean": the corrected query, when it finds documents the query as typed cannot (typo-tolerance.ts); else null. */
  suggestion: string | null;
  /**
   * What typo tolerance searched for the query's misspelled words (typo-tolerance.ts): a hit
   * found through "deadlock" for "deadlcok" has "deadlock" marked in its highlights too. Empty
   * when nothing was corrected.
   */
  corrections: QueryCorrection[];
  /**
   * Whether nothing matched well: no hit of the fused list (every page of it, not this page only)
   * reaches the relevance floor, and every hit's relevance was measured (an empty list included).
   */
  weakMatches: boolean;
  /** The floor `weakMatches` was judged by. */
  relevanceFloor: number;
}

/** What the result cache keeps of a page: everything but the request's own id. */
type StoredPage = Omit<SearchResultData, "searchId">;

interface NormalizedInput {
  query: string;
  alpha: number;
  /** The caller gave no alpha: `alpha` is the deployment's default (see `weightOf`). */
  alphaIsDefault: boolean;
  limit: number;
  fusion: FusionMethod;
  distinct: boolean;
  rrfK: number;
  minScore: number | null;
  relevanceFloor: number;
  filter: SearchFilter;
  typoTolerance: boolean;
  latency: ProviderLatency | null;
  sort: SearchSort;
  /** Effective weight multiplier per provider; absent = not asked. */
  multipliers: Map<string, number>;
  /** Hash of everything that defines the result list (not the page): cursors carry it. */
  listHash: string;
  offset: number;
  segments: Segment[];
}

/**
 * Which of these entities still exist for this tenant. A cached page may name an entity that was
 * deleted since; its subgraph would then resolve it to null. Cached pages drop such hits.
 */
export type LiveEntityFilter = (tenant: TenantContext, refs: EntityRef[]) => Promise<Set<string>>;

/**
 * Whether anything the tenant may find changed after `since` (a document shared with them, made
 * searchable): a cached page searched before then may lack it, so it is not served.
 */
export type ChangedSinceCheck = (tenant: TenantContext, since: Date) => Promise<boolean>;

/**
 * How much earlier than it started a page counts as searched, for `changedSince`. None: with a
 * margin, a document made READY in the seconds before a search made every repeat of it a miss
 * until the margin had passed, so whether a page was served from the cache depended on how fast
 * the machine was. What a margin would catch, a change whose writer's clock (`updated_at` is the
 * writer's transaction start) is behind this process's, or one that commits while the search
 * runs, is instead served at most until the page expires (the cache's TTL), as before
 * `changedSince` existed.
 */
const CHANGE_CLOCK_MARGIN_MS = 0;

/** A page as the cache keeps it: with when its search started, for `changedSince`. */
type CachedPage = StoredPage & { searchedAt: number };

export interface SearchServiceOptions {
  providers: SearchProvider[];
  /**
   * Told about every page returned (fresh or cached), after the answer is built: domains count
   * usage from it (documents' usageCount). Must not throw or wait.
   */
  onPage?: (tenant: TenantContext, refs: EntityRef[]) => void;
  /** Re-checks cached hits; without it cached pages are served as they were stored. */
  liveEntities?: LiveEntityFilter;
  /** Whether a cached page may lack something the tenant may now find; without it, pages are served for their TTL. */
  changedSince?: ChangedSinceCheck;
  cache: ResultCache;
  cacheTtlSeconds: number;
  providerTimeoutMs: number;
  queryLog: QueryLog | null;
  /** Where a provider's full failure goes (its report carries only a one-line reason). */
  logger?: Logger;
  /** The subgraph's metrics: each called provider's status and latency, and cache hits and misses. */
  metrics?: Pick<SubgraphMetrics, "recordProvider" | "recordCacheLookup">;
  /**
   * The alpha of searches that give none, for the deployment's embedder (resolveDefaultAlpha).
   * Unset: the conventional 0.5, as for an embedder that measured nothing.
   */
  defaultAlpha?: DefaultAlpha;
  /** The fusion of searches that name none (default: DEFAULT_FUSION, fusion.ts, chosen by the partitioned evaluation). */
  defaultFusion?: FusionMethod;
  /**
   * How long a provider's successful answer is reused by an identical call (same caller, provider,
   * query, window, filter and typo tolerance) after it arrived; calls in flight are always
   * shared. Default 0: only calls in flight. An answer kept after it arrived would be served
   * without the checks a cached page gets (a conversation deleted or created a moment ago would
   * be missing or still there), and the two searches of a `@defer` operation reach the service
   * together, so the second one joins the first one's calls while they run.
   */
  sharedCallKeepMs?: number;
  /**
   * Turns for the searches themselves (SEARCH_CONCURRENCY): at most so many run at once, one
   * organization's at most so many of them, the rest waiting in round-robin order by
   * organization. Without it every search starts at once.
   */
  turns?: FairShareQueue;
}

/**
 * The turns of a search subgraph's searches: `running` at once, `perOrganization` of them for one
 * organization (below `running`, so another organization's search starts at once), the others
 * waiting by organization in round-robin order. A search holds a connection's worth of database
 * reads and a share of the event loop; 24 aliased searches of one organization (and their
 * `@defer` parts) used to start together and put every other organization's search behind them
 * on both. Waiting is bounded: 200 of one organization's searches, 2,000 in all, and 8 s (under the
 * gateway's 10 s upstream timeout), past which a search is OVERLOADED.
 */
export function searchTurns({ running, perOrganization }: { running: number; perOrganization: number }): FairShareQueue {
  return new FairShareQueue({ name: "search", maxRunning: running, maxRunningPerKey: perOrganization, maxQueuedPerKey: 200, maxQueued: 2_000, maxWaitMs: 8_000 });
}

/** What one provider call gave: its report, its hits, and the typo corrections a keyword provider used ("did you mean"). */
type CallOutcome = { report: Omit<ProviderReport, "name" | "kind">; hits: ProviderHit[] | null; transientSkip?: boolean; keep: boolean; corrections: WordCorrection[] };

/** The longest a just-finished provider answer is reused (SearchServiceOptions.sharedCallKeepMs). */
const MAX_SHARED_CALL_KEEP_MS = 3_000;

export class SearchService {
  private readonly providers: Map<string, SearchProvider>;
  readonly defaultAlpha: DefaultAlpha;
  readonly defaultFusion: FusionMethod;
  private readonly sharedCalls: SharedProviderCalls<CallOutcome>;

  constructor(private readonly options: SearchServiceOptions) {
    this.providers = new Map(options.providers.map((provider) => [provider.name, provider]));
    this.defaultFusion = options.defaultFusion ?? DEFAULT_FUSION;
    this.sharedCalls = new SharedProviderCalls(Math.min(options.sharedCallKeepMs ?? 0, MAX_SHARED_CALL_KEEP_MS));
    this.defaultAlpha = options.defaultAlpha ?? {
      alpha: CONVENTIONAL_ALPHA,
      embedder: "none",
      embedderAlpha: { alpha: CONVENTIONAL_ALPHA, basis: "CONVENTIONAL", source: "no embedder given to the search service: the conventional hybrid default" },
      overridden: false,
    };
  }

  /**
   * Whether the default alpha speaks for this provider: keyword providers, and semantic ones
   * that rank with the embedder the default was chosen for. A semantic provider with a model of
   * its own (the `knowledge-bases` provider asks Bedrock and S3 Vectors) was never measured
   * against our keyword providers, so a default that silences our embedder must not silence it.
   */
  followsDefaultAlpha(provider: Pick<SearchProvider, "kind" | "embeddingModel">): boolean {
    return provider.kind === "KEYWORD" || provider.embeddingModel === this.defaultAlpha.embedder;
  }

  /** The weight a provider gets without an alpha and without a multiplier (for `searchProviders`). */
  defaultWeight(provider: SearchProvider): number {
    return providerWeight(provider.kind, this.followsDefaultAlpha(provider) ? this.defaultAlpha.alpha : CONVENTIONAL_ALPHA);
  }

  /**
   * An explicit alpha weighs every provider, as it always did. Without one, providers the
   * default speaks for get the default; the others are weighted as at the conventional 0.5.
   */
  private weightOf(provider: SearchProvider, input: NormalizedInput, multiplier: number): number {
    const alpha = input.alphaIsDefault && !this.followsDefaultAlpha(provider) ? CONVENTIONAL_ALPHA : input.alpha;
    return providerWeight(provider.kind, alpha, multiplier);
  }

  private skipReason(provider: SearchProvider, input: NormalizedInput, multiplier: number | undefined): string {
    if (input.latency !== null && provider.latency !== input.latency) return `its latency is ${provider.latency}; input.latency asks ${input.latency} providers only`;
    if (multiplier === undefined) return "not among input.providers";
    if (multiplier === 0) return "its weight is 0";
    const kind = provider.kind.toLowerCase();
    if (!input.alphaIsDefault) return `alpha ${input.alpha} gives ${kind} providers no weight`;
    const basis = this.defaultAlpha.overridden ? "set by SEARCH_DEFAULT_ALPHA" : `${this.defaultAlpha.embedderAlpha.basis.toLowerCase()} for ${this.defaultAlpha.embedder}`;
    return `the default alpha ${input.alpha} (${basis}) gives ${kind} providers no weight: pass alpha to ask them`;
  }

  get providerList(): SearchProvider[] {
    return [...this.providers.values()];
  }

  /**
   * Checks an input exactly as `search` would, without running it (saved searches check what
   * they store with it), and returns the query as the providers would see it and the filter
   * normalized.
   */
  validate(raw: SearchInput, tenant: TenantContext): { query: string; filter: SearchFilter } {
    const { query, filter } = this.normalize(raw, tenant);
    return { query, filter };
  }

  async search(tenant: TenantContext, raw: SearchInput, options: SearchOptions = {}): Promise<SearchResultData> {
    const startedAt = performance.now();
    // Bad input is refused at once, before the search waits for its turn.
    const input = this.normalize(raw, tenant);
    const turns = this.options.turns;
    return turns ? turns.run(tenant.organizationId, () => this.run(tenant, input, options, startedAt)) : this.run(tenant, input, options, startedAt);
  }

  private async run(tenant: TenantContext, input: NormalizedInput, options: SearchOptions, startedAt: number): Promise<SearchResultData> {
    const searchedAt = Date.now();
    const withFacets = options.facets === true;
    const cacheKey = this.cacheKey(tenant, input, withFacets);

    const cached = await this.options.cache.get(cacheKey);
    const stored = cached ? (JSON.parse(cached) as CachedPage) : null;
    // Both checks at once: a page still good pays one round trip for them, not two.
    const [changed, live] = stored
      ? await Promise.all([
          this.options.changedSince?.(tenant, new Date(stored.searchedAt - CHANGE_CLOCK_MARGIN_MS)) ?? false,
          this.options.liveEntities && stored.hits.length > 0 ? this.options.liveEntities(tenant, stored.hits.flatMap((hit) => [hit.ref, ...hit.moreMatches])) : null,
        ])
      : [false, null];
    // With a TTL of 0 nothing is ever stored: every lookup would count as a miss of a cache that is off.
    if (this.options.cacheTtlSeconds > 0) this.options.metrics?.recordCacheLookup(stored && !changed ? "hit" : "miss");
    if (stored && !changed) {
      const { searchedAt: _searchedAt, ...kept } = stored;
      let hits = kept.hits;
      if (live) {
        const isLive = (ref: EntityRef) => live.has(`${ref.typename}:${ref.id}`);
        hits = hits.filter((hit) => isLive(hit.ref)).map((hit) => ({ ...hit, moreMatches: hit.moreMatches.filter(isLive) }));
      }
      const page: StoredPage = { ...kept, query: input.query, hits, cached: true, tookMs: performance.now() - startedAt };
      return { ...page, searchId: this.log(tenant, input, page) };
    }

    // A distinct page can come out short while the providers' windows were full: the window held
    // the chunks of fewer documents than the page needs. The window then deepens (doubling, as
    // paging does) until the page is full or the lists run out; the cursor records it.
    let asked = await this.askProviders(tenant, input);
    let fused = stitchSegments(asked.lists, input.segments, { method: input.fusion, distinct: input.distinct, k: input.rrfK, minScore: input.minScore });
    while (input.sort === "RELEVANCE" && input.distinct && fused.length < input.offset + input.limit && asked.someListFull && input.segments.at(-1)!.window < MAX_WINDOW) {
      input.segments = deepened(input.segments, input.offset);
      asked = await this.askProviders(tenant, input);
      fused = stitchSegments(asked.lists, input.segments, { method: input.fusion, distinct: input.distinct, k: input.rrfK, minScore: input.minScore });
    }
    const { reports, lists, selfSkipped, corrections, someListFull } = asked;
    const window = input.segments.at(-1)!.window;
    // A hit's attributes from whichever provider returned them (the same item, the same values).
    const attributes = new Map<string, HitAttributes>();
    if (withFacets || input.sort === "NEWEST") {
      for (const list of lists) for (const hit of list.hits) if (hit.attributes) attributes.set(`${hit.ref.typename}:${hit.ref.id}`, { ...hit.attributes, ...attributes.get(`${hit.ref.typename}:${hit.ref.id}`) });
    }
    const attributesOf = (hit: FusedHit) => attributes.get(`${hit.ref.typename}:${hit.ref.id}`);
    const facets: SearchFacetsData | undefined = withFacets ? computeFacets(fused, attributesOf) : undefined;
    if (input.sort === "NEWEST") fused = newestFirst(fused.slice(0, NEWEST_CANDIDATES), attributesOf);
    const page = fused.slice(input.offset, input.offset + input.limit);
    // A NEWEST list is its one window's best candidates: it ends where they do.
    const mayDeepen = input.sort === "RELEVANCE" && someListFull && window < MAX_WINDOW && page.length === input.limit;
    const hasNextPage = fused.length > input.offset + input.limit || mayDeepen;
    const cursorAt = (position: number) => encodeCursor("s", [input.listHash, position, input.segments.map((segment) => [segment.window, segment.start])]);

    const queryCorrected = input.typoTolerance ? queryCorrections(input.query, corrections) : [];
    const result: StoredPage = {
      query: input.query,
      hits: page.map((hit) => ({ score: hit.score, ref: hit.ref, explanation: hit.contributions, moreMatches: hit.moreMatches, relevance: hit.relevance ?? null })),
      pageInfo: {
        hasNextPage,
        hasPreviousPage: input.offset > 0,
        startCursor: page.length > 0 ? cursorAt(input.offset + 1) : null,
        endCursor: page.length > 0 ? cursorAt(input.offset + page.length) : null,
      },
      providers: reports,
      tookMs: performance.now() - startedAt,
      cached: false,
      ...(facets ? { facets } : {}),
      suggestion: suggestQuery(input.query, queryCorrected),
      corrections: queryCorrected,
      weakMatches: fused.every((hit) => hit.relevance !== undefined && hit.relevance < input.relevanceFloor),
      relevanceFloor: input.relevanceFloor,
    };
    // A degraded answer (a provider failed or timed out) is not cached: the next request may do better.
    // So is one where a provider skipped itself (breaker open, budget spent): that passes too.
    // Not awaited: the page does not wait for its own caching, so a slow Redis (up to its command
    // timeout) costs the next request a miss, never this one its latency. Sent before the answer
    // leaves, on the cache's one connection, so a lookup sent after the answer finds it.
    if (this.options.cacheTtlSeconds > 0 && !selfSkipped && reports.every((report) => report.status === "OK" || report.status === "SKIPPED")) {
      void this.options.cache.set(cacheKey, JSON.stringify({ ...result, searchedAt } satisfies CachedPage), this.options.cacheTtlSeconds);
    }
    return { ...result, searchId: this.log(tenant, input, result) };
  }

  /** Asks every provider the input weighs, in parallel, for the input's deepest window. */
  private async askProviders(tenant: TenantContext, input: NormalizedInput) {
    const window = input.segments.at(-1)!.window;
    const reports: ProviderReport[] = [];
    const lists: RankedList[] = [];
    let selfSkipped = false;
    const corrections: WordCorrection[] = [];
    await Promise.all(
      [...this.providers.values()].map(async (provider) => {
        const multiplier = input.multipliers.get(provider.name);
        const weight = multiplier === undefined ? 0 : this.weightOf(provider, input, multiplier);
        const why = weight <= 0 ? this.skipReason(provider, input, multiplier) : filterSkipReason(provider, input.filter);
        if (why !== null) {
          reports.push({ name: provider.name, kind: provider.kind, status: "SKIPPED", tookMs: 0, returned: 0, error: why });
          return;
        }
        // One span per provider call (when the request is traced); its attributes name the provider, never the query.
        // Everything a provider's answer depends on beyond the caller and the query's text: a
        // call is shared only with a search that asked exactly the same.
        const request = { window, filter: filterIdentity(input.filter), typoTolerance: input.typoTolerance, alpha: input.alpha };
        const { outcome, shared } = await this.sharedCalls.run(provider.name, tenant, input.query, request, () =>
          withSpan(`search.provider ${provider.name}`, { "search.provider.name": provider.name, "search.provider.kind": provider.kind }, async (span) => {
            const called = await this.callProvider(provider, tenant, input.query, window, input.filter, input.typoTolerance, input.alpha);
            span?.setAttributes({ "search.provider.status": called.report.status, "search.provider.hits": called.report.returned });
            if (called.report.status === "ERROR" || called.report.status === "TIMEOUT") span?.setStatus({ code: SpanStatusCode.ERROR, message: called.report.status });
            return called;
          }),
        );
        // A shared answer is one provider call, counted once by whoever made it.
        if (!shared) this.options.metrics?.recordProvider(provider.name, outcome.report.status, outcome.report.tookMs);
        // A shared answer carries the corrections its call found, so "did you mean" is the same either way.
        corrections.push(...outcome.corrections);
        if (outcome.transientSkip) selfSkipped = true;
        reports.push({ name: provider.name, kind: provider.kind, ...outcome.report });
        // A hit one of our own rankings scored inside this provider (rankedAs) weighs as that
        // ranking's kind at this search's alpha (the caller's, or the default for our embedder).
        const kindWeights = multiplier === undefined ? undefined : { KEYWORD: providerWeight("KEYWORD", input.alpha, multiplier), SEMANTIC: providerWeight("SEMANTIC", input.alpha, multiplier) };
        if (outcome.hits) lists.push({ provider: provider.name, kind: provider.kind, weight, hits: outcome.hits, ...(provider.scoreScale ? { scale: provider.scoreScale } : {}), ...(kindWeights ? { kindWeights } : {}) });
      }),
    );
    // Lists and reports in registry order, whatever order the providers finished in.
    const order = [...this.providers.keys()];
    reports.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
    lists.sort((a, b) => order.indexOf(a.provider) - order.indexOf(b.provider));
    return { reports, lists, selfSkipped, corrections, someListFull: lists.some((list) => list.hits.length >= window) };
  }

  private async callProvider(provider: SearchProvider, tenant: TenantContext, query: string, window: number, filter: SearchFilter, typoTolerance: boolean, alpha: number): Promise<CallOutcome> {
    const corrections: WordCorrection[] = [];
    const typos: Pick<ProviderRequest, "typoTolerance" | "onCorrections"> = { typoTolerance, onCorrections: (found) => void corrections.push(...found) };
    const started = performance.now();
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.options.providerTimeoutMs);
    });
    try {
      const outcome = await Promise.race([provider.search({ tenant, query, window, alpha, signal: controller.signal, timeoutMs: this.options.providerTimeoutMs, ...(filter.kinds || filterFieldsSet(filter).length > 0 ? { filter } : {}), ...typos }), timeout]);
      const tookMs = performance.now() - started;
      if (outcome === "timeout") {
        controller.abort();
        return { report: { status: "TIMEOUT", tookMs, returned: 0, error: `no answer within ${this.options.providerTimeoutMs} ms` }, hits: null, keep: false, corrections };
      }
      const hits = firstOfEachRanking(outcome, window);
      return { report: { status: "OK", tookMs, returned: hits.length, error: null }, hits, keep: true, corrections };
    } catch (error) {
      if (error instanceof SearchProviderSkippedError) {
        return { report: { status: "SKIPPED", tookMs: performance.now() - started, returned: 0, error: describeProviderError(error) }, hits: null, transientSkip: error.transient, keep: false, corrections };
      }
      this.options.logger?.warn(`search provider ${provider.name} failed: ${error instanceof Error ? error.message : String(error)}`);
      return { report: { status: "ERROR", tookMs: performance.now() - started, returned: 0, error: describeProviderError(error) }, hits: null, keep: false, corrections };
    } finally {
      clearTimeout(timer);
    }
  }

  private normalize(raw: SearchInput, tenant: TenantContext): NormalizedInput {
    if (raw.query.length > MAX_QUERY_LENGTH) throw badUserInput("input.query", `must be at most ${MAX_QUERY_LENGTH} characters, got ${raw.query.length}`);
    // Control characters (NUL included) are spaces, as a search box user means them: every
    // provider, the cache key and the query log then see the same plain text.
    const query = toPlainText(raw.query).trim();
    if (query.length === 0) throw badUserInput("input.query", "must not be empty or only whitespace");

    const alphaIsDefault = raw.alpha == null;
    const alpha = raw.alpha ?? this.defaultAlpha.alpha;
    if (!Number.isFinite(alpha) || alpha < 0 || alpha > 1) throw badUserInput("input.alpha", `must be between 0 and 1, got ${alpha}`);
    const limit = raw.limit ?? 20;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) throw badUserInput("input.limit", `must be between 1 and ${MAX_PAGE_SIZE}, got ${limit}`);
    const fusion = raw.fusion ?? this.defaultFusion;
    if (!FUSION_METHODS.includes(fusion)) throw badUserInput("input.fusion", `must be one of ${FUSION_METHODS.join(", ")}, got ${JSON.stringify(fusion)}`);
    const distinct = raw.distinct ?? true;
    const rrfK = raw.rrfK ?? 60;
    if (!Number.isInteger(rrfK) || rrfK < 1) throw badUserInput("input.rrfK", `must be at least 1, got ${rrfK}`);
    const minScore = raw.minScore ?? null;
    if (minScore !== null && !Number.isFinite(minScore)) throw badUserInput("input.minScore", `must be a finite number, got ${minScore}`);
    const relevanceFloor = raw.relevanceFloor ?? DEFAULT_RELEVANCE_FLOOR;
    if (!Number.isFinite(relevanceFloor) || relevanceFloor < 0 || relevanceFloor > 1) throw badUserInput("input.relevanceFloor", `must be between 0 and 1, got ${relevanceFloor}`);
    const typoTolerance = raw.typoTolerance ?? true;
    const sort = raw.sort ?? "RELEVANCE";
    if (!SEARCH_SORTS.includes(sort)) throw badUserInput("input.sort", `must be one of ${SEARCH_SORTS.join(", ")}, got ${JSON.stringify(sort)}`);

    const known = [...this.providers.keys()];
    const unknown = (name: string) => `unknown provider "${name}"; available: ${known.join(", ")}`;
    const multipliers = new Map<string, number>();
    if (raw.providers != null) {
      if (raw.providers.length === 0) throw badUserInput("input.providers", `must name at least one provider (available: ${known.join(", ")}), or be left out to ask all`);
      for (const name of raw.providers) {
        if (!this.providers.has(name)) throw badUserInput("input.providers", unknown(name));
        multipliers.set(name, 1);
      }
    } else {
      for (const name of known) multipliers.set(name, 1);
    }
    const latency = raw.latency ?? null;
    if (latency !== null && latency !== "LOCAL" && latency !== "REMOTE") throw badUserInput("input.latency", `must be LOCAL or REMOTE, got ${String(latency)}`);
    // Providers of another latency are not asked, as if left out of input.providers: the list
    // (and so its cursors) is the one of the providers asked.
    if (latency !== null) for (const name of known) if (this.providers.get(name)!.latency !== latency) multipliers.delete(name);
    const weighted = new Set<string>();
    for (const { provider, weight } of raw.weights ?? []) {
      if (!this.providers.has(provider)) throw badUserInput("input.weights", unknown(provider));
      if (weighted.has(provider)) throw badUserInput("input.weights", `gives provider "${provider}" more than one weight`);
      if (!Number.isFinite(weight) || weight < 0) throw badUserInput("input.weights", `weight of "${provider}" must be a number of at least 0, got ${weight}`);
      weighted.add(provider);
      if (multipliers.has(provider)) multipliers.set(provider, weight);
    }

    const filter = normalizeFilter(raw.filter, tenant);

    const listHash = createHash("sha256")
      // Whether alpha was the default matters beyond its value: the default weighs providers with
      // models of their own at 0.5 whatever it is (weightOf), so "default 1" and "alpha 1" differ.
      .update(JSON.stringify([query, alpha, alphaIsDefault, fusion, distinct, rrfK, minScore, [...multipliers.entries()].sort(), filterIdentity(filter), typoTolerance, sort]))
      .digest("base64url")
      .slice(0, 16);

    let offset = 0;
    let segments: Segment[] = [];
    if (raw.after) {
      const cursor = decodeCursor(
        raw.after,
        "s",
        "input.after",
        ([hash, position, stored]) =>
          typeof hash === "string" && Number.isInteger(position) && (position as number) >= 0 && Array.isArray(stored) && stored.length > 0 &&
          stored.every((segment) => Array.isArray(segment) && segment.length === 2 && segment.every((n) => Number.isInteger(n) && n >= 0))
            ? { hash, position: position as number, segments: (stored as [number, number][]).map(([window, start]) => ({ window, start })) }
            : null,
        2_048,
      );
      if (cursor.hash !== listHash) {
        throw badUserInput("input.after", "this cursor belongs to a different search (query, alpha or the deployment's default alpha, providers, weights, fusion, distinct, rrfK, minScore, filter or typoTolerance changed): start again without `after`");
      }
      // The cursor is not signed: anyone can forge one with the right hash. Only what this
      // service could have produced is accepted, so no cursor widens a provider's window.
      if (!this.isGenuineCursor(cursor.position, cursor.segments)) {
        throw badUserInput("input.after", "is not a valid cursor for this list: pass a cursor this list returned (pageInfo.endCursor)");
      }
      offset = cursor.position;
      segments = cursor.segments;
    }
    // A NEWEST list is always cut from one window of its best candidates, whatever the page.
    if (sort === "NEWEST") segments = [{ window: NEWEST_CANDIDATES, start: 0 }];
    // Deepen the window when this page needs it, at least doubling it, so a long paging session uses few windows.
    const needed = Math.min(Math.max(MIN_WINDOW, 2 * (offset + limit)), MAX_WINDOW);
    const current = segments.at(-1)?.window ?? 0;
    if (sort === "RELEVANCE" && needed > current) segments = [...segments, { window: Math.min(MAX_WINDOW, Math.max(needed, current * 2)), start: offset }];

    return { query, alpha, alphaIsDefault, limit, fusion, distinct, rrfK, minScore, relevanceFloor, filter, typoTolerance, latency, sort, multipliers, listHash, offset, segments };
  }

  /**
   * Whether this service could have made a cursor with these numbers: windows between 1 and
   * MAX_WINDOW that grow from one segment to the next, starting at 0 and never after the position,
   * and a position within the deepest fused list (each provider's full window, all different).
   */
  private isGenuineCursor(position: number, segments: Segment[]): boolean {
    if (segments.length > MAX_SEGMENTS || position > MAX_WINDOW * this.providers.size) return false;
    if (segments[0]!.start !== 0) return false;
    return segments.every(
      (segment, index) =>
        segment.window >= 1 &&
        segment.window <= MAX_WINDOW &&
        segment.start <= position &&
        (index === 0 || (segment.window > segments[index - 1]!.window && segment.start >= segments[index - 1]!.start)),
    );
  }

  /** Everything that changes the answer, scoped to the caller: their organization, user and teams. */
  private cacheKey(tenant: TenantContext, input: NormalizedInput, withFacets: boolean): string {
    const scope = [tenant.organizationId, tenant.userId, [...tenant.teamIds].sort()];
    // The filter is in listHash; pages with facets are kept apart so pages without stay small.
    // The floor changes weakMatches only, not the list: it is the page's, not the cursor's.
    const page = [input.listHash, input.query, input.offset, input.limit, input.segments.map((s) => [s.window, s.start]), withFacets, input.relevanceFloor];
    // v3: pages carry `searchedAt` (CachedPage); pages stored before are never read, so every
    // field of a stored page is there (SearchResultData has no optional field for old pages).
    return `search:v3:${createHash("sha256").update(JSON.stringify([scope, page])).digest("hex")}`;
  }

  /** Logs the request under a fresh id and returns it (the page's `searchId`). */
  private log(tenant: TenantContext, input: NormalizedInput, result: StoredPage): string {
    if (result.hits.length > 0) this.options.onPage?.(tenant, result.hits.map((hit) => hit.ref));
    const searchId = randomUUID();
    this.options.queryLog?.record({
      id: searchId,
      organizationId: tenant.organizationId,
      userId: tenant.userId,
      query: input.query,
      alpha: input.alpha,
      providers: result.providers.map(({ name, status, tookMs, returned, error }) => ({ name, status, tookMs: Math.round(tookMs), returned, error })),
      results: result.hits.length,
      topScore: result.hits[0]?.score ?? null,
      cacheHit: result.cached,
      tookMs: result.tookMs,
      pageOffset: input.offset,
      latency: input.latency,
    });
    return searchId;
  }
}

/**
 * Why a provider is not called under this filter, or null: its items are none of the kinds
 * asked, or it cannot apply a field the filter sets (it would return hits the filter excludes).
 */
export function filterSkipReason(provider: Pick<SearchProvider, "itemTypes" | "filters">, filter: SearchFilter): string | null {
  if (filter.kinds) {
    const types = provider.itemTypes ?? [];
    if (!types.some((type) => filter.kinds!.has(type))) {
      return `filter.kinds asks for ${[...filter.kinds].join(", ")}; this provider returns ${types.length > 0 ? types.join(", ") : "other kinds"}`;
    }
  }
  const applied = new Set(provider.filters ?? []);
  const missing = filterFieldsSet(filter).filter((field) => !applied.has(field));
  if (missing.length === 0) return null;
  return `cannot apply filter.${missing.join(", filter.")}: skipped rather than return hits the filter excludes`;
}

/**
 * Provider errors reach the client in `providers[].error`: one line a user can read. Database
 * errors (Prisma's messages quote the statement, the driver's quote the offending value) are
 * named by what happened and their SQLSTATE, nothing else; other messages keep their first line
 * only if it reads like a sentence rather than SQL or a stack frame. The full error goes to the
 * log (see callProvider).
 */
export function describeProviderError(error: unknown): string {
  if (databaseFault(error)) return "the database is unavailable right now; try again shortly";
  const sqlState = sqlStateOf(error);
  if (sqlState) return DATABASE_FAILURES[sqlState] ?? `the database could not run this search (SQLSTATE ${sqlState})`;
  if (isDatabaseError(error)) return "the database could not run this search";
  const message = error instanceof Error ? error.message : typeof error === "string" ? error : "";
  const firstLine = toPlainText(message.split("\n").find((line) => line.trim().length > 0) ?? "").trim();
  if (firstLine.length === 0 || LOOKS_LIKE_SQL_OR_STACK.test(firstLine)) return "the provider failed; the server log has the details";
  return firstLine.length > 200 ? `${firstLine.slice(0, 199)}…` : firstLine;
}

// Unavailability (connections, restarts, a dropped database) is databaseFault's to name.
const DATABASE_FAILURES: Record<string, string> = {
  "57014": "the database cancelled the search: it took longer than the provider's time budget",
};

const LOOKS_LIKE_SQL_OR_STACK = /\b(select|insert|update|delete|from|where|join|prisma|invocation)\b|\$queryRaw|\bat .+:\d+:\d+|[`{}]/i;

function isDatabaseError(error: unknown): boolean {
  return error instanceof Error && (error.name.startsWith("PrismaClient") || /prisma|\$queryRaw/i.test(error.message));
}

/**
 * Candidates newest first by creation time (ISO strings compare as instants); those without a
 * date after every dated one, each group keeping its fused (relevance) order: the sort is stable.
 */
function newestFirst(candidates: FusedHit[], attributesOf: (hit: FusedHit) => HitAttributes | undefined): FusedHit[] {
  const created = (hit: FusedHit) => attributesOf(hit)?.createdAt ?? null;
  return candidates
    .map((hit, rank) => ({ hit, rank, at: created(hit) }))
    .sort((a, b) => (a.at === b.at ? a.rank - b.rank : a.at === null ? 1 : b.at === null ? -1 : a.at < b.at ? 1 : -1))
    .map(({ hit }) => hit);
}

/**
 * The segments with a deeper last window for the page at `offset`: the page's own segment (one
 * that starts at it) is deepened in place, else a segment starting at it is added. Items before
 * `offset` keep the order earlier segments gave them, so pages already shown stay as they were.
 */
function deepened(segments: readonly Segment[], offset: number): Segment[] {
  const last = segments.at(-1)!;
  const window = Math.min(MAX_WINDOW, last.window * 2);
  return last.start === offset ? [...segments.slice(0, -1), { window, start: offset }] : [...segments, { window, start: offset }];
}
