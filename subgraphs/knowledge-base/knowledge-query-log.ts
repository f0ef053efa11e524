/**
 * Writes one knowledge_queries row per source a knowledge query asked, without making the query
 * wait: entries are buffered and written in batches (one multi-row INSERT every half second, or
 * sooner when 200 wait), like the search subgraph's query log. A batch the database refuses is
 * retried in halves, so one bad row never costs the others theirs; a failed write is logged and
 * dropped, never reported to the caller.
 *
 * The same flush raises the knowledge bases' query_count, one UPDATE per batch. It runs as the
 * tables' owner, outside any tenant scope, on purpose: a platform knowledge base belongs to the
 * platform organization, and row-level security lets tenants read it but write none of its rows,
 * so a tenant-scoped UPDATE would silently count nothing for exactly the knowledge bases that
 * are asked most. Only ids that a tenant-scoped read just resolved reach this statement.
 */
import type { Database } from "../../lib/database/connect.js";
import type { Logger } from "../../lib/logger.js";

export interface KnowledgeQueryEntry {
  organizationId: string;
  userId: string;
  /** null: the caller's own documents outside any knowledge base. */
  knowledgeBaseId: string | null;
  query: string;
  results: number;
  topScore: number | null;
  /** `documents`, `bedrock`, … */
  provider: string;
  /** Cost of the call; 0 until pricing exists. */
  credits: number;
  latencyMs: number;
}

const FLUSH_INTERVAL_MS = 500;
const MAX_BATCH = 200;
/** Beyond this many unwritten entries (the database is down), the oldest are dropped rather than eating memory. */
const MAX_BUFFERED = 10_000;
const MAX_INT4 = 2_147_483_647;

const clampInt = (value: number) => (Number.isFinite(value) ? Math.min(MAX_INT4, Math.max(0, Math.round(value))) : 0);
const finiteOrNull = (value: number | null) => (value !== null && Number.isFinite(value) ? value : null);
/** PostgreSQL refuses NUL in text, and a lone surrogate cannot be encoded as UTF-8. */
const plain = (text: string) => text.replace(/\u0000/g, " ").replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");

function toRow(entry: KnowledgeQueryEntry) {
  return {
    organizationId: plain(entry.organizationId),
    userId: plain(entry.userId),
    knowledgeBaseId: entry.knowledgeBaseId,
    query: plain(entry.query),
    results: clampInt(entry.results),
    topScore: finiteOrNull(entry.topScore),
    provider: plain(entry.provider),
    credits: Number.isFinite(entry.credits) ? entry.credits : 0,
    latencyMs: clampInt(entry.latencyMs),
  };
}
type Row = ReturnType<typeof toRow>;

export class KnowledgeQueryLog {
  private buffer: KnowledgeQueryEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly database: Database, private readonly logger: Logger) {}

  record(entry: KnowledgeQueryEntry): void {
    if (this.buffer.length >= MAX_BUFFERED) this.buffer.shift();
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
    // Chained so batches land in order and shutdown can wait for the last one.
    this.writing = this.writing.then(() => (batch.length > 0 ? this.write(batch) : undefined));
    return this.writing;
  }

  private async write(batch: KnowledgeQueryEntry[]): Promise<void> {
    const failures: unknown[] = [];
    const written: Row[] = [];
    await this.insert(batch.map(toRow), written, failures);
    if (failures.length > 0) {
      const reason = failures[0] instanceof Error ? failures[0].message : String(failures[0]);
      this.logger.warn(`could not write ${batch.length - written.length} of ${batch.length} knowledge query log entries: ${reason}`);
    }
    // Only rows that were written count: a row the database refused (say, a malformed id) must
    // not make the UPDATE fail for the whole batch, nor count a query nobody can see in the log.
    const counts = new Map<string, number>();
    for (const row of written) if (row.knowledgeBaseId) counts.set(row.knowledgeBaseId, (counts.get(row.knowledgeBaseId) ?? 0) + 1);
    if (counts.size === 0) return;
    try {
      const ids = [...counts.keys()];
      const increments = ids.map((id) => counts.get(id)!);
      await this.database.prisma.$executeRaw`
        UPDATE knowledge_bases AS base SET query_count = base.query_count + counted.n
        FROM unnest(${ids}::uuid[], ${increments}::int[]) AS counted(id, n)
        WHERE base.id = counted.id`;
    } catch (error) {
      this.logger.warn(`could not raise the query counts of ${counts.size} knowledge bases: ${(error as Error).message}`);
    }
  }

  // Private: one INSERT; if refused, each half on its own down to single rows, so only the rows refused alone are lost.
  private async insert(rows: Row[], written: Row[], failures: unknown[]): Promise<void> {
    try {
      await this.database.prisma.knowledgeQuery.createMany({ data: rows });
      written.push(...rows);
    } catch (error) {
      if (rows.length === 1) {
        failures.push(error);
        return;
      }
      const middle = Math.ceil(rows.length / 2);
      await this.insert(rows.slice(0, middle), written, failures);
      await this.insert(rows.slice(middle), written, failures);
    }
  }
}
