/**
 * Highlights of web results, Slack messages and LinkedIn posts, one statement per page
 * (lib/retrieval/highlights.ts says how words are matched and passages cut). A web result's
 * passages are its snippet and its title, a Slack message's and a LinkedIn post's their text, as stored when the search retrieved them (external_results,
 * the caller's organization's only). What the remote search engine matched is not always a word
 * of ours (it may match synonyms): such a result is returned with its snippet and no ranges.
 */
import { Prisma, type PrismaClient } from "../../generated/prisma/client.js";
import { withTenantReads } from "../../lib/database/tenant-reads.js";
import { highlightsByHit, highlightStatementSql, MAX_PASSAGE_SCAN, type HighlightOptions, type HighlightPassage } from "../../lib/retrieval/highlights.js";
import type { EntityRef } from "../../lib/retrieval/search-provider.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { isResultId } from "./result-store.js";

export async function externalResultHighlights(prisma: PrismaClient, tenant: TenantContext, refs: readonly EntityRef[], query: string, options: HighlightOptions): Promise<Map<string, HighlightPassage[]>> {
  const ids = [...new Set(refs.filter((ref) => (ref.typename === "WebResult" || ref.typename === "SlackMessage" || ref.typename === "LinkedInPost") && isResultId(ref.id)).map((ref) => ref.id))];
  if (ids.length === 0) return new Map();
  // The snippet first (ord 0): it is what a result with no match shows.
  const passages = Prisma.sql`
    SELECT (CASE r.kind WHEN 'SLACK' THEN 'SlackMessage:' WHEN 'LINKEDIN_POST' THEN 'LinkedInPost:' ELSE 'WebResult:' END) || r.id AS key, passage.ord, passage.text, NULL::text AS message_id, NULL::text AS role
    FROM external_results r
    CROSS JOIN LATERAL (VALUES (0, left(r.snippet, ${MAX_PASSAGE_SCAN}::int)), (1, CASE WHEN r.kind = 'WEB' THEN left(r.title, ${MAX_PASSAGE_SCAN}::int) ELSE '' END)) AS passage(ord, text)
    WHERE r.id = ANY(${ids}::text[]) AND r.organization_id = ${tenant.organizationId} AND r.kind IN ('WEB', 'SLACK', 'LINKEDIN_POST') AND passage.text <> ''`;
  const rows = await withTenantReads(prisma, tenant.organizationId, (tx) => tx.$queryRaw<{ key: string; ord: number; text: string; tokens: string[] }[]>(highlightStatementSql(query, passages)));
  const byKey = highlightsByHit(rows, options.limit, options.windowLength);
  // A typename must match the stored kind: a WebResult reference to a Slack message is no hit of ours.
  const wanted = new Set(refs.map((ref) => `${ref.typename}:${ref.id}`));
  for (const key of byKey.keys()) if (!wanted.has(key)) byKey.delete(key);
  return byKey;
}
