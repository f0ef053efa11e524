/**
 * Where a search's throughput goes (issue 12): the same searches measured three ways in one run,
 * on the same corpus, at the same concurrency.
 *
 * 1. SQL ceiling: the statements one search sends, captured at the `pg` client while the search
 *    subgraph answers each query of the set one at a time (bench/sql-capture.ts: whatever
 *    statements, with parameters, per connection, transaction control and set_config included),
 *    then replayed with plain `pg` over N connections, each replaying whole searches in order.
 *    Nothing but PostgreSQL and the wire protocol is in the way: no search can be faster.
 * 2. The search subgraph alone over HTTP: the same page of hits with titles, which it answers
 *    itself (the title @provides). Until 2026-12-01T21:00 this phase asked ids only, so it did
 *    one statement less than the gateway phase (entries before then compare unlike pages).
 * 3. The gateway (Rust planner, in-flight merging off) with that page: its planner takes the
 *    titles from the search subgraph's answer, no `_entities` fetch to the conversations subgraph.
 * Plus the keyword statements replayed alone in their tenant scopes: the keyword share of
 * PostgreSQL's CPU per search.
 *
 * Phases run baseline-before-and-after (ceiling, subgraph, gateway, keyword, gateway, subgraph,
 * ceiling) so drift on the shared machine shows and hits every phase alike; ratios use the mean
 * of each phase's two runs. CPU per search comes from this process (Node) and from /proc for
 * this machine's PostgreSQL (bench/postgres-cpu.ts). On PGlite there is no `pg` client to capture
 * at and no separate server: only the gateway/subgraph ratio is measured there.
 *
 * The query log's batched INSERTs are left out of the capture (flushed between captured
 * searches): under load they cost one statement per up to 200 searches.
 */
import os from "node:os";
import pg from "pg";
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { queryPool } from "../corpus.js";
import { graphqlBody, runLoad, warmUp, type LoadOptions } from "../load.js";
import { postgresCpuDelta, samplePostgresCpu, type PostgresCpuSample } from "../postgres-cpu.js";
import { profileWhile, type ProfileSummary } from "../profile.js";
import { DIRECT_SEARCH_WITH_TITLES, GATEWAY_SEARCH } from "../queries.js";
import { entryHeading, fixed, formatMs, formatPercent, formatRatio, formatRate, renderConditions, renderProfiles, renderWarnings, type EntryBase, type TargetResult } from "../report.js";
import { artifactName, artifactPath, baseConditions, type Scenario } from "../scenario.js";
import {
  isControlStatement,
  isKeywordStatement,
  keywordOnly,
  openReplayClients,
  recordStatements,
  replaySearches,
  statementShape,
  type CapturedSearch,
  type ConnectionTarget,
  type StatementRecorder,
} from "../sql-capture.js";
import { benchConfig, benchToken, settle, startBenchGateway, startBenchSubgraphs, type BenchSubgraphs, type ServerWarnings } from "../stack.js";
import { mean, ratio, round } from "../stats.js";

/** Goal (a): the search subgraph at ≥ 0.9 of the SQL ceiling of its own statements. */
export const SUBGRAPH_VS_CEILING_TARGET = 0.9;
/** Goal (b): the gateway path at ≥ 0.8 of the search subgraph alone. */
export const GATEWAY_VS_SUBGRAPH_TARGET = 0.8;
/** The issue's query set: 200 realistic queries from the corpus's pool. */
const QUERIES = 200;
const LIMIT = 20;
/** Provider, subgraph-call and client timeouts: no search is cut short into a cheap empty answer. */
const LONG_TIMEOUT_MS = 60_000;

export type SearchPathPhase = "sql-ceiling" | "keyword-only" | "subgraph" | "gateway";

export interface SearchPathRun {
  phase: SearchPathPhase;
  name: string;
  connections: number;
  durationSeconds: number;
  completed: number;
  searchesPerSecond: number;
  latencyMs: { p50: number; p99: number; mean: number };
  errors: number;
  firstError: string | null;
  /** CPU of this process per search: the servers (or the replaying client) and the pg driver. */
  nodeCpuMsPerSearch: number;
  /** CPU of the benchmark database's PostgreSQL backends per search (this machine's PostgreSQL); null where unreadable. */
  postgresCpuMsPerSearch: number | null;
  /** CPU of every postgres process on this machine per search: includes others' work on the shared server. */
  machinePostgresCpuMsPerSearch: number | null;
  hitsPerResponse: number | null;
  /**
   * Statements every pg client of this process sent during the phase, per completed search (the
   * recorder counts them all; PostgreSQL only): under load, what a search really sends, next to
   * what was captured one search at a time.
   */
  statementsPerSearch: number | null;
  /** The most frequent statement shapes of the phase, per completed search (PostgreSQL only). */
  topStatements: { shape: string; perSearch: number }[];
  backlogSeconds: number;
  /** 1-minute load average when the phase started. */
  loadAverage: number;
}

/** What the client of a phase measured, an HTTP load or a SQL replay: the rest of a run is measured around it. */
type ClientMeasurement = Pick<SearchPathRun, "durationSeconds" | "completed" | "searchesPerSecond" | "latencyMs" | "errors" | "firstError" | "nodeCpuMsPerSearch" | "hitsPerResponse">;

export interface CaptureSummary {
  searches: number;
  statementsPerSearch: { min: number; mean: number; max: number };
  connectionsPerSearch: number;
  keywordStatementsPerSearch: number;
  controlStatementsPerSearch: number;
  /** The first captured search's statements, shortened, per connection: what the ceiling replays. */
  example: string[][];
}

export interface SearchPathEntry extends EntryBase {
  queries: number;
  capture: CaptureSummary | null;
  runs: SearchPathRun[];
  ratios: {
    subgraphVsCeiling: number;
    gatewayVsSubgraph: number;
    gatewayVsCeiling: number;
    /** Second run / first run of each phase: how far the machine drifted. */
    ceilingDrift: number;
    subgraphDrift: number;
    gatewayDrift: number;
    /** PostgreSQL CPU per search of the keyword statements alone / of the whole replay. */
    keywordShareOfPostgresCpu: number;
  };
  postgresCpuMsPerSearch: { ceiling: number | null; keywordOnly: number | null; subgraph: number | null; gateway: number | null };
  totalErrors: number;
  serverWarnings: ServerWarnings;
}

export const searchPathScenario: Scenario<SearchPathEntry> = {
  name: "search-path",
  title: "Search path against its SQL ceiling",
  async run(context) {
    const { database } = context.bench;
    const config = benchConfig({ cacheTtlSeconds: 0, providerTimeoutMs: LONG_TIMEOUT_MS, upstreamTimeoutMs: LONG_TIMEOUT_MS });
    const subgraphs = await startBenchSubgraphs(database, config);
    const gateway = await startBenchGateway(subgraphs, { queryPlanner: "rust", deduplicateInflightRequests: false }).catch(async (error) => {
      await subgraphs.stop();
      throw error;
    });
    const profiles: ProfileSummary[] = [];
    let monitor: pg.Client | null = null;
    // Installed for the whole scenario (PostgreSQL only): it captures the searches below and
    // counts what every phase sends. Removed in `finally`: nothing of it outlives the benchmark.
    const recorder: StatementRecorder | null = database.kind === "postgres" ? recordStatements() : null;
    try {
      const token = await benchToken(config);
      const queries = queryPool(context.size, QUERIES);
      // alpha explicit: the default is keyword only with the bundled models, and this measures both providers.
      const inputs = queries.map((query) => ({ query, limit: LIMIT, alpha: 0.5 }));
      // The subgraph alone answers the same page, titles included (its @provides): goal (c) compares
      // like with like, and the ceiling replays the title statement as one of the search's own.
      const directBodies = inputs.map((input) => graphqlBody(DIRECT_SEARCH_WITH_TITLES, { input }));
      const gatewayBodies = inputs.map((input) => graphqlBody(GATEWAY_SEARCH, { input }));
      const connections = context.options.connections;
      const seconds = context.options.durationSeconds;
      const warmSeconds = Math.min(3, Math.max(0.5, seconds / 3));
      const load = (url: string, bodies: string[], durationSeconds = seconds): LoadOptions => ({ url, token, bodies, connections, durationSeconds, timeoutSeconds: LONG_TIMEOUT_MS / 1000 });

      // The page must really hold titles through the gateway, or the gateway phase measures nothing.
      const page = await post(gateway.url, token, gatewayBodies[0]!);
      const hits = page.data?.search?.hits ?? [];
      if (hits.length === 0 || hits.some((hit) => typeof hit.item?.title !== "string")) throw new Error(`the gateway search returned no page of hits with titles: ${JSON.stringify(page).slice(0, 300)}`);

      let captured: CapturedSearch[] = [];
      let target: ConnectionTarget | null = null;
      if (recorder) {
        ({ captured, target } = await captureSearches(recorder, subgraphs, token, directBodies));
        monitor = new pg.Client({ ...target, application_name: "bench-cpu-monitor" });
        monitor.on("error", () => undefined);
        await monitor.connect();
        context.log(`  search-path: captured ${captured.length} searches, ${fixed(mean(captured.map(countStatements)), 1)} statements each`);
      }

      const runs: SearchPathRun[] = [];
      const perSearch = (ms: number | null | undefined, completed: number) => (typeof ms === "number" && completed > 0 ? round(ms / completed, 3) : null);
      /**
       * One measured phase, whichever client drives it: `work` reports what the client saw;
       * around it, what PostgreSQL spent and was sent. Its run is recorded and logged.
       */
      const measurePhase = async (phase: SearchPathPhase, name: string, backlogSeconds: number, work: () => Promise<ClientMeasurement>) => {
        const loadAverage = round(os.loadavg()[0] ?? 0, 2);
        const before: PostgresCpuSample | null = monitor ? await samplePostgresCpu(monitor) : null;
        // After the sample: the monitor's own statement is not the phase's.
        const sentBefore = recorder?.sent() ?? 0;
        recorder?.beginTally();
        const client = await work();
        const statements = recorder ? recorder.sent() - sentBefore : null;
        const tally = recorder?.endTally() ?? [];
        const after = monitor && before ? await samplePostgresCpu(monitor) : null;
        const delta = before && after ? postgresCpuDelta(before, after) : null;
        // Only the summary's three figures: a client's own latency record may carry more.
        const latency = client.latencyMs;
        const run: SearchPathRun = {
          phase,
          name,
          connections,
          ...client,
          latencyMs: { p50: latency.p50, p99: latency.p99, mean: latency.mean },
          postgresCpuMsPerSearch: perSearch(delta?.databaseMs, client.completed),
          machinePostgresCpuMsPerSearch: perSearch(delta?.machineMs, client.completed),
          statementsPerSearch: perSearch(statements, client.completed),
          topStatements: topStatements(tally, client.completed),
          backlogSeconds,
          loadAverage,
        };
        runs.push(run);
        logRun(context.log, run);
      };

      const measureHttp = async (phase: "subgraph" | "gateway", name: string) => {
        const url = phase === "subgraph" ? subgraphs.searchServer.url : gateway.url;
        const bodies = phase === "subgraph" ? directBodies : gatewayBodies;
        await warmUp(load(url, bodies), warmSeconds);
        const backlogSeconds = await settle(subgraphs, database);
        await measurePhase(phase, name, backlogSeconds, async () => {
          const result = await runLoad(load(url, bodies));
          return {
            durationSeconds: result.durationSeconds,
            completed: result.completed,
            searchesPerSecond: result.requestsPerSecond,
            latencyMs: result.latencyMs,
            errors: result.errors.total,
            firstError: result.errors.first,
            nodeCpuMsPerSearch: result.serverCpuMsPerRequest,
            hitsPerResponse: result.hitsPerResponse,
          };
        });
      };

      const measureReplay = async (phase: "sql-ceiling" | "keyword-only", name: string, searches: CapturedSearch[]) => {
        if (!target) return;
        if (searches.every((search) => search.connections.length === 0)) {
          context.log(`  ${name}: nothing to replay (no such statement was captured)`);
          return;
        }
        const backlogSeconds = await settle(subgraphs, database);
        const replay = await openReplayClients(target, connections);
        try {
          await replaySearches(replay.clients, searches, warmSeconds);
          await measurePhase(phase, name, backlogSeconds, async () => {
            const { durationSeconds, completed, searchesPerSecond, latencyMs, errors, firstError, nodeCpuMsPerSearch } = await replaySearches(replay.clients, searches, seconds);
            // Replayed SQL returns rows, not a page: there are no hits to count.
            return { durationSeconds, completed, searchesPerSecond, latencyMs, errors, firstError, nodeCpuMsPerSearch, hitsPerResponse: null };
          });
        } finally {
          await replay.close();
        }
      };

      await measureReplay("sql-ceiling", "SQL ceiling: captured statements replayed with plain pg (before)", captured);
      await measureHttp("subgraph", "search subgraph alone, direct search (before)");
      await measureHttp("gateway", "gateway, page of hits with titles (before)");
      await measureReplay("keyword-only", "keyword statements alone, in their tenant scopes", keywordOnly(captured));
      await measureHttp("gateway", "gateway, page of hits with titles (after)");
      await measureHttp("subgraph", "search subgraph alone, direct search (after)");
      await measureReplay("sql-ceiling", "SQL ceiling: captured statements replayed with plain pg (after)", captured);

      const ratios = computeRatios(runs);
      if (context.options.profile) {
        // Profiled in a short run of its own after the measurements (sampling costs throughput):
        // the subgraph phase, where goal (a) is won or lost.
        const profileSeconds = Math.min(5, seconds);
        const file = artifactName(context, "search-path", "-subgraph.cpuprofile");
        const { profile } = await profileWhile(`search subgraph alone under ${connections} connections for ${profileSeconds} s (both subgraphs and the pg driver share this process)`, artifactPath(context, file), () =>
          runLoad(load(subgraphs.searchServer.url, directBodies, profileSeconds)),
        );
        profiles.push(profile);
        // And the gateway phase (goal c): the gateway, both subgraphs and the pg driver in one
        // process, so the profile shows what the gateway adds on top of the subgraph's.
        const gatewayFile = artifactName(context, "search-path", "-gateway.cpuprofile");
        const gatewayProfile = await profileWhile(`gateway, page of hits with titles, under ${connections} connections for ${profileSeconds} s (gateway, both subgraphs and the pg driver share this process)`, artifactPath(context, gatewayFile), () =>
          runLoad(load(gateway.url, gatewayBodies, profileSeconds)),
        );
        profiles.push(gatewayProfile.profile);
      }

      const byPhase = (phase: SearchPathPhase) => meanOrNull(runs.filter((run) => run.phase === phase).map((run) => run.postgresCpuMsPerSearch));
      return {
        database: context.bench.kind,
        size: context.size,
        run: context.run,
        conditions: baseConditions(context, {
          connections,
          "seconds per phase": seconds,
          "warm-up per phase": `${warmSeconds} s`,
          queries: `${queries.length} queries from the corpus's query pool, in turn, limit ${LIMIT}, alpha 0.5 (both providers)`,
          "result cache": "off (SEARCH_CACHE_TTL_SECONDS=0): every search does real work",
          gateway: "Rust planner, in-flight merging off",
          capture: database.kind === "postgres" ? "pg.Client.prototype.query wrapped while each query is searched once, one at a time, through the search subgraph (after a warm-up); the query log's batched INSERTs excluded" : "not possible on PGlite (no pg client, no separate server)",
          replay: `one pg.Client per connection, whole searches in order on one connection, each statement named or unnamed as the product sent it`,
          "PostgreSQL CPU": "utime+stime from /proc/<pid>/stat of this machine's PostgreSQL backends serving the benchmark database (all postgres processes shown apart)",
          order: "ceiling, subgraph, gateway, keyword-only, gateway, subgraph, ceiling (ratios from each phase's mean)",
          timeouts: `provider, gateway-to-subgraph and client timeouts ${LONG_TIMEOUT_MS / 1000} s`,
          embedder: "feature hashing (256-d)",
          topology: "gateway, both subgraphs and the replaying client in this Node process; autocannon in a child process; PostgreSQL on the same 2-core machine",
        }),
        corpus: context.corpus,
        profiles,
        queries: queries.length,
        capture: captured.length > 0 ? summarizeCapture(captured) : null,
        runs,
        ratios,
        postgresCpuMsPerSearch: { ceiling: byPhase("sql-ceiling"), keywordOnly: byPhase("keyword-only"), subgraph: byPhase("subgraph"), gateway: byPhase("gateway") },
        totalErrors: runs.reduce((sum, run) => sum + run.errors, 0),
        serverWarnings: subgraphs.warnings,
      };
    } finally {
      recorder?.dispose();
      await monitor?.end().catch(() => undefined);
      await gateway.stop();
      await subgraphs.stop();
    }
  },

  renderSection(file) {
    return file.entries
      .map((entry) => {
        const rows = entry.runs.map((run) => [
          run.name,
          formatRate(run.searchesPerSecond),
          formatMs(run.latencyMs.p50),
          formatMs(run.latencyMs.p99),
          run.errors === 0 ? "0" : `${run.errors}${run.firstError ? ` (${run.firstError.slice(0, 80)})` : ""}`,
          formatMs(run.nodeCpuMsPerSearch),
          fixed(run.statementsPerSearch, 1),
          formatMs(run.postgresCpuMsPerSearch),
          formatMs(run.machinePostgresCpuMsPerSearch),
          fixed(run.loadAverage, 2),
        ]);
        const table = renderMarkdownTable(["phase", "searches/s", "p50", "p99", "errors", "Node CPU per search (this process)", "statements per search (all pg clients)", "PostgreSQL CPU per search (benchmark database)", "all postgres processes per search", "load average (1 min)"], rows, {
          align: ["left", "right", "right", "right", "right", "right", "right", "right", "right", "right"],
        });
        const capture = entry.capture;
        const example = capture
          ? [
              `What one search sends (captured per search, ${capture.searches} searches): ${fixed(capture.statementsPerSearch.mean, 1)} statements on average (${capture.statementsPerSearch.min}–${capture.statementsPerSearch.max}) over ${fixed(capture.connectionsPerSearch, 1)} connections, ${fixed(capture.controlStatementsPerSearch, 1)} of them transaction control or set_config, ${fixed(capture.keywordStatementsPerSearch, 1)} keyword. The first search's, per connection:`,
              "",
              ...capture.example.flatMap((statements, index) => statements.map((shape, position) => `${position === 0 ? `${index + 1}.` : "   "} \`${shape.replaceAll("`", "'")}\``)),
            ].join("\n")
          : "No SQL capture on this database (the ceiling needs a PostgreSQL server and its pg client).";
        const cpu = entry.postgresCpuMsPerSearch;
        return [
          `### ${entryHeading(entry)}`,
          "",
          table,
          "",
          `Ratios (same process, same run, mean of each phase's two runs): search subgraph / SQL ceiling ${formatRatio(entry.ratios.subgraphVsCeiling)} (goal ≥ ${SUBGRAPH_VS_CEILING_TARGET}); ` +
            `gateway / search subgraph ${formatRatio(entry.ratios.gatewayVsSubgraph)} (goal ≥ ${GATEWAY_VS_SUBGRAPH_TARGET}); gateway / ceiling ${formatRatio(entry.ratios.gatewayVsCeiling)}. ` +
            `Drift (after / before): ceiling ${formatRatio(entry.ratios.ceilingDrift)}, subgraph ${formatRatio(entry.ratios.subgraphDrift)}, gateway ${formatRatio(entry.ratios.gatewayDrift)}. ` +
            `PostgreSQL CPU per search (this machine's PostgreSQL): replay ${formatMs(cpu.ceiling)}, keyword statements alone ${formatMs(cpu.keywordOnly)} (${formatPercent(entry.ratios.keywordShareOfPostgresCpu)} of the replay's), subgraph ${formatMs(cpu.subgraph)}, gateway ${formatMs(cpu.gateway)} (its \`_entities\` title load included).`,
          "",
          example,
          "",
          renderStatementsUnderLoad(entry.runs),
          "",
          renderWarnings(entry.serverWarnings),
          "",
          renderProfiles(entry.profiles),
          "",
          renderConditions(entry),
        ].join("\n");
      })
      .join("\n\n");
  },

  targets(file) {
    return file.entries.flatMap((entry): TargetResult[] => {
      const heading = entryHeading(entry);
      const phaseMean = (phase: SearchPathPhase, pick: (run: SearchPathRun) => number | null) => meanOrNull(entry.runs.filter((run) => run.phase === phase).map(pick));
      const node = (phase: SearchPathPhase) => phaseMean(phase, (run) => run.nodeCpuMsPerSearch);
      const errors = entry.totalErrors > 0 ? `; ${entry.totalErrors} errors across the runs` : "";
      const cpu = entry.postgresCpuMsPerSearch;
      const top = entry.profiles[0]?.byPackage.slice(0, 4).map((item) => `${item.name} ${item.selfPercent}%`).join(", ");
      const gatewayTop = entry.profiles[1]?.byPackage.slice(0, 6).map((item) => `${item.name} ${item.selfPercent}%`).join(", ");
      const target = (name: string, value: number, goal: number, measured: string, evidence: string): TargetResult => {
        const ok = typeof value === "number" && Number.isFinite(value) && value > 0;
        return {
          target: `${name} (${heading})`,
          status: !ok ? "not measured" : value >= goal ? "met" : "missed",
          measured: ok ? `${measured}${errors}` : "–",
          margin: !ok ? (entry.capture ? "no successful runs to compare" : "PostgreSQL only: no pg client to capture at") : value >= goal ? `${fixed((value - goal) * 100, 0)} points above` : `${fixed((goal - value) * 100, 0)} points short (needs ${formatRatio(goal / value)} the throughput)`,
          evidence,
        };
      };
      return [
        target(
          `Search subgraph ≥ ${SUBGRAPH_VS_CEILING_TARGET} of the SQL ceiling of its own statements`,
          entry.ratios.subgraphVsCeiling,
          SUBGRAPH_VS_CEILING_TARGET,
          `${fixed(entry.ratios.subgraphVsCeiling, 2)} (${formatRate(phaseMean("subgraph", (run) => run.searchesPerSecond))} vs ${formatRate(phaseMean("sql-ceiling", (run) => run.searchesPerSecond))} searches/s)`,
          `PostgreSQL CPU per search ${formatMs(cpu.ceiling)} replayed vs ${formatMs(cpu.subgraph)} through the subgraph, keyword statements ${formatPercent(entry.ratios.keywordShareOfPostgresCpu)} of it; ` +
            `Node CPU per search ${formatMs(node("subgraph"))} in the subgraph vs ${formatMs(node("sql-ceiling"))} replaying` +
            (top ? `; subgraph profile by package: ${top}` : ""),
        ),
        target(
          `Gateway path ≥ ${GATEWAY_VS_SUBGRAPH_TARGET} of the search subgraph alone (page of hits with titles)`,
          entry.ratios.gatewayVsSubgraph,
          GATEWAY_VS_SUBGRAPH_TARGET,
          `${fixed(entry.ratios.gatewayVsSubgraph, 2)} (${formatRate(phaseMean("gateway", (run) => run.searchesPerSecond))} vs ${formatRate(phaseMean("subgraph", (run) => run.searchesPerSecond))} searches/s)`,
          `Node CPU per search ${formatMs(node("gateway"))} through the gateway vs ${formatMs(node("subgraph"))} direct; PostgreSQL CPU per search ${formatMs(cpu.gateway)} vs ${formatMs(cpu.subgraph)} (the title load's SQL)` +
            (gatewayTop ? `; gateway-path profile by package: ${gatewayTop}` : ""),
        ),
      ];
    });
  },
};

interface SearchResponse {
  data?: { search?: { providers?: { name: string; status: string; error: string | null }[]; hits?: { item?: { id?: string; title?: string } }[] } };
  errors?: unknown[];
}

async function post(url: string, token: string, body: string): Promise<SearchResponse> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body });
  const json = (await response.json()) as SearchResponse;
  if (!response.ok || json.errors) throw new Error(`the benchmark search fails (HTTP ${response.status}): ${JSON.stringify(json.errors ?? json).slice(0, 500)}`);
  return json;
}

/**
 * Each query searched once through the search subgraph, one at a time, with the statement
 * recorder open only while that search is in flight. The query log is flushed before each
 * window opens, so its batched writes never land in a search's capture.
 */
async function captureSearches(recorder: StatementRecorder, subgraphs: BenchSubgraphs, token: string, bodies: string[]): Promise<{ captured: CapturedSearch[]; target: ConnectionTarget }> {
  // Warm first: the keyword provider caches collection statistics, plans and pools settle.
  for (const body of bodies.slice(0, 3)) await post(subgraphs.searchServer.url, token, body);
  const captured: CapturedSearch[] = [];
  for (const body of bodies) {
    await subgraphs.search.queryLog.flush();
    recorder.begin();
    let response: SearchResponse;
    try {
      response = await post(subgraphs.searchServer.url, token, body);
    } finally {
      captured.push(recorder.end());
    }
    const degraded = response.data?.search?.providers?.find((provider) => provider.status === "TIMEOUT" || provider.status === "ERROR");
    if (degraded) throw new Error(`provider ${degraded.name} answered ${degraded.status} while capturing: ${degraded.error ?? ""}`);
  }
  const target = recorder.target();
  if (!target || captured.every((search) => search.connections.length === 0)) throw new Error("no SQL statement was seen at the pg client while searching");
  return { captured, target };
}

function countStatements(search: CapturedSearch): number {
  return search.connections.reduce((sum, statements) => sum + statements.length, 0);
}

function summarizeCapture(captured: CapturedSearch[]): CaptureSummary {
  const counts = captured.map(countStatements);
  const count = (predicate: (text: string) => boolean) => mean(captured.map((search) => search.connections.flat().filter((statement) => predicate(statement.text)).length));
  return {
    searches: captured.length,
    statementsPerSearch: { min: Math.min(...counts), mean: round(mean(counts), 2), max: Math.max(...counts) },
    connectionsPerSearch: round(mean(captured.map((search) => search.connections.length)), 2),
    keywordStatementsPerSearch: round(count(isKeywordStatement), 2),
    controlStatementsPerSearch: round(count(isControlStatement), 2),
    example: (captured[0]?.connections ?? []).map((statements) => statements.map((statement) => statementShape(statement.text))),
  };
}

function topStatements(tally: { shape: string; count: number }[], completed: number): { shape: string; perSearch: number }[] {
  return tally.slice(0, 8).map(({ shape, count }) => ({ shape, perSearch: round(count / Math.max(completed, 1), 2) }));
}

function meanOrNull(values: (number | null)[]): number | null {
  const present = values.filter((value): value is number => typeof value === "number" && Number.isFinite(value));
  return present.length > 0 ? round(mean(present), 3) : null;
}

function computeRatios(runs: SearchPathRun[]): SearchPathEntry["ratios"] {
  const rates = (phase: SearchPathPhase) => runs.filter((run) => run.phase === phase).map((run) => run.searchesPerSecond);
  const rate = (phase: SearchPathPhase) => mean(rates(phase));
  const drift = (phase: SearchPathPhase) => ratio(rates(phase)[1], rates(phase)[0]);
  const cpu = (phase: SearchPathPhase) => meanOrNull(runs.filter((run) => run.phase === phase).map((run) => run.postgresCpuMsPerSearch)) ?? undefined;
  return {
    subgraphVsCeiling: ratio(rate("subgraph"), rate("sql-ceiling")),
    gatewayVsSubgraph: ratio(rate("gateway"), rate("subgraph")),
    gatewayVsCeiling: ratio(rate("gateway"), rate("sql-ceiling")),
    ceilingDrift: drift("sql-ceiling"),
    subgraphDrift: drift("subgraph"),
    gatewayDrift: drift("gateway"),
    keywordShareOfPostgresCpu: ratio(cpu("keyword-only"), cpu("sql-ceiling")),
  };
}

/** What the HTTP phases sent per search under load, by statement shape: where extra statements come from. */
function renderStatementsUnderLoad(runs: SearchPathRun[]): string {
  const http = runs.filter((run) => (run.phase === "subgraph" || run.phase === "gateway") && (run.topStatements?.length ?? 0) > 0);
  if (http.length === 0) return "";
  return [
    "Statements per search under load, by shape (every pg client of this process, the phase's first run):",
    "",
    ...(["subgraph", "gateway"] as const).flatMap((phase) => {
      const run = http.find((candidate) => candidate.phase === phase);
      return run ? [`- ${run.name}: ${run.topStatements.map((item) => `${fixed(item.perSearch, 2)} × \`${item.shape.replaceAll("`", "'")}\``).join("; ")}`] : [];
    }),
  ].join("\n");
}

function logRun(log: (line: string) => void, run: SearchPathRun): void {
  log(
    `  ${run.name}: ${formatRate(run.searchesPerSecond)} searches/s, p50 ${formatMs(run.latencyMs.p50)}, p99 ${formatMs(run.latencyMs.p99)}, ` +
      `Node CPU ${formatMs(run.nodeCpuMsPerSearch)}/search, PostgreSQL CPU ${formatMs(run.postgresCpuMsPerSearch)}/search, errors ${run.errors}${run.firstError ? ` (${run.firstError.slice(0, 120)})` : ""}`,
  );
}
