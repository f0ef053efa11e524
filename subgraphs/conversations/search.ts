/**
 * The conversations domain's part in the unified search: its providers (BM25 over the
 * trigger-maintained postings, and vectors of conversation chunks), the check that a cached hit's
 * conversation still exists, the indexer that embeds conversations off the request path, and how
 * far that index is behind. The search subgraph reaches it through the subgraph's index.ts, which re-exports this module
 * (see subgraphs/search/providers/registry.ts); everything under ./search/ is internal.
 */
import type { Database } from "../../lib/database/connect.js";
import type { Logger } from "../../lib/logger.js";
import { chunkingFor } from "../../lib/retrieval/chunking.js";
import type { Embedder } from "../../lib/retrieval/embeddings/embedder.js";
import type { DomainSearch } from "../../lib/retrieval/search-provider.js";
import type { VectorStore } from "../../lib/retrieval/vector-stores/vector-store.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { conversationHighlights } from "./search/highlights.js";
import { ConversationIndexer, type IndexerOptions } from "./search/conversation-indexer.js";
import { SearchIndexStatusReader, type SearchIndexStatus } from "./search/index-status.js";
import { ConversationsKeywordProvider } from "./search/keyword-provider.js";
import { liveConversationIds } from "./search/live-conversations.js";
import { liveConversationTitles } from "./search/live-titles.js";
import { ConversationsSemanticProvider } from "./search/semantic-provider.js";
import { conversationTitleSuggestions } from "./search/title-suggestions.js";

export { enqueueMissing as enqueueConversationsMissingVectors } from "./search/conversation-indexer.js";
export type { SearchIndexStatus } from "./search/index-status.js";

export interface ConversationSearchDependencies {
  database: Database;
  embedder: Embedder;
  vectorStore: VectorStore;
  logger: Logger;
  /** Indexer settings (the lease from SEARCH_INDEXER_LEASE_SECONDS; the defaults suit production). */
  indexer?: Pick<IndexerOptions, "leaseSeconds" | "idleMs">;
}

export interface ConversationSearch extends DomainSearch {
  readonly indexer: ConversationIndexer;
  /** How far the caller's organization's conversation index is behind (`searchIndexStatus`). */
  indexStatus(tenant: TenantContext): Promise<SearchIndexStatus>;
  /** Live titles of these conversations (absent: deleted or not the caller's), one statement; `Conversation.title` on search hits. */
  titles(tenant: TenantContext, ids: readonly string[]): Promise<Map<string, string>>;
}

export function conversationSearch({ database, embedder, vectorStore, logger, indexer: indexerOptions = {} }: ConversationSearchDependencies): ConversationSearch {
  const indexer = new ConversationIndexer(database, embedder, vectorStore, logger.child("indexer"), {
    chunking: chunkingFor(embedder),
    // PostgreSQL's autovacuum does this on a server; the embedded PGlite has none.
    vacuumAfterJobs: database.kind === "pglite" ? 200 : null,
    ...indexerOptions,
  });
  const status = new SearchIndexStatusReader(database, { model: embedder.model, dimensions: embedder.dimensions, vectorStore: vectorStore.name });
  return {
    domain: "conversations",
    providers: [new ConversationsKeywordProvider(database.prisma), new ConversationsSemanticProvider(embedder, vectorStore, database.prisma)],
    // Cached hits are re-checked with one statement per cached page.
    async liveEntities(tenant, refs) {
      const ids = refs.filter((ref) => ref.typename === "Conversation").map((ref) => ref.id);
      const live = await liveConversationIds(database.prisma, tenant.organizationId, ids);
      return new Set([...live].map((id) => `Conversation:${id}`));
    },
    // The best matching messages of each conversation hit, one statement per page.
    highlights: (tenant, refs, query, options) => conversationHighlights(database.prisma, tenant.organizationId, refs, query, options),
    indexer,
    indexStatus: (tenant) => status.read(tenant),
    titles: (tenant, ids) => liveConversationTitles(database.prisma, tenant.organizationId, ids),
    suggest: (request) => conversationTitleSuggestions(database.prisma, request),
  };
}
