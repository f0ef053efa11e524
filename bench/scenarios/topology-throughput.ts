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
import { addTierCpu, sampleTierCpu, tierCpuDelta, type TierCpuSample } from "../tier-cpu.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

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
  /**
   * Under load: CPU ms per completed search of each tier's processes (bench/tier-cpu.ts), their
   * share of the topology's CPU, and the share of the machine's busy CPU the topology had (the
   * rest was other work on the shared machine).
   */
  cpu: { msPerRequest: Record<string, number | null>; share: Record<string, number | null>; topologyShareOfMachine: number | null };
}

/** The tiers CPU is counted for, in report order. */
const CPU_TIERS = ["gateway", "haproxy", "search", "other subgraphs", "pgbouncer", "postgres primary", "postgres standby", "bench client"] as const;
const CPU_TIER_LABEL: Record<(typeof CPU_TIERS)[number], string> = {
  gateway: "gateways (2, idle: searches go straight to the search tier)",
  haproxy: "HAProxy",
  search: "search instances",
  "other subgraphs": "other subgraphs (2 × 3, idle but for health checks)",
  pgbouncer: "PgBouncer",
  "postgres primary": "PostgreSQL primary",
  "postgres standby": "PostgreSQL hot standby",
  "bench client": "the bench process and its load generator",
};

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
  /** os.loadavg() when the measured rounds ended (the start's is in the conditions). */
  loadAverageAtEnd: number[];
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
      // Each tier's root processes; PostgreSQL's postmasters daemonize, so their pids come from their data directories.
      const postmaster = (dataDir: string) => Number(fs.readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
      const pidsOf = (tiers: readonly string[]) => topology.instances.filter((instance) => tiers.includes(instance.tier)).map((instance) => instance.pid());
      const support = topology.supportPids();
      const tierRoots = {
        gateway: pidsOf(["gateway"]),
        haproxy: [support.haproxy],
        search: pidsOf(["search"]),
        "other subgraphs": pidsOf(["conversations", "knowledge-base", "external-search"]),
        pgbouncer: [support.pgbouncer],
        "postgres primary": [postmaster(topology.postgres.primary.dataDir)],
        "postgres standby": [postmaster(topology.postgres.standby.dataDir)],
        // This process's tree holds the instances, HAProxy and PgBouncer too: subtracted below.
        everything: [process.pid],
      };
      const cpuSpent: Partial<Record<Mode, TierCpuSample>> = {};
      const measured = async (connections: number, countCpu: boolean): Promise<Record<Mode, LoadResult>> => {
        const rounds: Record<Mode, LoadResult[]> = { direct: [], haproxy1: [], haproxy2: [] };
        for (let round = 0; round < ROUNDS; round++) {
          for (const mode of round % 2 === 0 ? [...MODES] : [...MODES].reverse()) {
            await setInstances(mode);
            if (mode === "haproxy2") splitBefore = await sessionsOf();
            const before = sampleTierCpu(tierRoots);
            rounds[mode].push(await runLoad(load(mode, connections)));
            const spent = tierCpuDelta(before, sampleTierCpu(tierRoots));
            if (countCpu) cpuSpent[mode] = cpuSpent[mode] ? addTierCpu(cpuSpent[mode]!, spent) : spent;
            if (mode === "haproxy2") for (const [server, sessions] of await sessionsOf()) split.set(server, (split.get(server) ?? 0) + sessions - (splitBefore.get(server) ?? 0));
          }
        }
        return { direct: poolRounds(rounds.direct), haproxy1: poolRounds(rounds.haproxy1), haproxy2: poolRounds(rounds.haproxy2) };
      };
      const one = await measured(1, false);
      const many = await measured(context.options.connections, true);
      const loadAverageAtEnd = os.loadavg().map((value) => Math.round(value * 100) / 100);
      await setInstances("haproxy2");
      const cpuOf = (mode: Mode): ModeResult["cpu"] => {
        const spent = cpuSpent[mode]!;
        const t = spent.tiers;
        const inTree = ["gateway", "haproxy", "search", "other subgraphs", "pgbouncer"].reduce((total, tier) => total + (t[tier] ?? 0), 0);
        const ms: Record<string, number | null> = { ...t, "bench client": t.everything === null || t.everything === undefined ? null : Math.max(0, t.everything - inTree) };
        delete ms.everything;
        const total = CPU_TIERS.reduce((sum, tier) => sum + (ms[tier] ?? 0), 0);
        const completed = many[mode].completed;
        return {
          msPerRequest: Object.fromEntries(CPU_TIERS.map((tier) => [tier, ms[tier] === null || completed === 0 ? null : Math.round((ms[tier]! / completed) * 1000) / 1000])),
          share: Object.fromEntries(CPU_TIERS.map((tier) => [tier, ms[tier] === null || total === 0 ? null : Math.round((ms[tier]! / total) * 1000) / 1000])),
          topologyShareOfMachine: spent.machineBusyMs ? Math.round((total / spent.machineBusyMs) * 1000) / 1000 : null,
        };
      };
      const modes = Object.fromEntries(MODES.map((mode) => [mode, { oneConnection: one[mode], underLoad: many[mode], cpu: cpuOf(mode) }])) as Record<Mode, ModeResult>;
      for (const mode of MODES) {
        const { oneConnection, underLoad } = modes[mode];
        context.log(`   ${MODE_LABEL[mode]}: 1 connection p50 ${formatMs(oneConnection.latencyMs.p50)}; ${context.options.connections} connections ${underLoad.requestsPerSecond.toFixed(0)} req/s, p50 ${formatMs(underLoad.latencyMs.p50)}; errors ${oneConnection.errors.total + underLoad.errors.total}`);
        const cpu = modes[mode].cpu;
        context.log(`     CPU ms per search: ${CPU_TIERS.map((tier) => `${tier} ${cpu.msPerRequest[tier] ?? "?"}`).join(", ")}; the topology had ${cpu.topologyShareOfMachine === null ? "?" : Math.round(cpu.topologyShareOfMachine * 100)}% of the machine's busy CPU`);
      }
      context.log(`   load average at end ${loadAverageAtEnd.join(" / ")}`);
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
        loadAverageAtEnd,
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
          ...(entry.modes.direct.cpu
            ? [
                `Where the time goes under load: CPU ms per search of each tier's processes (/proc/<pid>/stat over the measured rounds, divided by the searches completed), and its share of the topology's CPU. Load average ${entry.loadAverageAtEnd?.join(" / ") ?? "?"} at the end.`,
                "",
                renderMarkdownTable(
                  ["tier", ...MODES.map((mode) => MODE_LABEL[mode])],
                  [
                    ...CPU_TIERS.map((tier) => [
                      CPU_TIER_LABEL[tier],
                      ...MODES.map((mode) => {
                        const cpu = entry.modes[mode].cpu;
                        const ms = cpu.msPerRequest[tier];
                        const share = cpu.share[tier];
                        return ms === null || ms === undefined ? "?" : `${ms.toFixed(2)} ms (${Math.round((share ?? 0) * 100)}%)`;
                      }),
                    ]),
                    ["all tiers", ...MODES.map((mode) => `${CPU_TIERS.reduce((sum, tier) => sum + (entry.modes[mode].cpu.msPerRequest[tier] ?? 0), 0).toFixed(2)} ms`)],
                    ["the topology's share of the machine's busy CPU", ...MODES.map((mode) => (entry.modes[mode].cpu.topologyShareOfMachine === null ? "?" : `${Math.round(entry.modes[mode].cpu.topologyShareOfMachine! * 100)}%`))],
                  ],
                ),
                "",
              ]
            : []),
          renderConditions(entry),
        ].join("\n"),
      )
      .join("\n\n");
  },
};
