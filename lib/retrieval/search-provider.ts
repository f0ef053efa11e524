/**
 * A search provider: one source of ranked results over one domain's data. Each domain subgraph
 * implements its providers beside its own tables (e.g. subgraphs/conversations/search.ts) and
 * offers them as a `DomainSearch` from its one public module (its index.ts); the search
 * subgraph's registry imports only those modules and fuses whatever they return.
 */
import type { TenantContext } from "../tenancy/token.js";
import type { HighlightOptions, HighlightPassage } from "./highlights.js";
import type { ObservableQueue } from "./queue-status.js";
import type { FilterField, HitAttributes, SearchFilter } from "./search-filter.js";
import type { WordCorrection } from "./typo-tolerance.js";

/** The score scale (SearchProvider.scoreScale) of a vector store's similarity for one embedder's vectors. */
export function similarityScale(vectorStore: string, embeddingModel: string): string {
  return `similarity:${vectorStore}:${embeddingModel}`;
}

/** Which side of `alpha` a provider is on. */
export type ProviderKind = "KEYWORD" | "SEMANTIC";

/**
 * How soon a provider can answer. LOCAL providers read this deployment's own database and
 * indexes (milliseconds); REMOTE ones wait on someone else's service (web search APIs, Slack,
 * Bedrock: hundreds of milliseconds to seconds, and often paid). A search page fused from the
 * LOCAL providers alone can be shown first, and the page fused from all of them streamed after
 * it with `@defer` (SearchInput.latency).
 */
export type ProviderLatency = "LOCAL" | "REMOTE";

/** An entity a hit points to; the subgraph that owns the type resolves it (`_entities`). */
export interface EntityRef {
  typename: string;
  id: string;
}

export interface ProviderHit {
  ref: EntityRef;
  /** The provider's own relevance score (higher is better); only comparable within the provider. */
  nativeScore: number;
  /** What the provider knows of the item from the statement or call that found it (facets read it). */
  attributes?: HitAttributes;
  /**
   * The larger item this hit is part of (`Document:<id>` for a document's chunks): a distinct
   * search shows each group once, at its best hit, with the others as its `moreMatches`.
   * Unset: the hit is an item of its own.
   */
  group?: string;
  /**
   * How this one hit was ranked, when not as its provider ranks the rest: a provider that merges
   * sources may pass on hits one of our own rankings scored (the `knowledge-bases` provider's
   * passages of the platform's documents, by BM25 and, below alpha 1, by vectors: the same passage
   * once per ranking). Fusion makes each ranking a list of its own, of that kind and scale
   * (subgraphs/search/fusion.ts, rankingsOf), so a platform passage and a conversation with the
   * same BM25 score count the same. Unset: the provider's own kind and scale.
   */
  rankedAs?: HitRanking;
  /**
   * How much of the query the hit covers, 0 to 1, comparable across queries (unlike
   * `nativeScore`): the keyword providers' BM25 score as a share of what the query asks for
   * (lib/retrieval/bm25.ts, queryInformation). Unset: the provider does not measure it.
   */
  relevance?: number;
}

/** The kind and score scale a hit was ranked with (ProviderHit.rankedAs). */
export interface HitRanking {
  kind: ProviderKind;
  /** As SearchProvider.scoreScale; unset: a scale of its own. */
  scoreScale?: string;
}

/** One string per ranking (kind and scale), "" for a provider's own: hits of one key form one ranked list. */
export function rankingKey(ranking: HitRanking | undefined): string {
  return ranking ? `${ranking.kind}\u0000${ranking.scoreScale ?? ""}` : "";
}

export interface ProviderRequest {
  tenant: TenantContext;
  query: string;
  /** How many hits to return at most (best first). */
  window: number;
  /** Aborted when the provider's timeout passes or the request goes away: stop work if you can. */
  signal: AbortSignal;
  /**
   * The provider's time budget in milliseconds. A provider that runs SQL should bound its
   * statements by it (statement_timeout): the service stops waiting at that point, and a
   * query nobody waits for must not keep the database busy.
   */
  timeoutMs?: number;
  /**
   * What the search is narrowed to. Only fields in the provider's `filters` are ever set (the
   * search skips a provider asked for a field it does not apply), and the provider applies each
   * inside its own statement or call. Absent: no filter.
   */
  filter?: SearchFilter;
  /**
   * Whether keyword providers expand the query's misspelled words (typo-tolerance.ts); unset is
   * off. Other providers ignore it.
   */
  typoTolerance?: boolean;
  /**
   * The balance this search gives our own rankings (0 semantic only, 1 keyword only): the
   * caller's alpha, or the deployment's default for our embedder. A provider that ranks with both
   * inside itself (the platform's documents, in `knowledge-bases`) weighs them so, as the search
   * weighs the caller's own documents. Unset: the provider's own default.
   */
  alpha?: number;
  /** Told by a keyword provider which corrections it used found documents the caller can see ("did you mean"). */
  onCorrections?(corrections: readonly WordCorrection[]): void;
}

/**
 * Thrown by a provider that decided not to run for this request: it is not configured for the
 * caller, its circuit breaker is open, the caller's credit budget is spent, the query is more
 * than it takes. The search reports it SKIPPED with this message (not ERROR: nothing failed).
 */
export class SearchProviderSkippedError extends Error {
  /**
   * Whether the reason passes by itself (an open breaker, a spent budget): a page without this
   * provider is then not cached. "Not configured" lasts, and does not stop caching.
   */
  readonly transient: boolean;

  constructor(reason: string, transient = true) {
    // An answer, not a fault: every unified search gets one per external provider the caller has
    // not configured, and capturing their stacks cost 1.7% of the search subgraph's CPU under
    // load (issue 12's search-path profile). Nobody reads the stack of a skip.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(reason);
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    this.transient = transient;
    this.name = "SearchProviderSkippedError";
  }
}

export interface SearchProvider {
  /** Unique, stable, `<domain>.<method>`: what clients pass in `providers` and `weights`. */
  readonly name: string;
  readonly kind: ProviderKind;
  /** Whether it answers from this deployment's own stores (LOCAL) or waits on a remote service. */
  readonly latency: ProviderLatency;
  /**
   * The model id of the embedder a SEMANTIC provider ranks with, when it is the deployment's
   * (`Embedder.model`): the default alpha measured for that embedder then applies to it. Unset
   * for keyword providers and for providers that rank with models of their own (remote
   * knowledge bases), which a default measured for our embedder must not silence.
   */
  readonly embeddingModel?: string;
  /**
   * What its native scores are measured in, when another provider's mean the same: the keyword
   * providers over our own tables both give Okapi BM25 with one analyzer and one k1 and b
   * (lib/retrieval/bm25.ts), and the semantic ones the same store's similarity for the same
   * embedder. Normalized fusion (subgraphs/search/fusion.ts) normalizes the lists of one scale
   * together, so one provider's strong match outranks another's weak one. Unset: a scale of its own.
   */
  readonly scoreScale?: string;
  /** One line for `searchProviders`. */
  readonly description: string;
  /**
   * The typenames of the items it returns: a search filtered to other kinds does not call it.
   * Unset: it is called whatever kinds are asked (and skipped under any kinds filter).
   */
  readonly itemTypes?: readonly string[];
  /**
   * The filter fields it applies inside its own statement or call. A search that sets any other
   * field skips it, saying which, rather than let it return hits the filter would exclude.
   */
  readonly filters?: readonly FilterField[];
  search(request: ProviderRequest): Promise<ProviderHit[]>;
}

/**
 * What a domain offers the unified search: its providers, a way to drop hits whose entities no
 * longer exist (cached pages can outlive a deletion), and the background indexer that keeps its
 * providers' indexes current.
 */
export interface DomainSearch {
  /** The domain's name, e.g. "conversations". */
  readonly domain: string;
  readonly providers: SearchProvider[];
  /** Of these references (any type), the keys `Typename:id` of those of this domain that still exist for the tenant. */
  liveEntities?(tenant: TenantContext, refs: EntityRef[]): Promise<Set<string>>;
  /**
   * Whether something of this domain the tenant may find changed after `since` (a document shared
   * with them, or one that became searchable): a page cached before then may lack it, and is
   * computed again. What left the tenant's view needs no answer here: `liveEntities` drops it.
   */
  changedSince?(tenant: TenantContext, since: Date): Promise<boolean>;
  /** Keeps the domain's search indexes current, off the request path. */
  readonly indexer?: BackgroundIndexer;
  /**
   * Of these references (any type), the passages of this domain's hits that matched `query`
   * (lib/retrieval/highlights.ts), by `Typename:id`: one statement for all of them, from the
   * domain's own tables, as the tenant sees them. A hit that is gone or not the tenant's is absent.
   */
  highlights?(tenant: TenantContext, refs: readonly EntityRef[], query: string, options: HighlightOptions): Promise<Map<string, HighlightPassage[]>>;
  /**
   * Told of every page of hits returned to `tenant` (any type; the domain picks its own), after
   * the answer is built. Must return at once: usage counts and the like are written in batches.
   */
  onPage?(tenant: TenantContext, refs: readonly EntityRef[]): void;
  /**
   * Names of the domain's entities the caller may see that complete what they are typing
   * (`searchSuggestions`): titles, file names. One statement where it can.
   */
  suggest?(request: SuggestionRequest): Promise<EntitySuggestion[]>;
  /** Writes what it buffered and releases what it opened (shutdown). */
  close?(): Promise<void>;
}

/** What a domain is asked for suggestions as the caller types. */
export interface SuggestionRequest {
  tenant: TenantContext;
  /**
   * What the caller typed: trimmed, at most 200 characters, control characters as spaces.
   * Matched after search_suggestion_key (SQL, the suggestions migration) normalizes it as it
   * normalizes the names, literally: no character is a wildcard.
   */
  prefix: string;
  /** How many suggestions at most. */
  limit: number;
}

/** An entity whose name completes the prefix. */
export interface EntitySuggestion {
  /** The name as the caller would see it (a conversation's title, a document's file name). */
  text: string;
  ref: EntityRef;
  /** Whether the whole name starts with the prefix (else a later word does): those rank first, in key order. */
  atStart: boolean;
  /** When the entity last changed: among later-word matches, recent ones rank first. */
  updatedAt: Date;
}

export interface BackgroundIndexer {
  start(): void;
  stop(): Promise<void>;
  /** Processes until nothing is ready (tests, evaluation, the reindex command); returns how many items it handled. */
  drain(onProgress?: (done: number) => void): Promise<number>;
  /** Look at the queue now instead of after the idle pause. */
  poke(): void;
  /** The queues it works through, for the metrics' depth and lag gauges. */
  queues?(): ObservableQueue[];
}
