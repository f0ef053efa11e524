/**
 * Suggestions as you type (`searchSuggestions`): how long a keystroke's completions take at
 * the corpus's size, for typed prefixes of 1 to 6 characters.
 *
 * Past queries are logged first, as searches log them (multi-row INSERTs of 200 into
 * search_queries, whose trigger keeps the suggestion aggregates): the query pool's texts, each
 * asked by 1 to 5 of the benchmark's 8 users, so some reach the organization's 3-user bar. The
 * trigger's cost on those writes is measured too: batches of 200 with the trigger and with it
 * disabled, alternating, each in a transaction that is rolled back.
 *
 * Prefixes are cut from the corpus's conversation titles and the logged queries, at the start
 * of the text and at a later word, 1 to 6 characters long. Each prefix is asked three ways, in
 * turn, so drift hits all alike: in the search subgraph's process (SearchSuggestions.suggest,
 * counting its data statements), through the gateway over HTTP (one connection), and, as the
 * baseline, `searchProviders` through the same gateway (a field that reads no database).
 */
import { Prisma } from "../../generated/prisma/client.js";
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { BENCH_ORGANIZATION_ID, BENCH_TENANT, BENCH_USER_IDS, queryPool } from "../corpus.js";
import { databaseLabel, entryHeading, formatCount, formatMs, formatRatio, renderConditions, type EntryBase, type TargetResult } from "../report.js";
import { baseConditions, type Scenario } from "../scenario.js";
import { benchConfig, benchToken, startBenchGateway, startBenchSubgraphs } from "../stack.js";
import { percentile, ratio, round, summarizeLatencies, type LatencySummary } from "../stats.js";

const PREFIX_LENGTHS = [1, 2, 3, 4, 5, 6] as const;
const PREFIXES_PER_LENGTH = 100;
const LIMIT = 8;
const LOG_BATCH = 200;
const TRIGGER_ROUNDS = 10;
/** The target: a keystroke's suggestions within 10 ms at the median, at 10,000 conversations. */
const TARGET_P50_MS = 10;

const SUGGEST = `query BenchSuggest($prefix: String!, $limit: Int) { searchSuggestions(prefix: $prefix, limit: $limit) { text source item { __typename ... on Conversation { id } } } }`;
const BASELINE = `query BenchProviders { searchProviders { name } }`;

interface LengthResult {
  length: number;
  prefixes: number;
  inProcess: LatencySummary;
  gateway: LatencySummary;
  baseline: LatencySummary;
  /** The 95th percentiles (LatencySummary has p90 and p99). */
  p95: { inProcess: number; gateway: number; baseline: number };
  /** gateway p50 / baseline p50. */
  p50VsBaseline: number;
  meanSuggestions: number;
}

export interface SuggestionsEntry extends EntryBase {
  pastQueries: { rows: number; distinct: number; sharedByThreeOrMore: number; seconds: number };
  trigger: { batch: number; rounds: number; withTriggerMs: LatencySummary; withoutTriggerMs: LatencySummary; ratio: number };
  dataStatementsPerRequest: number;
  lengths: LengthResult[];
  overall: { inProcess: LatencySummary; gateway: LatencySummary; baseline: LatencySummary; p50VsBaseline: number };
  errors: number;
}

function logRows(queries: readonly string[]) {
  const rows: { organizationId: string; userId: string; query: string; alpha: number; providers: Prisma.InputJsonValue; results: number; topScore: number | null; cacheHit: boolean; tookMs: number }[] = [];
  queries.forEach((query, index) => {
    const askers = 1 + (index % 5);
    for (let asker = 0; asker < askers; asker++) {
      rows.push({ organizationId: BENCH_ORGANIZATION_ID, userId: BENCH_USER_IDS[(index + asker) % BENCH_USER_IDS.length]!, query, alpha: 1, providers: [], results: 20, topScore: 1, cacheHit: false, tookMs: 5 });
    }
  });
  return rows;
}

/** Prefixes of each length, cut at the start of a text and at one of its later words, without repeats. */
function typedPrefixes(texts: readonly string[]): Map<number, string[]> {
  const byLength = new Map<number, Set<string>>(PREFIX_LENGTHS.map((length) => [length, new Set<string>()]));
  texts.forEach((text, index) => {
    const words = text.split(/\s+/).filter((word) => word.length > 0);
    const start = text.trim();
    const later = words.length > 1 ? words.slice(1 + (index % (words.length - 1))).join(" ") : start;
    for (const length of PREFIX_LENGTHS) {
      const set = byLength.get(length)!;
      if (set.size >= PREFIXES_PER_LENGTH) continue;
      const source = index % 2 === 0 ? start : later;
      if ([...source].length >= length) set.add([...source].slice(0, length).join("").toLowerCase());
    }
  });
  return new Map([...byLength].map(([length, set]) => [length, [...set]]));
}

async function post(url: string, token: string, query: string, variables: Record<string, unknown>): Promise<{ ms: number; data: any; ok: boolean }> {
  const started = performance.now();
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables }) });
  const body = (await response.json()) as { data?: any; errors?: unknown[] };
  return { ms: performance.now() - started, data: body.data, ok: response.ok && !body.errors };
}

export const suggestionsScenario: Scenario<SuggestionsEntry> = {
  name: "suggestions",
  title: "Suggestions as you type",
  async run(context) {
    const { database } = context.bench;
    const queries = queryPool(context.size, Math.min(2_000, Math.max(20, context.size)));
    const rows = logRows(queries);
    const loadStarted = performance.now();
    for (let offset = 0; offset < rows.length; offset += LOG_BATCH) await database.prisma.searchQuery.createMany({ data: rows.slice(offset, offset + LOG_BATCH) });
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const [counts] = await database.prisma.$queryRaw<{ distinct: number; shared: number }[]>`
      SELECT count(*)::int AS distinct, (count(*) FILTER (WHERE users >= 3))::int AS shared FROM search_query_totals WHERE organization_id = ${BENCH_ORGANIZATION_ID}`;
    context.log(`  ${rows.length} past queries logged (${counts!.distinct} distinct, ${counts!.shared} asked by 3+ users) in ${loadSeconds.toFixed(1)} s`);

    // The trigger's price on the query log's writes, each batch rolled back.
    const withTrigger: number[] = [];
    const withoutTrigger: number[] = [];
    const sample = rows.slice(0, LOG_BATCH).map((row) => ({ ...row, userId: `${row.userId}-trigger-bench` }));
    for (let round = 0; round < TRIGGER_ROUNDS; round++) {
      for (const triggered of round % 2 === 0 ? [true, false] : [false, true]) {
        await database.prisma
          .$transaction(async (tx) => {
            if (!triggered) await tx.$executeRawUnsafe(`ALTER TABLE search_queries DISABLE TRIGGER search_queries_after_insert_suggestions`);
            const started = performance.now();
            await tx.searchQuery.createMany({ data: sample });
            (triggered ? withTrigger : withoutTrigger).push(performance.now() - started);
            throw new RolledBack();
          })
          .catch((error: unknown) => {
            if (!(error instanceof RolledBack)) throw error;
          });
      }
    }

    const titleRows = await database.prisma.$queryRaw<{ title: string }[]>`
      SELECT title FROM conversations WHERE organization_id = ${BENCH_ORGANIZATION_ID} AND deleted_at IS NULL ORDER BY md5(id::text) LIMIT 400`;
    const texts = titleRows.flatMap((row, index) => [row.title, queries[index % queries.length]!]);
    const prefixes = typedPrefixes(texts);

    const config = benchConfig({ cacheTtlSeconds: 0 });
    const token = await benchToken(config);
    const subgraphs = await startBenchSubgraphs(database, config);
    const gateway = await startBenchGateway(subgraphs, { queryPlanner: "rust", deduplicateInflightRequests: false });
    let errors = 0;
    let statements = 0;
    let measuredInProcess = 0;
    try {
      // Warm-up: a few of each kind, discarded.
      for (const prefix of prefixes.get(3)!.slice(0, 10)) {
        await subgraphs.search.suggestions.suggest(BENCH_TENANT, { prefix, limit: LIMIT });
        await post(gateway.url, token, SUGGEST, { prefix, limit: LIMIT });
        await post(gateway.url, token, BASELINE, {});
      }
      const samples = new Map(PREFIX_LENGTHS.map((length) => [length, { inProcess: [] as number[], gateway: [] as number[], baseline: [] as number[], suggestions: 0 }]));
      const deadline = performance.now() + context.options.durationSeconds * 1000;
      for (let index = 0; index < PREFIXES_PER_LENGTH; index++) {
        // At least 20 prefixes of each length; then until the duration is spent.
        if (index >= 20 && performance.now() > deadline) break;
        for (const length of PREFIX_LENGTHS) {
          const list = prefixes.get(length)!;
          if (list.length === 0) continue;
          const prefix = list[index % list.length]!;
          const sample = samples.get(length)!;
          const before = database.statements.count;
          const started = performance.now();
          const suggestions = await subgraphs.search.suggestions.suggest(BENCH_TENANT, { prefix, limit: LIMIT });
          sample.inProcess.push(performance.now() - started);
          statements += database.statements.count - before;
          measuredInProcess += 1;
          sample.suggestions += suggestions.length;
          const viaGateway = await post(gateway.url, token, SUGGEST, { prefix, limit: LIMIT });
          if (!viaGateway.ok || !Array.isArray(viaGateway.data?.searchSuggestions)) errors += 1;
          sample.gateway.push(viaGateway.ms);
          const baseline = await post(gateway.url, token, BASELINE, {});
          if (!baseline.ok) errors += 1;
          sample.baseline.push(baseline.ms);
        }
      }
      const lengths: LengthResult[] = PREFIX_LENGTHS.filter((length) => samples.get(length)!.inProcess.length > 0).map((length) => {
        const sample = samples.get(length)!;
        const gatewaySummary = summarizeLatencies(sample.gateway);
        const baselineSummary = summarizeLatencies(sample.baseline);
        return {
          length,
          prefixes: Math.min(prefixes.get(length)!.length, sample.inProcess.length),
          inProcess: summarizeLatencies(sample.inProcess),
          gateway: gatewaySummary,
          baseline: baselineSummary,
          p95: { inProcess: p95(sample.inProcess), gateway: p95(sample.gateway), baseline: p95(sample.baseline) },
          p50VsBaseline: ratio(gatewaySummary.p50, baselineSummary.p50, 2),
          meanSuggestions: Math.round((sample.suggestions / sample.inProcess.length) * 10) / 10,
        };
      });
      const all = (pick: (sample: { inProcess: number[]; gateway: number[]; baseline: number[] }) => number[]) => summarizeLatencies([...samples.values()].flatMap(pick));
      const overall = { inProcess: all((s) => s.inProcess), gateway: all((s) => s.gateway), baseline: all((s) => s.baseline), p50VsBaseline: 0 };
      overall.p50VsBaseline = ratio(overall.gateway.p50, overall.baseline.p50, 2);
      for (const result of lengths) {
        context.log(`  prefix ${result.length}: in process p50 ${formatMs(result.inProcess.p50)} p95 ${formatMs(result.p95.inProcess)}; gateway p50 ${formatMs(result.gateway.p50)} p95 ${formatMs(result.p95.gateway)} (${formatRatio(result.p50VsBaseline)} searchProviders); ${result.meanSuggestions} suggestions`);
      }
      const withSummary = summarizeLatencies(withTrigger);
      const withoutSummary = summarizeLatencies(withoutTrigger);
      return {
        database: context.bench.kind,
        size: context.size,
        run: context.run,
        conditions: baseConditions(context, {
          "past queries": `${rows.length} rows of the query pool's ${queries.length} texts, each asked by 1 to 5 of ${BENCH_USER_IDS.length} users, written in INSERTs of ${LOG_BATCH} (the query log's batch)`,
          prefixes: `up to ${PREFIXES_PER_LENGTH} per length 1 to 6, cut from conversation titles and past queries at their start and at a later word, lower-cased`,
          request: `limit ${LIMIT}, as the benchmark user (no documents); in process = SearchSuggestions.suggest in the search subgraph's process; gateway = HTTP through the Rust-planner gateway, one connection, in-flight merging off; baseline = searchProviders through the same gateway, asked after each suggestion request`,
        }),
        corpus: context.corpus,
        profiles: [],
        pastQueries: { rows: rows.length, distinct: counts!.distinct, sharedByThreeOrMore: counts!.shared, seconds: Math.round(loadSeconds * 100) / 100 },
        trigger: { batch: LOG_BATCH, rounds: TRIGGER_ROUNDS, withTriggerMs: withSummary, withoutTriggerMs: withoutSummary, ratio: ratio(withSummary.p50, withoutSummary.p50, 2) },
        dataStatementsPerRequest: measuredInProcess ? Math.round((statements / measuredInProcess) * 100) / 100 : Number.NaN,
        lengths,
        overall,
        errors,
      };
    } finally {
      await gateway.stop();
      await subgraphs.stop();
      await database.prisma.$executeRaw`DELETE FROM search_queries WHERE organization_id = ${BENCH_ORGANIZATION_ID}`;
      await database.prisma.$executeRaw`DELETE FROM search_query_users WHERE organization_id = ${BENCH_ORGANIZATION_ID}`;
      await database.prisma.$executeRaw`DELETE FROM search_query_totals WHERE organization_id = ${BENCH_ORGANIZATION_ID}`;
    }
  },

  renderSection(file) {
    const rows = file.entries.flatMap((entry) =>
      entry.lengths.map((result) => [
        databaseLabel(entry.database),
        formatCount(entry.size),
        String(result.length),
        `${formatMs(result.inProcess.p50)} / ${formatMs(result.p95.inProcess)}`,
        `${formatMs(result.gateway.p50)} / ${formatMs(result.p95.gateway)}`,
        `${formatMs(result.baseline.p50)}`,
        formatRatio(result.p50VsBaseline),
        String(result.meanSuggestions),
      ]),
    );
    const table = renderMarkdownTable(["database", "conversations", "prefix length", "in process p50 / p95", "gateway p50 / p95", "searchProviders p50", "gateway p50 vs searchProviders", "suggestions (mean)"], rows);
    const details = file.entries.map((entry) =>
      [
        `**${entryHeading(entry)}** — all prefixes: in process p50 ${formatMs(entry.overall.inProcess.p50)}, p99 ${formatMs(entry.overall.inProcess.p99)}; through the gateway p50 ${formatMs(entry.overall.gateway.p50)} (${formatRatio(entry.overall.p50VsBaseline)} searchProviders' ${formatMs(entry.overall.baseline.p50)}). ` +
          `${entry.dataStatementsPerRequest} data statements per request. Past queries: ${formatCount(entry.pastQueries.rows)} logged, ${formatCount(entry.pastQueries.distinct)} distinct, ${formatCount(entry.pastQueries.sharedByThreeOrMore)} asked by 3+ users. ` +
          `Query-log batch of ${entry.trigger.batch} with the suggestions trigger p50 ${formatMs(entry.trigger.withTriggerMs.p50)} vs ${formatMs(entry.trigger.withoutTriggerMs.p50)} without (${formatRatio(entry.trigger.ratio)}). Errors: ${entry.errors}.`,
        "",
        renderConditions(entry),
      ].join("\n"),
    );
    return [table, "", ...details.flatMap((detail) => [detail, ""])].join("\n");
  },

  targets(file) {
    return file.entries
      .filter((entry) => entry.size >= 10_000)
      .map((entry): TargetResult => {
        const p50 = entry.overall.inProcess.p50;
        return {
          target: `searchSuggestions p50 ≤ ${TARGET_P50_MS} ms at ${formatCount(entry.size)} conversations (${databaseLabel(entry.database)}, in process)`,
          status: p50 <= TARGET_P50_MS ? "met" : "missed",
          measured: formatMs(p50),
          margin: `${formatRatio(ratio(p50, TARGET_P50_MS, 2))} of the target`,
        };
      });
  },
};

class RolledBack extends Error {}

const p95 = (values: readonly number[]) => round(percentile([...values].sort((a, b) => a - b), 95));
