/**
 * Highlights of the knowledge-base subgraph's hits, one statement per page and domain
 * (lib/retrieval/highlights.ts says how words are matched and passages cut):
 * - a DocumentChunk's passage is the chunk's text, read only when the caller may see the chunk
 *   (the rule of visible-chunks.ts);
 * - a KnowledgeBasePassage's is the passage's text, read only while its knowledge base is one
 *   the caller may query.
 * A chunk or passage is itself what a provider found nearest the query, so one that no keyword
 * matched (a semantic-only hit) is returned as it is, without ranges. At most MAX_PASSAGE_SCAN
 * characters of each are read.
 */
import { isUuid } from "../../../lib/graphql/pagination.js";
import { Prisma, type PrismaClient } from "../../../generated/prisma/client.js";
import { withTenantReads } from "../../../lib/database/tenant-reads.js";
import { highlightsByHit, highlightStatementSql, MAX_PASSAGE_SCAN, type HighlightOptions, type HighlightPassage } from "../../../lib/retrieval/highlights.js";
import type { EntityRef } from "../../../lib/retrieval/search-provider.js";
import type { TenantContext } from "../../../lib/tenancy/token.js";
import { isPassageId, knowledgeBaseVisibleSql } from "../passage-store.js";
import { visibleChunksSql } from "./visible-chunks.js";

interface Row {
  key: string;
  ord: number;
  text: string;
  tokens: string[];
}

export async function documentChunkHighlights(prisma: PrismaClient, tenant: TenantContext, refs: readonly EntityRef[], query: string, options: HighlightOptions): Promise<Map<string, HighlightPassage[]>> {
  const ids = [...new Set(refs.filter((ref) => ref.typename === "DocumentChunk" && isUuid(ref.id)).map((ref) => ref.id.toLowerCase()))];
  if (ids.length === 0) return new Map();
  const passages = Prisma.sql`
    SELECT 'DocumentChunk:' || c.id::text AS key, 0 AS ord, left(c.text, ${MAX_PASSAGE_SCAN}::int) AS text, NULL::text AS message_id, NULL::text AS role
    ${visibleChunksSql(tenant, ids)}`;
  const rows = await withTenantReads(prisma, tenant.organizationId, (tx) => tx.$queryRaw<Row[]>(highlightStatementSql(query, passages)));
  return highlightsByHit(rows, options.limit, options.windowLength);
}

export async function knowledgeBasePassageHighlights(prisma: PrismaClient, tenant: TenantContext, refs: readonly EntityRef[], query: string, options: HighlightOptions): Promise<Map<string, HighlightPassage[]>> {
  const ids = [...new Set(refs.filter((ref) => ref.typename === "KnowledgeBasePassage" && isPassageId(ref.id)).map((ref) => ref.id))];
  if (ids.length === 0) return new Map();
  const passages = Prisma.sql`
    SELECT 'KnowledgeBasePassage:' || p.id AS key, 0 AS ord, left(p.text, ${MAX_PASSAGE_SCAN}::int) AS text, NULL::text AS message_id, NULL::text AS role
    FROM knowledge_base_passages p
    JOIN knowledge_bases b ON b.id = p.knowledge_base_id
    WHERE p.id = ANY(${ids}::text[]) AND p.organization_id = ${tenant.organizationId} AND ${knowledgeBaseVisibleSql(tenant)}`;
  const rows = await withTenantReads(prisma, tenant.organizationId, (tx) => tx.$queryRaw<Row[]>(highlightStatementSql(query, passages)));
  return highlightsByHit(rows, options.limit, options.windowLength);
}
