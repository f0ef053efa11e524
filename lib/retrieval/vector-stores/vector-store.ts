/**
 * Where embeddings live and how they are searched. pgvector in the same PostgreSQL by default;
 * Weaviate when WEAVIATE_URL is set. Every call names the organization, and an implementation
 * must filter by it inside the store's own query (a WHERE clause, a Weaviate tenant), never
 * after the fact.
 */
import type { TenantTransaction } from "../../database/tenant-scope.js";

export type EntityType = "conversation" | "document_chunk";

export interface VectorChunk {
  /** 0-based position of the chunk within its entity. */
  chunkIndex: number;
  /** sha256 of the chunk's text: lets the indexer skip unchanged chunks. */
  contentHash: string;
  vector: number[];
}

/** One entity's chunks, for {@link VectorStore.replaceEntities}. */
export interface EntityVectors {
  entityId: string;
  chunks: VectorChunk[];
}

export interface VectorMatch {
  entityType: EntityType;
  entityId: string;
  /** Cosine similarity of the entity's best-matching chunk, in [-1, 1]. */
  score: number;
  /** Which chunk matched best. */
  chunkIndex: number;
}

export interface VectorSearchOptions {
  /** How many entities to return (after collapsing chunks to their entity). */
  limit: number;
  entityTypes?: EntityType[];
}

/**
 * The lease check of an indexer's write (issue 22: several indexer processes share one queue).
 * It throws when the writer no longer holds its job (its lease ran out and another worker took
 * it over). A store with transactions (pgvector) runs it first inside the write's own
 * transaction, passing that transaction: the check there also locks the job's row, so no other
 * worker can claim the job until the write has committed. A store without them (Weaviate, S3
 * Vectors) runs it just before writing, with null: a write that takes longer than the lease can
 * then still overlap a newer attempt's, which only a longer lease avoids.
 */
export type WriteFence = (transaction: TenantTransaction | null) => Promise<void>;

export interface VectorStore {
  /** Short name for logs and provider reports, e.g. "pgvector" or "weaviate". */
  readonly name: string;
  /** Prepares storage and indexes for vectors of this model (idempotent; called once at start-up). */
  ensureReady(model: string, dimensions: number): Promise<void>;
  /** Replaces all of an entity's chunks for this model with `chunks` (an empty list removes them). */
  replaceEntity(organizationId: string, entityType: EntityType, entityId: string, model: string, chunks: VectorChunk[], fence?: WriteFence): Promise<void>;
  /**
   * replaceEntity for many entities of one type at once (an indexer's slice of document
   * chunks): pgvector does it in one transaction of two statements, stores without
   * transactions one entity after another. An entity id must not appear twice.
   */
  replaceEntities(organizationId: string, entityType: EntityType, model: string, entities: readonly EntityVectors[], fence?: WriteFence): Promise<void>;
  /** Removes an entity's chunks for every model. */
  deleteEntity(organizationId: string, entityType: EntityType, entityId: string): Promise<void>;
  /**
   * The entities whose best chunk is nearest to `vector` (cosine), best first, one row per
   * entity, only vectors of `model`, only this organization's.
   */
  search(organizationId: string, model: string, vector: number[], options: VectorSearchOptions): Promise<VectorMatch[]>;
  /** Releases connections the store opened itself. */
  close?(): Promise<void>;
}

/** replaceEntities for a store that has no batch write: each entity on its own, side by side. */
export async function replaceEachEntity(
  store: Pick<VectorStore, "replaceEntity">,
  organizationId: string,
  entityType: EntityType,
  model: string,
  entities: readonly EntityVectors[],
  fence?: WriteFence,
): Promise<void> {
  assertDistinctEntities(entities);
  // One check for the whole batch, before any of it is written.
  await fence?.(null);
  await Promise.all(entities.map((entity) => store.replaceEntity(organizationId, entityType, entity.entityId, model, entity.chunks)));
}

/** Two writes of one entity in a batch would race (or, in SQL, collide): refuse the batch. */
export function assertDistinctEntities(entities: readonly EntityVectors[]): void {
  const seen = new Set<string>();
  for (const { entityId } of entities) {
    if (seen.has(entityId)) throw new Error(`replaceEntities: entity ${entityId} appears twice in one batch; pass each entity once with all its chunks`);
    seen.add(entityId);
  }
}
