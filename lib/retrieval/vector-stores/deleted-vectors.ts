/**
 * Deletes from the vector store the vectors of chunks the database has deleted. A trigger
 * queues every deleted document chunk in vector_deletion_jobs (in the deleting transaction);
 * pgvector's rows went with the chunk already, so for it the queue is only emptied, while a
 * store outside the database (Weaviate, S3 Vectors) is asked to delete each entity first. A row
 * leaves the queue only after its vectors are gone, so a failing store loses nothing: the next
 * round tries again. Runs as the tables' owner (it spans organizations, like the indexing queue).
 */
import type { Database } from "../../database/connect.js";
import type { Logger } from "../../logger.js";
import type { EntityType, VectorStore } from "./vector-store.js";

interface QueuedDeletion {
  organization_id: string;
  entity_type: EntityType;
  entity_id: string;
}

/** Rows taken per round trip; a round deletes at most `maxRounds` × this many. */
const BATCH_SIZE = 100;

/**
 * Works through the queue (bounded by `maxRounds` batches) and returns how many entities it
 * removed. A store failure is logged and ends the pass, leaving the rest queued.
 */
export async function removeDeletedVectors(database: Database, store: VectorStore, logger: Logger, { maxRounds = 20 } = {}): Promise<number> {
  let removed = 0;
  for (let round = 0; round < maxRounds; round += 1) {
    // Concurrent indexers may take the same rows: deleting an entity twice is harmless.
    const rows = await database.prisma.$queryRaw<QueuedDeletion[]>`
      SELECT organization_id, entity_type, entity_id::text AS entity_id FROM vector_deletion_jobs
      ORDER BY enqueued_at LIMIT ${BATCH_SIZE}`;
    if (rows.length === 0) break;
    if (store.name !== "pgvector") {
      try {
        for (const row of rows) await store.deleteEntity(row.organization_id, row.entity_type, row.entity_id);
      } catch (error) {
        logger.warn(`removing the vectors of deleted chunks from ${store.name} failed (retried next round): ${(error as Error).message.split("\n")[0]}`);
        break;
      }
    }
    await database.prisma.$executeRaw`
      DELETE FROM vector_deletion_jobs j
      USING unnest(${rows.map((row) => row.organization_id)}::text[], ${rows.map((row) => row.entity_type)}::text[], ${rows.map((row) => row.entity_id)}::uuid[]) AS done(organization_id, entity_type, entity_id)
      WHERE j.organization_id = done.organization_id AND j.entity_type = done.entity_type AND j.entity_id = done.entity_id`;
    removed += rows.length;
    if (rows.length < BATCH_SIZE) break;
  }
  return removed;
}
