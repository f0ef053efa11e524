/**
 * The search subgraph: owns `Query.search`, the providers it fans out to, the fusion, the
 * result cache, the query log, and the background indexer that keeps vectors current.
 * Its contract is schema.graphql beside this file.
 */
import fs from "node:fs";
import { parse } from "graphql";
import type { Config } from "../../lib/config.js";
import type { Database } from "../../lib/database/connect.js";
import type { RequestContext, SubgraphDefinition } from "../../lib/graphql/subgraph-server.js";
import type { Logger } from "../../lib/logger.js";
import type { Embedder } from "../../lib/retrieval/embeddings/embedder.js";
import { createEmbedder } from "../../lib/retrieval/embeddings/index.js";
import { SearchIndexStatusReader } from "./index-status.js";
import { chunkingFor } from "../../lib/retrieval/chunking.js";
import { ConversationIndexer } from "./indexing/conversation-indexer.js";
import { createProviders } from "./providers/registry.js";
import type { SearchProvider } from "./providers/provider.js";
import { QueryLog } from "./query-log.js";
import { createResultCache, type ResultCache } from "./result-cache.js";
import { resolvers, type SearchContext } from "./resolvers.js";
import { liveConversationIds } from "./live-conversations.js";
import { SearchService, type LiveEntityFilter } from "./search-service.js";
import { createVectorStore } from "../../lib/retrieval/vector-stores/index.js";
import type { VectorStore } from "../../lib/retrieval/vector-stores/vector-store.js";

export const SCHEMA_PATH = new URL("./schema.graphql", import.meta.url);

/** Cached hits are re-checked against the live conversations with one statement per cached page. */
function liveConversations(database: Database): LiveEntityFilter {
  return async (tenant, refs) => {
    const ids = refs.filter((ref) => ref.typename === "Conversation").map((ref) => ref.id);
    const live = await liveConversationIds(database.prisma, tenant.organizationId, ids);
    return new Set([...live].map((id) => `Conversation:${id}`));
  };
}

export interface SearchSubgraphDependencies {
  database: Database;
  config: Config;
  logger: Logger;
  /** Overrides for tests and evaluation; by default built from config. */
  embedder?: Embedder;
  vectorStore?: VectorStore;
  providers?: SearchProvider[];
  cache?: ResultCache;
}

export interface SearchSubgraph extends SubgraphDefinition<SearchContext> {
  service: SearchService;
  indexer: ConversationIndexer;
  queryLog: QueryLog;
  embedder: Embedder;
  vectorStore: VectorStore;
}

export async function searchSubgraph(dependencies: SearchSubgraphDependencies): Promise<SearchSubgraph> {
  const { database, config, logger } = dependencies;
  const embedder = dependencies.embedder ?? createEmbedder(config.search, database);
  const vectorStore = dependencies.vectorStore ?? createVectorStore(config.search, database);
  const cache = dependencies.cache ?? createResultCache({ redisUrl: config.search.redisUrl, redisKeyPrefix: config.search.redisKeyPrefix, ttlSeconds: config.search.cacheTtlSeconds, logger });
  const queryLog = new QueryLog(database, logger);
  const service = new SearchService({
    providers: dependencies.providers ?? createProviders({ database, embedder, vectorStore }),
    liveEntities: liveConversations(database),
    cache,
    cacheTtlSeconds: config.search.cacheTtlSeconds,
    providerTimeoutMs: config.search.providerTimeoutMs,
    queryLog,
    logger,
  });
  const indexer = new ConversationIndexer(database, embedder, vectorStore, logger.child("indexer"), {
    chunking: chunkingFor(embedder),
    // PostgreSQL's autovacuum does this on a server; the embedded PGlite has none.
    vacuumAfterJobs: database.kind === "pglite" ? 200 : null,
  });
  const indexStatus = new SearchIndexStatusReader(database, { model: embedder.model, dimensions: embedder.dimensions, vectorStore: vectorStore.name });

  return {
    name: "search",
    typeDefs: parse(fs.readFileSync(SCHEMA_PATH, "utf8")),
    resolvers,
    service,
    indexer,
    queryLog,
    embedder,
    vectorStore,
    createContext: (base: RequestContext): SearchContext => ({ ...base, search: service, indexStatus }),
    async checkHealth() {
      await database.prisma.$queryRaw`SELECT 1`;
    },
    async start() {
      await vectorStore.ensureReady(embedder.model, embedder.dimensions);
      if (config.search.indexer) indexer.start();
    },
    async stop() {
      await indexer.stop();
      await queryLog.flush();
      await cache.close();
      await vectorStore.close?.();
    },
  };
}
