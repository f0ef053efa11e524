/**
 * `conversations.semantic`: nearest conversations to the query's embedding, by their best
 * chunk. Only vectors made by the same model as the query's are compared (the store filters by
 * model), and hits are checked against the live conversations, so a conversation deleted a
 * moment ago (before the indexer removed its vectors) is not returned: inside the vector
 * statement with pgvector, by a second statement with other stores.
 */
import { LRUCache } from "lru-cache";
import type { PrismaClient } from "../../../generated/prisma/client.js";
import type { Embedder } from "../../../lib/retrieval/embeddings/embedder.js";
import { replayingTransactionReadsForBenchmark } from "../../../lib/database/tenant-reads.js";
import { liveConversationIds } from "./live-conversations.js";
import { PgVectorStore } from "../../../lib/retrieval/vector-stores/pgvector.js";
import type { VectorMatch, VectorStore } from "../../../lib/retrieval/vector-stores/vector-store.js";
import type { ProviderHit, ProviderRequest, SearchProvider } from "../../../lib/retrieval/search-provider.js";

export class ConversationsSemanticProvider implements SearchProvider {
  readonly name = "conversations.semantic";
  readonly kind = "SEMANTIC" as const;
  readonly latency = "LOCAL" as const;
  readonly description: string;
  /** It ranks with the deployment's embedder, so that embedder's default alpha applies to it. */
  readonly embeddingModel: string;
  /** Query embeddings by text: popular queries skip the model. */
  private readonly queryVectors = new LRUCache<string, number[]>({ max: 1_000 });

  constructor(
    private readonly embedder: Embedder,
    private readonly vectorStore: VectorStore,
    private readonly prisma: PrismaClient,
  ) {
    this.embeddingModel = embedder.model;
    this.description = `Semantic similarity of conversations to the query (${embedder.model} embeddings in ${vectorStore.name}).`;
  }

  async search({ tenant, query, window }: ProviderRequest): Promise<ProviderHit[]> {
    let vector = this.queryVectors.get(query);
    if (!vector) {
      [vector] = await this.embedder.embed([query]);
      this.queryVectors.set(query, vector!);
    }
    const options = { limit: window, entityTypes: ["conversation" as const] };
    let matches: VectorMatch[];
    if (this.vectorStore instanceof PgVectorStore && !replayingTransactionReadsForBenchmark()) {
      // Vectors beside the conversations: the liveness check rides in the nearest-neighbour
      // statement itself (one statement per search instead of two, issue 12).
      matches = await this.vectorStore.search(tenant.organizationId, this.embedder.model, vector!, { ...options, liveConversations: true });
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
