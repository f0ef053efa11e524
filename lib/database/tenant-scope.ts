/**
 * Tenant scope: the database's own wall between organizations, behind the application's
 * `WHERE organization_id = …` filters. `withTenantScope` runs work in a transaction that
 * switches to the `context_search_tenant` role (which owns nothing, so the row-level security
 * policies of the row_level_security migration apply to it) and names the caller's
 * organization in `app.organization_id`. Inside, a statement that forgets its organization
 * filter sees only the caller's rows, and writing another organization's row fails.
 *
 * Both settings are transaction-local (`set_config(…, true)`): they end with the transaction,
 * so a pooled connection never carries one request's organization into the next. One extra
 * statement per transaction sets them all (with the statement timeout and any other
 * transaction-local setting the caller asks for): the scope costs BEGIN, that statement and
 * COMMIT on top of the work itself.
 *
 * Work that spans organizations by design (the indexing queue, the batched query log,
 * migrations, benchmarks' bulk loads) runs outside a scope, as the tables' owner.
 */
import type { Prisma, PrismaClient } from "../../generated/prisma/client.js";
import { SpanKind, withSpan } from "../observability/tracing.js";
import { noteScopeOn } from "./read-session.js";

/** The role tenant-scoped transactions run as (created by the row_level_security migration). */
export const TENANT_ROLE = "context_search_tenant";

export type TenantTransaction = Prisma.TransactionClient;

export interface TenantScopeOptions {
  /** Cancel any statement of the scope that runs longer (SET LOCAL statement_timeout). */
  statementTimeoutMs?: number;
  /** More transaction-local settings, set in the same statement (e.g. `hnsw.ef_search`). */
  settings?: Record<string, string>;
}

/** How long a scope may wait for a pooled connection: as long as a gateway call may take. */
const SCOPE_MAX_WAIT_MS = 30_000;
/** How long a scope's transaction may stay open; each statement in it is bounded by its own timeout. */
const SCOPE_TIMEOUT_MS = 60_000;

let scopesEnabled = true;

/**
 * Benchmarks only: runs `work` with tenant scopes off (statements run as the tables' owner,
 * with no organization set), so a benchmark can measure what the scopes cost against the same
 * work in the same process. Never used by the product.
 */
export async function withoutTenantScopesForBenchmark<T>(work: () => Promise<T>): Promise<T> {
  scopesEnabled = false;
  try {
    return await work();
  } finally {
    scopesEnabled = true;
  }
}

/** False only inside withoutTenantScopesForBenchmark (tenant-reads.ts follows the same switch). */
export function tenantScopesEnabled(): boolean {
  return scopesEnabled;
}

export async function withTenantScope<T>(
  prisma: PrismaClient,
  organizationId: string,
  work: (tx: TenantTransaction) => Promise<T>,
  options: TenantScopeOptions = {},
): Promise<T> {
  if (!scopesEnabled) return work(prisma as unknown as TenantTransaction);
  // A mutation's scopes are where it wrote: their primary's write position is recorded for the caller (replica-reads.ts).
  noteScopeOn(prisma);
  const settings: [string, string][] = [
    ["role", TENANT_ROLE],
    ["app.organization_id", organizationId],
    ...(options.statementTimeoutMs ? [["statement_timeout", String(Math.max(1, Math.ceil(options.statementTimeoutMs)))] as [string, string]] : []),
    ...Object.entries(options.settings ?? {}),
  ];
  // One statement sets them all: set_config(name, value, true) is SET LOCAL with parameters.
  const names = settings.map(([name]) => name);
  const values = settings.map(([, value]) => value);
  // One span per scope (when the request is traced): its statements are its children (connect.ts).
  return withSpan(
    "db.transaction tenant_scope",
    { "db.system.name": "postgresql", "db.operation.name": "TRANSACTION" },
    () =>
      prisma.$transaction(
        async (tx) => {
          await tx.$queryRaw`SELECT set_config(setting.name, setting.value, true) FROM unnest(${names}::text[], ${values}::text[]) AS setting(name, value)`;
          return work(tx);
        },
        // Prisma gives up on a transaction that waits more than 2 s for a connection by default;
        // under load a scope must queue for the pool like any plain statement does, not fail.
        { maxWait: SCOPE_MAX_WAIT_MS, timeout: SCOPE_TIMEOUT_MS },
      ),
    SpanKind.CLIENT,
  );
}
