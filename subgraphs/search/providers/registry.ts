/**
 * The domains whose providers the unified search fans out to, in the order reports list them.
 * Each domain subgraph exposes its part of the search (providers, live-entity check, indexer)
 * through one public module; this registry imports only those modules, never a domain's
 * internals, so the search subgraph knows no domain's tables. Adding a domain: its public
 * module, and one line here.
 */
import type { Config } from "../../../lib/config.js";
import type { Database } from "../../../lib/database/connect.js";
import type { Logger } from "../../../lib/logger.js";
import type { Embedder } from "../../../lib/retrieval/embeddings/embedder.js";
import type { VectorStore } from "../../../lib/retrieval/vector-stores/vector-store.js";
import { conversationSearch, type ConversationSearch } from "../../conversations/index.js";
import { externalSearch, type ExternalSearchDomain } from "../../external-search/index.js";
import { documentSearch, knowledgeBaseSearch, type DocumentSearch, type KnowledgeBaseSearch } from "../../knowledge-base/index.js";

export interface DomainDependencies {
  database: Database;
  config: Config;
  embedder: Embedder;
  vectorStore: VectorStore;
  logger: Logger;
}

export interface SearchDomains {
  conversations: ConversationSearch;
  documents: DocumentSearch;
  knowledgeBases: KnowledgeBaseSearch;
  external: ExternalSearchDomain;
}

export function createSearchDomains(dependencies: DomainDependencies): SearchDomains {
  return {
    conversations: conversationSearch({ ...dependencies, indexer: { leaseSeconds: dependencies.config.search.indexerLeaseSeconds } }),
    documents: documentSearch({ ...dependencies, indexer: { leaseSeconds: dependencies.config.search.indexerLeaseSeconds } }),
    knowledgeBases: knowledgeBaseSearch(dependencies),
    external: externalSearch(dependencies),
  };
}
