/**
 * `npm run bench -- [--scenario gateway|latency|batching|ingestion|soak|indexing|hostile|tenant-scope|document-ingestion|mixed-search|search-path|keyword-pruning|suggestions|search-facets|search-features|typo-tolerance|defer|topology-faults|topology-throughput|fair-shares|all] [--sizes 1000,10000,100000]
 *   [--database pglite|postgres|both|auto] [--duration <s>] [--connections <n>] [--out bench/results]
 *   [--soak-duration <s>] [--embed-conversations <n>] [--no-profile] [--summary-only] [--keep-database] [--reuse-database <name>]`
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { ConfigError } from "../lib/config.js";
import type { DatabaseKind } from "./database.js";

export const SCENARIO_NAMES = ["gateway", "batching", "latency", "soak", "ingestion", "indexing", "hostile", "tenant-scope", "document-ingestion", "mixed-search", "search-path", "keyword-pruning", "suggestions", "search-facets", "search-features", "typo-tolerance", "defer", "topology-faults", "topology-throughput", "fair-shares"] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

export interface BenchOptions {
  scenarios: ScenarioName[];
  /** Corpus sizes in conversations; every selected scenario runs at each. */
  sizes: number[];
  /** "auto" resolves to both when PostgreSQL answers, else PGlite alone. */
  databases: DatabaseKind[] | "auto";
  postgresUrl: string;
  /** Seconds of measured load per configuration (warm-ups come on top). */
  durationSeconds: number;
  /** The soak's measured length: 60 s unless --soak-duration or --duration says otherwise. */
  soakDurationSeconds: number;
  connections: number;
  outDir: string;
  /** Conversations embedded with the local model in the ingestion scenario (it is slow: ~15 chunks/s). */
  embedConversations: number;
  /** Take CPU profiles where a target is missed. */
  profile: boolean;
  /** Only rebuild SUMMARY.md and the plots from the JSON already in the results folder. */
  summaryOnly: boolean;
  /** Leave the throwaway database (PostgreSQL database or PGlite folder) in place for inspection; its location is printed. */
  keepDatabase: boolean;
  /**
   * A PostgreSQL database an earlier run kept (--keep-database), used as it is instead of a new
   * one: its corpus is not loaded again (10,000 conversations take minutes) and it is kept.
   */
  reuseDatabase: string | null;
  /** The command line, recorded in the results. */
  command: string;
}

export function parseBenchArgs(argv: string[], postgresUrl: string): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      scenario: { type: "string", default: "all" },
      sizes: { type: "string", default: "1000,10000,100000" },
      database: { type: "string", default: "auto" },
      duration: { type: "string" },
      "soak-duration": { type: "string" },
      connections: { type: "string", default: "50" },
      out: { type: "string", default: "bench/results" },
      "embed-conversations": { type: "string", default: "200" },
      "no-profile": { type: "boolean", default: false },
      "summary-only": { type: "boolean", default: false },
      "keep-database": { type: "boolean", default: false },
      "reuse-database": { type: "string" },
    },
  });
  const scenarios = values.scenario === "all" ? [...SCENARIO_NAMES] : values.scenario.split(",").map((name) => name.trim());
  for (const name of scenarios) {
    if (!(SCENARIO_NAMES as readonly string[]).includes(name)) throw new ConfigError("--scenario", `must be all or some of ${SCENARIO_NAMES.join(", ")}, got "${name}"`);
  }
  const sizes = values.sizes.split(",").map((size) => positiveInteger("--sizes", size.trim(), 1, 1_000_000));
  const databases = values.database === "auto" ? "auto" : values.database === "both" ? (["pglite", "postgres"] as DatabaseKind[]) : [oneDatabase(values.database)];
  const durationSeconds = values.duration === undefined ? 10 : positiveNumber("--duration", values.duration);
  const soakDurationSeconds =
    values["soak-duration"] !== undefined ? positiveNumber("--soak-duration", values["soak-duration"]) : values.duration !== undefined ? durationSeconds : 60;
  return {
    scenarios: SCENARIO_NAMES.filter((name) => scenarios.includes(name)),
    sizes: [...new Set(sizes)].sort((a, b) => a - b),
    databases,
    postgresUrl,
    durationSeconds,
    soakDurationSeconds,
    connections: positiveInteger("--connections", values.connections, 1, 1_000),
    outDir: path.resolve(values.out),
    embedConversations: positiveInteger("--embed-conversations", values["embed-conversations"], 0, 100_000),
    profile: !values["no-profile"],
    summaryOnly: values["summary-only"],
    keepDatabase: values["keep-database"],
    reuseDatabase: reusedDatabase(values["reuse-database"], sizes, databases),
    command: ["npm run bench --", ...argv].join(" "),
  };
}

function reusedDatabase(name: string | undefined, sizes: number[], databases: DatabaseKind[] | "auto"): string | null {
  if (name === undefined) return null;
  if (!/^bench_[a-z0-9_]+$/.test(name)) throw new ConfigError("--reuse-database", `must name a database a benchmark kept (bench_…), got "${name}"`);
  if (databases === "auto" || databases.length !== 1 || databases[0] !== "postgres" || new Set(sizes).size !== 1) {
    throw new ConfigError("--reuse-database", "needs --database postgres and one size (the kept database holds one corpus)");
  }
  return name;
}

function oneDatabase(value: string): DatabaseKind {
  if (value === "pglite" || value === "postgres") return value;
  throw new ConfigError("--database", `must be pglite, postgres, both or auto, got "${value}"`);
}

function positiveInteger(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function positiveNumber(name: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > 3_600) throw new ConfigError(name, `must be a number of seconds between 0 and 3600, got "${raw}"`);
  return value;
}
