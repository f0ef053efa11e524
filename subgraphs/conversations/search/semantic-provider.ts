/**
 * `conversations.semantic`: nearest conversations to the query's embedding, by their best
 * chunk. Only vectors made by the same model as the query's are compared (the store filters by
 * model), and hits are checked against the live conversations, so a conversation deleted a
 * moment ago (before the indexer removed its vectors) is not returned: inside the vector
 * statement with pgvector, by a second statement with other stores.
 *
 * Filters (owner, created and updated ranges) are applied by pgvector only, inside the
 * nearest-neighbour scan (see PgVectorStore.search). Weaviate and S3 Vectors hold no
 * conversation metadata, and filtering their short list afterwards would return a page short of
 * what matches: with those stores a filtered search skips this provider, saying so.
 */
import { LRUCache } from "lru-cache";
import type { PrismaClient } from "../../../generated/prisma/client.js";
import type { Embedder } from "../../../lib/retrieval/embeddings/embedder.js";
import { replayingTransactionReadsForBenchmark } from "../../../lib/database/tenant-reads.js";
import { liveConversationIds } from "./live-conversations.js";
import { PgVectorStore } from "../../../lib/retrieval/vector-stores/pgvector.js";
import type { VectorMatch, VectorStore } from "../../../lib/retrieval/vector-stores/vector-store.js";
import { SearchProviderSkippedError, similarityScale, type ProviderHit, type ProviderRequest, type SearchProvider } from "../../../lib/retrieval/search-provider.js";
import { filterFieldsSet, type FilterField } from "../../../lib/retrieval/search-filter.js";
import { conversationAttributes } from "./keyword-provider.js";
import { conversationFilterSql, hasConversationFilter } from "./conversation-filter.js";

export class ConversationsSemanticProvider implements SearchProvider {
  readonly name = "conversations.semantic";
  readonly kind = "SEMANTIC" as const;
  readonly latency = "LOCAL" as const;
  readonly description: string;
  /** It ranks with the deployment's embedder, so that embedder's default alpha applies to it. */
  readonly embeddingModel: string;
  /** The store's similarity for that embedder: the same as the other semantic provider's. */
  readonly scoreScale: string;
  readonly itemTypes = ["Conversation"];
  readonly filters: readonly FilterField[] = ["created", "updated", "owner"];
  /** Query embeddings by text: popular queries skip the model. */
  private readonly queryVectors = new LRUCache<string, number[]>({ max: 1_000 });

  constructor(
    private readonly embedder: Embedder,
    private readonly vectorStore: VectorStore,
    private readonly prisma: PrismaClient,
  ) {
    this.embeddingModel = embedder.model;
    this.scoreScale = similarityScale(vectorStore.name, embedder.model);
    this.description = `Semantic similarity of conversations to the query (${embedder.model} embeddings in ${vectorStore.name}).`;
  }

  async search({ tenant, query, window, filter }: ProviderRequest): Promise<ProviderHit[]> {
    const filtered = filter !== undefined && hasConversationFilter(filter);
    const inDatabase = this.vectorStore instanceof PgVectorStore && !replayingTransactionReadsForBenchmark();
    if (filtered && !inDatabase) {
      throw new SearchProviderSkippedError(`${this.vectorStore.name} holds no conversation metadata: cannot apply filter.${filterFieldsSet(filter).join(", filter.")}`, false);
    }
    let vector = this.queryVectors.get(query);
    if (!vector) {
      [vector] = await this.embedder.embed([query]);
      this.queryVectors.set(query, vector!);
    }
    const options = { limit: window, entityTypes: ["conversation" as const] };
    let matches: VectorMatch[];
    if (this.vectorStore instanceof PgVectorStore && inDatabase) {
      // Vectors beside the conversations: the liveness check rides in the nearest-neighbour
      // statement itself (one statement per search instead of two, issue 12).
      const found = await this.vectorStore.search(tenant.organizationId, this.embedder.model, vector!, {
        ...options,
        liveConversations: true,
        ...(filtered ? { conversationCondition: conversationFilterSql(filter) } : {}),
      });
      return found.map((match) => {
        const attributes = match.conversation ? conversationAttributes(match.conversation) : undefined;
        return { ref: { typename: "Conversation", id: match.entityId }, nativeScore: match.score, ...(attributes ? { attributes } : {}) };
      });
    } else {
      matches = await this.vectorStore.search(tenant.organizationId, this.embedder.model, vector!, options);
      if (matches.length === 0) return [];
      const liveIds = await liveConversationIds(this.prisma, tenant.organizationId, matches.map((match) => match.entityId));
      matches = matches.filter((match) => liveIds.has(match.entityId));
    }
    return matches
      .map((match) => ({ ref: { typename: "Conversation", id: match.entityId }, nativeScore: match.score }));
  }
}
