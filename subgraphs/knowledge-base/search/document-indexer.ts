/**
 * Turns PENDING documents into searchable chunks, off the request path. Work comes from
 * document_index_jobs, which a trigger fills in the writer's transaction whenever a document
 * becomes PENDING, so no upload is lost while this process is down: the queue waits.
 *
 * As in the conversation indexer: claiming pushes a job's run_after into the future (a lease)
 * under FOR UPDATE SKIP LOCKED, so several processes can index side by side, taking jobs in turns
 * across organizations (fair-claim.ts); a job is removed only if it was not re-enqueued meanwhile
 * (enqueued_at unchanged); `stop()` hands unfinished jobs back at once. Unlike a conversation,
 * one document can be thousands of chunks, so the unit of work is one document, its chunks
 * embedded a slice at a time with progress (and the lease) recorded after each slice.
 *
 * A claim writes a fresh lease token that every later step names (issue 22: several indexer
 * processes): renewing the lease, each slice's vector write (checked and the job's row locked
 * inside the write's transaction on pgvector, so no claim can take the job over mid-write),
 * completing, backing off, handing back. A worker that finds its token gone (its lease ran out
 * and another worker took the document) stops at once and leaves everything to the new holder,
 * undoing nothing: the chunks in the database are the new holder's by then.
 *
 * Nothing of a document is found by search until it is READY, whatever is stored meanwhile
 * (INDEXING with some slices embedded; PENDING again with its previous chunks; FAILED).
 * A document ends READY (every chunk stored, embedded and in the BM25 postings) or FAILED with
 * a one-line reason and nothing of it left in the indexes: a half-indexed document would be
 * found by keyword but not by meaning, and never fixed. A failure that can pass (the database,
 * a remote embedder) is retried with exponential backoff; one that cannot (no text to index)
 * is not.
 */
import { randomUUID } from "node:crypto";
import type { Database } from "../../../lib/database/connect.js";
import { withTenantScope } from "../../../lib/database/tenant-scope.js";
import { chunkDocument, type DocumentChunkingOptions } from "../../../lib/documents/chunk-document.js";
import { markdownSections, type DocumentSection } from "../../../lib/documents/normalize-text.js";
import type { Logger } from "../../../lib/logger.js";
import type { Embedder } from "../../../lib/retrieval/embeddings/embedder.js";
import type { BackgroundIndexer } from "../../../lib/retrieval/search-provider.js";
import { dueJobsInTurns } from "../../../lib/retrieval/fair-claim.js";
import { IndexerStopped, IndexingLoop, LeaseLost } from "../../../lib/retrieval/indexing-loop.js";
import { JobCounters, readQueueStatus, type ObservableQueue, type QueueStatus } from "../../../lib/retrieval/queue-status.js";
import { removeDeletedVectors } from "../../../lib/retrieval/vector-stores/deleted-vectors.js";
import type { VectorStore, WriteFence } from "../../../lib/retrieval/vector-stores/vector-store.js";
import { DocumentStore, type DocumentFormat, type NewChunk } from "../document-store.js";

export interface DocumentIndexerOptions {
  /** Documents claimed per round (each is processed on its own, one after the other). */
  batchSize?: number;
  /** Pause between rounds when the queue is empty. */
  idleMs?: number;
  /** How long a claimed job stays invisible to other workers; renewed after every slice. */
  leaseSeconds?: number;
  /** Texts per model call (one call on the local model takes about half a second for 8). */
  embedSlice?: number;
  /** Retries of a failure that can pass before the job is given up (the document stays FAILED). */
  maxAttempts?: number;
  chunking: DocumentChunkingOptions;
  /** As in the conversation indexer: vacuum the churned tables after this many documents (PGlite has no autovacuum); null never. */
  vacuumAfterJobs?: number | null;
  /** Told after a document's chunks are stored, so this process's searches stop trusting "this organization has no chunks". */
  onChunksStored?: (organizationId: string) => void;
}

/** The tables every (re)index of a document rewrites. */
const CHURNED_TABLES = ["document_chunks", "document_keyword_postings", "embedding_chunks", "document_index_jobs"];

/** A failure retrying cannot cure: the document is FAILED for good and its job is dropped. */
class PermanentFailure extends Error {}
/** The document was deleted while being indexed: nothing to report to anyone. */
class DocumentGone extends Error {}

interface ClaimedJob {
  document_id: string;
  organization_id: string;
  /** enqueued_at as text: a JS Date would drop its microseconds and never compare equal again. */
  enqueued_at: string;
  /**
   * Attempts started on this document, this one included once it has begun (begin()). Counted
   * when work on the document starts, not when its batch is claimed: a process that dies on one
   * document must not spend the attempts of the batch-mates it never reached.
   */
  attempts: number;
  /** This claim's token: the job is still this worker's while its row carries it. */
  lease_token: string;
}

interface DocumentToIndex {
  format: DocumentFormat;
  content_hash: string;
  file_name: string;
}

export class DocumentIndexer implements BackgroundIndexer {
  private readonly loop: IndexingLoop;
  private readonly store: DocumentStore;
  private readonly batchSize: number;
  private readonly leaseSeconds: number;
  private readonly embedSlice: number;
  private readonly maxAttempts: number;
  private readonly chunking: DocumentChunkingOptions;
  private readonly onChunksStored: ((organizationId: string) => void) | undefined;
  /** Jobs this process holds and finished, for the metrics (the queue's depth is read from the table). */
  readonly counters = new JobCounters();

  constructor(
    private readonly database: Database,
    private readonly embedder: Embedder,
    private readonly vectorStore: VectorStore,
    private readonly logger: Logger,
    options: DocumentIndexerOptions,
  ) {
    this.store = new DocumentStore(database.prisma);
    this.batchSize = options.batchSize ?? 4;
    this.leaseSeconds = options.leaseSeconds ?? 300;
    this.embedSlice = options.embedSlice ?? 8;
    this.maxAttempts = options.maxAttempts ?? 6;
    this.chunking = options.chunking;
    this.onChunksStored = options.onChunksStored;
    this.loop = new IndexingLoop(() => this.runOnce(), { name: "document indexing", idleMs: options.idleMs, vacuumAfterJobs: options.vacuumAfterJobs, logger, database, churnedTables: CHURNED_TABLES });
  }

  /** True once stop() was called: the current round hands its remaining documents back. */
  private get stopping(): boolean {
    return this.loop.stopping;
  }

  start(): void {
    this.loop.start();
  }

  /** Stops after the model call in progress; the unfinished document goes back to the queue. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  poke(): void {
    this.loop.poke();
  }

  drain(onProgress?: (done: number) => void): Promise<number> {
    return this.loop.drain(onProgress);
  }

  /** How deep and late the document queue is, across every worker (one bounded statement). */
  queueStatus(): Promise<QueueStatus> {
    return readQueueStatus(this.database, "documents");
  }

  /** The queues this indexer works through, as metrics see them: documents, and the vector deletions it also runs. */
  queues(): ObservableQueue[] {
    return [
      { queue: "documents", status: () => this.queueStatus(), counters: this.counters },
      { queue: "vector_deletions", status: () => readQueueStatus(this.database, "vector_deletions"), counters: null },
    ];
  }

  /** Claims a batch and indexes its documents one by one; returns how many jobs it finished (or failed). */
  async runOnce(): Promise<number> {
    // Chunks deleted since the last round (deleted documents, re-indexed ones) take their vectors with them.
    await removeDeletedVectors(this.database, this.vectorStore, this.logger);
    const jobs = await this.claim();
    return this.counters.holding(jobs.length, () => this.processBatch(jobs));
  }

  private async processBatch(jobs: ClaimedJob[]): Promise<number> {
    let handled = 0;
    for (const [position, job] of jobs.entries()) {
      if (this.stopping) {
        // Never started: their attempts were not counted, so nothing is taken back.
        await this.release(jobs.slice(position), { started: false });
        break;
      }
      if (await this.process(job)) handled += 1;
    }
    return handled;
  }

  vacuumIfDue(): Promise<boolean> {
    return this.loop.vacuumIfDue();
  }

  /** Indexes one document. Returns false when it was handed back (stop), true otherwise. */
  private async process(job: ClaimedJob): Promise<boolean> {
    const { organization_id: organizationId, document_id: documentId } = job;
    // Chunk ids written by this attempt, so a failure can take them (and their vectors) back out.
    let written: string[] = [];
    try {
      await this.begin(job);
      if (job.attempts > this.maxAttempts) {
        // Every failure that throws is counted and ends FAILED at maxAttempts (failDocument), so
        // a document started more often than that never finished its earlier attempts: the
        // process ended under it (out of memory, killed). Retrying it would take down every
        // indexer that claims it, in turn, for good; it is FAILED instead, with what to do.
        throw new PermanentFailure(`Indexing was interrupted ${job.attempts - 1} times before it finished (the indexing process stopped while working on this file); upload a smaller or simpler file.`);
      }
      const document = await this.load(organizationId, documentId);
      if (!document) throw new DocumentGone();
      const content = await this.store.content(organizationId, document.content_hash);
      if (content === null) {
        // An upload path that creates the document before saving its text races us: wait for it.
        if (job.attempts < this.maxAttempts) return await this.retryLater(job, "the extracted text is not stored yet");
        throw new PermanentFailure(`The extracted text of "${document.file_name}" is missing; upload the file again.`);
      }
      await this.progress(job, { status: "INDEXING", chunksIndexed: 0, chunksTotal: null });
      const { text, structure } = content;
      const { chunks } = await chunkDocument({ text, sections: structure?.sections ?? sectionsOf(document.format, text), pages: structure?.pages ?? [] }, this.chunking);
      if (chunks.length === 0) throw new PermanentFailure(`"${document.file_name}" has no text to index; upload a file with content.`);

      const rows: NewChunk[] = chunks.map((chunk) => ({
        chunkIndex: chunk.index,
        text: chunk.text,
        headingPath: chunk.headingPath,
        page: chunk.pageNumbers[0] ?? null,
        startOffset: chunk.start,
        endOffset: chunk.end,
        tokenCount: chunk.tokenCount,
        contentHash: chunk.contentHash,
      }));
      // Chunks and their postings first, then vectors, a slice at a time. Searches find none of
      // them until the document is READY below: the providers and the cached-page check read
      // only READY documents' chunks (keyword-provider.ts, visible-chunks.ts).
      written = await this.store.replaceChunks(organizationId, documentId, rows);
      this.onChunksStored?.(organizationId);
      await this.progress(job, { chunksTotal: written.length, chunksIndexed: 0 });

      for (let start = 0; start < written.length; start += this.embedSlice) {
        if (this.stopping) throw new IndexerStopped();
        const ids = written.slice(start, start + this.embedSlice);
        const vectors = await this.embedder.embed(rows.slice(start, start + ids.length).map((row) => row.text));
        if (vectors.length !== ids.length) throw new Error(`the embedder returned ${vectors.length} vectors for ${ids.length} texts`);
        // Each chunk is its own entity in the vector store (hits point at chunks, not documents);
        // the slice's entities are written together (pgvector: one transaction, two statements).
        await this.vectorStore.replaceEntities(organizationId, "document_chunk", this.embedder.model, ids.map((id, index) => ({
          entityId: id,
          chunks: [{ chunkIndex: 0, contentHash: rows[start + index]!.contentHash, vector: vectors[index]! }],
        })), this.fence(job));
        // The fence renewed the lease with the write.
        await this.progress(job, { chunksIndexed: start + ids.length }, { renewed: true });
        // A local model computes on this thread: let requests have a turn between model calls.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      await this.progress(job, { status: "READY", chunksIndexed: written.length });
      await this.complete(job);
      this.counters.record("indexed");
      return true;
    } catch (error) {
      if (error instanceof LeaseLost) {
        this.counters.record("lease_lost");
        this.logger.info(`${error.message}; leaving it to that worker`);
        return true;
      }
      if (error instanceof IndexerStopped) {
        await this.undo(organizationId, documentId, written).catch(() => undefined);
        await this.progress(job, { status: "PENDING", chunksIndexed: 0, chunksTotal: null }).catch(() => undefined);
        // A stop is not the document's doing: the attempt begun is taken back.
        await this.release([job], { started: true, countAttempt: false });
        return false;
      }
      if (error instanceof DocumentGone || isNotFound(error)) {
        // Deleted meanwhile: the deletion took the chunks and the vectors written before it (by
        // trigger); a vector written after it has no chunk left to take it, so remove it here.
        await this.undo(organizationId, documentId, written, { afterDeletion: true }).catch(() => undefined);
        await this.complete(job);
        return true;
      }
      await this.failDocument(job, written, error);
      return true;
    }
  }

  /** Marks FAILED with nothing left behind; retries with backoff unless retrying cannot help. */
  private async failDocument(job: ClaimedJob, written: string[], error: unknown): Promise<void> {
    const reason = oneLine(error);
    const permanent = error instanceof PermanentFailure || job.attempts >= this.maxAttempts;
    this.counters.record("failed");
    try {
      await this.undo(job.organization_id, job.document_id, written);
      await this.store.recordProgress(job.organization_id, job.document_id, { status: "FAILED", failureReason: reason, chunksIndexed: 0, chunksTotal: null });
    } catch (cleanup) {
      if (isNotFound(cleanup)) return void (await this.complete(job));
      // The database itself is failing: leave the job to its lease; the next attempt cleans up.
      this.logger.warn(`could not mark document ${job.document_id} FAILED: ${oneLine(cleanup)}`);
      return;
    }
    if (permanent) {
      this.logger.info(`document ${job.document_id} FAILED: ${reason}`);
      await this.complete(job);
      return;
    }
    this.logger.warn(`indexing document ${job.document_id} failed (attempt ${job.attempts} of ${this.maxAttempts}): ${reason}`);
    await this.retryLater(job, reason);
  }

  /** Leaves the job queued with exponential backoff (2, 4, 8 … s, at most an hour). */
  private async retryLater(job: ClaimedJob, reason: string): Promise<true> {
    const backoffSeconds = Math.min(2 ** job.attempts, 3_600);
    const backedOff = await this.database.prisma.$executeRaw`
      UPDATE document_index_jobs
      SET last_error = ${reason}, run_after = clock_timestamp() + make_interval(secs => ${backoffSeconds}), lease_token = NULL
      WHERE organization_id = ${job.organization_id} AND document_id = ${job.document_id}::uuid AND enqueued_at = ${job.enqueued_at}::timestamptz AND lease_token = ${job.lease_token}::uuid`;
    // The failure was on content that has changed since (re-enqueued, as complete() says): the new content is due now.
    if (backedOff === 0) await this.release([job], { started: true, countAttempt: true });
    return true;
  }

  /**
   * Removes what an attempt wrote: the chunks (their postings and pgvector rows go with them by
   * trigger) and the vectors by entity, for a vector store outside the database (Weaviate), or
   * when the document was deleted (its chunks, and so the trigger, went before our last writes).
   */
  private async undo(organizationId: string, documentId: string, written: readonly string[], { afterDeletion = false } = {}): Promise<void> {
    await this.store.replaceChunks(organizationId, documentId, []);
    if (this.vectorStore.name === "pgvector" && !afterDeletion) return;
    for (const id of written) await this.vectorStore.deleteEntity(organizationId, "document_chunk", id);
  }

  /**
   * Renews the lease, then records progress; LeaseLost when the job is no longer this worker's
   * (taken over, perhaps finished by the other worker already: the document's status is theirs
   * to write), DocumentGone when the document was deleted (its job went with it, ON DELETE
   * CASCADE), NOT_FOUND (a GraphQLError) when it goes between the two statements.
   */
  private async progress(job: ClaimedJob, progress: Parameters<DocumentStore["recordProgress"]>[2], { renewed: alreadyRenewed = false } = {}): Promise<void> {
    const renewed = alreadyRenewed ? 1 : await this.database.prisma.$executeRaw`
      UPDATE document_index_jobs SET run_after = clock_timestamp() + make_interval(secs => ${this.leaseSeconds})
      WHERE organization_id = ${job.organization_id} AND document_id = ${job.document_id}::uuid AND lease_token = ${job.lease_token}::uuid`;
    if (renewed === 0) return this.notHeld(job);
    await this.store.recordProgress(job.organization_id, job.document_id, progress);
  }

  /** Why a job's row no longer carries this worker's token: another worker took it over (LeaseLost), or the document was deleted with it (DocumentGone). */
  private async notHeld(job: ClaimedJob): Promise<never> {
    const document = await this.database.prisma.$queryRaw<unknown[]>`SELECT 1 FROM documents WHERE organization_id = ${job.organization_id} AND id = ${job.document_id}::uuid`;
    throw document.length > 0 ? new LeaseLost(`document ${job.document_id}`) : new DocumentGone();
  }

  /**
   * As in the conversation indexer, LeaseLost unless the job carries this attempt's token; here
   * the check also renews the lease (one statement per slice, not two). Inside the write's
   * transaction its row lock holds off other claims (FOR UPDATE SKIP LOCKED skips the row) until
   * the slice is written; the writers' trigger re-enqueueing the document waits that long too.
   */
  private fence(job: ClaimedJob): WriteFence {
    return async (transaction) => {
      const held = await (transaction ?? this.database.prisma).$queryRaw<unknown[]>`
        UPDATE document_index_jobs SET run_after = clock_timestamp() + make_interval(secs => ${this.leaseSeconds})
        WHERE organization_id = ${job.organization_id} AND document_id = ${job.document_id}::uuid AND lease_token = ${job.lease_token}::uuid
        RETURNING 1`;
      if (held.length === 0) throw new LeaseLost(`document ${job.document_id}`);
    };
  }

  private async load(organizationId: string, documentId: string): Promise<DocumentToIndex | null> {
    const [row] = await withTenantScope(this.database.prisma, organizationId, (tx) => tx.$queryRaw<DocumentToIndex[]>`
      SELECT format::text AS format, content_hash, file_name FROM documents
      WHERE id = ${documentId}::uuid AND organization_id = ${organizationId}`);
    return row ?? null;
  }

  private claim(): Promise<ClaimedJob[]> {
    return this.database.prisma.$queryRaw<ClaimedJob[]>`
      WITH picked AS (${dueJobsInTurns("documents", this.batchSize)})
      UPDATE document_index_jobs j
      SET run_after = clock_timestamp() + make_interval(secs => ${this.leaseSeconds}), lease_token = ${randomUUID()}::uuid
      FROM picked
      WHERE j.organization_id = picked.organization_id AND j.document_id = picked.document_id
      RETURNING j.document_id::text AS document_id, j.organization_id, j.enqueued_at::text AS enqueued_at, j.attempts, j.lease_token::text AS lease_token`;
  }

  /**
   * Counts the attempt that starts now and renews the lease, in one statement; LeaseLost or
   * DocumentGone as progress() says when the job is no longer this worker's.
   */
  private async begin(job: ClaimedJob): Promise<void> {
    const [row] = await this.database.prisma.$queryRaw<{ attempts: number }[]>`
      UPDATE document_index_jobs SET attempts = attempts + 1, run_after = clock_timestamp() + make_interval(secs => ${this.leaseSeconds})
      WHERE organization_id = ${job.organization_id} AND document_id = ${job.document_id}::uuid AND lease_token = ${job.lease_token}::uuid
      RETURNING attempts`;
    if (!row) return this.notHeld(job);
    job.attempts = Number(row.attempts);
  }

  /**
   * Hands jobs this worker still holds back to the queue at once. The attempt of a job that was
   * started is taken back unless `countAttempt`; a job never started was never counted.
   */
  private async release(jobs: ClaimedJob[], { started, countAttempt = false }: { started: boolean; countAttempt?: boolean }): Promise<void> {
    const takeBack = started && !countAttempt ? 1 : 0;
    for (const job of jobs) {
      await this.database.prisma.$executeRaw`
        UPDATE document_index_jobs SET run_after = clock_timestamp(), attempts = greatest(attempts - ${takeBack}, 0), lease_token = NULL
        WHERE organization_id = ${job.organization_id} AND document_id = ${job.document_id}::uuid AND lease_token = ${job.lease_token}::uuid`;
    }
  }

  private async complete(job: ClaimedJob): Promise<void> {
    const deleted = await this.database.prisma.$executeRaw`
      DELETE FROM document_index_jobs
      WHERE organization_id = ${job.organization_id} AND document_id = ${job.document_id}::uuid AND enqueued_at = ${job.enqueued_at}::timestamptz AND lease_token = ${job.lease_token}::uuid`;
    // Re-enqueued while this worker held it (the renewals kept pushing its run_after out): due now.
    if (deleted === 0) await this.release([job], { started: true, countAttempt: true });
  }
}

/**
 * The sections of a text stored without its structure (rows from before the structure column,
 * texts whose extraction found nothing to add): Markdown headings are in the text itself; a
 * PDF's pages and a DOCX's heading styles are not, so those are indexed as one section (no
 * heading path, no page).
 */
function sectionsOf(format: DocumentFormat, text: string): DocumentSection[] {
  return format === "markdown" ? markdownSections(text) : [{ headingPath: [], start: 0, end: text.length }];
}

function isNotFound(error: unknown): boolean {
  return (error as { extensions?: { code?: unknown } } | null)?.extensions?.code === "NOT_FOUND";
}

/** A failure reason fit for the document's status: one line, bounded. */
function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.replace(/\s+/g, " ").trim() || "indexing failed for an unknown reason";
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}
