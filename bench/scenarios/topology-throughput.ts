/**
 * The search path with one and with two instances of the search subgraph behind HAProxy
 * (issue 22, item 6), on the topology of deploy/local/topology.ts. Three ways to the same
 * searches, modes alternating in short rounds so drift on a shared machine hits all alike:
 *
 * - direct: straight to one search-subgraph instance (no HAProxy): the baseline;
 * - haproxy, 1 instance: HAProxy's search frontend with the second server disabled on its admin
 *   socket: the cost of the extra hop;
 * - haproxy, 2 instances: both servers enabled (round robin).
 *
 * Reported as throughput and latency at 1 connection and under load, and as ratios: 1 instance
 * behind HAProxy / direct (what the hop costs) and 2 instances / 1 instance (what a second
 * instance buys). On a machine with 2 cores a second instance cannot add CPU: the searches, the
 * other instance, PostgreSQL and HAProxy already share both cores, so that ratio shows the cost
 * of splitting the load, not a speed-up; on a host with spare cores per instance it would show
 * the scaling. The search result cache is off, so every search reaches the database.
 */
import { loadConfig } from "../../lib/config.js";
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { DEMO_ORGANIZATION } from "../../lib/demo-data/organization.js";
import { signToken } from "../../lib/tenancy/token.js";
import { startTopology } from "../../deploy/local/topology.js";
import { graphqlBody, poolRounds, runLoad, warmUp, type LoadResult } from "../load.js";
import { entryHeading, formatMs, formatRatio, renderConditions, type EntryBase } from "../report.js";
import { baseConditions, type Scenario } from "../scenario.js";
import { ratio } from "../stats.js";
import { DRILL_ENV } from "./topology-faults.js";

/** Ports 20300-20334: apart from `npm run topology`, the topology test and the fault drill. */
const BASE_PORT = 20_300;
const ROUNDS = 4;
const SEARCH = `query ThroughputSearch($input: SearchInput!) { search(input: $input) { hits { score item { __typename ... on Conversation { id title } } } providers { name status } } }`;
const QUERIES = ["deadlock", "order service", "billing retries", "kubernetes rollout", "postgres index", "rate limit", "cache invalidation", "memory leak", "onboarding", "release notes", "connection pool", "timeout", "migration", "latency", "incident"];

const MODES = ["direct", "haproxy1", "haproxy2"] as const;
type Mode = (typeof MODES)[number];
const MODE_LABEL: Record<Mode, string> = { direct: "direct to one instance (no HAProxy)", haproxy1: "HAProxy, 1 instance", haproxy2: "HAProxy, 2 instances" };

interface ModeResult {
  oneConnection: LoadResult;
  underLoad: LoadResult;
}

export interface TopologyThroughputEntry extends EntryBase {
  connections: number;
  modes: Record<Mode, ModeResult>;
  /** Requests each search server was given by HAProxy during the two-instance rounds. */
  split: { server: string; requests: number }[];
  ratios: {
    hopThroughput: number;
    hopOneConnectionP50: number;
    secondInstanceThroughput: number;
    secondInstanceUnderLoadP50: number;
  };
  errors: number;
}

export const topologyThroughputScenario: Scenario<TopologyThroughputEntry> = {
  name: "topology-throughput",
  title: "The search path with 1 and 2 search-subgraph instances behind HAProxy",
  async run(context) {
    const topology = await startTopology({ basePort: BASE_PORT, env: DRILL_ENV, log: (line) => context.log(`   ${line}`) });
    try {
      context.log(`   topology up in ${topology.startupMs} ms`);
      const auth = loadConfig({ JWT_SECRET: topology.jwtSecret }).auth;
      const token = await signToken({ userId: "throughput-user", organizationId: DEMO_ORGANIZATION.id, teamIds: [], role: "member" }, auth, "1d");
      const bodies = QUERIES.map((query) => graphqlBody(SEARCH, { input: { query, limit: 20, alpha: 0.5 } }));
      const urls: Record<Mode, string> = { direct: topology.instance("search", 1).url, haproxy1: topology.subgraphUrls.search, haproxy2: topology.subgraphUrls.search };
      const setInstances = async (mode: Mode) => {
        await topology.haproxy(`${mode === "haproxy1" ? "disable" : "enable"} server search/search-2`);
        if (mode === "haproxy2") await topology.waitUntilUp(["search-2"]);
      };
      const seconds = Math.max(2, context.options.durationSeconds / ROUNDS);
      const load = (mode: Mode, connections: number) => ({ url: urls[mode], token, bodies, connections, durationSeconds: seconds, timeoutSeconds: 30 });
      for (const mode of MODES) {
        await setInstances(mode);
        await warmUp(load(mode, 4), 2);
      }
      const sessionsOf = async () => new Map((await topology.servers()).filter((s) => s.backend === "search").map((s) => [s.server, s.sessions]));
      let splitBefore = await sessionsOf();
      const split = new Map<string, number>();
      const measured = async (connections: number): Promise<Record<Mode, LoadResult>> => {
        const rounds: Record<Mode, LoadResult[]> = { direct: [], haproxy1: [], haproxy2: [] };
        for (let round = 0; round < ROUNDS; round++) {
          for (const mode of round % 2 === 0 ? [...MODES] : [...MODES].reverse()) {
            await setInstances(mode);
            if (mode === "haproxy2") splitBefore = await sessionsOf();
            rounds[mode].push(await runLoad(load(mode, connections)));
            if (mode === "haproxy2") for (const [server, sessions] of await sessionsOf()) split.set(server, (split.get(server) ?? 0) + sessions - (splitBefore.get(server) ?? 0));
          }
        }
        return { direct: poolRounds(rounds.direct), haproxy1: poolRounds(rounds.haproxy1), haproxy2: poolRounds(rounds.haproxy2) };
      };
      const one = await measured(1);
      const many = await measured(context.options.connections);
      await setInstances("haproxy2");
      const modes = Object.fromEntries(MODES.map((mode) => [mode, { oneConnection: one[mode], underLoad: many[mode] }])) as Record<Mode, ModeResult>;
      for (const mode of MODES) {
        const { oneConnection, underLoad } = modes[mode];
        context.log(`   ${MODE_LABEL[mode]}: 1 connection p50 ${formatMs(oneConnection.latencyMs.p50)}; ${context.options.connections} connections ${underLoad.requestsPerSecond.toFixed(0)} req/s, p50 ${formatMs(underLoad.latencyMs.p50)}; errors ${oneConnection.errors.total + underLoad.errors.total}`);
      }
      return {
        database: "postgres",
        size: context.size,
        run: context.run,
        conditions: {
          ...baseConditions(context, {}),
          database: "PostgreSQL 15 primary + streaming hot standby through PgBouncer 1.18 (session mode); HAProxy 2.6",
          "demo conversations": 300,
          search: `conversations and documents, ${QUERIES.length} queries in turn, 20 hits with titles, alpha 0.5, search result cache off`,
          http: `straight to the search subgraph's tier (no gateway), 1 connection and ${context.options.connections} connections, ${ROUNDS} rounds of ${seconds} s per mode, modes alternating`,
        },
        corpus: context.corpus,
        profiles: [],
        connections: context.options.connections,
        modes,
        split: [...split].map(([server, requests]) => ({ server, requests })),
        ratios: {
          hopThroughput: ratio(modes.haproxy1.underLoad.requestsPerSecond, modes.direct.underLoad.requestsPerSecond, 2),
          hopOneConnectionP50: ratio(modes.haproxy1.oneConnection.latencyMs.p50, modes.direct.oneConnection.latencyMs.p50, 2),
          secondInstanceThroughput: ratio(modes.haproxy2.underLoad.requestsPerSecond, modes.haproxy1.underLoad.requestsPerSecond, 2),
          secondInstanceUnderLoadP50: ratio(modes.haproxy2.underLoad.latencyMs.p50, modes.haproxy1.underLoad.latencyMs.p50, 2),
        },
        errors: MODES.reduce((total, mode) => total + modes[mode].oneConnection.errors.total + modes[mode].underLoad.errors.total, 0),
      };
    } finally {
      await topology.stop();
    }
  },
  renderSection(file) {
    return file.entries
      .map((entry) =>
        [
          `### ${entryHeading(entry)}`,
          "",
          renderMarkdownTable(
            ["path", "1 connection p50 / p99", `${entry.connections} connections: req/s`, `${entry.connections} connections p50 / p99`, "errors"],
            MODES.map((mode) => {
              const data = entry.modes[mode];
              return [
                MODE_LABEL[mode],
                `${formatMs(data.oneConnection.latencyMs.p50)} / ${formatMs(data.oneConnection.latencyMs.p99)}`,
                data.underLoad.requestsPerSecond.toFixed(0),
                `${formatMs(data.underLoad.latencyMs.p50)} / ${formatMs(data.underLoad.latencyMs.p99)}`,
                String(data.oneConnection.errors.total + data.underLoad.errors.total),
              ];
            }),
          ),
          "",
          `The hop (HAProxy, 1 instance / direct): throughput ${formatRatio(entry.ratios.hopThroughput)}, 1 connection p50 ${formatRatio(entry.ratios.hopOneConnectionP50)}. ` +
            `A second instance (2 / 1, both behind HAProxy): throughput ${formatRatio(entry.ratios.secondInstanceThroughput)}, p50 under load ${formatRatio(entry.ratios.secondInstanceUnderLoadP50)}; ` +
            `HAProxy split the two-instance rounds ${entry.split.map((s) => `${s.server} ${s.requests}`).join(", ")}. ` +
            `On 2 cores a second instance adds no CPU (both instances, PostgreSQL and HAProxy share the same two cores): this ratio is the cost of splitting the load, not the scaling a host with spare cores would show.`,
          "",
          renderConditions(entry),
        ].join("\n"),
      )
      .join("\n\n");
  },
};
