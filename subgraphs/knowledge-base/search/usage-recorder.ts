/**
 * Counts search hits on documents (`usageCount`, `lastUsedAt`) without making a search wait:
 * hits are buffered and written in batches, like the search query log (every second, or sooner
 * when 500 chunk ids are waiting), one UPDATE per caller in the batch (the store checks each
 * caller's access scope, so callers are not mixed in one statement). A failed write is logged
 * and dropped: usage is analytics, never worth failing or slowing a search for.
 */
import type { Logger } from "../../../lib/logger.js";
import type { TenantContext } from "../../../lib/tenancy/token.js";
import type { DocumentStore } from "../document-store.js";

const FLUSH_INTERVAL_MS = 1_000;
const MAX_BATCH = 500;
/** Beyond this many unwritten hits (the database is down), new ones are dropped rather than eating memory. */
const MAX_BUFFERED = 50_000;

interface Pending {
  tenant: TenantContext;
  chunkIds: string[];
  usedAt: Date;
}

export class DocumentUsageRecorder {
  private buffer = new Map<string, Pending>();
  private buffered = 0;
  private dropped = 0;
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly store: DocumentStore, private readonly logger: Logger) {}

  record(tenant: TenantContext, chunkIds: readonly string[]): void {
    if (chunkIds.length === 0) return;
    if (this.buffered + chunkIds.length > MAX_BUFFERED) {
      this.dropped += chunkIds.length;
      return;
    }
    const key = JSON.stringify([tenant.organizationId, tenant.userId, [...tenant.teamIds].sort()]);
    const pending = this.buffer.get(key);
    if (pending) {
      pending.chunkIds.push(...chunkIds);
      pending.usedAt = new Date();
    } else this.buffer.set(key, { tenant, chunkIds: [...chunkIds], usedAt: new Date() });
    this.buffered += chunkIds.length;
    if (this.buffered >= MAX_BATCH) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS);
      // A pending usage write must not keep a finished process alive.
      this.timer.unref();
    }
  }

  /** Writes everything recorded so far (on the timer, on shutdown, in tests). */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const batch = [...this.buffer.values()];
    this.buffer = new Map();
    this.buffered = 0;
    this.writing = this.writing.then(() => this.write(batch));
    return this.writing;
  }

  private async write(batch: Pending[]): Promise<void> {
    let lost = 0;
    let reason = "";
    for (const pending of batch) {
      try {
        await this.store.recordUsage(pending.tenant, pending.chunkIds, pending.usedAt);
      } catch (error) {
        lost += pending.chunkIds.length;
        reason ||= error instanceof Error ? error.message : String(error);
      }
    }
    if (lost > 0) this.logger.warn(`could not record ${lost} document hits: ${reason}`);
    if (this.dropped > 0) {
      this.logger.warn(`dropped ${this.dropped} document hits while usage writes were behind`);
      this.dropped = 0;
    }
  }
}
