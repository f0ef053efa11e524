/**
 * Documents whose file names complete what the caller is typing (`searchSuggestions`): only
 * those the caller may read, their own and those shared with one of their teams, as the
 * documents providers and `document` see them (visible-chunks.ts). One tenant read.
 */
import { Prisma, type PrismaClient } from "../../../generated/prisma/client.js";
import { queryPrepared, withTenantReads } from "../../../lib/database/tenant-reads.js";
import { nameSuggestionStatement, type NameSuggestionRow } from "../../../lib/retrieval/name-suggestions.js";
import type { EntitySuggestion, SuggestionRequest } from "../../../lib/retrieval/search-provider.js";

export async function documentNameSuggestions(prisma: PrismaClient, { tenant, prefix, limit }: SuggestionRequest): Promise<EntitySuggestion[]> {
  const names = {
    table: "documents",
    nameColumn: "file_name",
    keyColumn: "name_key",
    updatedColumn: "updated_at",
    visible: Prisma.sql`(owner_id = ${tenant.userId} OR team_id = ANY(${[...tenant.teamIds]}::text[]))`,
  };
  const rows = await withTenantReads(prisma, tenant.organizationId, (reader) =>
    queryPrepared<NameSuggestionRow>(reader, "document_name_suggestions", nameSuggestionStatement(names, tenant.organizationId, prefix, limit)),
  );
  return rows.map((row) => ({ text: row.text, ref: { typename: "Document", id: row.id }, atStart: row.at_start, updatedAt: row.updated_at }));
}
