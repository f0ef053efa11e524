/**
 * `npm run bench` at a tiny size: every scenario runs end to end (corpus load, servers, load
 * generator, profiles where a target is missed) into a temporary folder, and the JSON, the
 * Markdown summary and the plots come out with the fields the report relies on and without
 * errors. It checks that the benchmark works, not how fast anything is: the timings of a
 * 30-conversation corpus on a shared machine mean nothing.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "@jest/globals";
import { postgresBaseUrl } from "../../bench/database.js";
import { parseBenchArgs, SCENARIO_NAMES } from "../../bench/options.js";
import { runBenchmarks } from "../../bench/run.js";
import { usingPostgres } from "../support/database.js";

/**
 * Every scenario but the hostile-load one, which alone takes ~19 s even at this size, and the
 * document ones (~45 s each at this size: they generate, upload and index files; their loader is
 * tested in test/integration/bench-documents.test.ts). `npm run bench` runs them all.
 */
const SLOW_SCENARIOS: readonly string[] = ["hostile", "document-ingestion", "mixed-search"];
const SMOKE_SCENARIOS = SCENARIO_NAMES.filter((name) => !SLOW_SCENARIOS.includes(name)).join(",");
const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-smoke-"));
const database = usingPostgres ? "postgres" : "pglite";

afterAll(() => {
  fs.rmSync(outDir, { recursive: true, force: true });
});

function readJson(name: string): any {
  return JSON.parse(fs.readFileSync(path.join(outDir, name), "utf8"));
}

// The scenarios run one after another in one test: 175-229 s in CI's passes on 2 cores (the
// search-features scenario's third mode added ~10 s), so 300 s left too little room on a busy machine.
describe("npm run bench, smoke run at a tiny size", () => {
  it("runs every scenario and writes JSON, SUMMARY.md and plots with zero errors", async () => {
    const options = parseBenchArgs(
      ["--scenario", SMOKE_SCENARIOS, "--sizes", "30", "--database", database, "--duration", "1", "--connections", "4", "--embed-conversations", "1", "--out", outDir],
      postgresBaseUrl(),
    );
    expect(options.soakDurationSeconds).toBe(1);
    const log: string[] = [];
    const outcome = await runBenchmarks(options, (line) => log.push(line));
    expect(outcome.databases).toEqual([database]);
    for (const file of ["gateway.json", "batching.json", "latency.json", "soak.json", "ingestion.json", "SUMMARY.md", `latency-${database}.svg`, `soak-${database}-30.svg`]) {
      expect(outcome.files).toContain(file);
      expect(fs.existsSync(path.join(outDir, file))).toBe(true);
    }

    const gateway = readJson("gateway.json").entries[0];
    expect(gateway).toMatchObject({ database, size: 30, hitsPerResponse: 20, totalErrors: 0 });
    expect(gateway.runs.map((run: any) => [run.target, run.queryPlanner, run.inflightMerging])).toEqual([
      ["direct", null, null],
      ["gateway", "rust", false],
      ["gateway", "rust", true],
      ["gateway", "js", false],
      ["gateway", "js", true],
      // The same Rust configuration on a supergraph without the title @provides (two fetches).
      ["gateway", "rust", false],
      ["direct", null, null],
    ]);
    expect(Number.isFinite(gateway.ratios.providesVsTwoFetches)).toBe(true);
    for (const run of gateway.runs) {
      expect(run.load.completed).toBeGreaterThan(0);
      expect(run.load.requestsPerSecond).toBeGreaterThan(0);
      expect(run.load.latencyMs.p99).toBeGreaterThanOrEqual(run.load.latencyMs.p50);
      expect(run.load.errors.total).toBe(0);
    }
    // Four configurations, and the Rust one again without the title @provides.
    expect(Object.values(gateway.ratios.throughputVsDirect)).toHaveLength(5);
    for (const value of [...Object.values(gateway.ratios.throughputVsDirect), gateway.ratios.rustVsJsMergingOff, gateway.ratios.baselineDrift]) {
      expect(Number.isFinite(value)).toBe(true);
    }
    expect(gateway.conditions["result cache"]).toMatch(/^off/);
    expect(gateway.corpus.insert).toMatchObject({ conversations: 30 });

    const batching = readJson("batching.json").entries[0];
    expect(batching.load.errors.total).toBe(0);
    expect(batching.load.completed).toBeGreaterThan(0);
    expect(batching.perRequest).toMatchObject({ entitiesCalls: 1, entityReadStatements: 1 });
    expect(batching.idsPerEntityRead.min).toBeGreaterThanOrEqual(20);
    expect(batching.batched).toBe(true);

    const latency = readJson("latency.json").entries[0];
    expect(latency.totalErrors).toBe(0);
    // Every domain's providers are asked (the documents domain's answer nothing here: the corpus has no documents).
    expect(Object.keys(latency.service.cacheOff.providers)).toEqual(expect.arrayContaining(["conversations.keyword", "conversations.semantic"]));
    expect(latency.service.cacheOff.fused.p50).toBeGreaterThan(0);
    expect(latency.service.cacheOff.cachedShare).toBe(0);
    expect(latency.service.cacheOn.cachedShare).toBe(1);
    expect(latency.gateway.cacheOff.completed).toBeGreaterThan(0);
    expect(latency.gateway.cacheOn.completed).toBeGreaterThan(0);
    expect(Number.isFinite(latency.ratios.cacheOnVsOffServiceP50)).toBe(true);
    expect(latency.conditions.embedder).toMatch(/feature hashing/);

    const soak = readJson("soak.json").entries[0];
    expect(soak.load.errors.total).toBe(0);
    expect(soak.load.completed).toBeGreaterThan(0);
    expect(soak.memory.samples.length).toBeGreaterThanOrEqual(3);
    expect(soak.memory.afterWarmUpMb).toBeGreaterThan(0);
    expect(Number.isFinite(soak.memory.growth)).toBe(true);
    expect(soak.passed.errors).toBe(true);

    const ingestion = readJson("ingestion.json").entries[0];
    expect(ingestion.insert.conversations).toBe(30);
    expect(ingestion.insert.conversationsPerSecond).toBeGreaterThan(0);
    expect(ingestion.hashing.chunks).toBeGreaterThan(0);
    expect(ingestion.local.index).toMatchObject({ embedder: "universal-sentence-encoder-lite", conversations: 1, failing: 0 });
    expect(ingestion.local.index.chunks).toBeGreaterThan(0);

    const searchPath = readJson("search-path.json").entries[0];
    expect(searchPath.totalErrors).toBe(0);
    // The SQL ceiling needs a pg client to capture at: PGlite measures the gateway/subgraph ratio only.
    expect(searchPath.runs.map((run: any) => run.phase)).toEqual(
      database === "postgres" ? ["sql-ceiling", "subgraph", "gateway", "keyword-only", "gateway", "subgraph", "sql-ceiling"] : ["subgraph", "gateway", "gateway", "subgraph"],
    );
    for (const run of searchPath.runs) expect(run.completed).toBeGreaterThan(0);
    expect(Number.isFinite(searchPath.ratios.gatewayVsSubgraph)).toBe(true);
    if (database === "postgres") {
      expect(searchPath.capture.searches).toBeGreaterThan(0);
      expect(searchPath.capture.statementsPerSearch.min).toBeGreaterThan(0);
      expect(searchPath.capture.keywordStatementsPerSearch).toBeGreaterThan(0);
      expect(Number.isFinite(searchPath.ratios.subgraphVsCeiling)).toBe(true);
      // PostgreSQL's CPU comes from /proc: only where its processes are readable from here.
      if (searchPath.postgresCpuMsPerSearch.ceiling !== null) expect(searchPath.ratios.keywordShareOfPostgresCpu).toBeGreaterThan(0);
    }

    const summary = fs.readFileSync(path.join(outDir, "SUMMARY.md"), "utf8");
    for (const heading of ["## Targets", "## Search path against its SQL ceiling", "## Gateway overhead", "## Batching under load", "## Search latency against corpus size", "## Soak", "## Ingestion"]) {
      expect(summary).toContain(heading);
    }
    expect(summary).toMatch(/Gateway throughput ≥ 30% of direct/);
    expect(summary).toMatch(/not measured/); // no 100k run at this size
    expect(fs.readFileSync(path.join(outDir, `latency-${database}.svg`), "utf8")).toMatch(/^<\?xml[\s\S]*<svg[\s\S]*<\/svg>\s*$/);
  }, 480_000);
});
