/**
 * How deep and how late the background work queues are (search_index_jobs, document_index_jobs,
 * vector_deletion_jobs), read for Prometheus at scrape time. One statement per queue: the
 * queue tables are small when the workers keep up, and the statement is bounded when they do
 * not (a statement timeout in the database, and a deadline here, since PGlite's single
 * connection may be busy with the indexer's own statements).
 *
 * The lease of a claimed job is a run_after in the future, as is the backoff of a failed one:
 * from the table alone the two look the same, so jobs "later" are both, and what is in flight
 * is counted by the worker that holds the jobs (`JobCounters`), per process.
 */
import type { Database } from "../database/connect.js";

/** The queues whose status can be read; table names come only from here, never from input. */
export type QueueName = "conversations" | "documents" | "vector_deletions";

const QUEUE_STATEMENTS: Record<QueueName, string> = {
  // run_after <= now: due now (new jobs, expired leases, retries whose backoff has passed).
  conversations: jobQueueStatement("search_index_jobs"),
  documents: jobQueueStatement("document_index_jobs"),
  // Deletions have no schedule or attempts: every queued row is due, and stays until done.
  vector_deletions: `
    SELECT count(*)::int AS due, 0 AS later, 0 AS failing,
           coalesce(extract(epoch FROM clock_timestamp() - min(enqueued_at)), 0)::float8 AS oldest_due_age_seconds
    FROM vector_deletion_jobs`,
};

function jobQueueStatement(table: string): string {
  return `
    SELECT count(*) FILTER (WHERE run_after <= clock_timestamp())::int AS due,
           count(*) FILTER (WHERE run_after > clock_timestamp())::int AS later,
           count(*) FILTER (WHERE attempts > 0 AND last_error IS NOT NULL)::int AS failing,
           coalesce(extract(epoch FROM clock_timestamp() - min(enqueued_at) FILTER (WHERE run_after <= clock_timestamp())), 0)::float8 AS oldest_due_age_seconds
    FROM ${table}`;
}

export interface QueueStatus {
  /** Jobs due now, waiting for a worker. */
  due: number;
  /** Jobs scheduled later: leased by a worker (in flight), or waiting out a retry's backoff. */
  later: number;
  /** Jobs whose last attempt failed (they are retried, or given up by the worker). */
  failing: number;
  /** Age of the oldest due job since it was (re)enqueued, in seconds; 0 when none is due. */
  oldestDueAgeSeconds: number;
}

export interface QueueStatusOptions {
  /** Bound on one read, in the database and here (default 1 s). */
  timeoutMs?: number;
}

export class QueueStatusTimeoutError extends Error {
  readonly code = "QUEUE_STATUS_TIMEOUT";
}

/**
 * Reads one queue's status with one statement (plus its statement_timeout, set for its
 * transaction only). Throws when the database fails or does not answer within the bound.
 */
export async function readQueueStatus(database: Database, queue: QueueName, { timeoutMs = 1_000 }: QueueStatusOptions = {}): Promise<QueueStatus> {
  const prisma = database.prisma;
  const read = prisma
    .$transaction([
      prisma.$queryRaw`SELECT set_config('statement_timeout', ${String(Math.max(1, Math.ceil(timeoutMs)))}, true)`,
      prisma.$queryRawUnsafe<{ due: number; later: number; failing: number; oldest_due_age_seconds: number }[]>(QUEUE_STATEMENTS[queue]),
    ])
    .then(([, rows]) => {
      const row = rows[0]!;
      return { due: Number(row.due), later: Number(row.later), failing: Number(row.failing), oldestDueAgeSeconds: Math.max(0, Number(row.oldest_due_age_seconds)) };
    });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new QueueStatusTimeoutError(`the ${queue} queue's status took longer than ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([read, deadline]);
  } finally {
    clearTimeout(timer);
    // A read cut by the deadline still settles later; its failure must not be unhandled.
    read.catch(() => undefined);
  }
}

/**
 * indexed: done; failed: an attempt failed (retried later, or given up); lease_lost: the worker
 * found its lease taken over by another worker (it ran out while this one was still at work)
 * and left the job to it. Lease losses that keep growing mean the lease is shorter than a job
 * takes (SEARCH_INDEXER_LEASE_SECONDS).
 */
export type JobOutcome = "indexed" | "failed" | "lease_lost";

/**
 * What one worker did, counted in its own process: jobs it holds now (claimed, not yet
 * finished) and jobs it finished, by outcome. Metrics read these at scrape time.
 */
export class JobCounters {
  inFlight = 0;
  readonly finished: Record<JobOutcome, number> = { indexed: 0, failed: 0, lease_lost: 0 };

  /**
   * Counts `count` jobs in flight while `work` runs on them, whatever way it ends: a worker that
   * throws half-way must not leave its jobs counted as held for ever.
   */
  async holding<T>(count: number, work: () => Promise<T>): Promise<T> {
    this.inFlight += count;
    try {
      return await work();
    } finally {
      this.inFlight -= count;
    }
  }

  /** One job done (indexed) or one attempt failed (retried later, or given up). */
  record(outcome: JobOutcome): void {
    this.finished[outcome] += 1;
  }
}

/** A queue as metrics see it: its status from the database, and its worker's counters here. */
export interface ObservableQueue {
  readonly queue: QueueName;
  status(): Promise<QueueStatus>;
  readonly counters: JobCounters | null;
}
