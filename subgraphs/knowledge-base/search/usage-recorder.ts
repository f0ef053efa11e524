/**
 * Counts search hits on documents (`usageCount`, `lastUsedAt`) without making a search wait:
 * each hit goes through a BatchedWriter (lib/database/batched-writer.ts), written every second
 * or sooner when 500 hits wait. A batch's hits are aggregated per caller, one UPDATE each (the
 * store checks each caller's access scope, so callers are not mixed in one statement), and the
 * UPDATE adds them up per document. A caller's hits that the database refuses are retried in
 * halves, so one malformed chunk id costs only itself. A failed write is logged and dropped:
 * usage is analytics, never worth failing or slowing a search for.
 */
import { BatchedWriter } from "../../../lib/database/batched-writer.js";
import type { Logger } from "../../../lib/logger.js";
import type { TenantContext } from "../../../lib/tenancy/token.js";
import type { DocumentStore } from "../document-store.js";

const FLUSH_INTERVAL_MS = 1_000;
const MAX_BATCH = 500;
/** Beyond this many unwritten hits (the database is down or slow), new ones are dropped rather than eating memory. */
const MAX_BUFFERED = 50_000;

/** One DocumentChunk returned to one caller. */
interface Hit {
  tenant: TenantContext;
  /** The caller's access scope: hits with the same key share one UPDATE. */
  callerKey: string;
  chunkId: string;
  usedAt: Date;
}

export class DocumentUsageRecorder {
  private readonly writer: BatchedWriter<Hit>;

  constructor(store: DocumentStore, logger: Logger) {
    this.writer = new BatchedWriter<Hit>({
      rowsName: "document hits",
      logger,
      groupKey: (hit) => hit.callerKey,
      // Every hit of the group has the same caller; the UPDATE counts repeats of a chunk per document.
      write: async (hits) => {
        const usedAt = new Date(Math.max(...hits.map((hit) => hit.usedAt.getTime())));
        await store.recordUsage(hits[0]!.tenant, hits.map((hit) => hit.chunkId), usedAt);
      },
      maxBatch: MAX_BATCH,
      flushIntervalMs: FLUSH_INTERVAL_MS,
      maxBuffered: MAX_BUFFERED,
      // Dropping the newest costs nothing per dropped hit; which hits are counted hardly matters.
      whenFull: "drop-newest",
    });
  }

  record(tenant: TenantContext, chunkIds: readonly string[]): void {
    if (chunkIds.length === 0) return;
    const callerKey = JSON.stringify([tenant.organizationId, tenant.userId, [...tenant.teamIds].sort()]);
    const usedAt = new Date();
    for (const chunkId of chunkIds) this.writer.record({ tenant, callerKey, chunkId, usedAt });
  }

  /** Writes everything recorded so far (on the timer, on shutdown, in tests). */
  flush(): Promise<void> {
    return this.writer.flush();
  }
}
