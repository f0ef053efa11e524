/**
 * Every search provider this deployment offers, in the order reports list them. Adding a
 * provider: one file in this folder implementing SearchProvider, and one line here.
 */
import type { Database } from "../../../lib/database/connect.js";
import type { Embedder } from "../../../lib/retrieval/embeddings/embedder.js";
import type { VectorStore } from "../../../lib/retrieval/vector-stores/vector-store.js";
import { ConversationsKeywordProvider } from "./conversations-keyword.js";
import { ConversationsSemanticProvider } from "./conversations-semantic.js";
import type { SearchProvider } from "./provider.js";

export interface ProviderDependencies {
  database: Database;
  embedder: Embedder;
  vectorStore: VectorStore;
}

export function createProviders({ database, embedder, vectorStore }: ProviderDependencies): SearchProvider[] {
  return [
    new ConversationsKeywordProvider(database.prisma),
    new ConversationsSemanticProvider(embedder, vectorStore, database.prisma),
  ];
}
