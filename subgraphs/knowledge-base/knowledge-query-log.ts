/**
 * Writes one knowledge_queries row per source a knowledge query asked, without making the query
 * wait: entries go through a BatchedWriter (lib/database/batched-writer.ts), one multi-row INSERT
 * every half second or sooner when 200 wait, like the search subgraph's query log. A batch the
 * database refuses is retried in halves, so one bad row never costs the others theirs; a failed
 * write is logged and dropped, never reported to the caller.
 *
 * The same flush raises the knowledge bases' query_count, one UPDATE per batch, and for a
 * knowledge base of another organization (a platform one) the asker's own count in
 * knowledge_base_query_counts, which is what that organization is shown. It runs as the
 * tables' owner, outside any tenant scope, on purpose: a platform knowledge base belongs to the
 * platform organization, and row-level security lets tenants read it but write none of its rows,
 * so a tenant-scoped UPDATE would silently count nothing for exactly the knowledge bases that
 * are asked most. Only ids that a tenant-scoped read just resolved reach this statement.
 */
import { BatchedWriter } from "../../lib/database/batched-writer.js";
import type { Database } from "../../lib/database/connect.js";
import type { Logger } from "../../lib/logger.js";

export interface KnowledgeQueryEntry {
  organizationId: string;
  userId: string;
  /** null: the caller's own documents outside any knowledge base. */
  knowledgeBaseId: string | null;
  /** Who owns that knowledge base (another organization for a platform one): not stored, it says whose count to raise. */
  knowledgeBaseOrganizationId?: string | null;
  query: string;
  results: number;
  topScore: number | null;
  /** `documents`, `bedrock`, … */
  provider: string;
  /** How the source answered (a KnowledgeSourceStatus); OK when not given. */
  status?: string;
  /** Cost of the call; 0 until pricing exists. */
  credits: number;
  latencyMs: number;
}

const FLUSH_INTERVAL_MS = 500;
const MAX_BATCH = 200;
/** Beyond this many unwritten entries (the database is down or slow), the oldest are dropped rather than eating memory. */
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
    knowledgeBaseOrganizationId: entry.knowledgeBaseOrganizationId ?? null,
    query: plain(entry.query),
    results: clampInt(entry.results),
    topScore: finiteOrNull(entry.topScore),
    provider: plain(entry.provider),
    status: plain(entry.status ?? "OK"),
    credits: Number.isFinite(entry.credits) ? entry.credits : 0,
    latencyMs: clampInt(entry.latencyMs),
  };
}
type Row = ReturnType<typeof toRow>;

export class KnowledgeQueryLog {
  private readonly writer: BatchedWriter<Row>;

  constructor(private readonly database: Database, private readonly logger: Logger) {
    this.writer = new BatchedWriter<Row>({
      rowsName: "knowledge query log entries",
      logger,
      write: async (rows) => void (await database.prisma.knowledgeQuery.createMany({ data: rows.map(({ knowledgeBaseOrganizationId: _owner, ...row }) => row) })),
      // Only rows that were written count: a row the database refused (say, a malformed id) must
      // not make the UPDATE fail for the whole batch, nor count a query nobody can see in the log.
      afterWrite: (written) => this.raiseQueryCounts(written),
      maxBatch: MAX_BATCH,
      flushIntervalMs: FLUSH_INTERVAL_MS,
      maxBuffered: MAX_BUFFERED,
      whenFull: "drop-oldest",
    });
  }

  record(entry: KnowledgeQueryEntry): void {
    this.writer.record(toRow(entry));
  }

  /** Writes everything recorded so far (on a timer, on shutdown, in tests). */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  // Private: one UPDATE and one upsert per batch, as the tables' owner (see the top of this file).
  private async raiseQueryCounts(written: Row[]): Promise<void> {
    const counts = new Map<string, number>();
    // By organization and knowledge base: another organization's (a platform one) is counted per asker too.
    const asked = new Map<string, { organizationId: string; knowledgeBaseId: string; n: number }>();
    for (const row of written) {
      if (!row.knowledgeBaseId) continue;
      counts.set(row.knowledgeBaseId, (counts.get(row.knowledgeBaseId) ?? 0) + 1);
      // Its own knowledge base's count is query_count itself.
      if (!row.knowledgeBaseOrganizationId || row.knowledgeBaseOrganizationId === row.organizationId) continue;
      const key = `${row.organizationId}\u0000${row.knowledgeBaseId}`;
      const entry = asked.get(key) ?? { organizationId: row.organizationId, knowledgeBaseId: row.knowledgeBaseId, n: 0 };
      entry.n++;
      asked.set(key, entry);
    }
    if (counts.size === 0) return;
    try {
      const ids = [...counts.keys()];
      const increments = ids.map((id) => counts.get(id)!);
      await this.database.prisma.$executeRaw`
        UPDATE knowledge_bases AS base SET query_count = base.query_count + counted.n
        FROM unnest(${ids}::uuid[], ${increments}::int[]) AS counted(id, n)
        WHERE base.id = counted.id`;
      const pairs = [...asked.values()];
      if (pairs.length > 0) {
        await this.database.prisma.$executeRaw`
          INSERT INTO knowledge_base_query_counts (organization_id, knowledge_base_id, query_count)
          SELECT counted.organization_id, counted.id, counted.n
          FROM unnest(${pairs.map((pair) => pair.organizationId)}::text[], ${pairs.map((pair) => pair.knowledgeBaseId)}::uuid[], ${pairs.map((pair) => pair.n)}::int[]) AS counted(organization_id, id, n)
          ON CONFLICT (organization_id, knowledge_base_id) DO UPDATE SET query_count = knowledge_base_query_counts.query_count + EXCLUDED.query_count`;
      }
    } catch (error) {
      this.logger.warn(`could not raise the query counts of ${counts.size} knowledge bases: ${(error as Error).message}`);
    }
  }
}
