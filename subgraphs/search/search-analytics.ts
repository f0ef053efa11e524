/**
 * `searchAnalytics(range)`: what an organization typed into its search box, from the query log
 * (search_queries) and the clicks on its hits (search_clicks, search-clicks.ts). Every statement
 * runs in the caller's tenant scope (row-level security admits only its organization's rows) and
 * reads by (organization_id, created_at) or (organization_id, searched_at); the range is bounded
 * (at most 92 days) and so is every list returned.
 *
 * A "search" here is what a person asked for: the first page of a search of every provider.
 * The log also holds later pages of the same search and the quick LOCAL page a client shows
 * before the full one (`page_offset`, `latency`); counting them would count one question two or
 * three times (a hit opened from the quick page counts for its full search: countedClicksCte).
 * Nor is a search the person typed on: the web app searches as the typing rests, so "kaf", "kafka" and "kafka lag" may be logged for one question. A search is left out when the
 * same person's next words came within TYPED_ON_SECONDS and extend it, and nothing of it was
 * opened (as Algolia's analytics keep only the last query of a typing sequence). Provider latency
 * reads every search a provider answered, but not pages from the result cache, whose provider
 * reports repeat the timings of the search that filled it.
 */
import { Prisma, type PrismaClient } from "../../generated/prisma/client.js";
import { withTenantScope } from "../../lib/database/tenant-scope.js";
import { badUserInput } from "../../lib/graphql/errors.js";
import type { TenantContext } from "../../lib/tenancy/token.js";

export const MAX_ANALYTICS_RANGE_DAYS = 92;
const TOP_QUERIES = 20;
const PROVIDERS = 50;
/** Drill-down: at most this many searches of one query, newest first. */
export const MAX_DRILL_DOWN = 100;
/** Clicks shown per search in the drill-down. */
const CLICKS_PER_SEARCH = 20;
const MAX_QUERY_LENGTH = 1_000;
const DAY_MS = 86_400_000;
/** How soon a longer query that starts with a search's words makes it a step of typing, not a question. */
export const TYPED_ON_SECONDS = 10;

/**
 * The log rows `s` that are searches a person asked (see the file's comment): first pages of
 * every provider, in the range, and not typed on unless something of them was opened. Reads
 * the `counted_clicks` CTE (countedClicksCte), which the statement must define.
 */
function askedSearches(org: string, range: AnalyticsRange): Prisma.Sql {
  return Prisma.sql`s.organization_id = ${org} AND s.created_at >= ${range.from} AND s.created_at < ${range.to} AND s.page_offset = 0 AND s.latency IS NULL
    AND (
      NOT EXISTS (
        SELECT 1 FROM search_queries n
        WHERE n.organization_id = s.organization_id AND n.user_id = s.user_id AND n.page_offset = 0 AND n.latency IS NULL
          AND n.created_at > s.created_at AND n.created_at <= s.created_at + make_interval(secs => ${TYPED_ON_SECONDS})
          AND length(btrim(n.query)) > length(btrim(s.query)) AND left(lower(btrim(n.query)), length(btrim(s.query))) = lower(btrim(s.query))
      )
      OR s.id IN (SELECT search_id FROM counted_clicks)
    )`;
}

/**
 * How long after the quick LOCAL page a client shows its full page may be logged and still be
 * that page's search: a slow provider's timeout, and then some.
 */
export const FULL_PAGE_SECONDS = 60;

/**
 * The organization's clicks of the range's searches (columns as search_clicks'), each named by
 * the search it counts for.
 * A client streams a search as two: the quick LOCAL page first, the page of every provider
 * after, each logged with its own id. A hit opened while only the quick page was on screen names
 * the quick page's search, which is not a search here (see the file's comment), so such a click
 * counts for the full search of it: the same person's first page of the same words and alpha
 * with every provider, logged from 2 s before the quick page to FULL_PAGE_SECONDS after it (the
 * closest). The full page may be logged after the click, so this is read, not written: and where
 * there is none (the full page failed), the click stays on the quick page, uncounted. The same
 * hit opened on both pages counts once.
 *
 * As the `counted_clicks` CTE every statement over asked searches starts with (askedSearches
 * reads it): computed once per statement, and looked up by hash, not per search.
 */
function countedClicksCte(org: string, range: AnalyticsRange): Prisma.Sql {
  return Prisma.sql`counted_clicks AS MATERIALIZED (
    SELECT DISTINCT ON (coalesce(f.id, c.search_id), c.item_kind, c.item_id)
           c.organization_id, coalesce(f.id, c.search_id) AS search_id, c.item_kind, c.item_id, c.position, c.user_id, c.searched_at, c.created_at
    FROM search_clicks c
    LEFT JOIN search_queries l ON l.organization_id = c.organization_id AND l.id = c.search_id AND l.latency = 'LOCAL' AND l.page_offset = 0
    LEFT JOIN LATERAL (
      SELECT n.id FROM search_queries n
      WHERE n.organization_id = l.organization_id AND n.user_id = l.user_id AND n.page_offset = 0 AND n.latency IS NULL
        AND n.query = l.query AND n.alpha = l.alpha
        AND n.created_at >= l.created_at - interval '2 seconds' AND n.created_at <= l.created_at + make_interval(secs => ${FULL_PAGE_SECONDS})
      ORDER BY abs(extract(epoch FROM n.created_at - l.created_at)), n.id
      LIMIT 1
    ) f ON l.id IS NOT NULL
    -- The clicks of the range's searches: a quick page is logged at most FULL_PAGE_SECONDS
    -- before its full one, and at most 2 s after.
    WHERE c.organization_id = ${org}
      AND c.searched_at >= ${range.from}::timestamptz - make_interval(secs => ${FULL_PAGE_SECONDS}) AND c.searched_at < ${range.to}::timestamptz + interval '2 seconds'
    ORDER BY coalesce(f.id, c.search_id), c.item_kind, c.item_id, c.created_at, c.position
  )`;
}

export type RelativeRange = "LAST_24_HOURS" | "LAST_7_DAYS" | "LAST_30_DAYS";
const RELATIVE_MS: Record<RelativeRange, number> = { LAST_24_HOURS: DAY_MS, LAST_7_DAYS: 7 * DAY_MS, LAST_30_DAYS: 30 * DAY_MS };

export interface AnalyticsRangeInput {
  relative?: RelativeRange | null;
  from?: Date | null;
  to?: Date | null;
}

export interface AnalyticsRange {
  from: Date;
  to: Date;
}

/** [from, to) from either a relative range (ending now) or two instants; BAD_USER_INPUT naming the field otherwise. */
export function resolveRange(input: AnalyticsRangeInput, now = new Date()): AnalyticsRange {
  const { relative, from, to } = input;
  if (relative) {
    if (from || to) throw badUserInput("range", "give either relative or from and to, not both");
    if (!(relative in RELATIVE_MS)) throw badUserInput("range.relative", `must be one of ${Object.keys(RELATIVE_MS).join(", ")}`);
    return { from: new Date(now.getTime() - RELATIVE_MS[relative]), to: now };
  }
  if (!from || !to) throw badUserInput("range", "give relative (e.g. LAST_7_DAYS), or both from and to");
  if (!(from.getTime() < to.getTime())) throw badUserInput("range.to", `must be after from (got from ${from.toISOString()}, to ${to.toISOString()})`);
  const days = (to.getTime() - from.getTime()) / DAY_MS;
  if (days > MAX_ANALYTICS_RANGE_DAYS) throw badUserInput("range.to", `the range may span at most ${MAX_ANALYTICS_RANGE_DAYS} days (got ${Math.ceil(days)}); ask for several ranges`);
  return { from, to };
}

export interface SearchQueryStats {
  query: string;
  searches: number;
  searchesWithClicks: number;
  clicks: number;
  clickThroughRate: number;
  averageClickPosition: number | null;
  noResultSearches: number;
}

export interface SearchAnalyticsData extends AnalyticsRange {
  totalSearches: number;
  noResultSearches: number;
  searchesWithClicks: number;
  clicks: number;
  clickThroughRate: number;
  averageClickPosition: number | null;
  topSearches: SearchQueryStats[];
  noResultQueries: { query: string; searches: number }[];
  searchesPerDay: { day: string; searches: number; noResultSearches: number; searchesWithClicks: number }[];
  providers: { provider: string; calls: number; failedCalls: number; latencyP50Ms: number; latencyP95Ms: number }[];
}

export interface LoggedSearch {
  searchId: string;
  at: Date;
  query: string;
  user: { id: string; name: string | null };
  results: number;
  tookMs: number;
  cached: boolean;
  clicks: { position: number; itemKind: string; itemId: string; at: Date }[];
}

const rate = (part: number, whole: number) => (whole > 0 ? part / whole : 0);
const count = (value: bigint | number | null | undefined) => Number(value ?? 0);

type QueryRow = { query: string; searches: bigint; clicked: bigint; clicks: bigint; position_sum: bigint | null; zero: bigint };

function queryStats(row: QueryRow): SearchQueryStats {
  const searches = count(row.searches);
  const clicks = count(row.clicks);
  return {
    query: row.query,
    searches,
    searchesWithClicks: count(row.clicked),
    clicks,
    clickThroughRate: rate(count(row.clicked), searches),
    // Over clicks, not searches: where people found what they opened.
    averageClickPosition: clicks > 0 ? count(row.position_sum) / clicks : null,
    noResultSearches: count(row.zero),
  };
}

export async function searchAnalytics(prisma: PrismaClient, tenant: TenantContext, range: AnalyticsRange): Promise<SearchAnalyticsData> {
  const org = tenant.organizationId;
  const { from, to } = range;
  return withTenantScope(prisma, org, async (db) => {
    // The range's searches with their clicks, once each; the totals and the top queries aggregate it.
    const searchesWithClicks = Prisma.sql`
      WITH ${countedClicksCte(org, range)}, searches AS (
        SELECT s.id, s.query, s.results FROM search_queries s
        WHERE ${askedSearches(org, range)}
      ), clicked AS (
        SELECT search_id, count(*) AS clicks, sum(position) AS position_sum FROM counted_clicks
        GROUP BY search_id
      )`;
    const [totals] = await db.$queryRaw<QueryRow[]>`
      ${searchesWithClicks}
      SELECT '' AS query, count(*) AS searches, count(c.search_id) AS clicked, coalesce(sum(c.clicks), 0) AS clicks,
             sum(c.position_sum) AS position_sum, count(*) FILTER (WHERE s.results = 0) AS zero
      FROM searches s LEFT JOIN clicked c ON c.search_id = s.id`;
    // Queries are grouped as asked, case and surrounding spaces aside (as knowledgeAnalytics groups them).
    const top = await db.$queryRaw<QueryRow[]>`
      ${searchesWithClicks}
      SELECT min(s.query) AS query, count(*) AS searches, count(c.search_id) AS clicked, coalesce(sum(c.clicks), 0) AS clicks,
             sum(c.position_sum) AS position_sum, count(*) FILTER (WHERE s.results = 0) AS zero
      FROM searches s LEFT JOIN clicked c ON c.search_id = s.id
      GROUP BY lower(btrim(s.query)) ORDER BY count(*) DESC, min(s.query) LIMIT ${TOP_QUERIES}`;
    const zero = await db.$queryRaw<{ query: string; searches: bigint }[]>`
      WITH ${countedClicksCte(org, range)}
      SELECT min(s.query) AS query, count(*) AS searches FROM search_queries s
      WHERE ${askedSearches(org, range)} AND s.results = 0
      GROUP BY lower(btrim(s.query)) ORDER BY count(*) DESC, min(s.query) LIMIT ${TOP_QUERIES}`;
    const days = await db.$queryRaw<{ day: string; searches: bigint; zero: bigint; clicked: bigint }[]>`
      WITH ${countedClicksCte(org, range)}
      SELECT to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*) AS searches,
             count(*) FILTER (WHERE s.results = 0) AS zero,
             count(*) FILTER (WHERE s.id IN (SELECT search_id FROM counted_clicks)) AS clicked
      FROM search_queries s
      WHERE ${askedSearches(org, range)}
      GROUP BY 1 ORDER BY 1`;
    const providers = await db.$queryRaw<{ provider: string; calls: bigint; failed: bigint; p50: number; p95: number }[]>`
      SELECT report->>'name' AS provider, count(*) AS calls, count(*) FILTER (WHERE report->>'status' <> 'OK') AS failed,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY (report->>'tookMs')::float8) AS p50,
             percentile_cont(0.95) WITHIN GROUP (ORDER BY (report->>'tookMs')::float8) AS p95
      FROM search_queries s, jsonb_array_elements(CASE WHEN jsonb_typeof(s.providers) = 'array' THEN s.providers ELSE '[]'::jsonb END) AS report
      WHERE s.organization_id = ${org} AND s.created_at >= ${from} AND s.created_at < ${to} AND NOT s.cache_hit
        AND report->>'status' <> 'SKIPPED' AND jsonb_typeof(report->'tookMs') = 'number'
      GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT ${PROVIDERS}`;

    const all = queryStats(totals!);
    return {
      from,
      to,
      totalSearches: all.searches,
      noResultSearches: all.noResultSearches,
      searchesWithClicks: all.searchesWithClicks,
      clicks: all.clicks,
      clickThroughRate: all.clickThroughRate,
      averageClickPosition: all.averageClickPosition,
      topSearches: top.map(queryStats),
      noResultQueries: zero.map((row) => ({ query: row.query, searches: count(row.searches) })),
      searchesPerDay: days.map((row) => ({ day: row.day, searches: count(row.searches), noResultSearches: count(row.zero), searchesWithClicks: count(row.clicked) })),
      providers: providers.map((row) => ({ provider: row.provider, calls: count(row.calls), failedCalls: count(row.failed), latencyP50Ms: Number(row.p50), latencyP95Ms: Number(row.p95) })),
    };
  });
}

/** The drill-down's `first`, checked: 1 to MAX_DRILL_DOWN. */
export function validateDrillDown(query: string, first: number | null | undefined): { query: string; first: number } {
  const trimmed = query.trim();
  if (trimmed.length === 0 || query.length > MAX_QUERY_LENGTH) throw badUserInput("query", `must be a query as topSearches lists it: 1 to ${MAX_QUERY_LENGTH} characters, not only whitespace`);
  const size = first ?? 20;
  if (!Number.isInteger(size) || size < 1 || size > MAX_DRILL_DOWN) throw badUserInput("first", `must be 1 to ${MAX_DRILL_DOWN}, got ${size}`);
  return { query: trimmed, first: size };
}

/**
 * The searches of one query in the range (case and surrounding spaces aside, as topSearches
 * groups them), newest first, each with who asked (their name, when the organization has the
 * user) and its clicks in the order they came.
 */
export async function searchesOfQuery(prisma: PrismaClient, tenant: TenantContext, range: AnalyticsRange, query: string, first: number): Promise<LoggedSearch[]> {
  const org = tenant.organizationId;
  const { from, to } = range;
  return withTenantScope(prisma, org, async (db) => {
    const rows = await db.$queryRaw<{ id: string; created_at: Date; query: string; user_id: string; name: string | null; results: number; took_ms: number; cache_hit: boolean }[]>`
      WITH ${countedClicksCte(org, range)}
      SELECT s.id::text AS id, s.created_at, s.query, s.user_id, u.name, s.results, s.took_ms, s.cache_hit
      FROM search_queries s LEFT JOIN users u ON u.organization_id = s.organization_id AND u.id = s.user_id
      WHERE ${askedSearches(org, range)}
        AND lower(btrim(s.query)) = lower(${query})
      ORDER BY s.created_at DESC, s.id LIMIT ${first}`;
    if (rows.length === 0) return [];
    const ids = rows.map((row) => row.id);
    const clicks = await db.$queryRaw<{ search_id: string; position: number; item_kind: string; item_id: string; created_at: Date }[]>`
      WITH ${countedClicksCte(org, range)}
      SELECT search_id::text AS search_id, position, item_kind, item_id, created_at FROM (
        SELECT *, row_number() OVER (PARTITION BY search_id ORDER BY created_at, position) AS nth FROM counted_clicks
        WHERE search_id = ANY(${ids}::uuid[])
      ) c WHERE nth <= ${CLICKS_PER_SEARCH} ORDER BY created_at, position`;
    return rows.map((row) => ({
      searchId: row.id,
      at: row.created_at,
      query: row.query,
      user: { id: row.user_id, name: row.name },
      results: row.results,
      tookMs: row.took_ms,
      cached: row.cache_hit,
      clicks: clicks.filter((click) => click.search_id === row.id).map((click) => ({ position: click.position, itemKind: click.item_kind, itemId: click.item_id, at: click.created_at })),
    }));
  });
}
