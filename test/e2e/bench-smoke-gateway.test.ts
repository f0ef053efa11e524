/** `npm run bench` at a tiny size (test/support/bench-smoke.ts): gateway overhead, batching, soak, search path, keyword pruning, typo tolerance. */
import { afterAll, describe, expect, it } from "@jest/globals";
import { expectSvg, runSmokeBenchmark, SMOKE_GROUPS, SMOKE_TIMEOUT_MS, smokeDatabase as database, type SmokeRun } from "../support/bench-smoke.js";

let run: SmokeRun | undefined;
afterAll(() => run?.dispose());

describe("npm run bench, smoke run at a tiny size: gateway, batching, soak, search path", () => {
  it("runs the scenarios and writes JSON, SUMMARY.md and plots with zero errors", async () => {
    run = await runSmokeBenchmark(SMOKE_GROUPS.gateway);

    const gateway = run.entry("gateway");
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

    const batching = run.entry("batching");
    expect(batching.load.errors.total).toBe(0);
    expect(batching.load.completed).toBeGreaterThan(0);
    expect(batching.perRequest).toMatchObject({ entitiesCalls: 1, entityReadStatements: 1 });
    expect(batching.idsPerEntityRead.min).toBeGreaterThanOrEqual(20);
    expect(batching.batched).toBe(true);

    const soak = run.entry("soak");
    expect(soak.load.errors.total).toBe(0);
    expect(soak.load.completed).toBeGreaterThan(0);
    expect(soak.memory.samples.length).toBeGreaterThanOrEqual(3);
    expect(soak.memory.afterWarmUpMb).toBeGreaterThan(0);
    expect(Number.isFinite(soak.memory.growth)).toBe(true);
    expect(soak.passed.errors).toBe(true);
    expectSvg(run, `soak-${database}-30.svg`);

    const searchPath = run.entry("search-path");
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

    expect(run.summary).toMatch(/Gateway throughput ≥ 30% of direct/);
  }, SMOKE_TIMEOUT_MS);
});
