/**
 * The search subgraph: owns `Query.search` and the pipeline behind it (validation, fan-out with
 * timeouts, fusion, paging, the result cache and the query log). It knows no domain's tables:
 * providers, the check that cached hits still exist, and the indexers come from each domain's
 * public search module (providers/registry.ts). This process runs the domains' background
 * indexers. Its contract is schema.graphql beside this file.
 */
import fs from "node:fs";
import { parse } from "graphql";
import type { Config } from "../../lib/config.js";
import { besideModule } from "../../lib/project-files.js";
import type { Database } from "../../lib/database/connect.js";
import { useTenantReadTimeout } from "../../lib/database/tenant-reads.js";
import type { RequestContext, SubgraphDefinition } from "../../lib/graphql/subgraph-server.js";
import type { Logger } from "../../lib/logger.js";
import type { Embedder } from "../../lib/retrieval/embeddings/embedder.js";
import { resolveDefaultAlpha } from "../../lib/retrieval/embeddings/default-alpha.js";
import { createEmbedder } from "../../lib/retrieval/embeddings/index.js";
import type { BackgroundIndexer, SearchProvider } from "../../lib/retrieval/search-provider.js";
import { OnDemandIndex, semanticInUseAtStart } from "../../lib/retrieval/on-demand-index.js";
import { createVectorStore } from "../../lib/retrieval/vector-stores/index.js";
import type { VectorStore } from "../../lib/retrieval/vector-stores/vector-store.js";
import { createSearchDomains, type SearchDomains } from "./providers/registry.js";
import { QueryLog } from "./query-log.js";
import { createResultCache, type ResultCache } from "../../lib/cache/result-cache.js";
import { resolvers, type SearchContext } from "./resolvers.js";
import { SearchService, searchTurns, type ChangedSinceCheck, type LiveEntityFilter } from "./search-service.js";
import { createSavedSearchLoader, SavedSearchStore } from "./saved-search-store.js";
import { createOwnedFieldLoader } from "./provided-fields.js";
import { createHighlightLoader, createSharedHighlights } from "./highlights.js";
import { SearchSuggestions } from "./suggestions.js";
import { SubgraphMetrics } from "../../lib/observability/subgraph-metrics.js";
import type { AnswerModel } from "../../lib/language-models/language-model.js";
import { AnswerService } from "./answers/index.js";
import { SearchClickStore } from "./search-clicks.js";

export const SCHEMA_PATH = besideModule("./schema.graphql", import.meta.url);

export interface SearchSubgraphDependencies {
  database: Database;
  config: Config;
  logger: Logger;
  /** Overrides for tests and evaluation; by default built from config. */
  embedder?: Embedder;
  vectorStore?: VectorStore;
  providers?: SearchProvider[];
  cache?: ResultCache;
  /** The language model behind `Query.answer`, through the paid-call path; without one every answer is extractive. */
  answerModel?: AnswerModel;
}

export interface SearchSubgraph extends SubgraphDefinition<SearchContext> {
  service: SearchService;
  domains: SearchDomains;
  /** The conversations domain's indexer (tests, evaluation and the reindex command drain it). */
  indexer: BackgroundIndexer;
  /** When semantic search is not in use at start: the conversations' semantic index, built on the first search that asks for it. */
  onDemand: OnDemandIndex | null;
  queryLog: QueryLog;
  /** `searchSuggestions` (the benchmark calls it in process). */
  suggestions: SearchSuggestions;
  /** `Query.answer` (the answer evaluation calls it in process). */
  answers: AnswerService;
  embedder: Embedder;
  vectorStore: VectorStore;
}

export async function searchSubgraph(dependencies: SearchSubgraphDependencies): Promise<SearchSubgraph> {
  const { database, config, logger } = dependencies;
  // Every tenant read serves a search: bounded like a provider, and all on one timeout, so the
  // session-scoped connections never switch between two (lib/database/tenant-reads.ts).
  useTenantReadTimeout(database.prisma, config.search.providerTimeoutMs);
  const embedder = dependencies.embedder ?? createEmbedder(config.search, database);
  const vectorStore = dependencies.vectorStore ?? createVectorStore(config.search, database);
  const cache = dependencies.cache ?? createResultCache({ redisUrl: config.search.redisUrl, redisKeyPrefix: config.search.redisKeyPrefix, ttlSeconds: config.search.cacheTtlSeconds, logger });
  const queryLog = new QueryLog(database, logger);
  const domains = createSearchDomains({ database, config, embedder, vectorStore, logger });
  const all = Object.values(domains);
  // Made here rather than by the server, so the pipeline can feed it; the pool gauge is read on scrape.
  const metrics = new SubgraphMetrics("search");
  if (database.poolUse) metrics.observePool(database.poolUse);
  const replica = database.replica;
  if (replica) metrics.observeReplicaRoutes(() => replica.routeCounts());
  // A cached page is re-checked by every domain, each answering for its own types.
  const liveEntities: LiveEntityFilter = async (tenant, refs) => {
    const live = await Promise.all(all.map((domain) => domain.liveEntities?.(tenant, refs) ?? Promise.resolve(new Set<string>())));
    return new Set(live.flatMap((keys) => [...keys]));
  };
  // A cached page older than a change a domain reports for the caller is computed again.
  const changedSince: ChangedSinceCheck = async (tenant, since) => {
    const changed = await Promise.all(all.map((domain) => domain.changedSince?.(tenant, since) ?? Promise.resolve(false)));
    return changed.some(Boolean);
  };
  const defaultAlpha = resolveDefaultAlpha(embedder, config.search.defaultAlpha);
  // With the bundled model at its default alpha of 1, no search asks the conversations' semantic
  // provider until one passes an alpha below 1: embedding every conversation at start (20
  // CPU-minutes for the demo on 2 cores) waits for that search (lib/retrieval/on-demand-index.ts).
  // Documents are still indexed at once: their keyword index and READY status come from the same job.
  const onDemand = config.search.indexer && !semanticInUseAtStart(config.search.embedder, defaultAlpha.alpha)
    ? new OnDemandIndex({ name: "conversations", indexers: [domains.conversations.indexer], queues: domains.conversations.indexer.queues?.() ?? [], logger: logger.child("indexer") })
    : null;
  const gated = (domain: (typeof all)[number]) =>
    onDemand && domain === domains.conversations
      ? domain.providers.map((provider: SearchProvider) => (provider.kind === "SEMANTIC" && provider.embeddingModel === embedder.model ? onDemand.gate(provider) : provider))
      : domain.providers;
  const sharedHighlights = createSharedHighlights();
  const service = new SearchService({
    providers: dependencies.providers ?? all.flatMap(gated),
    liveEntities,
    changedSince,
    cache,
    cacheTtlSeconds: config.search.cacheTtlSeconds,
    providerTimeoutMs: config.search.providerTimeoutMs,
    turns: searchTurns(config.search.concurrency),
    queryLog,
    logger,
    metrics,
    // Searches without an alpha use the embedder's measured default, or the deployment's override.
    defaultAlpha,
    // Domains learn what search returned (documents count their chunks' usage), off the response path.
    onPage: (tenant, refs) => {
      for (const domain of all) domain.onPage?.(tenant, refs);
    },
  });
  const answers = new AnswerService({ search: service, model: dependencies.answerModel ?? domains.external.answerModel });
  const savedSearches = new SavedSearchStore(database.prisma);
  const suggestions = new SearchSuggestions(database.prisma, all, logger);
  const searchClicks = new SearchClickStore(database.prisma, queryLog);
  const indexer = domains.conversations.indexer;
  const indexers = all.flatMap((domain) => (domain.indexer ? [domain.indexer] : []));
  // Queue depth and lag, read from the tables at scrape time.
  metrics.observeQueues(indexers.flatMap((domainIndexer) => domainIndexer.queues?.() ?? []));

  // Asked once, at the stop's start (beginStop) or at its end: both wait for the same stop.
  let indexersStopped: Promise<void> | null = null;
  const stopIndexing = (): Promise<void> => {
    onDemand?.stop();
    return (indexersStopped ??= Promise.all(indexers.map((domainIndexer) => domainIndexer.stop())).then(() => undefined));
  };
  return {
    name: "search",
    typeDefs: parse(fs.readFileSync(SCHEMA_PATH, "utf8")),
    resolvers,
    service,
    domains,
    indexer,
    onDemand,
    queryLog,
    suggestions,
    answers,
    embedder,
    vectorStore,
    metrics,
    createContext(base: RequestContext): SearchContext {
      let savedSearchLoader: ReturnType<typeof createSavedSearchLoader> | null = null;
      let conversationTitleLoader: ReturnType<SearchContext["conversationTitleLoader"]> | null = null;
      let chunkPlaceLoader: ReturnType<SearchContext["chunkPlaceLoader"]> | null = null;
      let highlightLoader: ReturnType<typeof createHighlightLoader> | null = null;
      return {
        ...base,
        search: service,
        indexStatus: (tenant) => domains.conversations.indexStatus(tenant),
        savedSearches,
        suggestions,
        answers,
        searchClicks,
        prisma: database.prisma,
        savedSearchLoader: () => (savedSearchLoader ??= createSavedSearchLoader(savedSearches, base.requireTenant())),
        // Made on first use, so a request that asks no title sends no statement for titles.
        conversationTitleLoader: () => (conversationTitleLoader ??= createOwnedFieldLoader((tenant, ids) => domains.conversations.titles(tenant, ids), base.requireTenant())),
        chunkPlaceLoader: () => (chunkPlaceLoader ??= createOwnedFieldLoader((tenant, ids) => domains.documents.places(tenant, ids), base.requireTenant())),
        highlightLoader: () => (highlightLoader ??= createHighlightLoader(all, base.requireTenant(), sharedHighlights)),
      };
    },
    async checkHealth() {
      await database.prisma.$queryRaw`SELECT 1`;
    },
    async start() {
      await vectorStore.ensureReady(embedder.model, embedder.dimensions);
      if (config.search.indexer) for (const domainIndexer of indexers) if (!(onDemand && domainIndexer === indexer)) domainIndexer.start();
    },
    beginStop() {
      void stopIndexing();
    },
    async stop({ withinMs } = { withinMs: 10_000 }) {
      const indexersStopped = stopIndexing();
      // An indexer stops after the model call or statement in hand; one that never returns (a
      // hung model, a statement the server is still running) must not hold the process past its
      // deadline: its jobs come back when their leases run out.
      let timer: NodeJS.Timeout | undefined;
      const inTime = await Promise.race([indexersStopped.then(() => true), new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), withinMs)))]);
      clearTimeout(timer);
      if (!inTime) logger.warn(`indexing did not stop within ${withinMs} ms; its jobs return to the queue when their leases run out`);
      await Promise.all([queryLog.flush(), ...all.map((domain) => domain.close?.())]);
      await cache.close();
      await vectorStore.close?.();
    },
  };
}
