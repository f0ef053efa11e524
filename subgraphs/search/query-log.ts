/**
 * Writes one row per search to search_queries without ever making a search wait: entries go
 * through a BatchedWriter (lib/database/batched-writer.ts), one multi-row INSERT every half
 * second or sooner when 200 are waiting, so under load the log costs one statement per batch
 * instead of one per search. A failed write is logged and dropped; it never reaches the caller.
 *
 * One bad row must not cost other searches (other organizations') their rows: strings are made
 * plain before the INSERT (PostgreSQL refuses NUL in text and jsonb), numbers are clamped to
 * their columns, and a batch the database refuses anyway is retried in halves by the writer, so
 * only the rows it refuses on their own are lost.
 */
import { BatchedWriter } from "../../lib/database/batched-writer.js";
import type { Database } from "../../lib/database/connect.js";
import type { Logger } from "../../lib/logger.js";
import { toPlainText, withPlainStrings } from "./plain-text.js";

export interface QueryLogEntry {
  /** The row's id: the search's `searchId`, which clicks on its hits name (left out: the database makes one). */
  id?: string;
  organizationId: string;
  userId: string;
  query: string;
  alpha: number;
  providers: { name: string; status: string; tookMs: number; returned: number; error: string | null }[];
  results: number;
  topScore: number | null;
  cacheHit: boolean;
  tookMs: number;
  /** Where the page starts in the fused list (0, the default: a first page). */
  pageOffset?: number;
  /** The latency the search was limited to (SearchInput.latency); null, the default: every provider. */
  latency?: "LOCAL" | "REMOTE" | null;
}

const FLUSH_INTERVAL_MS = 500;
const MAX_BATCH = 200;
/** Beyond this many unwritten entries (the database is down or slow), the oldest are dropped rather than eating memory. */
const MAX_BUFFERED = 10_000;

const MAX_INT4 = 2_147_483_647;
const clampInt = (value: number) => (Number.isFinite(value) ? Math.min(MAX_INT4, Math.max(-MAX_INT4, Math.round(value))) : 0);
const finiteOrNull = (value: number | null) => (value !== null && Number.isFinite(value) ? value : null);

function toRow(entry: QueryLogEntry) {
  return {
    ...(entry.id ? { id: entry.id } : {}),
    organizationId: toPlainText(entry.organizationId),
    userId: toPlainText(entry.userId),
    query: toPlainText(entry.query),
    alpha: Number.isFinite(entry.alpha) ? entry.alpha : 0,
    providers: withPlainStrings(entry.providers).map((provider) => ({ ...provider, tookMs: clampInt(provider.tookMs), returned: clampInt(provider.returned) })),
    results: clampInt(entry.results),
    topScore: finiteOrNull(entry.topScore),
    cacheHit: entry.cacheHit,
    tookMs: clampInt(entry.tookMs),
    pageOffset: Math.max(0, clampInt(entry.pageOffset ?? 0)),
    latency: entry.latency ?? null,
    // When the search ran, not when its batch was written (up to FLUSH_INTERVAL_MS later, and
    // the same for the whole batch): suggestions rank a user's queries by it.
    createdAt: new Date(),
  };
}

type QueryLogRow = ReturnType<typeof toRow>;

export class QueryLog {
  private readonly writer: BatchedWriter<QueryLogRow>;

  constructor(database: Database, logger: Logger) {
    this.writer = new BatchedWriter<QueryLogRow>({
      rowsName: "search query log entries",
      logger,
      write: async (rows) => void (await database.prisma.searchQuery.createMany({ data: rows })),
      maxBatch: MAX_BATCH,
      flushIntervalMs: FLUSH_INTERVAL_MS,
      maxBuffered: MAX_BUFFERED,
      // The latest searches say most about what is going on now.
      whenFull: "drop-oldest",
    });
  }

  record(entry: QueryLogEntry): void {
    this.writer.record(toRow(entry));
  }

  /** Writes everything recorded so far (on a timer, on shutdown, in tests, and before a click names a search not yet written). */
  flush(): Promise<void> {
    return this.writer.flush();
  }
}
