/**
 * Which of these chunks the caller may see now: the chunk exists (its document was not deleted),
 * its document is READY (not half-indexed: see document-indexer.ts) and is the caller's own or
 * shared with one of their teams. One statement however
 * many ids; the semantic provider and the cached-page check both use it, because vectors and
 * cached pages know nothing of access scopes or deletions.
 */
import { isUuid } from "../../../lib/graphql/pagination.js";
import { Prisma, type PrismaClient } from "../../../generated/prisma/client.js";
import type { SearchFilter } from "../../../lib/retrieval/search-filter.js";
import { DOCUMENT_ATTRIBUTE_COLUMNS, documentFilterSql, hasDocumentFilter, type DocumentAttributeRow } from "./document-filter.js";
import { queryPrepared, withTenantReads } from "../../../lib/database/tenant-reads.js";
import type { TenantContext } from "../../../lib/tenancy/token.js";


export async function visibleChunkIds(prisma: PrismaClient, tenant: TenantContext, ids: readonly string[], options: { statementTimeoutMs?: number } = {}): Promise<Set<string>> {
  return new Set((await visibleChunks(prisma, tenant, ids, options)).keys());
}

/**
 * visibleChunkIds with each chunk's document columns (its document, and its attributes for facets), and only the chunks whose
 * documents match `filter` when one is given: still one statement.
 */
export async function visibleChunks(
  prisma: PrismaClient,
  tenant: TenantContext,
  ids: readonly string[],
  options: { statementTimeoutMs?: number; filter?: SearchFilter } = {},
): Promise<Map<string, DocumentAttributeRow>> {
  // A cached page may name anything; an id that is not a uuid names no chunk (and must not fail the cast).
  const candidates = [...new Set(ids.filter(isUuid))];
  if (candidates.length === 0) return new Map();
  const rows = await withTenantReads(
    prisma,
    tenant.organizationId,
    (tx) => tx.$queryRaw<({ id: string } & DocumentAttributeRow)[]>`
      SELECT c.id::text AS id, ${DOCUMENT_ATTRIBUTE_COLUMNS}
      ${visibleChunksSql(tenant, candidates)}
        ${options.filter && hasDocumentFilter(options.filter) ? Prisma.sql`AND ${documentFilterSql(options.filter)}` : Prisma.empty}`,
    options.statementTimeoutMs ? { statementTimeoutMs: options.statementTimeoutMs } : {},
  );
  return new Map(rows.map((row) => [row.id, row]));
}

/** What the search subgraph answers of a DocumentChunk hit itself (fields `@shareable` in both subgraphs): where the passage sits. */
export interface ChunkPlace {
  headingPath: string[];
  page: number | null;
  document: { id: string; fileName: string };
}

/**
 * The places of the chunks among `ids` the caller may see now (the rule above), for the search
 * subgraph to answer a page's `DocumentChunk { headingPath page document { id fileName } }`
 * without the gateway's `_entities` hop to this subgraph (docs/web-app.md, "Keystroke to first
 * results"). Read per request, never from a cached page, so a renamed or unshared document shows
 * at once; a chunk the caller may not see is absent. One statement however many ids.
 */
export async function visibleChunkPlaces(prisma: PrismaClient, tenant: TenantContext, ids: readonly string[]): Promise<Map<string, ChunkPlace>> {
  const candidates = [...new Set(ids.filter(isUuid))];
  if (candidates.length === 0) return new Map();
  const rows = await withTenantReads(prisma, tenant.organizationId, (tx) =>
    queryPrepared<{ id: string; heading_path: string[]; page: number | null; document_id: string; file_name: string }>(
      tx,
      "document_chunk_places",
      Prisma.sql`SELECT c.id::text AS id, c.heading_path, c.page, d.id::text AS document_id, d.file_name ${visibleChunksSql(tenant, candidates)}`,
    ),
  );
  return new Map(rows.map((row) => [row.id.toLowerCase(), { headingPath: row.heading_path, page: row.page, document: { id: row.document_id, fileName: row.file_name } }]));
}

/**
 * FROM and WHERE over the chunks `c` (with their documents `d`) of these ids that the caller may
 * see: the one rule, for this check and for search highlights. `ids` must be uuids.
 */
export function visibleChunksSql(tenant: TenantContext, ids: readonly string[]): Prisma.Sql {
  return Prisma.sql`
      FROM document_chunks c
      JOIN documents d ON d.id = c.document_id AND d.organization_id = c.organization_id AND d.status = 'READY'
      WHERE c.id = ANY(${[...ids]}::uuid[])
        AND c.organization_id = ${tenant.organizationId}
        AND (d.owner_id = ${tenant.userId} OR d.team_id = ANY(${[...tenant.teamIds]}::text[]))`;
}

/**
 * Whether a document the caller may find changed after `since` (shared with one of their teams,
 * made READY, renamed): a search page cached before then may lack it, so the search subgraph
 * computes the page again. One statement, a range read of the organization's documents by
 * `updated_at` (an index). Deletions and unsharing need no such check: a cached page's hits are
 * checked again (visibleChunkIds).
 */
export async function documentsChangedSince(prisma: PrismaClient, tenant: TenantContext, since: Date): Promise<boolean> {
  const [row] = await withTenantReads(prisma, tenant.organizationId, (tx) =>
    tx.$queryRaw<{ changed: boolean }[]>`
      SELECT EXISTS (
        SELECT 1 FROM documents
        WHERE organization_id = ${tenant.organizationId} AND updated_at > ${since} AND status = 'READY'
          AND (owner_id = ${tenant.userId} OR team_id = ANY(${tenant.teamIds}::text[]))
      ) AS changed`,
  );
  return row?.changed === true;
}
