/**
 * Conversations whose titles complete what the caller is typing (`searchSuggestions`). Everyone
 * in an organization can read its conversations, so every live conversation of the caller's
 * organization is a candidate, exactly as for search; deleted ones never are. One tenant read:
 * on PostgreSQL that one statement is all it sends.
 */
import { Prisma, type PrismaClient } from "../../../generated/prisma/client.js";
import { queryPrepared, withTenantReads } from "../../../lib/database/tenant-reads.js";
import { nameSuggestionStatement, type NameSuggestionRow } from "../../../lib/retrieval/name-suggestions.js";
import type { EntitySuggestion, SuggestionRequest } from "../../../lib/retrieval/search-provider.js";

const TITLES = { table: "conversations", nameColumn: "title", keyColumn: "title_key", updatedColumn: "updated_at", visible: Prisma.sql`deleted_at IS NULL` };

export async function conversationTitleSuggestions(prisma: PrismaClient, { tenant, prefix, limit }: SuggestionRequest): Promise<EntitySuggestion[]> {
  const rows = await withTenantReads(prisma, tenant.organizationId, (reader) =>
    queryPrepared<NameSuggestionRow>(reader, "conversation_title_suggestions", nameSuggestionStatement(TITLES, tenant.organizationId, prefix, limit)),
  );
  return rows.map((row) => ({ text: row.text, ref: { typename: "Conversation", id: row.id }, atStart: row.at_start, updatedAt: row.updated_at }));
}
