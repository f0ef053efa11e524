/**
 * The search filter's document fields as one SQL condition on a `documents` row aliased `d`,
 * for both document providers' statements (the keyword scoring and the semantic provider's
 * scope check). Its text never changes with the fields set (unset ones are NULL parameters), so
 * the keyword statement keeps one prepared shape. A chunk's dates, owner, team, category, format
 * and knowledge base are its document's.
 */
import { Prisma } from "../../../generated/prisma/client.js";
import type { ProviderHit } from "../../../lib/retrieval/search-provider.js";
import type { HitAttributes, SearchFilter } from "../../../lib/retrieval/search-filter.js";

export function hasDocumentFilter(filter: SearchFilter): boolean {
  return (
    filter.created !== null ||
    filter.updated !== null ||
    filter.owner !== null ||
    filter.teams !== null ||
    filter.knowledgeBases !== null ||
    filter.categories !== null ||
    filter.formats !== null
  );
}

export function documentFilterSql(filter: SearchFilter): Prisma.Sql {
  const at = (value: Date | null | undefined) => value ?? null;
  return Prisma.sql`(${at(filter.created?.from)}::timestamptz IS NULL OR d.created_at >= ${at(filter.created?.from)}::timestamptz)
    AND (${at(filter.created?.to)}::timestamptz IS NULL OR d.created_at <= ${at(filter.created?.to)}::timestamptz)
    AND (${at(filter.updated?.from)}::timestamptz IS NULL OR d.updated_at >= ${at(filter.updated?.from)}::timestamptz)
    AND (${at(filter.updated?.to)}::timestamptz IS NULL OR d.updated_at <= ${at(filter.updated?.to)}::timestamptz)
    AND (${filter.owner}::text IS NULL OR d.owner_id = ${filter.owner}::text)
    AND (${filter.teams}::text[] IS NULL OR d.team_id = ANY(${filter.teams}::text[]))
    AND (${filter.knowledgeBases}::uuid[] IS NULL OR d.knowledge_base_id = ANY(${filter.knowledgeBases}::uuid[]))
    AND (${filter.categories}::text[] IS NULL OR d.category = ANY(${filter.categories}::text[]))
    AND (${filter.formats}::text[] IS NULL OR d.format::text = ANY(${filter.formats}::text[]))`;
}

/** The document columns a hit carries for facets and for showing a document once (select them as these names). */
export const DOCUMENT_ATTRIBUTE_COLUMNS = Prisma.raw("d.id::text AS document_id, d.created_at, d.updated_at, d.owner_id, d.category, d.format::text AS format, d.knowledge_base_id::text AS knowledge_base_id");

/** How many columns DOCUMENT_ATTRIBUTE_COLUMNS selects (a UNION's other branch selects as many NULLs). */
export const DOCUMENT_ATTRIBUTE_COLUMN_COUNT = 7;

export interface DocumentAttributeRow {
  document_id: string | null;
  created_at: Date | string | null;
  updated_at: Date | string | null;
  owner_id: string | null;
  category: string | null;
  format: string | null;
  knowledge_base_id: string | null;
}

/**
 * A chunk as a provider hit: its document's attributes (facets), and its document as its group,
 * so that a search shows each document once, at its best chunk (SearchInput.distinct).
 */
export function documentChunkHit(chunkId: string, nativeScore: number, row: DocumentAttributeRow | undefined): ProviderHit {
  const attributes = row ? documentAttributes(row) : undefined;
  return {
    ref: { typename: "DocumentChunk", id: chunkId },
    nativeScore,
    ...(attributes ? { attributes } : {}),
    ...(row?.document_id ? { group: `Document:${row.document_id}` } : {}),
  };
}

export function documentAttributes(row: DocumentAttributeRow): HitAttributes | undefined {
  if (row.created_at === null || row.updated_at === null || row.owner_id === null || row.format === null) return undefined;
  return {
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
    ownerId: row.owner_id,
    category: row.category,
    format: row.format,
    knowledgeBaseId: row.knowledge_base_id,
  };
}
