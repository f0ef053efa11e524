/** `npm run bench` at a tiny size (test/support/bench-smoke.ts): search latency, ingestion, indexing, tenant scopes, suggestions, facets. */
import { afterAll, describe, expect, it } from "@jest/globals";
import { expectSvg, runSmokeBenchmark, SMOKE_GROUPS, SMOKE_TIMEOUT_MS, smokeDatabase as database, type SmokeRun } from "../support/bench-smoke.js";

let run: SmokeRun | undefined;
afterAll(() => run?.dispose());

describe("npm run bench, smoke run at a tiny size: latency, ingestion, indexing", () => {
  it("runs the scenarios and writes JSON, SUMMARY.md and plots with zero errors", async () => {
    run = await runSmokeBenchmark(SMOKE_GROUPS.latency);

    const latency = run.entry("latency");
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
    expectSvg(run, `latency-${database}.svg`);
    // The latency targets name 100k conversations, a size not run here: reported as not measured, not left out.
    expect(run.summary).toMatch(/at 100k conversations[^\n]*not measured/);

    const ingestion = run.entry("ingestion");
    expect(ingestion.insert.conversations).toBe(30);
    expect(ingestion.insert.conversationsPerSecond).toBeGreaterThan(0);
    expect(ingestion.hashing.chunks).toBeGreaterThan(0);
    expect(ingestion.local.index).toMatchObject({ embedder: "universal-sentence-encoder-lite", conversations: 1, failing: 0 });
    expect(ingestion.local.index.chunks).toBeGreaterThan(0);
  }, SMOKE_TIMEOUT_MS);
});
