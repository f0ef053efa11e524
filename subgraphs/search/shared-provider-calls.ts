/**
 * Identical provider calls share one answer. A client that streams a search with `@defer` asks
 * twice in one operation: the page of the LOCAL providers first, then the page of every
 * provider (SearchInput.latency). Both searches ask the LOCAL providers the same question; the
 * second one joins the first one's call while it runs, and takes its answer for a few seconds
 * after, instead of running the same statements again.
 *
 * "Identical" is everything a provider's answer depends on: the provider, the caller (their
 * organization, user, teams and role: what row-level security lets them see) and the request
 * (query, window, filter, typo tolerance: whatever the caller passes as `request`). Only answers that succeeded are kept after they arrive; a failure or a
 * timeout is shared by whoever was waiting for it, and the next call tries again.
 */
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { TenantContext } from "../../lib/tenancy/token.js";

/** Distinct calls remembered at most: a few per recent search is plenty for a few seconds' worth. */
const MAX_REMEMBERED_CALLS = 2_000;

export interface SharedCallOutcome {
  /** Whether the answer may be handed to later callers once it has arrived. */
  keep: boolean;
}

export class SharedProviderCalls<T extends SharedCallOutcome> {
  private readonly calls: LRUCache<string, Promise<T>>;

  /**
   * @param keepMs How long a successful answer is reused after it arrived. 0 shares calls in
   *   flight only, so nothing is ever older than the request that asked for it.
   */
  constructor(private readonly keepMs: number) {
    this.calls = new LRUCache<string, Promise<T>>({ max: MAX_REMEMBERED_CALLS });
  }

  /**
   * The answer of the identical call in flight or just finished, or of `call` run now.
   * `shared` says which: a shared answer was not paid for by this caller (metrics count calls).
   */
  async run(provider: string, tenant: TenantContext, query: string, request: unknown, call: () => Promise<T>): Promise<{ outcome: T; shared: boolean }> {
    const key = callKey(provider, tenant, query, request);
    const existing = this.calls.get(key);
    if (existing) return { outcome: await existing, shared: true };
    const started = call();
    this.calls.set(key, started);
    let outcome: T;
    try {
      outcome = await started;
    } catch (error) {
      this.forget(key, started);
      throw error;
    }
    if (outcome.keep && this.keepMs > 0) this.calls.set(key, started, { ttl: this.keepMs });
    else this.forget(key, started);
    return { outcome, shared: false };
  }

  // Only the entry this call put there: a newer call of the same key may have replaced it.
  private forget(key: string, call: Promise<T>): void {
    if (this.calls.peek(key) === call) this.calls.delete(key);
  }
}

function callKey(provider: string, tenant: TenantContext, query: string, request: unknown): string {
  const caller = [tenant.organizationId, tenant.userId, [...tenant.teamIds].sort(), tenant.role];
  return createHash("sha256").update(JSON.stringify([provider, caller, query, request])).digest("base64url");
}
