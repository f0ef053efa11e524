/**
 * Past queries that complete what the caller is typing (`searchSuggestions`), from the
 * aggregates a trigger keeps beside the query log (migration 20261203130000_search_suggestions):
 * the caller's own, most recent first, and the organization's that at least
 * ORGANIZATION_QUERY_MIN_USERS distinct users asked, most widely asked first. One tenant read,
 * two index range scans; prefixes are matched as search_suggestion_key ranges, literally.
 */
import { Prisma, type PrismaClient } from "../../generated/prisma/client.js";
import { queryPrepared, withTenantReads } from "../../lib/database/tenant-reads.js";
import type { TenantContext } from "../../lib/tenancy/token.js";

/**
 * How many distinct users must have asked a query before a colleague is offered it: one
 * person's query (a name, a diagnosis, a deal) is theirs alone. The migration's partial index
 * `search_query_totals_shared_idx` has the same number in its predicate; change both together.
 */
export const ORGANIZATION_QUERY_MIN_USERS = 3;

export interface PastQuerySuggestion {
  source: "MY_QUERY" | "ORGANIZATION_QUERY";
  text: string;
}

export async function pastQuerySuggestions(prisma: PrismaClient, tenant: TenantContext, prefix: string, limit: number): Promise<PastQuerySuggestion[]> {
  const from = Prisma.sql`(search_suggestion_key(${prefix}::text) COLLATE "C")`;
  const to = Prisma.sql`((search_suggestion_key(${prefix}::text) || chr(1114111)) COLLATE "C")`;
  const minUsers = Prisma.raw(String(ORGANIZATION_QUERY_MIN_USERS));
  return withTenantReads(prisma, tenant.organizationId, (reader) =>
    queryPrepared<PastQuerySuggestion>(
      reader,
      "past_query_suggestions",
      // UNION ALL keeps no order by itself: each branch numbers its rows, the outer ORDER BY keeps them.
      Prisma.sql`
      SELECT source, text FROM (
        (SELECT 'MY_QUERY' AS source, query AS text, 0 AS tier, row_number() OVER (ORDER BY last_asked_at DESC, key) AS position
         FROM search_query_users
         WHERE organization_id = ${tenant.organizationId} AND user_id = ${tenant.userId} AND key >= ${from} AND key < ${to}
         ORDER BY position
         LIMIT ${limit})
        UNION ALL
        (SELECT 'ORGANIZATION_QUERY' AS source, key AS text, 1 AS tier, row_number() OVER (ORDER BY users DESC, times DESC, key) AS position
         FROM search_query_totals
         WHERE organization_id = ${tenant.organizationId} AND users >= ${minUsers} AND key >= ${from} AND key < ${to}
         ORDER BY position
         LIMIT ${limit})
      ) suggestions
      ORDER BY tier, position`,
    ),
  );
}
