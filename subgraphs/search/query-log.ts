/**
 * Writes one row per search to search_queries, after the response has its data: the write is
 * never awaited by the request, and a failed write is logged, never surfaced to the caller.
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

export class QueryLog {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly database: Database, private readonly logger: Logger) {}

  record(entry: QueryLogEntry): void {
    const write = this.database.prisma.searchQuery
      .create({
        data: {
          organizationId: entry.organizationId,
          userId: entry.userId,
          query: entry.query,
          alpha: entry.alpha,
          providers: entry.providers,
          results: entry.results,
          topScore: entry.topScore,
          cacheHit: entry.cacheHit,
          tookMs: Math.round(entry.tookMs),
        },
      })
      .then(
        () => undefined,
        (error: unknown) => this.logger.warn(`could not write the search query log: ${(error as Error).message}`),
      );
    this.pending.add(write);
    void write.finally(() => this.pending.delete(write));
  }

  /** Waits for writes in flight (shutdown, tests). */
  async flush(): Promise<void> {
    await Promise.all(this.pending);
  }
}
