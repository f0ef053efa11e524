/**
 * Which of these conversations are still live (not deleted) in the organization. Vectors and
 * cached pages can lag behind a deletion; both the semantic provider and cached pages use this
 * one statement to drop what the conversations subgraph would no longer resolve (a tenant read:
 * on PostgreSQL that one statement is all it sends).
 */
import type { PrismaClient } from "../../../generated/prisma/client.js";
import { withTenantReads } from "../../../lib/database/tenant-reads.js";

export async function liveConversationIds(prisma: PrismaClient, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await withTenantReads(prisma, organizationId, (tx) => tx.$queryRaw<{ id: string }[]>`
    SELECT id::text AS id FROM conversations
    WHERE id = ANY(${[...ids]}::uuid[]) AND organization_id = ${organizationId} AND deleted_at IS NULL`);
  return new Set(rows.map((row) => row.id));
}
