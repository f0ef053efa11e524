/**
 * Search facets and filters: what `SearchResult.facets` and a pushed-down filter cost a page of
 * 20, on the benchmark's conversations. Four modes, measured in the search subgraph's process
 * one query at a time (SearchResult.tookMs), alternating query by query so drift hits all alike:
 *
 * - plain: conversations.keyword + conversations.semantic at alpha 0.5, no facets, no filter;
 * - facets: the same search with facets computed (what selecting `facets` asks for);
 * - filtered: the same search filtered to conversations created since the corpus's median
 *   creation date (about half of them), applied inside both providers' statements;
 * - filtered with facets.
 *
 * Reported as ratios against plain, from the same run. Result cache off.
 */
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { BENCH_TENANT, queryPool } from "../corpus.js";
import { databaseLabel, entryHeading, formatCount, formatMs, formatRatio, renderConditions, type EntryBase } from "../report.js";
import { baseConditions, type Scenario } from "../scenario.js";
import { benchConfig, startBenchSubgraphs } from "../stack.js";
import { ratio, summarizeLatencies, type LatencySummary } from "../stats.js";

const PROVIDERS = ["conversations.keyword", "conversations.semantic"];
const ALPHA = 0.5;
const PAGE = 20;
const PROVIDER_TIMEOUT_MS = 60_000;
const MODES = ["plain", "facets", "filtered", "filteredFacets"] as const;
type Mode = (typeof MODES)[number];

export interface SearchFacetsEntry extends EntryBase {
  distinctQueries: number;
  /** The filter's lower bound: the median creation date of the organization's conversations. */
  createdFrom: string;
  modes: Record<Mode, { searches: number; fused: LatencySummary; hits: number; window: number | null }>;
  /** Against plain. */
  ratios: Record<Exclude<Mode, "plain">, { p50: number; p99: number }>;
  degraded: number;
}

export const searchFacetsScenario: Scenario<SearchFacetsEntry> = {
  name: "search-facets",
  title: "Search facets and filters",
  async run(context) {
    const { database } = context.bench;
    const [median] = await database.prisma.$queryRawUnsafe<{ at: Date }[]>(
      `SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY created_at) AS at FROM conversations WHERE organization_id = $1 AND deleted_at IS NULL`,
      BENCH_TENANT.organizationId,
    );
    const createdFrom = new Date(median!.at);
    const config = benchConfig({ cacheTtlSeconds: 0, providerTimeoutMs: PROVIDER_TIMEOUT_MS, upstreamTimeoutMs: PROVIDER_TIMEOUT_MS });
    const queries = queryPool(context.size, 1_000);
    const subgraphs = await startBenchSubgraphs(database, config);
    try {
      const service = subgraphs.search.service;
      const samples = Object.fromEntries(MODES.map((mode) => [mode, { fused: [] as number[], hits: 0, window: 0, windows: 0 }])) as Record<Mode, { fused: number[]; hits: number; window: number; windows: number }>;
      let degraded = 0;
      const once = async (mode: Mode, query: string, record: boolean) => {
        const filtered = mode === "filtered" || mode === "filteredFacets";
        const facets = mode === "facets" || mode === "filteredFacets";
        const result = await service.search(
          BENCH_TENANT,
          { query, alpha: ALPHA, limit: PAGE, providers: PROVIDERS, ...(filtered ? { filter: { created: { from: createdFrom } } } : {}) },
          { facets },
        );
        if (!record) return;
        const sample = samples[mode];
        sample.fused.push(result.tookMs);
        sample.hits += result.hits.length;
        if (result.facets) {
          sample.window += result.facets.window;
          sample.windows += 1;
        }
        degraded += result.providers.filter((report) => report.status === "ERROR" || report.status === "TIMEOUT").length;
      };
      for (const query of queries.slice(-20)) for (const mode of MODES) await once(mode, query, false); // warm-up, discarded
      const started = performance.now();
      const deadline = started + context.options.durationSeconds * 1000;
      const hardStop = started + Math.max(context.options.durationSeconds * 4, 30) * 1000;
      for (let index = 0; (performance.now() < deadline || index < 100) && performance.now() < hardStop && index < 20_000; index++) {
        const query = queries[index % queries.length]!;
        // The order rotates too: the second search of a query may find warmer pages.
        for (let turn = 0; turn < MODES.length; turn++) await once(MODES[(index + turn) % MODES.length]!, query, true);
      }
      const modes = Object.fromEntries(
        MODES.map((mode) => {
          const sample = samples[mode];
          return [mode, { searches: sample.fused.length, fused: summarizeLatencies(sample.fused), hits: sample.hits, window: sample.windows ? Math.round(sample.window / sample.windows) : null }];
        }),
      ) as SearchFacetsEntry["modes"];
      const against = (mode: Mode) => ({ p50: ratio(modes[mode].fused.p50, modes.plain.fused.p50, 2), p99: ratio(modes[mode].fused.p99, modes.plain.fused.p99, 2) });
      context.log(`  plain p50 ${formatMs(modes.plain.fused.p50)}; facets ${formatRatio(against("facets").p50)}, filtered ${formatRatio(against("filtered").p50)}, filtered with facets ${formatRatio(against("filteredFacets").p50)} of it (p50)`);
      return {
        database: context.bench.kind,
        size: context.size,
        run: context.run,
        conditions: baseConditions(context, {
          search: `providers ${PROVIDERS.join(" + ")}, alpha ${ALPHA}, ${PAGE} hits, result cache off, provider timeout ${PROVIDER_TIMEOUT_MS / 1000} s`,
          filter: `created.from = the median creation date of the corpus's conversations (${createdFrom.toISOString()})`,
          measured: "SearchService.search in the search subgraph's process, one at a time, the four modes rotating per query",
        }),
        corpus: context.corpus,
        profiles: [],
        distinctQueries: queries.length,
        createdFrom: createdFrom.toISOString(),
        modes,
        ratios: { facets: against("facets"), filtered: against("filtered"), filteredFacets: against("filteredFacets") },
        degraded,
      };
    } finally {
      await subgraphs.stop();
    }
  },

  renderSection(file) {
    const label: Record<Mode, string> = { plain: "plain", facets: "with facets", filtered: "filtered (created ≥ median)", filteredFacets: "filtered, with facets" };
    const rows = file.entries.flatMap((entry) =>
      MODES.map((mode) => [
        databaseLabel(entry.database),
        formatCount(entry.size),
        label[mode],
        String(entry.modes[mode].searches),
        `${formatMs(entry.modes[mode].fused.p50)} / ${formatMs(entry.modes[mode].fused.p99)}`,
        mode === "plain" ? "1.00× / 1.00×" : `${formatRatio(entry.ratios[mode].p50)} / ${formatRatio(entry.ratios[mode].p99)}`,
        entry.modes[mode].window === null ? "–" : String(entry.modes[mode].window),
      ]),
    );
    const table = renderMarkdownTable(["database", "conversations", "search", "searches", "p50 / p99", "vs plain p50 / p99", "facet window (mean)"], rows);
    const details = file.entries.map((entry) => [`**${entryHeading(entry)}** — degraded provider calls: ${entry.degraded}.`, "", renderConditions(entry)].join("\n"));
    return [table, "", ...details.flatMap((detail) => [detail, ""])].join("\n");
  },
};
