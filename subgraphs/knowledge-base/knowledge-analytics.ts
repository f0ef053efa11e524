/**
 * `knowledgeAnalytics(from, to)`: what an organization asked its knowledge, from the
 * knowledge_queries log. Every statement runs in the caller's tenant scope (row-level security
 * admits only its organization's rows) and filters by organization and time on the log's
 * (organization_id, created_at) index; the range is bounded and so is every list returned
 * (at most 93 days, at most 100 knowledge bases and providers).
 *
 * A query "failed" for a provider when its source answered with any status but OK (the log keeps
 * the source's KnowledgeSourceStatus).
 */
import type { PrismaClient } from "../../generated/prisma/client.js";
import { withTenantScope } from "../../lib/database/tenant-scope.js";
import { badUserInput } from "../../lib/graphql/errors.js";
import type { TenantContext } from "../../lib/tenancy/token.js";

export const MAX_ANALYTICS_RANGE_DAYS = 92;
const TOP_QUERIES = 20;
const KNOWLEDGE_BASES = 100;
const PROVIDERS = 100;

export interface KnowledgeAnalytics {
  from: Date;
  to: Date;
  totalQueries: number;
  topQueries: { query: string; count: number }[];
  zeroResultQueries: { query: string; count: number }[];
  knowledgeBases: { knowledgeBaseId: string | null; queries: number; zeroResultQueries: number; latencyP50Ms: number; latencyP95Ms: number; latencyP99Ms: number }[];
  /** Days (UTC, `YYYY-MM-DD`) with at least one query, oldest first. */
  queriesPerDay: { day: string; queries: number; zeroResultQueries: number; failedQueries: number }[];
  providers: { provider: string; queries: number; failedQueries: number; latencyP50Ms: number; latencyP95Ms: number; latencyP99Ms: number }[];
}

export async function knowledgeAnalytics(prisma: PrismaClient, tenant: TenantContext, from: Date, to: Date): Promise<KnowledgeAnalytics> {
  if (!(from.getTime() < to.getTime())) throw badUserInput("to", `must be after from (got from ${from.toISOString()}, to ${to.toISOString()}).`);
  const days = (to.getTime() - from.getTime()) / 86_400_000;
  if (days > MAX_ANALYTICS_RANGE_DAYS) throw badUserInput("to", `the range may span at most ${MAX_ANALYTICS_RANGE_DAYS} days (got ${Math.ceil(days)}); ask for several ranges.`);
  const org = tenant.organizationId;
  return withTenantScope(prisma, org, async (db) => {
    const [totals] = await db.$queryRaw<{ total: bigint }[]>`
      SELECT count(*) AS total FROM knowledge_queries
      WHERE organization_id = ${org} AND created_at >= ${from} AND created_at < ${to}`;
    // Queries are grouped as asked, case and surrounding spaces aside.
    const top = await db.$queryRaw<{ query: string; count: bigint }[]>`
      SELECT min(query) AS query, count(*) AS count FROM knowledge_queries
      WHERE organization_id = ${org} AND created_at >= ${from} AND created_at < ${to}
      GROUP BY lower(btrim(query)) ORDER BY count DESC, min(query) LIMIT ${TOP_QUERIES}`;
    const zero = await db.$queryRaw<{ query: string; count: bigint }[]>`
      SELECT min(query) AS query, count(*) AS count FROM knowledge_queries
      WHERE organization_id = ${org} AND created_at >= ${from} AND created_at < ${to} AND results = 0
      GROUP BY lower(btrim(query)) ORDER BY count DESC, min(query) LIMIT ${TOP_QUERIES}`;
    const bases = await db.$queryRaw<{ knowledge_base_id: string | null; queries: bigint; zero: bigint; p50: number; p95: number; p99: number }[]>`
      SELECT knowledge_base_id::text AS knowledge_base_id, count(*) AS queries, count(*) FILTER (WHERE results = 0) AS zero,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50,
             percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms) AS p99
      FROM knowledge_queries
      WHERE organization_id = ${org} AND created_at >= ${from} AND created_at < ${to}
      GROUP BY knowledge_base_id ORDER BY queries DESC, knowledge_base_id NULLS FIRST LIMIT ${KNOWLEDGE_BASES}`;
    // Days are UTC days, as the range's DateTimes are; days without a query are left out (a chart fills them).
    const days = await db.$queryRaw<{ day: string; queries: bigint; zero: bigint; failed: bigint }[]>`
      SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*) AS queries,
             count(*) FILTER (WHERE results = 0) AS zero, count(*) FILTER (WHERE status <> 'OK') AS failed
      FROM knowledge_queries
      WHERE organization_id = ${org} AND created_at >= ${from} AND created_at < ${to}
      GROUP BY 1 ORDER BY 1`;
    const providers = await db.$queryRaw<{ provider: string; queries: bigint; failed: bigint; p50: number; p95: number; p99: number }[]>`
      SELECT provider, count(*) AS queries, count(*) FILTER (WHERE status <> 'OK') AS failed,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50,
             percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms) AS p99
      FROM knowledge_queries
      WHERE organization_id = ${org} AND created_at >= ${from} AND created_at < ${to}
      GROUP BY provider ORDER BY queries DESC, provider LIMIT ${PROVIDERS}`;
    return {
      from,
      to,
      totalQueries: Number(totals?.total ?? 0),
      topQueries: top.map((row) => ({ query: row.query, count: Number(row.count) })),
      zeroResultQueries: zero.map((row) => ({ query: row.query, count: Number(row.count) })),
      knowledgeBases: bases.map((row) => ({
        knowledgeBaseId: row.knowledge_base_id,
        queries: Number(row.queries),
        zeroResultQueries: Number(row.zero),
        latencyP50Ms: Number(row.p50),
        latencyP95Ms: Number(row.p95),
        latencyP99Ms: Number(row.p99),
      })),
      queriesPerDay: days.map((row) => ({ day: row.day, queries: Number(row.queries), zeroResultQueries: Number(row.zero), failedQueries: Number(row.failed) })),
      providers: providers.map((row) => ({
        provider: row.provider,
        queries: Number(row.queries),
        failedQueries: Number(row.failed),
        latencyP50Ms: Number(row.p50),
        latencyP95Ms: Number(row.p95),
        latencyP99Ms: Number(row.p99),
      })),
    };
  });
}
