/**
 * `npm run bench` at a tiny size, for the bench-smoke-*.test.ts files: the selected scenarios
 * run end to end (corpus load, servers, load generator, profiles where a target is missed) into
 * a temporary folder, and every scenario's JSON and section of SUMMARY.md come out. It checks
 * that the benchmark works, not how fast anything is: the timings of a 30-conversation corpus on
 * a shared machine mean nothing.
 *
 * The scenarios are split over three files because one file running them all took 170-230 s in
 * CI's passes, the suite's longest single file: a pole the second Jest worker idled beside at
 * the end of a run. Each file loads its own corpus (a few seconds at this size).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "@jest/globals";
import { postgresBaseUrl } from "../../bench/database.js";
import { parseBenchArgs, type ScenarioName } from "../../bench/options.js";
import { runBenchmarks, SCENARIOS, type BenchOutcome } from "../../bench/run.js";
import { usingPostgres } from "./database.js";

/**
 * The scenarios each smoke file runs. Left out: the two attack ones (hostile and fair-shares),
 * each ~19 s or more even at this size, and the document ones (~45 s each at this size: they generate, upload and
 * index files; their loader is tested in test/integration/bench-documents.test.ts). `npm run
 * bench` runs them all. The groups are balanced by their time on PGlite (each 55-70 s alone);
 * ingestion and indexing share a file because both load the local embedding model.
 */
export const SMOKE_GROUPS = {
  gateway: ["gateway", "batching", "soak", "search-path", "keyword-pruning", "typo-tolerance"],
  latency: ["latency", "ingestion", "indexing", "tenant-scope", "suggestions", "search-facets"],
  features: ["search-features", "defer"],
} as const satisfies Record<string, readonly ScenarioName[]>;
// topology-faults and topology-throughput start their own multi-instance topology (real
// PostgreSQL pair, HAProxy, PgBouncer): test/topology/ runs a short version of the fault drill,
// once per CI run (npm run test:topology).
export const SLOW_SCENARIOS: readonly ScenarioName[] = ["hostile", "fair-shares", "document-ingestion", "mixed-search", "topology-faults", "topology-throughput"];

export const smokeDatabase = usingPostgres ? "postgres" : "pglite";

/** Generous: a file's scenarios take 60-90 s alone, and CI runs two files at once on 2 cores. */
export const SMOKE_TIMEOUT_MS = 300_000;

export interface SmokeRun {
  outcome: BenchOutcome;
  outDir: string;
  /** The first entry of <scenario>.json. */
  entry(name: ScenarioName): any;
  summary: string;
  dispose(): void;
}

/**
 * Runs the scenarios (no scenario may fail: runBenchmarks throws if one does) and checks what
 * every one of them must leave behind: its JSON with one entry at this size on this database,
 * no errors where the entry counts them, and its section in SUMMARY.md.
 */
export async function runSmokeBenchmark(scenarios: readonly ScenarioName[]): Promise<SmokeRun> {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-smoke-"));
  try {
    const options = parseBenchArgs(
      ["--scenario", scenarios.join(","), "--sizes", "30", "--database", smokeDatabase, "--duration", "1", "--connections", "4", "--embed-conversations", "1", "--out", outDir],
      postgresBaseUrl(),
    );
    expect(options.scenarios).toEqual(scenarios);
    expect(options.soakDurationSeconds).toBe(1);
    const outcome = await runBenchmarks(options, () => {});
    expect(outcome.databases).toEqual([smokeDatabase]);
    const entry = (name: ScenarioName) => JSON.parse(fs.readFileSync(path.join(outDir, `${name}.json`), "utf8")).entries[0];
    expect(outcome.files).toContain("SUMMARY.md");
    const summary = fs.readFileSync(path.join(outDir, "SUMMARY.md"), "utf8");
    expect(summary).toContain("## Targets");
    for (const name of scenarios) {
      expect(outcome.files).toContain(`${name}.json`);
      expect(entry(name)).toMatchObject({ database: smokeDatabase, size: 30 });
      if ("totalErrors" in entry(name)) expect(entry(name).totalErrors).toBe(0);
      expect(summary).toContain(`## ${SCENARIOS[name].title} (\`${name}.json\`)`);
    }
    return { outcome, outDir, entry, summary, dispose: () => fs.rmSync(outDir, { recursive: true, force: true }) };
  } catch (error) {
    fs.rmSync(outDir, { recursive: true, force: true });
    throw error;
  }
}

export function expectSvg(run: SmokeRun, file: string): void {
  expect(run.outcome.files).toContain(file);
  expect(fs.readFileSync(path.join(run.outDir, file), "utf8")).toMatch(/^<\?xml[\s\S]*<svg[\s\S]*<\/svg>\s*$/);
}
