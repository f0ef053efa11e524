/**
 * The search filter's conversation fields as one SQL condition on a `conversations` row aliased
 * `c`: both conversation providers put it inside their own statement (the keyword provider's
 * scoring, pgvector's nearest-neighbour scan). Its text is the same whatever fields are set
 * (unset ones are NULL parameters), so each statement keeps one prepared shape.
 *
 * `teams` is not among them: a conversation belongs to a user, not to a team, and team
 * membership lives in tokens, not in the database; a search filtered by teams skips both
 * conversation providers (SearchProvider.filters).
 */
import { Prisma } from "../../../generated/prisma/client.js";
import type { SearchFilter } from "../../../lib/retrieval/search-filter.js";

export function hasConversationFilter(filter: SearchFilter): boolean {
  return filter.created !== null || filter.updated !== null || filter.owner !== null;
}

export function conversationFilterSql(filter: SearchFilter): Prisma.Sql {
  const at = (value: Date | null | undefined) => value ?? null;
  return Prisma.sql`(${at(filter.created?.from)}::timestamptz IS NULL OR c.created_at >= ${at(filter.created?.from)}::timestamptz)
    AND (${at(filter.created?.to)}::timestamptz IS NULL OR c.created_at <= ${at(filter.created?.to)}::timestamptz)
    AND (${at(filter.updated?.from)}::timestamptz IS NULL OR c.updated_at >= ${at(filter.updated?.from)}::timestamptz)
    AND (${at(filter.updated?.to)}::timestamptz IS NULL OR c.updated_at <= ${at(filter.updated?.to)}::timestamptz)
    AND (${filter.owner}::text IS NULL OR c.user_id = ${filter.owner}::text)`;
}
