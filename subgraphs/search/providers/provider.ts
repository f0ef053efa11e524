/**
 * A search provider: one source of ranked results. Adding a provider is one file implementing
 * this interface and one line in registry.ts.
 */
import type { TenantContext } from "../../../lib/tenancy/token.js";
import type { EntityRef, ProviderKind } from "../fusion.js";

export interface ProviderHit {
  ref: EntityRef;
  /** The provider's own relevance score (higher is better); only comparable within the provider. */
  nativeScore: number;
}

export interface ProviderRequest {
  tenant: TenantContext;
  query: string;
  /** How many hits to return at most (best first). */
  window: number;
  /** Aborted when the provider's timeout passes or the request goes away: stop work if you can. */
  signal: AbortSignal;
  /**
   * The provider's time budget in milliseconds. A provider that runs SQL should bound its
   * statements by it (statement_timeout): the service stops waiting at that point, and a
   * query nobody waits for must not keep the database busy.
   */
  timeoutMs?: number;
}

export interface SearchProvider {
  /** Unique, stable, `<domain>.<method>`: what clients pass in `providers` and `weights`. */
  readonly name: string;
  readonly kind: ProviderKind;
  /** One line for `searchProviders`. */
  readonly description: string;
  search(request: ProviderRequest): Promise<ProviderHit[]>;
}
