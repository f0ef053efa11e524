/**
 * Writes one row per search to search_queries without ever making a search wait: entries are
 * buffered and written in batches (one multi-row INSERT every half second, or sooner when 200
 * are waiting), so under load the log costs one statement per batch instead of one per search.
 * A failed write is logged and dropped; it never reaches the caller.
 *
 * One bad row must not cost other searches (other organizations') their rows: strings are made
 * plain before the INSERT (PostgreSQL refuses NUL in text and jsonb), numbers are clamped to
 * their columns, and a batch the database refuses anyway is retried in halves, so only the rows
 * it refuses on their own are lost.
 */
import type { Database } from "../../lib/database/connect.js";
import type { Logger } from "../../lib/logger.js";
import { toPlainText, withPlainStrings } from "./plain-text.js";

export interface QueryLogEntry {
  organizationId: string;
  userId: string;
  query: string;
  alpha: number;
  providers: { name: string; status: string; tookMs: number; returned: number; error: string | null }[];
  results: number;
  topScore: number | null;
  cacheHit: boolean;
  tookMs: number;
}

const FLUSH_INTERVAL_MS = 500;
const MAX_BATCH = 200;
/** Beyond this many unwritten entries (the database is down), the oldest are dropped rather than eating memory. */
const MAX_BUFFERED = 10_000;

type QueryLogRow = ReturnType<typeof toRow>;

const MAX_INT4 = 2_147_483_647;
const clampInt = (value: number) => (Number.isFinite(value) ? Math.min(MAX_INT4, Math.max(-MAX_INT4, Math.round(value))) : 0);
const finiteOrNull = (value: number | null) => (value !== null && Number.isFinite(value) ? value : null);

function toRow(entry: QueryLogEntry) {
  return {
    organizationId: toPlainText(entry.organizationId),
    userId: toPlainText(entry.userId),
    query: toPlainText(entry.query),
    alpha: Number.isFinite(entry.alpha) ? entry.alpha : 0,
    providers: withPlainStrings(entry.providers).map((provider) => ({ ...provider, tookMs: clampInt(provider.tookMs), returned: clampInt(provider.returned) })),
    results: clampInt(entry.results),
    topScore: finiteOrNull(entry.topScore),
    cacheHit: entry.cacheHit,
    tookMs: clampInt(entry.tookMs),
  };
}

export class QueryLog {
  private buffer: QueryLogEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  private dropped = 0;

  constructor(private readonly database: Database, private readonly logger: Logger) {}

  record(entry: QueryLogEntry): void {
    if (this.buffer.length >= MAX_BUFFERED) {
      this.buffer.shift();
      this.dropped += 1;
    }
    this.buffer.push(entry);
    if (this.buffer.length >= MAX_BATCH) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS);
      // A pending log write must not keep a finished process alive.
      this.timer.unref();
    }
  }

  /** Writes everything recorded so far (on a timer, on shutdown, in tests). */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const batch = this.buffer;
    this.buffer = [];
    // Writes are chained so batches land in order and shutdown can wait for the last one.
    this.writing = this.writing.then(() => (batch.length > 0 ? this.write(batch) : undefined));
    return this.writing;
  }

  private async write(batch: QueryLogEntry[]): Promise<void> {
    const rows = batch.map(toRow);
    const failures: { rows: number; error: unknown }[] = [];
    const written = await this.insert(rows, failures);
    if (written > 0 && this.dropped > 0) {
      this.logger.warn(`search query log dropped ${this.dropped} entries while the database was unavailable`);
      this.dropped = 0;
    }
    if (failures.length > 0) {
      const lost = failures.reduce((sum, failure) => sum + failure.rows, 0);
      const reason = failures[0]!.error instanceof Error ? (failures[0]!.error as Error).message : String(failures[0]!.error);
      this.logger.warn(`could not write ${lost} search query log ${lost === 1 ? "entry" : "entries"} (of ${batch.length}): ${reason}`);
    }
  }

  /**
   * One INSERT for the batch; if the database refuses it, each half on its own, down to single
   * rows. When the database is down every half fails too: stop halving then (a failed first
   * half of a big batch is retried as a whole at most once per level, log2(200) ≈ 8 levels).
   */
  private async insert(rows: QueryLogRow[], failures: { rows: number; error: unknown }[]): Promise<number> {
    try {
      await this.database.prisma.searchQuery.createMany({ data: rows });
      return rows.length;
    } catch (error) {
      if (rows.length === 1) {
        failures.push({ rows: 1, error });
        return 0;
      }
      const middle = Math.ceil(rows.length / 2);
      const first = await this.insert(rows.slice(0, middle), failures);
      if (first === 0 && middle > 1) {
        // Nothing of the first half went in: likely the database, not a row. Keep the rest for no one.
        failures.push({ rows: rows.length - middle, error });
        return 0;
      }
      return first + (await this.insert(rows.slice(middle), failures));
    }
  }
}
