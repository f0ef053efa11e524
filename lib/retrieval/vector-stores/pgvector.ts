/**
 * Vectors in the same PostgreSQL (pgvector), table embedding_chunks. The organization and the
 * model are in the WHERE clause of the nearest-neighbour query itself. Each model gets its own
 * HNSW index (cosine), built over the vector cast to the model's dimensions and restricted to
 * the model's rows, because a single HNSW index needs one fixed dimension.
 */
import { createHash } from "node:crypto";
import { Prisma } from "../../../generated/prisma/client.js";
import { withTenantReads } from "../../database/tenant-reads.js";
import { withTenantScope } from "../../database/tenant-scope.js";
import type { Database } from "../../database/connect.js";
import { assertDistinctEntities, type EntityType, type EntityVectors, type VectorChunk, type VectorMatch, type VectorSearchOptions, type VectorStore, type WriteFence } from "./vector-store.js";

/** How many chunks to pull per wanted entity before collapsing chunks to entities. */
const CHUNKS_PER_ENTITY = 4;
/**
 * The HNSW knobs of a search that needs `candidates` rows: HNSW returns at most ef_search
 * candidates, before the organization filter, so it is raised to what is needed (never below
 * pgvector's default 40), and pgvector 0.8's iterative scan keeps looking when the filter is
 * selective (one organization among many) instead of silently returning too few. The latency
 * benchmark's EXPLAIN restates them from the statement's candidate count.
 */
export function hnswSearchSettings(candidates: number): Record<string, string> {
  return { "hnsw.ef_search": String(Math.max(40, candidates)), "hnsw.iterative_scan": "relaxed_order" };
}

/** pgvector's upper bound for hnsw.ef_search. */
const MAX_CANDIDATES = 1000;

export function toVectorLiteral(vector: readonly number[]): string {
  return `[${vector.map((value) => (Number.isFinite(value) ? value : 0)).join(",")}]`;
}

export class PgVectorStore implements VectorStore {
  readonly name = "pgvector";
  private readonly dimensions = new Map<string, number>();

  constructor(private readonly database: Database) {}

  async ensureReady(model: string, dimensions: number): Promise<void> {
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 2000) {
      throw new RangeError(`pgvector HNSW indexes support 1 to 2000 dimensions; model ${model} has ${dimensions}`);
    }
    this.dimensions.set(model, dimensions);
    const indexName = `embedding_chunks_hnsw_${createHash("sha256").update(`${model}@${dimensions}`).digest("hex").slice(0, 16)}`;
    // The model name is a literal inside the index predicate (DDL cannot take parameters): quote it.
    const modelLiteral = `'${model.replace(/'/g, "''")}'`;
    await this.database.prisma.$executeRawUnsafe(
      `CREATE INDEX IF NOT EXISTS "${indexName}" ON embedding_chunks USING hnsw ((embedding::vector(${dimensions})) vector_cosine_ops) WHERE model = ${modelLiteral}`,
    );
  }

  async replaceEntity(organizationId: string, entityType: EntityType, entityId: string, model: string, chunks: VectorChunk[], fence?: WriteFence): Promise<void> {
    await withTenantScope(this.database.prisma, organizationId, async (tx) => {
      await fence?.(tx);
      await tx.$executeRaw`
        DELETE FROM embedding_chunks
        WHERE organization_id = ${organizationId} AND entity_type = ${entityType} AND entity_id = ${entityId}::uuid AND model = ${model}`;
      if (chunks.length === 0) return;
      await tx.$executeRaw`
        INSERT INTO embedding_chunks (organization_id, entity_type, entity_id, chunk_index, model, content_hash, embedding)
        SELECT ${organizationId}, ${entityType}, ${entityId}::uuid, chunk.index, ${model}, chunk.hash, chunk.vector::vector
        FROM unnest(${chunks.map((chunk) => chunk.chunkIndex)}::int[], ${chunks.map((chunk) => chunk.contentHash)}::text[], ${chunks.map((chunk) => toVectorLiteral(chunk.vector))}::text[])
          AS chunk(index, hash, vector)`;
    });
  }

  /** One transaction, one DELETE and one INSERT however many entities (an indexer's slice). */
  async replaceEntities(organizationId: string, entityType: EntityType, model: string, entities: readonly EntityVectors[], fence?: WriteFence): Promise<void> {
    if (entities.length === 0) return;
    assertDistinctEntities(entities);
    const rows = entities.flatMap((entity) => entity.chunks.map((chunk) => ({ entityId: entity.entityId, chunk })));
    await withTenantScope(this.database.prisma, organizationId, async (tx) => {
      await fence?.(tx);
      await tx.$executeRaw`
        DELETE FROM embedding_chunks
        WHERE organization_id = ${organizationId} AND entity_type = ${entityType} AND model = ${model}
          AND entity_id = ANY(${entities.map((entity) => entity.entityId)}::uuid[])`;
      if (rows.length === 0) return;
      await tx.$executeRaw`
        INSERT INTO embedding_chunks (organization_id, entity_type, entity_id, chunk_index, model, content_hash, embedding)
        SELECT ${organizationId}, ${entityType}, chunk.entity_id, chunk.index, ${model}, chunk.hash, chunk.vector::vector
        FROM unnest(
          ${rows.map((row) => row.entityId)}::uuid[],
          ${rows.map((row) => row.chunk.chunkIndex)}::int[],
          ${rows.map((row) => row.chunk.contentHash)}::text[],
          ${rows.map((row) => toVectorLiteral(row.chunk.vector))}::text[]
        ) AS chunk(entity_id, index, hash, vector)`;
    });
  }

  async deleteEntity(organizationId: string, entityType: EntityType, entityId: string): Promise<void> {
    await withTenantScope(this.database.prisma, organizationId, (tx) => tx.$executeRaw`
      DELETE FROM embedding_chunks WHERE organization_id = ${organizationId} AND entity_type = ${entityType} AND entity_id = ${entityId}::uuid`);
  }

  /**
   * `liveConversations`: also drop conversations deleted (or gone) since their vectors were
   * written, in the same statement (a LEFT JOIN on conversations), after collapsing to `limit`
   * entities exactly as a separate liveness check would, so a search sends one statement, not two,
   * and return each conversation's dates and owner with its match.
   *
   * `conversationCondition`: only chunks of live conversations (alias `c`) that meet it, checked
   * inside the nearest-neighbour scan, so the iterative HNSW scan keeps reading until it has
   * `limit` entities that match (or the index is exhausted), rather than filtering a short list.
   */
  async search(
    organizationId: string,
    model: string,
    vector: number[],
    options: VectorSearchOptions & { liveConversations?: boolean; conversationCondition?: Prisma.Sql },
  ): Promise<(VectorMatch & { conversation?: { created_at: Date; updated_at: Date; user_id: string } })[]> {
    const dimensions = this.dimensions.get(model) ?? vector.length;
    if (vector.length !== dimensions) throw new RangeError(`query vector has ${vector.length} dimensions; model ${model} has ${dimensions}`);
    const entityTypes = options.entityTypes ?? ["conversation", "document_chunk"];
    const literal = toVectorLiteral(vector);
    const candidates = Math.min(options.limit * CHUNKS_PER_ENTITY, MAX_CANDIDATES);
    const settings = hnswSearchSettings(candidates);
    const rows = await withTenantReads(
      this.database.prisma,
      organizationId,
      (tx) =>
        // The cast to vector(n) must match the index expression exactly for the planner to use it;
        // n is an integer we validated, so formatting it into the SQL is safe.
        tx.$queryRaw<{ entity_type: EntityType; entity_id: string; chunk_index: number; distance: number; live: boolean; created_at: Date | null; updated_at: Date | null; user_id: string | null }[]>(
          Prisma.sql`SELECT entity_type, entity_id::text AS entity_id, chunk_index, distance,
             ${Prisma.raw(options.liveConversations ? "live.id IS NOT NULL AS live, live.created_at, live.updated_at, live.user_id" : "true AS live, NULL::timestamptz AS created_at, NULL::timestamptz AS updated_at, NULL::text AS user_id")} FROM (
             SELECT entity_type, entity_id, chunk_index, embedding::vector(${Prisma.raw(String(dimensions))}) <=> ${literal}::vector(${Prisma.raw(String(dimensions))}) AS distance
             FROM embedding_chunks
             WHERE organization_id = ${organizationId} AND model = ${model} AND entity_type = ANY(${entityTypes}::text[])
             ${
               options.conversationCondition
                 ? Prisma.sql`AND EXISTS (SELECT 1 FROM conversations c WHERE c.id = embedding_chunks.entity_id AND c.organization_id = ${organizationId} AND c.deleted_at IS NULL AND ${options.conversationCondition})`
                 : Prisma.empty
             }
             ORDER BY embedding::vector(${Prisma.raw(String(dimensions))}) <=> ${literal}::vector(${Prisma.raw(String(dimensions))})
             LIMIT ${candidates}
           ) nearest
           ${options.liveConversations ? Prisma.sql`LEFT JOIN conversations live ON nearest.entity_type = 'conversation' AND live.id = nearest.entity_id AND live.organization_id = ${organizationId} AND live.deleted_at IS NULL` : Prisma.empty}
           ORDER BY distance, entity_id`,
        ),
      { settings },
    );
    const best = new Map<string, VectorMatch & { conversation?: { created_at: Date; updated_at: Date; user_id: string } }>();
    const dead = new Set<string>();
    for (const row of rows) {
      const key = `${row.entity_type}:${row.entity_id}`;
      if (best.has(key)) continue;
      best.set(key, {
        entityType: row.entity_type,
        entityId: row.entity_id,
        chunkIndex: row.chunk_index,
        score: 1 - Number(row.distance),
        ...(row.created_at && row.updated_at && row.user_id ? { conversation: { created_at: row.created_at, updated_at: row.updated_at, user_id: row.user_id } } : {}),
      });
      if (!row.live) dead.add(key);
    }
    return [...best.values()].slice(0, options.limit).filter((match) => !dead.has(`${match.entityType}:${match.entityId}`));
  }
}
