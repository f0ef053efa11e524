/**
 * Writes rows in the background, in batches, without ever making the caller wait: the search and
 * knowledge query logs and the document usage counts all go through it. `record()` only buffers;
 * a batch is written when `maxBatch` rows wait or `flushIntervalMs` after the first of them, one
 * batch in flight at a time, so under load the sink sees one statement per batch instead of one
 * per request, and never more than one at once.
 *
 * Bounded memory, whatever the traffic: at most `maxBuffered` rows wait, plus the one batch being
 * written. When writes fall behind (the database is slow or down, or a flood of requests), rows
 * beyond the cap are dropped, the oldest or the newest as the owner chooses, counted, and logged
 * once when dropping starts and once with the total when a write completes again.
 *
 * One bad row costs only itself: a batch the sink refuses is retried in halves, down to single
 * rows, and only the single rows it still refuses are dropped, with a logged error. A sink that
 * refuses everything (the database is down) is recognised by a run of refusals with nothing
 * written between them, and the rest of that batch is dropped rather than tried row by row.
 *
 * Usage:
 *   const writer = new BatchedWriter<Row>({ rowsName: "search query log entries", write: (rows) => insert(rows), ... });
 *   writer.record(row);      // returns at once
 *   await writer.flush();    // shutdown and tests: everything recorded so far is written (or dropped)
 */
import type { Logger } from "../logger.js";

export interface BatchedWriterOptions<Row> {
  /** What the rows are, in the plural, for log lines: "search query log entries". */
  rowsName: string;
  logger: Logger;
  /**
   * Writes `rows` as one all-or-nothing statement (or transaction) and throws if the sink refuses
   * them. It must write none of them when it throws: a refused batch is retried in parts.
   */
  write(rows: Row[]): Promise<void>;
  /** Rows per write at most; reaching it starts a write at once. */
  maxBatch: number;
  /** How long the first waiting row waits for others before a write starts anyway. */
  flushIntervalMs: number;
  /** Rows that may wait at once; past it, rows are dropped (see `whenFull`). */
  maxBuffered: number;
  /**
   * Which rows to drop when `maxBuffered` wait: `drop-oldest` keeps the latest picture (a query
   * log), `drop-newest` keeps what was recorded first and costs nothing per dropped row.
   */
  whenFull: "drop-oldest" | "drop-newest";
  /**
   * Rows whose keys differ never share a write: each key's rows of a batch are written, and
   * retried in halves, on their own (for instance one statement per caller's access scope).
   */
  groupKey?(row: Row): string;
  /**
   * Runs once per batch, after its writes, with the rows that were written (none refused): for
   * follow-up statements that must count only what reached the sink. An error it throws is logged.
   */
  afterWrite?(written: Row[]): Promise<void>;
}

/** What a writer has done since it was made: for tests, health checks and metrics. */
export interface BatchedWriterCounts {
  /** Rows waiting for a write (not counting the batch in flight). */
  buffered: number;
  written: number;
  /** Rows the sink refused on their own, or given up on while it refused everything. */
  refused: number;
  /** Rows dropped because `maxBuffered` rows were already waiting. */
  dropped: number;
}

/**
 * Refusals in a row, with nothing written between them, after which the sink is taken as down and
 * the rest of the batch is dropped. One bad row costs at most log2(batch) + 1 refusals in a row
 * (the batch, each half on the way down to it, then itself) and two neighbouring bad rows one
 * more; this leaves room for both, and spares a down database ~2 × batch statements per batch.
 */
const extraRefusalsBeforeGivingUp = 3;

/** The refusals of one batch: the first error (for the log line) and the current run of them. */
interface Refusal {
  first: unknown;
  inARow: number;
  limit: number;
  gaveUp: boolean;
}

export class BatchedWriter<Row> {
  // The waiting rows are `queue[head..]`: dropping the oldest or taking a batch moves `head`
  // instead of shifting the array, which under a flood would copy up to `maxBuffered` rows per record.
  private queue: (Row | undefined)[] = [];
  private head = 0;
  // Sequence numbers let flush() know when every row recorded before it has left the writer:
  // the waiting rows are numbers [headSeq, nextSeq), the batch in flight [inFlight.firstSeq, headSeq).
  private nextSeq = 0;
  private headSeq = 0;
  private inFlight: { firstSeq: number; done: Promise<void> } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private droppedSinceReport = 0;
  private readonly totals = { written: 0, refused: 0, dropped: 0 };

  constructor(private readonly options: BatchedWriterOptions<Row>) {
    const { maxBatch, maxBuffered, flushIntervalMs } = options;
    if (!(Number.isInteger(maxBatch) && maxBatch >= 1)) throw new RangeError(`BatchedWriter needs maxBatch to be a whole number of at least 1, but got: ${maxBatch}`);
    if (!(Number.isInteger(maxBuffered) && maxBuffered >= maxBatch)) {
      throw new RangeError(`BatchedWriter needs maxBuffered to be a whole number of at least maxBatch (${maxBatch}), but got: ${maxBuffered}`);
    }
    if (!(Number.isFinite(flushIntervalMs) && flushIntervalMs >= 0)) throw new RangeError(`BatchedWriter needs flushIntervalMs to be a finite number of at least 0, but got: ${flushIntervalMs}`);
  }

  /** Buffers one row for the next batch; returns at once and never throws for the sink. */
  record(row: Row): void {
    if (this.waiting >= this.options.maxBuffered) {
      this.noteDropped();
      if (this.options.whenFull === "drop-newest") return;
      this.queue[this.head] = undefined;
      this.head += 1;
      this.headSeq += 1;
      this.compact();
    }
    this.queue.push(row);
    this.nextSeq += 1;
    if (this.waiting >= this.options.maxBatch) this.startWrite();
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.startWrite();
      }, this.options.flushIntervalMs);
      // A pending write must not keep a finished process alive.
      this.timer.unref();
    }
  }

  /**
   * Resolves once every row recorded before the call has been written, refused or dropped (on
   * shutdown, in tests). Rows recorded meanwhile do not hold it up. Never rejects.
   */
  async flush(): Promise<void> {
    const through = this.nextSeq;
    while (this.headSeq < through || (this.inFlight !== null && this.inFlight.firstSeq < through)) {
      // One write at a time: wait for the one in flight, whichever rows it holds, then go on.
      await (this.inFlight?.done ?? this.startWrite());
    }
  }

  get counts(): BatchedWriterCounts {
    return { buffered: this.waiting, ...this.totals };
  }

  // Private: rows waiting, not counting the batch in flight.
  private get waiting(): number {
    return this.queue.length - this.head;
  }

  // Private: takes the next batch and writes it unless a write is in flight (which, when it ends,
  // starts the next one itself). Returns the write's completion.
  private startWrite(): Promise<void> {
    if (this.inFlight) return this.inFlight.done;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.waiting === 0) return Promise.resolve();
    const firstSeq = this.headSeq;
    const batch = this.queue.slice(this.head, this.head + this.options.maxBatch) as Row[];
    this.head += batch.length;
    this.headSeq += batch.length;
    this.compact();
    const done = this.writeBatch(batch)
      // writeBatch logs the sink's errors itself; this catches only a bug in a hook, so that no
      // write ever rejects into a timer or a caller of flush().
      .catch((error: unknown) => this.options.logger.error(`writing ${batch.length} ${this.options.rowsName} failed`, error))
      .finally(() => {
        this.inFlight = null;
        this.scheduleNext();
      });
    this.inFlight = { firstSeq, done };
    return done;
  }

  // Private: after a write, a full batch goes at once (writes had fallen behind); fewer rows wait
  // for the interval, as if just recorded.
  private scheduleNext(): void {
    if (this.waiting >= this.options.maxBatch) void this.startWrite();
    else if (this.waiting > 0 && !this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.startWrite();
      }, this.options.flushIntervalMs);
      this.timer.unref();
    }
  }

  // Private: drops the consumed front of the queue once it is most of the array.
  private compact(): void {
    if (this.head > 1_024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  private noteDropped(): void {
    this.totals.dropped += 1;
    this.droppedSinceReport += 1;
    if (this.droppedSinceReport === 1) {
      this.options.logger.warn(
        `${this.options.maxBuffered} ${this.options.rowsName} are waiting to be written: dropping the ${this.options.whenFull === "drop-oldest" ? "oldest" : "newest"} until writes catch up`,
      );
    }
  }

  // Private: writes one batch, each group on its own; never rejects (the sink's errors are logged).
  private async writeBatch(batch: Row[]): Promise<void> {
    const groups = this.groupsOf(batch);
    const written: Row[] = [];
    const refusal: Refusal = { first: undefined, inARow: 0, limit: 0, gaveUp: false };
    for (const rows of groups) {
      refusal.inARow = 0;
      refusal.limit = Math.ceil(Math.log2(rows.length)) + 1 + extraRefusalsBeforeGivingUp;
      await this.writeInHalves(rows, written, refusal);
    }
    this.totals.written += written.length;
    const lost = batch.length - written.length;
    this.totals.refused += lost;
    if (lost > 0) {
      const reason = refusal.first instanceof Error ? refusal.first.message : String(refusal.first);
      const gaveUp = refusal.gaveUp ? ` (the sink refused ${refusal.limit} writes in a row, so the rest were not tried one by one)` : "";
      this.options.logger.error(`could not write ${lost} of ${batch.length} ${this.options.rowsName}: ${reason}${gaveUp}`);
    }
    if (this.droppedSinceReport > 0 && written.length > 0) {
      this.options.logger.warn(`dropped ${this.droppedSinceReport} ${this.options.rowsName} while writes were behind`);
      this.droppedSinceReport = 0;
    }
    if (this.options.afterWrite && written.length > 0) {
      try {
        await this.options.afterWrite(written);
      } catch (error) {
        this.options.logger.error(`the step after writing ${written.length} ${this.options.rowsName} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  private groupsOf(batch: Row[]): Row[][] {
    const { groupKey } = this.options;
    if (!groupKey) return [batch];
    const groups = new Map<string, Row[]>();
    for (const row of batch) {
      const key = groupKey(row);
      const group = groups.get(key);
      if (group) group.push(row);
      else groups.set(key, [row]);
    }
    return [...groups.values()];
  }

  // Private: one write for `rows`; if refused, each half on its own, down to single rows, so only
  // rows refused alone are lost. `refusal` counts refusals since the last success (see extraRefusalsBeforeGivingUp).
  private async writeInHalves(rows: Row[], written: Row[], refusal: Refusal): Promise<void> {
    if (refusal.inARow >= refusal.limit) {
      // The sink refuses everything: these rows are lost with the rest of the group.
      refusal.gaveUp = true;
      return;
    }
    try {
      await this.options.write(rows);
      written.push(...rows);
      refusal.inARow = 0;
    } catch (error) {
      refusal.inARow += 1;
      refusal.first ??= error;
      if (rows.length === 1) return;
      const middle = Math.ceil(rows.length / 2);
      await this.writeInHalves(rows.slice(0, middle), written, refusal);
      await this.writeInHalves(rows.slice(middle), written, refusal);
    }
  }
}
