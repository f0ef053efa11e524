/**
 * The knowledge-base subgraph's part in the unified search, in two domains:
 * - documents: BM25 over document chunks, vectors of document chunks, the check that a cached
 *   hit's chunk still exists and is the caller's to see, the indexer that turns PENDING
 *   documents into chunks off the request path, and the usage counter search hits feed;
 * - knowledge bases: the `knowledge-bases` provider over every BEDROCK and S3VECTORS knowledge
 *   base the caller may query and the platform's LOCAL ones, whose hits are KnowledgeBasePassage entities.
 * The search subgraph reaches it through the subgraph's index.ts, which re-exports this module (see
 * subgraphs/search/providers/registry.ts); everything under ./search/ is internal.
 */
import type { Config } from "../../lib/config.js";
import type { Database } from "../../lib/database/connect.js";
import { documentChunkingFor } from "../../lib/documents/chunk-document.js";
import type { Logger } from "../../lib/logger.js";
import type { Embedder } from "../../lib/retrieval/embeddings/embedder.js";
import { resolveDefaultAlpha } from "../../lib/retrieval/embeddings/default-alpha.js";
import type { DomainSearch } from "../../lib/retrieval/search-provider.js";
import type { VectorStore } from "../../lib/retrieval/vector-stores/vector-store.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { DocumentPassages } from "./document-passages.js";
import { DocumentStore } from "./document-store.js";
import { KnowledgeBaseStore } from "./knowledge-base-store.js";
import { isPassageId, PassageStore } from "./passage-store.js";
import { remoteKnowledgeBasesFrom } from "./remote-knowledge-bases.js";
import { documentCollectionsOf } from "./search/document-collections.js";
import { DocumentIndexer, type DocumentIndexerOptions } from "./search/document-indexer.js";
import { DocumentsKeywordProvider } from "./search/keyword-provider.js";
import { KnowledgeBasesProvider, type KnowledgeBasesProviderOptions } from "./search/knowledge-bases-provider.js";
import { DocumentsSemanticProvider } from "./search/semantic-provider.js";
import { DocumentUsageRecorder } from "./search/usage-recorder.js";
import { documentsChangedSince, visibleChunkIds, visibleChunkPlaces, type ChunkPlace } from "./search/visible-chunks.js";
import { documentChunkHighlights, knowledgeBasePassageHighlights } from "./search/highlights.js";
import { documentNameSuggestions } from "./search/name-suggestions.js";

export interface DocumentSearchDependencies {
  database: Database;
  embedder: Embedder;
  vectorStore: VectorStore;
  logger: Logger;
  /** Indexer settings (tests; the defaults suit production). */
  indexer?: Partial<DocumentIndexerOptions>;
}

export interface DocumentSearch extends DomainSearch {
  readonly indexer: DocumentIndexer;
  /**
   * Counts the DocumentChunk hits of a page returned to `tenant` toward their documents'
   * usageCount and lastUsedAt. Returns at once; the counts are written in batches.
   */
  recordUsage(tenant: TenantContext, chunkIds: readonly string[]): void;
  /** Writes the usage recorded so far (shutdown, tests). */
  flushUsage(): Promise<void>;
  /** Where these chunks sit (absent: gone or not the caller's to see), one statement; `DocumentChunk` fields on search hits. */
  places(tenant: TenantContext, ids: readonly string[]): Promise<Map<string, ChunkPlace>>;
}

export type { ChunkPlace };

export function documentSearch({ database, embedder, vectorStore, logger, indexer: indexerOptions = {} }: DocumentSearchDependencies): DocumentSearch {
  // Shared by every documents provider of this process on this database, so the indexer's news
  // reaches the knowledge queries' providers too (knowledge-base/index.ts builds its own).
  const collections = documentCollectionsOf(database.prisma);
  const indexer = new DocumentIndexer(database, embedder, vectorStore, logger.child("document-indexer"), {
    chunking: documentChunkingFor(embedder),
    // PostgreSQL's autovacuum does this on a server; the embedded PGlite has none.
    vacuumAfterJobs: database.kind === "pglite" ? 200 : null,
    onChunksStored: (organizationId) => collections.chunksStored(organizationId),
    ...indexerOptions,
  });
  const usage = new DocumentUsageRecorder(new DocumentStore(database.prisma), logger.child("document-usage"));
  return {
    domain: "documents",
    providers: [new DocumentsKeywordProvider(database.prisma, collections), new DocumentsSemanticProvider(embedder, vectorStore, database.prisma, collections)],
    // Cached hits are re-checked with one statement per cached page: deleted, unshared or
    // never-visible chunks drop out.
    async liveEntities(tenant, refs) {
      const ids = refs.filter((ref) => ref.typename === "DocumentChunk").map((ref) => ref.id);
      const live = await visibleChunkIds(database.prisma, tenant, ids);
      return new Set([...live].map((id) => `DocumentChunk:${id}`));
    },
    // A document shared with the caller, or made READY, after a page was cached: compute it again.
    changedSince: (tenant, since) => documentsChangedSince(database.prisma, tenant, since),
    highlights: (tenant, refs, query, options) => documentChunkHighlights(database.prisma, tenant, refs, query, options),
    indexer,
    recordUsage: (tenant, chunkIds) => usage.record(tenant, chunkIds),
    flushUsage: () => usage.flush(),
    places: (tenant, ids) => visibleChunkPlaces(database.prisma, tenant, ids),
    // Documents count how often search returns their chunks.
    onPage(tenant, refs) {
      const chunkIds = refs.filter((ref) => ref.typename === "DocumentChunk").map((ref) => ref.id);
      if (chunkIds.length > 0) usage.record(tenant, chunkIds);
    },
    close: () => usage.flush(),
    suggest: (request) => documentNameSuggestions(database.prisma, request),
  };
}

export interface KnowledgeBaseSearchDependencies {
  database: Database;
  config: Config;
  /** Embeds queries for S3VECTORS knowledge bases (and the platform's documents). */
  embedder: Embedder;
  /** Where the platform's document vectors are; without it, its LOCAL knowledge bases are ranked by keywords only. */
  vectorStore?: VectorStore | undefined;
  logger: Logger;
  /** Provider settings (tests; the defaults suit production). */
  provider?: KnowledgeBasesProviderOptions;
}

export type KnowledgeBaseSearch = DomainSearch;

/** The `knowledge-bases` provider and the check that a cached KnowledgeBasePassage hit is still the caller's to see. */
export function knowledgeBaseSearch({ database, config, embedder, vectorStore, logger, provider }: KnowledgeBaseSearchDependencies): KnowledgeBaseSearch {
  const knowledgeBases = new KnowledgeBaseStore(database.prisma);
  const passages = new PassageStore(database.prisma);
  const { remote, close } = remoteKnowledgeBasesFrom(config, knowledgeBases, embedder, logger.child("knowledge-bases"));
  const collections = documentCollectionsOf(database.prisma);
  const platformDocuments = new DocumentPassages({
    documents: new DocumentStore(database.prisma),
    providers: [new DocumentsKeywordProvider(database.prisma, collections), ...(vectorStore ? [new DocumentsSemanticProvider(embedder, vectorStore, database.prisma, collections)] : [])],
    timeoutMs: config.search.providerTimeoutMs,
    // A search that gives its alpha passes it on (ProviderRequest.alpha); this is for one that does not.
    defaultAlpha: resolveDefaultAlpha(embedder, config.search.defaultAlpha).alpha,
  });
  return {
    domain: "knowledge-bases",
    providers: [new KnowledgeBasesProvider(knowledgeBases, remote, passages, logger.child("knowledge-bases"), provider, platformDocuments)],
    async liveEntities(tenant, refs) {
      const ids = refs.filter((ref) => ref.typename === "KnowledgeBasePassage" && isPassageId(ref.id)).map((ref) => ref.id);
      if (ids.length === 0) return new Set();
      const live = await passages.findByIds(tenant, ids);
      return new Set(live.map((passage) => `KnowledgeBasePassage:${passage.id}`));
    },
    highlights: (tenant, refs, query, options) => knowledgeBasePassageHighlights(database.prisma, tenant, refs, query, options),
    async close() {
      close();
    },
  };
}
