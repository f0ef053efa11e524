/**
 * The background loop both domains' indexers run (conversations, documents): claim a batch of
 * jobs, process it, and when the queue is empty vacuum what indexing churned (if due) and sleep
 * until the idle pause ends or someone pokes. Claiming, leases and backoff are each queue's own
 * SQL; the loop owns only the rhythm, the stop and the vacuum schedule, so the two indexers no
 * longer keep two copies of it.
 */
import type { Database } from "../database/connect.js";
import type { Logger } from "../logger.js";

/** Thrown inside a batch once `stop()` was called: the indexer hands the job back to the queue. */
export class IndexerStopped extends Error {
  constructor() {
    super("the indexer is stopping");
    this.name = "IndexerStopped";
  }
}

/**
 * The job's lease was taken over by another worker (it ran out while this one was still at
 * work): this worker must write nothing more for the job, nor complete, fail or release it.
 */
export class LeaseLost extends Error {
  constructor(what: string) {
    super(`the lease on ${what} was taken over by another worker`);
    this.name = "LeaseLost";
  }
}

const DEFAULT_IDLE_MS = 1_000;

export interface IndexingLoopOptions {
  /** What the log calls this work, e.g. "indexing" or "document indexing". */
  name: string;
  /** Pause between rounds when the queue is empty (default 1 s). */
  idleMs?: number;
  logger: Logger;
  database: Database;
  /** Tables whose rows each job replaces: vacuumed (with ANALYZE) once enough jobs were done. */
  churnedTables: readonly string[];
  /**
   * Vacuum after this many processed jobs, when the queue is next empty; null never does. For
   * the embedded PGlite, which runs no autovacuum: without it dead rows pile up and index-only
   * scans keep visiting the heap. Default null.
   */
  vacuumAfterJobs?: number | null;
}

export class IndexingLoop {
  private running = false;
  private stopRequested = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private jobsSinceVacuum = 0;

  constructor(
    /** Claims and processes one batch; returns how many jobs it handled. */
    private readonly runOnce: () => Promise<number>,
    private readonly options: IndexingLoopOptions,
  ) {}

  /** True from `stop()` until the next `start()`: a batch in progress checks it between model calls. */
  get stopping(): boolean {
    return this.stopRequested;
  }

  /** Starts processing in the background until `stop()`. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopRequested = false;
    this.loop = (async () => {
      while (this.running) {
        let processed = 0;
        try {
          processed = await this.round();
        } catch (error) {
          this.options.logger.warn(`${this.options.name} round failed: ${(error as Error).message}`);
        }
        if (processed === 0 && this.running) await this.vacuumIfDue();
        if (processed === 0 && this.running) await this.idle();
      }
    })();
  }

  /** Stops after the model call in progress; unfinished jobs go back to the queue. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopRequested = true;
    this.wake?.();
    await this.loop;
    this.loop = null;
  }

  /** Nudges a sleeping loop to look at the queue now. */
  poke(): void {
    this.wake?.();
  }

  /** Processes until the queue has nothing ready (tests, evaluation, the reindex command). */
  async drain(onProgress?: (done: number) => void): Promise<number> {
    let total = 0;
    for (;;) {
      const processed = await this.round();
      if (processed === 0) return total;
      total += processed;
      onProgress?.(total);
    }
  }

  /**
   * Runs VACUUM (ANALYZE) on the churned tables when enough jobs were done since the last one.
   * Called only with an empty queue, so it never delays indexing. Returns whether it ran.
   */
  async vacuumIfDue(): Promise<boolean> {
    const { vacuumAfterJobs = null, churnedTables, database, logger, name } = this.options;
    if (vacuumAfterJobs === null || this.jobsSinceVacuum < vacuumAfterJobs) return false;
    const started = performance.now();
    try {
      await database.withSession((session) => session.query(`VACUUM (ANALYZE) ${churnedTables.join(", ")}`));
      logger.debug(`vacuumed ${churnedTables.join(", ")} after ${this.jobsSinceVacuum} jobs in ${Math.round(performance.now() - started)} ms`);
      this.jobsSinceVacuum = 0;
      return true;
    } catch (error) {
      logger.warn(`vacuum after ${name} failed: ${(error as Error).message}`);
      return false;
    }
  }

  private async round(): Promise<number> {
    const processed = await this.runOnce();
    this.jobsSinceVacuum += processed;
    return processed;
  }

  private idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, this.options.idleMs ?? DEFAULT_IDLE_MS);
      this.wake = () => {
        this.wake = null;
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
