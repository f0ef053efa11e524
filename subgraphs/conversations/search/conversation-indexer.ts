/**
 * Keeps the vector store current with conversations, off the request path. Work comes from
 * search_index_jobs, which a trigger fills in the same transaction as the write, so nothing is
 * lost if this process is down or restarts: the queue simply waits.
 *
 * Claiming pushes a job's run_after into the future (a lease) under FOR UPDATE SKIP LOCKED, so
 * several processes can index side by side without doing the same work; jobs are claimed in
 * turns across organizations (fair-claim.ts), so no organization's backlog delays another's. A
 * job is removed only if it was not re-enqueued while it was being embedded (enqueued_at
 * unchanged); a failure is retried with exponential backoff and is visible in `searchIndexStatus`.
 *
 * Each claim also writes a fresh lease token, which every later step of the attempt names
 * (issue 22). The vector write checks it first, inside its own transaction on pgvector, and
 * locks the job's row there (FOR KEY SHARE): another worker's claim skips a locked row, so a
 * job whose lease runs out during a slow write cannot be taken over until that write commits,
 * and a worker that finds its token gone (taken over while it was embedding) writes nothing and
 * leaves the job to the new holder. So two processes index each conversation once, and one
 * killed mid-job loses nothing: its jobs come back when their lease runs out.
 *
 * A conversation whose indexing kills the process (out of memory, a crash in a native model)
 * never throws, so no retry limit sees it: it would come back after every lease and take its
 * batch-mates down each time. So an attempt is counted when work on a job begins, and uncounted
 * when it ends in order (done, failed, handed back at a stop); what stays counted
 * (`unfinished_attempts`) are attempts that died. Such a job is indexed alone, after its
 * batch's others, and parked once it reaches `maxInterruptions`, with a reason that
 * `searchIndexStatus` shows, until the conversation next changes.
 */
import { createHash, randomUUID } from "node:crypto";
import type { Database } from "../../../lib/database/connect.js";
import type { Logger } from "../../../lib/logger.js";
import type { Embedder } from "../../../lib/retrieval/embeddings/embedder.js";
import type { VectorStore, WriteFence } from "../../../lib/retrieval/vector-stores/vector-store.js";
import { chunkText, DEFAULT_CHUNKING, type ChunkOptions } from "../../../lib/retrieval/chunking.js";
import { dueJobsInTurns } from "../../../lib/retrieval/fair-claim.js";
import { IndexerStopped, IndexingLoop, LeaseLost } from "../../../lib/retrieval/indexing-loop.js";
import { JobCounters, readQueueStatus, type ObservableQueue, type QueueStatus } from "../../../lib/retrieval/queue-status.js";

export interface IndexerOptions {
  /** Conversations claimed per round; their chunks are embedded in one call. */
  batchSize?: number;
  /** Pause between rounds when the queue is empty. */
  idleMs?: number;
  /** How long a claimed job stays invisible to other workers. */
  leaseSeconds?: number;
  chunking?: ChunkOptions;
  /** Attempts on one conversation that may die mid-work before it is parked (default 3). */
  maxInterruptions?: number;
  /**
   * Vacuum the search tables once this many conversations were re-indexed, when the queue is
   * next empty; null (the default) never does. For the embedded PGlite, which runs no
   * autovacuum: every change to a conversation rewrites all its keyword postings, and without
   * VACUUM the dead rows pile up and index-only scans keep visiting the heap.
   */
  vacuumAfterJobs?: number | null;
}

/** The tables whose rows each re-index replaces. */
const CHURNED_TABLES = ["keyword_postings", "keyword_documents", "embedding_chunks", "search_index_jobs"];

/** Texts per model call while indexing: one call on the local model takes about half a second. */
const EMBED_SLICE = 8;

interface ClaimedJob {
  conversation_id: string;
  organization_id: string;
  /** enqueued_at as text: a JS Date would drop its microseconds and never compare equal again. */
  enqueued_at: string;
  attempts: number;
  /** This claim's token: the job is still this worker's while its row carries it. */
  lease_token: string;
  /** Earlier attempts that began and never ended in order (see the file's comment). */
  unfinished_attempts: number;
}

interface ConversationText {
  id: string;
  title: string;
  deleted: boolean;
  body: string | null;
}

export class ConversationIndexer {
  private readonly loop: IndexingLoop;
  private readonly batchSize: number;
  private readonly leaseSeconds: number;
  private readonly chunking: ChunkOptions;
  private readonly maxInterruptions: number;
  /** Jobs this process holds and finished, for the metrics (the queue's depth is read from the table). */
  readonly counters = new JobCounters();

  constructor(
    private readonly database: Database,
    private readonly embedder: Embedder,
    private readonly vectorStore: VectorStore,
    private readonly logger: Logger,
    options: IndexerOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 16;
    this.leaseSeconds = options.leaseSeconds ?? 300;
    this.chunking = options.chunking ?? DEFAULT_CHUNKING;
    this.maxInterruptions = options.maxInterruptions ?? 3;
    this.loop = new IndexingLoop(() => this.runOnce(), { name: "indexing", idleMs: options.idleMs, vacuumAfterJobs: options.vacuumAfterJobs, logger, database, churnedTables: CHURNED_TABLES });
  }

  /** True once stop() was called: the current round abandons its remaining model calls. */
  private get stopping(): boolean {
    return this.loop.stopping;
  }

  /** Starts indexing in the background until `stop()`. */
  start(): void {
    this.loop.start();
  }

  /** Stops after the model call in progress; unfinished jobs go back to the queue. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Vacuums the churned tables when enough conversations were re-indexed (see IndexerOptions); returns whether it ran. */
  vacuumIfDue(): Promise<boolean> {
    return this.loop.vacuumIfDue();
  }

  /** How deep and late the queue is, across every worker (one bounded statement). */
  queueStatus(): Promise<QueueStatus> {
    return readQueueStatus(this.database, "conversations");
  }

  /** The queue as metrics see it. */
  queues(): ObservableQueue[] {
    return [{ queue: "conversations", status: () => this.queueStatus(), counters: this.counters }];
  }

  /** Claims and processes one batch; returns how many jobs it handled. */
  async runOnce(): Promise<number> {
    const jobs = await this.claim();
    if (jobs.length === 0) return 0;
    return this.counters.holding(jobs.length, () => this.indexClaimed(jobs));
  }

  /**
   * The jobs whose every earlier attempt ended in order go in one batch, first. A job an earlier
   * attempt died on is suspected of what killed it: it goes alone, fewest deaths first, so if it
   * kills this process too, the batch is done and no other suspect has begun (and been counted).
   */
  private async indexClaimed(jobs: ClaimedJob[]): Promise<number> {
    let handled = 0;
    for (const job of jobs.filter((job) => job.unfinished_attempts >= this.maxInterruptions)) handled += await this.park(job);
    const clean = jobs.filter((job) => job.unfinished_attempts === 0);
    const suspects = jobs.filter((job) => job.unfinished_attempts > 0 && job.unfinished_attempts < this.maxInterruptions).sort((a, b) => a.unfinished_attempts - b.unfinished_attempts);
    const rounds = [...(clean.length > 0 ? [clean] : []), ...suspects.map((job) => [job])];
    for (const [index, round] of rounds.entries()) {
      if (this.stopping) {
        await this.release(rounds.slice(index).flat(), { begun: false });
        break;
      }
      handled += await this.indexBatch(round);
    }
    return handled;
  }

  private async indexBatch(claimed: ClaimedJob[]): Promise<number> {
    const jobs = await this.begin(claimed);
    if (jobs.length === 0) return claimed.length;
    const texts = await this.load(jobs);

    // Every chunk of the batch goes to the embedder in one call: batching is where throughput comes from.
    const plans = jobs.map((job) => {
      const text = texts.get(job.conversation_id);
      const chunks = text && !text.deleted && text.body !== null ? chunkText(`${text.title}\n\n${text.body}`, this.chunking) : [];
      return { job, text, chunks };
    });
    const allChunks = plans.flatMap((plan) => plan.chunks);
    let vectors: number[][];
    try {
      vectors = await this.embedInSlices(allChunks);
    } catch (error) {
      if (error instanceof IndexerStopped) {
        await this.release(jobs, { begun: true });
        return 0;
      }
      await Promise.all(jobs.map((job) => this.fail(job, error)));
      return jobs.length;
    }

    let offset = 0;
    for (const plan of plans) {
      const planVectors = vectors.slice(offset, offset + plan.chunks.length);
      offset += plan.chunks.length;
      try {
        if (!plan.text || plan.text.deleted) {
          await this.fence(plan.job)(null);
          await this.vectorStore.deleteEntity(plan.job.organization_id, "conversation", plan.job.conversation_id);
        } else {
          await this.vectorStore.replaceEntity(
            plan.job.organization_id,
            "conversation",
            plan.job.conversation_id,
            this.embedder.model,
            plan.chunks.map((chunk, index) => ({ chunkIndex: index, contentHash: sha256(chunk), vector: planVectors[index]! })),
            this.fence(plan.job),
          );
        }
        await this.complete(plan.job);
      } catch (error) {
        if (error instanceof LeaseLost) {
          this.counters.record("lease_lost");
          this.logger.info(`${error.message}; leaving it to that worker`);
        } else {
          await this.fail(plan.job, error);
        }
      }
    }
    return claimed.length;
  }

  /**
   * Counts an attempt on each job as begun, before its text is even read (a conversation big
   * enough to kill the process may do it there), and renews their lease, in one statement.
   * Returns the jobs still this worker's; the others were taken over (lease lost).
   */
  private async begin(jobs: ClaimedJob[]): Promise<ClaimedJob[]> {
    const held = await this.database.prisma.$queryRaw<{ conversation_id: string }[]>`
      UPDATE search_index_jobs j
      SET unfinished_attempts = j.unfinished_attempts + 1, run_after = clock_timestamp() + make_interval(secs => ${this.leaseSeconds})
      FROM unnest(${jobs.map((job) => job.organization_id)}::text[], ${jobs.map((job) => job.conversation_id)}::uuid[], ${jobs.map((job) => job.lease_token)}::uuid[]) AS begun(organization_id, conversation_id, lease_token)
      WHERE j.organization_id = begun.organization_id AND j.conversation_id = begun.conversation_id AND j.lease_token = begun.lease_token
      RETURNING j.conversation_id::text AS conversation_id`;
    const still = new Set(held.map((row) => row.conversation_id));
    for (const job of jobs.filter((job) => !still.has(job.conversation_id))) {
      this.counters.record("lease_lost");
      this.logger.info(`conversation ${job.conversation_id} was taken over by another worker before indexing began; leaving it to that worker`);
    }
    return jobs.filter((job) => still.has(job.conversation_id));
  }

  /**
   * Gives up on a job that died mid-work maxInterruptions times: it stays queued, due never,
   * with a reason `searchIndexStatus` shows, until the conversation changes (the trigger then
   * re-enqueues it with a clean count). Its keyword postings are the trigger's and stay current;
   * its vectors stay those of the last text indexed, if any.
   */
  private async park(job: ClaimedJob): Promise<number> {
    const reason = `Indexing was interrupted ${job.unfinished_attempts} times before it finished (the indexing process stopped while embedding this conversation), so it is no longer retried; it will be indexed again when the conversation changes.`;
    this.counters.record("failed");
    this.logger.warn(`indexing conversation ${job.conversation_id} parked: ${reason}`);
    await this.database.prisma.$executeRaw`
      UPDATE search_index_jobs SET run_after = 'infinity', last_error = ${reason}, lease_token = NULL
      WHERE organization_id = ${job.organization_id} AND conversation_id = ${job.conversation_id}::uuid AND lease_token = ${job.lease_token}::uuid
        AND unfinished_attempts >= ${this.maxInterruptions}`;
    return 1;
  }

  /**
   * A local model computes on this thread: embedding a whole batch in one call would hold the
   * event loop (and every request this process serves) for seconds. Slices give requests a turn
   * between model calls, and let `stop()` end a round without waiting for the whole batch.
   */
  private async embedInSlices(texts: string[]): Promise<number[][]> {
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += EMBED_SLICE) {
      if (this.stopping) throw new IndexerStopped();
      vectors.push(...(await this.embedder.embed(texts.slice(start, start + EMBED_SLICE))));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return vectors;
  }

  /** Hands unfinished jobs back to the queue at once (instead of when their lease runs out), uncounting their attempt. */
  private async release(jobs: ClaimedJob[], { begun }: { begun: boolean }): Promise<void> {
    for (const job of jobs) {
      await this.database.prisma.$executeRaw`
        UPDATE search_index_jobs
        SET run_after = clock_timestamp(), attempts = greatest(attempts - 1, 0), unfinished_attempts = greatest(unfinished_attempts - ${begun ? 1 : 0}, 0), lease_token = NULL
        WHERE organization_id = ${job.organization_id} AND conversation_id = ${job.conversation_id}::uuid AND lease_token = ${job.lease_token}::uuid`;
    }
  }

  /** Processes until the queue has nothing ready (tests, evaluation, the reindex command). */
  drain(onProgress?: (done: number) => void): Promise<number> {
    return this.loop.drain(onProgress);
  }

  /** Nudges a sleeping background loop to look at the queue now. */
  poke(): void {
    this.loop.poke();
  }

  /**
   * Throws LeaseLost unless the job still carries this attempt's token. Inside a write's
   * transaction (`transaction` given) it also locks the row until that write commits, in the
   * weakest mode that stops another claim (FOR UPDATE SKIP LOCKED skips it) and lets the
   * writers' trigger still re-enqueue the conversation meanwhile (KEY SHARE does not block an
   * update of non-key columns).
   */
  private fence(job: ClaimedJob): WriteFence {
    return async (transaction) => {
      const held = await (transaction ?? this.database.prisma).$queryRaw<unknown[]>`
        SELECT 1 FROM search_index_jobs
        WHERE organization_id = ${job.organization_id} AND conversation_id = ${job.conversation_id}::uuid AND lease_token = ${job.lease_token}::uuid
        FOR KEY SHARE`;
      if (held.length === 0) throw new LeaseLost(`conversation ${job.conversation_id}`);
    };
  }

  private claim(): Promise<ClaimedJob[]> {
    return this.database.prisma.$queryRaw<ClaimedJob[]>`
      WITH picked AS (${dueJobsInTurns("conversations", this.batchSize)})
      UPDATE search_index_jobs j
      SET run_after = clock_timestamp() + make_interval(secs => ${this.leaseSeconds}), attempts = j.attempts + 1, lease_token = ${randomUUID()}::uuid
      FROM picked
      WHERE j.organization_id = picked.organization_id AND j.conversation_id = picked.conversation_id
      RETURNING j.conversation_id::text AS conversation_id, j.organization_id, j.enqueued_at::text AS enqueued_at, j.attempts, j.lease_token::text AS lease_token, j.unfinished_attempts`;
  }

  /** Titles and the user's and assistant's words; system prompts and tool output are boilerplate that would blur the meaning. */
  /** By (organization, id), the conversations' key: jobs of a batch may be of several organizations. */
  private async load(jobs: readonly ClaimedJob[]): Promise<Map<string, ConversationText>> {
    const rows = await this.database.prisma.$queryRaw<ConversationText[]>`
      SELECT c.id::text AS id, c.title, c.deleted_at IS NOT NULL AS deleted,
             (SELECT string_agg(m.content, E'\n\n' ORDER BY m.position)
              FROM messages m WHERE m.organization_id = c.organization_id AND m.conversation_id = c.id AND m.role IN ('user', 'assistant')) AS body
      FROM unnest(${jobs.map((job) => job.organization_id)}::text[], ${jobs.map((job) => job.conversation_id)}::uuid[]) AS job(organization_id, id)
      JOIN conversations c ON c.organization_id = job.organization_id AND c.id = job.id`;
    return new Map(rows.map((row) => [row.id, { ...row, body: row.body ?? "" }]));
  }

  private async complete(job: ClaimedJob): Promise<void> {
    const deleted = await this.database.prisma.$executeRaw`
      DELETE FROM search_index_jobs
      WHERE organization_id = ${job.organization_id} AND conversation_id = ${job.conversation_id}::uuid AND enqueued_at = ${job.enqueued_at}::timestamptz AND lease_token = ${job.lease_token}::uuid`;
    // Re-enqueued while this worker held it: it stays queued for the new text, due now. The
    // trigger made it due when it re-enqueued, but begin() may have renewed the lease after that
    // (a write between claim and begin), which left it waiting a whole lease for nothing.
    if (deleted === 0) await this.reenqueuedMeanwhile(job);
    this.counters.record("indexed");
  }

  private async fail(job: ClaimedJob, error: unknown): Promise<void> {
    const message = (error as Error)?.message ?? String(error);
    const backoffSeconds = Math.min(2 ** job.attempts, 3_600);
    this.counters.record("failed");
    this.logger.warn(`indexing conversation ${job.conversation_id} failed (attempt ${job.attempts}, retry in ${backoffSeconds} s): ${message}`);
    const backedOff = await this.database.prisma.$executeRaw`
      UPDATE search_index_jobs
      SET last_error = ${message.slice(0, 2_000)}, run_after = clock_timestamp() + make_interval(secs => ${backoffSeconds}), lease_token = NULL,
          unfinished_attempts = greatest(unfinished_attempts - 1, 0)
      WHERE organization_id = ${job.organization_id} AND conversation_id = ${job.conversation_id}::uuid AND enqueued_at = ${job.enqueued_at}::timestamptz AND lease_token = ${job.lease_token}::uuid`;
    // The failure was on a text that has changed since: the new one gets its own attempt now.
    if (backedOff === 0) await this.reenqueuedMeanwhile(job);
  }

  /**
   * Ends this worker's attempt on a job the trigger re-enqueued while it held it (a new text):
   * due now, lease dropped, the attempt uncounted as ended in order. A job another worker took
   * over carries another token, and this touches nothing of it.
   */
  private async reenqueuedMeanwhile(job: ClaimedJob): Promise<void> {
    await this.database.prisma.$executeRaw`
      UPDATE search_index_jobs SET run_after = clock_timestamp(), unfinished_attempts = greatest(unfinished_attempts - 1, 0), lease_token = NULL
      WHERE organization_id = ${job.organization_id} AND conversation_id = ${job.conversation_id}::uuid AND lease_token = ${job.lease_token}::uuid`;
  }
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Queues every live conversation that has no vectors of `model` yet (after a model change). */
export async function enqueueMissing(database: Database, model: string): Promise<number> {
  return database.prisma.$executeRaw`
    INSERT INTO search_index_jobs (conversation_id, organization_id)
    SELECT c.id, c.organization_id FROM conversations c
    WHERE c.deleted_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM embedding_chunks e WHERE e.organization_id = c.organization_id AND e.entity_type = 'conversation' AND e.entity_id = c.id AND e.model = ${model})
    ON CONFLICT (organization_id, conversation_id) DO NOTHING`;
}
