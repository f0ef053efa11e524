/** `npm run bench` at a tiny size (test/support/bench-smoke.ts): search features (highlights, facets) and @defer. */
import { afterAll, describe, expect, it } from "@jest/globals";
import { SCENARIO_NAMES } from "../../bench/options.js";
import { runSmokeBenchmark, SLOW_SCENARIOS, SMOKE_GROUPS, SMOKE_TIMEOUT_MS, type SmokeRun } from "../support/bench-smoke.js";

let run: SmokeRun | undefined;
afterAll(() => run?.dispose());

describe("npm run bench, smoke run at a tiny size", () => {
  it("smoke-tests every scenario but the slow ones, each in one file", () => {
    const grouped = Object.values(SMOKE_GROUPS).flat();
    expect(new Set(grouped).size).toBe(grouped.length);
    expect([...grouped, ...SLOW_SCENARIOS].sort()).toEqual([...SCENARIO_NAMES].sort());
  });

  it("runs the search-features and defer scenarios and writes JSON and SUMMARY.md with zero errors", async () => {
    run = await runSmokeBenchmark(SMOKE_GROUPS.features);
    const features = run.entry("search-features");
    for (const mode of ["plain", "features", "featuresWithFacets"]) {
      expect(features.modes[mode].oneConnection.completed).toBeGreaterThan(0);
      expect(features.modes[mode].underLoad.completed).toBeGreaterThan(0);
    }
  }, SMOKE_TIMEOUT_MS);
});
