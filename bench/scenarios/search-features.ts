/**
 * Search features: what the client-facing extras of issue 20 cost a page of hits. The same
 * searches three ways against the same warm search subgraph, over HTTP (no gateway), result cache
 * off:
 *
 * - plain: the page of 20 hits with scores and references, what a search cost before;
 * - features: the same page with every feature in FEATURE_SELECTIONS (highlights, …) selected;
 * - featuresWithFacets: that page with the result's facets too (RESULT_FEATURE_SELECTIONS), what
 *   issue 20's goal names ("a page of 20 hits with highlights and facets").
 *
 * The modes alternate in short rounds (plain, features, with facets, then the reverse, …) so that drift on a shared
 * machine hits both alike; rounds are pooled per mode. Reported as features / plain ratios of
 * latency at one connection and under load, of throughput, and of this process's CPU per request
 * (the search subgraph's; PostgreSQL's CPU shows in the latency). FEATURE_SELECTIONS is the one
 * place to add a feature to the measured selection.
 */
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { queryPool } from "../corpus.js";
import { graphqlBody, poolRounds, runLoad, warmUp, type LoadResult } from "../load.js";
import { databaseLabel, entryHeading, formatCount, formatErrors, formatMs, formatRatio, renderConditions, type EntryBase } from "../report.js";
import { baseConditions, type Scenario } from "../scenario.js";
import { benchConfig, benchToken, settle, startBenchSubgraphs } from "../stack.js";
import { ratio } from "../stats.js";

/** The selections of the features measured, added to each hit of the plain page. */
export const FEATURE_SELECTIONS = ["highlights(limit: 3) { text matches { start end } messageId role }"] as const;
/** The selections of the result-level features measured with them (the third mode). */
export const RESULT_FEATURE_SELECTIONS = ["facets { window kinds { kind count } providers { provider count } months { month count } }"] as const;
const PAGE = 20;
const ALPHA = 0.5;
const PROVIDERS = ["conversations.keyword", "conversations.semantic"];
const PROVIDER_TIMEOUT_MS = 60_000;
const ROUNDS = 4;

const PLAIN_HIT = "score item { __typename ... on Conversation { id } }";
const searchDocument = (hitSelection: string, resultSelection = "") => `query BenchSearchFeatures($input: SearchInput!) { search(input: $input) { providers { name status } ${resultSelection} hits { ${hitSelection} } } }`;

const MODES = ["plain", "features", "featuresWithFacets"] as const;
type Mode = (typeof MODES)[number];

export interface FeatureModeResult {
  oneConnection: LoadResult;
  underLoad: LoadResult;
}

export interface SearchFeaturesEntry extends EntryBase {
  features: string[];
  distinctQueries: number;
  /** featuresWithFacets is absent from entries measured before it existed. */
  modes: Record<"plain" | "features", FeatureModeResult> & { featuresWithFacets?: FeatureModeResult };
  resultFeatures?: string[];
  /** features / plain. */
  ratios: {
    oneConnectionP50: number;
    oneConnectionP99: number;
    underLoadP50: number;
    underLoadP99: number;
    underLoadThroughput: number;
    cpuPerRequest: number;
  };
  /** featuresWithFacets / plain, likewise. */
  withFacetsRatios?: SearchFeaturesEntry["ratios"];
  totalErrors: number;
}

export const searchFeaturesScenario: Scenario<SearchFeaturesEntry> = {
  name: "search-features",
  title: "Search features: highlights on a page of hits",
  async run(context) {
    const { database } = context.bench;
    const config = benchConfig({ cacheTtlSeconds: 0, providerTimeoutMs: PROVIDER_TIMEOUT_MS, upstreamTimeoutMs: PROVIDER_TIMEOUT_MS });
    const token = await benchToken(config);
    const queries = queryPool(context.size, 1_000);
    const seconds = context.options.durationSeconds;
    const roundSeconds = Math.max(0.5, seconds / ROUNDS);
    const subgraphs = await startBenchSubgraphs(database, config);
    try {
      const featureHit = [PLAIN_HIT, ...FEATURE_SELECTIONS].join(" ");
      const documents: Record<Mode, string> = { plain: searchDocument(PLAIN_HIT), features: searchDocument(featureHit), featuresWithFacets: searchDocument(featureHit, RESULT_FEATURE_SELECTIONS.join(" ")) };
      const bodies = (mode: Mode) => queries.map((query) => graphqlBody(documents[mode], { input: { query, alpha: ALPHA, limit: PAGE, providers: PROVIDERS } }));
      const load = (mode: Mode, connections: number, durationSeconds: number) => ({ url: subgraphs.searchServer.url, token, bodies: bodies(mode), connections, durationSeconds, timeoutSeconds: PROVIDER_TIMEOUT_MS / 1000 });
      for (const mode of MODES) await warmUp(load(mode, 1, 1), Math.min(2, seconds / 3));
      const measured = async (connections: number): Promise<Record<Mode, LoadResult>> => {
        const rounds: Record<Mode, LoadResult[]> = { plain: [], features: [], featuresWithFacets: [] };
        for (let round = 0; round < ROUNDS; round++) {
          const order: Mode[] = round % 2 === 0 ? [...MODES] : [...MODES].reverse();
          for (const mode of order) {
            rounds[mode].push(await runLoad(load(mode, connections, roundSeconds)));
            await settle(subgraphs, database);
          }
        }
        return { plain: poolRounds(rounds.plain), features: poolRounds(rounds.features), featuresWithFacets: poolRounds(rounds.featuresWithFacets) };
      };
      const one = await measured(1);
      const many = await measured(context.options.connections);
      const modes: Record<Mode, FeatureModeResult> = {
        plain: { oneConnection: one.plain, underLoad: many.plain },
        features: { oneConnection: one.features, underLoad: many.features },
        featuresWithFacets: { oneConnection: one.featuresWithFacets, underLoad: many.featuresWithFacets },
      };
      for (const mode of MODES) {
        const { oneConnection, underLoad } = modes[mode];
        context.log(`  ${mode}: 1 connection p50 ${formatMs(oneConnection.latencyMs.p50)} p99 ${formatMs(oneConnection.latencyMs.p99)}; ${context.options.connections} connections p50 ${formatMs(underLoad.latencyMs.p50)} p99 ${formatMs(underLoad.latencyMs.p99)}, ${underLoad.requestsPerSecond.toFixed(0)} req/s, ${underLoad.serverCpuMsPerRequest.toFixed(2)} ms CPU/request; errors ${oneConnection.errors.total + underLoad.errors.total}`);
      }
      const p = modes.plain;
      const f = modes.features;
      const against = (f: FeatureModeResult): SearchFeaturesEntry["ratios"] => ({
        oneConnectionP50: ratio(f.oneConnection.latencyMs.p50, p.oneConnection.latencyMs.p50, 2),
        oneConnectionP99: ratio(f.oneConnection.latencyMs.p99, p.oneConnection.latencyMs.p99, 2),
        underLoadP50: ratio(f.underLoad.latencyMs.p50, p.underLoad.latencyMs.p50, 2),
        underLoadP99: ratio(f.underLoad.latencyMs.p99, p.underLoad.latencyMs.p99, 2),
        underLoadThroughput: ratio(f.underLoad.requestsPerSecond, p.underLoad.requestsPerSecond, 2),
        cpuPerRequest: ratio(f.underLoad.serverCpuMsPerRequest, p.underLoad.serverCpuMsPerRequest, 2),
      });
      return {
        database: context.bench.kind,
        size: context.size,
        run: context.run,
        conditions: baseConditions(context, {
          features: FEATURE_SELECTIONS.join("; "),
          "result features (third mode)": RESULT_FEATURE_SELECTIONS.join("; "),
          search: `${PROVIDERS.join(" + ")}, alpha ${ALPHA}, ${PAGE} hits, result cache off, provider timeout ${PROVIDER_TIMEOUT_MS / 1000} s`,
          http: `straight to the search subgraph (no gateway), 1 connection and ${context.options.connections} connections, ${ROUNDS} rounds of ${roundSeconds} s per mode, modes alternating`,
        }),
        corpus: context.corpus,
        profiles: [],
        features: [...FEATURE_SELECTIONS],
        resultFeatures: [...RESULT_FEATURE_SELECTIONS],
        distinctQueries: queries.length,
        modes,
        ratios: against(f),
        withFacetsRatios: against(modes.featuresWithFacets),
        totalErrors: [p, f, modes.featuresWithFacets].reduce((total, mode) => total + mode.oneConnection.errors.total + mode.underLoad.errors.total, 0),
      };
    } finally {
      await subgraphs.stop();
    }
  },

  renderSection(file) {
    const rows = file.entries.flatMap((entry) =>
      MODES.filter((mode) => entry.modes[mode]).map((mode) => {
        const data = entry.modes[mode]!;
        const named = (selections: readonly string[]) => selections.map((feature) => feature.split("(")[0]!.split(" ")[0]).join(", ");
        return [
          databaseLabel(entry.database),
          formatCount(entry.size),
          mode === "plain" ? "plain page" : mode === "features" ? `with ${named(entry.features)}` : `with ${named([...entry.features, ...(entry.resultFeatures ?? [])])}`,
          `${formatMs(data.oneConnection.latencyMs.p50)} / ${formatMs(data.oneConnection.latencyMs.p99)}`,
          `${formatMs(data.underLoad.latencyMs.p50)} / ${formatMs(data.underLoad.latencyMs.p99)}`,
          data.underLoad.requestsPerSecond.toFixed(0),
          data.underLoad.serverCpuMsPerRequest.toFixed(2),
          formatErrors(data.underLoad.errors),
        ];
      }),
    );
    const table = renderMarkdownTable(["database", "conversations", "page", "1 connection p50 / p99", "under load p50 / p99", "req/s under load", "subgraph CPU ms/request", "errors under load"], rows);
    const details = file.entries.map((entry) =>
      [
        `**${entryHeading(entry)}** — features / plain: 1 connection p50 ${formatRatio(entry.ratios.oneConnectionP50)}, p99 ${formatRatio(entry.ratios.oneConnectionP99)}; ` +
          `under load p50 ${formatRatio(entry.ratios.underLoadP50)}, p99 ${formatRatio(entry.ratios.underLoadP99)}, throughput ${formatRatio(entry.ratios.underLoadThroughput)}, subgraph CPU per request ${formatRatio(entry.ratios.cpuPerRequest)}.` +
          (entry.withFacetsRatios
            ? ` With facets too / plain: 1 connection p50 ${formatRatio(entry.withFacetsRatios.oneConnectionP50)}, p99 ${formatRatio(entry.withFacetsRatios.oneConnectionP99)}; under load p50 ${formatRatio(entry.withFacetsRatios.underLoadP50)}, throughput ${formatRatio(entry.withFacetsRatios.underLoadThroughput)}, subgraph CPU per request ${formatRatio(entry.withFacetsRatios.cpuPerRequest)}.`
            : "") +
          ` Errors: ${entry.totalErrors}.`,
        "",
        renderConditions(entry),
      ].join("\n"),
    );
    return [table, "", ...details.flatMap((detail) => [detail, ""])].join("\n");
  },
};
