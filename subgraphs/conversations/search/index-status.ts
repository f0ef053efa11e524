/** `searchIndexStatus`: how far the caller's organization's semantic index is behind. */
import type { Database } from "../../../lib/database/connect.js";
import { withTenantScope } from "../../../lib/database/tenant-scope.js";
import type { TenantContext } from "../../../lib/tenancy/token.js";

export interface SearchIndexStatus {
  model: string;
  dimensions: number;
  vectorStore: string;
  pending: number;
  failing: number;
  lastError: string | null;
}

export class SearchIndexStatusReader {
  constructor(
    private readonly database: Database,
    private readonly embedding: { model: string; dimensions: number; vectorStore: string },
  ) {}

  async read(tenant: TenantContext): Promise<SearchIndexStatus> {
    const [row] = await withTenantScope(this.database.prisma, tenant.organizationId, (tx) => tx.$queryRaw<{ pending: number; failing: number; last_error: string | null }[]>`
      SELECT count(*) FILTER (WHERE run_after <> 'infinity')::int AS pending,
             count(*) FILTER (WHERE last_error IS NOT NULL)::int AS failing,
             (SELECT last_error FROM search_index_jobs
              WHERE organization_id = ${tenant.organizationId} AND last_error IS NOT NULL
              ORDER BY enqueued_at DESC LIMIT 1) AS last_error
      FROM search_index_jobs WHERE organization_id = ${tenant.organizationId}`);
    return {
      model: this.embedding.model,
      dimensions: this.embedding.dimensions,
      vectorStore: this.embedding.vectorStore,
      pending: row?.pending ?? 0,
      failing: row?.failing ?? 0,
      lastError: row?.last_error ?? null,
    };
  }
}
