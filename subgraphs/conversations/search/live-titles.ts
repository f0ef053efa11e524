/**
 * The live titles of these conversations in the organization, for the search subgraph to answer
 * `Conversation.title` on a page of hits itself (its `@provides`), so the gateway skips the
 * `_entities` hop when a client asks for nothing else. Read per request, never from a cached
 * page, so a rename shows at once; a deleted conversation, or one of another organization, is
 * simply absent, as the conversations subgraph would not resolve it either. One tenant read: on
 * PostgreSQL that one statement is all it sends.
 */
import { isUuid } from "../../../lib/graphql/pagination.js";
import { Prisma, type PrismaClient } from "../../../generated/prisma/client.js";
import { queryPrepared, withTenantReads } from "../../../lib/database/tenant-reads.js";

// Hits only ever name conversations by UUID; anything else cannot be one, and must not reach the `::uuid[]` cast.

export async function liveConversationTitles(prisma: PrismaClient, organizationId: string, ids: readonly string[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter(isUuid))];
  if (wanted.length === 0) return new Map();
  // A named statement on PostgreSQL (queryPrepared): one per page of hits, its text never varies.
  const rows = await withTenantReads(prisma, organizationId, (tx) =>
    queryPrepared<{ id: string; title: string }>(
      tx,
      "conversation_titles",
      Prisma.sql`
      SELECT id::text AS id, title FROM conversations
      WHERE id = ANY(${wanted}::uuid[]) AND organization_id = ${organizationId} AND deleted_at IS NULL`,
    ),
  );
  return new Map(rows.map((row) => [row.id.toLowerCase(), row.title]));
}
