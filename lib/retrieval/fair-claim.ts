/**
 * Which due jobs an indexer claims next, for both indexing queues (conversations, documents):
 * in turns across organizations, not oldest first. Oldest first, one organization that queued
 * 150 documents had every one of them indexed before another organization's one-line document
 * was even claimed (issue 41: still PENDING after 184 s). Here each organization's due jobs are
 * numbered oldest first (its turn 1, 2, 3 …) and a batch takes every organization's turn 1, then
 * every turn 2, and so on; ties go to the older job. So a batch of n holds the oldest due job of
 * each of n organizations, and an organization that queues one job waits for at most the batch
 * in progress, whatever another has queued.
 *
 * Numbering reads every due job's key (a sort per claim): cheap while the queues keep up, and
 * bounded by the backlog limit on documents; a bulk re-index of conversations (a model change)
 * pays one sort of its queue per batch, small beside embedding the batch.
 *
 * Rows another worker holds are skipped and the batch fills past them (SKIP LOCKED counts toward
 * the LIMIT only rows it locks), so two workers side by side claim different jobs. The numbering
 * is read from a window of candidates (a few batches) before locking: FOR UPDATE cannot run
 * where a window function is computed.
 */
import { Prisma } from "../../generated/prisma/client.js";

/** The two indexing queues: each table with its job key column (never from input). */
const QUEUES = {
  conversations: { table: "search_index_jobs", key: "conversation_id" },
  documents: { table: "document_index_jobs", key: "document_id" },
} as const;

export type IndexingQueue = keyof typeof QUEUES;

/** Candidates numbered before locking, per job to claim: room for the rows other workers hold. */
const CANDIDATES_PER_CLAIM = 4;

/**
 * A SELECT of the keys (`organization_id` and the queue's key column) of at most `limit` due jobs
 * of `queue`, in turns across organizations, locked FOR UPDATE SKIP LOCKED: the body of a CTE
 * that the queue's claim UPDATE joins.
 */
export function dueJobsInTurns(queue: IndexingQueue, limit: number): Prisma.Sql {
  const { table, key } = QUEUES[queue];
  const t = Prisma.raw(table);
  const k = Prisma.raw(key);
  return Prisma.sql`
    SELECT j.organization_id, j.${k}
    FROM ${t} j
    JOIN (
      SELECT organization_id, ${k}, run_after, row_number() OVER (PARTITION BY organization_id ORDER BY run_after, ${k}) AS turn
      FROM ${t}
      WHERE run_after <= clock_timestamp()
      ORDER BY turn, run_after
      LIMIT ${limit * CANDIDATES_PER_CLAIM}
    ) due ON due.organization_id = j.organization_id AND due.${k} = j.${k}
    WHERE j.run_after <= clock_timestamp()
    ORDER BY due.turn, due.run_after
    LIMIT ${limit}
    FOR UPDATE OF j SKIP LOCKED`;
}
