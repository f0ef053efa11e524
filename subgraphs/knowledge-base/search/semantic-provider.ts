/**
 * `documents.semantic`: the chunks nearest to the query's embedding. The vector store knows
 * organizations but not access scopes, so its matches are then filtered to the chunks the
 * caller may see (one statement, which also drops chunks deleted a moment ago). It is asked
 * for more than the window, because in an organization with many private documents most
 * nearest chunks may be colleagues'.
 *
 * A filter is applied in that same scope check: the vector stores hold no document metadata.
 * So a filtered search looks at most at the same bounded candidates (4 × the window, at most
 * 400) and its list is short when fewer of them match; `documents.keyword` is not so bounded.
 */
import { LRUCache } from "lru-cache";
import type { PrismaClient } from "../../../generated/prisma/client.js";
import type { Embedder } from "../../../lib/retrieval/embeddings/embedder.js";
import { similarityScale, type ProviderHit, type ProviderRequest, type SearchProvider } from "../../../lib/retrieval/search-provider.js";
import type { VectorStore } from "../../../lib/retrieval/vector-stores/vector-store.js";
import { documentCollectionsOf, type DocumentCollections } from "./document-collections.js";
import { documentChunkHit } from "./document-filter.js";
import { visibleChunks } from "./visible-chunks.js";
import type { FilterField } from "../../../lib/retrieval/search-filter.js";

/** Matches asked for per hit wanted, and at most this many in all: bounds the scope check's work. */
const OVERFETCH = 4;
const MAX_CANDIDATES = 400;

export class DocumentsSemanticProvider implements SearchProvider {
  readonly name = "documents.semantic";
  readonly kind = "SEMANTIC" as const;
  readonly latency = "LOCAL" as const;
  readonly description: string;
  /** It ranks with the deployment's embedder, so that embedder's default alpha applies to it. */
  readonly embeddingModel: string;
  /** The store's similarity for that embedder: the same as the other semantic provider's. */
  readonly scoreScale: string;
  readonly itemTypes = ["DocumentChunk"];
  readonly filters: readonly FilterField[] = ["created", "updated", "owner", "teams", "knowledgeBases", "categories", "formats"];
  /** Query embeddings by text: popular queries skip the model. */
  private readonly queryVectors = new LRUCache<string, number[]>({ max: 1_000 });

  constructor(
    private readonly embedder: Embedder,
    private readonly vectorStore: VectorStore,
    private readonly prisma: PrismaClient,
    /** Which organizations have no chunk, as `documents.keyword` last read it (document-collections.ts). */
    private readonly collections: DocumentCollections = documentCollectionsOf(prisma),
  ) {
    this.embeddingModel = embedder.model;
    this.scoreScale = similarityScale(vectorStore.name, embedder.model);
    this.description = `Semantic similarity of your and your teams' document chunks to the query (${embedder.model} embeddings in ${vectorStore.name}).`;
  }

  async search({ tenant, query, window, timeoutMs, filter }: ProviderRequest): Promise<ProviderHit[]> {
    // Only what is already known: reading it here would cost every organization with documents
    // a statement per search, to save one vector search for those without (which
    // documents.keyword, asked beside this in a unified search, finds out anyway).
    if (this.collections.knownEmpty(tenant.organizationId)) return [];
    let vector = this.queryVectors.get(query);
    if (!vector) {
      [vector] = await this.embedder.embed([query]);
      this.queryVectors.set(query, vector!);
    }
    const limit = Math.max(window, Math.min(window * OVERFETCH, MAX_CANDIDATES));
    const matches = await this.vectorStore.search(tenant.organizationId, this.embedder.model, vector!, { limit, entityTypes: ["document_chunk"] });
    if (matches.length === 0) return [];
    const visible = await visibleChunks(this.prisma, tenant, matches.map((match) => match.entityId), {
      ...(timeoutMs ? { statementTimeoutMs: timeoutMs } : {}),
      ...(filter ? { filter } : {}),
    });
    return matches
      .filter((match) => visible.has(match.entityId))
      .slice(0, window)
      .map((match) => documentChunkHit(match.entityId, match.score, visible.get(match.entityId)));
  }
}
