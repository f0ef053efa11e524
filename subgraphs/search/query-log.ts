/**
 * Writes one row per search to search_queries without ever making a search wait: entries are
 * buffered and written in batches (one multi-row INSERT every half second, or sooner when 200
 * are waiting), so under load the log costs one statement per batch instead of one per search.
 * A failed write is logged and dropped; it never reaches the caller.
 */
import type { Database } from "../../lib/database/connect.js";
import type { Logger } from "../../lib/logger.js";

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
    try {
      await this.database.prisma.searchQuery.createMany({
        data: batch.map((entry) => ({
          organizationId: entry.organizationId,
          userId: entry.userId,
          query: entry.query,
          alpha: entry.alpha,
          providers: entry.providers,
          results: entry.results,
          topScore: entry.topScore,
          cacheHit: entry.cacheHit,
          tookMs: Math.round(entry.tookMs),
        })),
      });
      if (this.dropped > 0) {
        this.logger.warn(`search query log dropped ${this.dropped} entries while the database was unavailable`);
        this.dropped = 0;
      }
    } catch (error) {
      this.logger.warn(`could not write ${batch.length} search query log entries: ${(error as Error).message}`);
    }
  }
}
