/**
 * The relevance floor's measurement (lib/evaluation/relevance-floor.ts): which queries are held
 * out and which documents leave the corpus with them, and both error rates read off the samples.
 */
import { describe, expect, it } from "@jest/globals";
import type { BeirDataset } from "../../lib/evaluation/beir.js";
import { floorTable, holdOut, type FloorSample } from "../../lib/evaluation/relevance-floor.js";

const dataset: BeirDataset = {
  name: "tiny",
  split: "test",
  corpus: ["d1", "d2", "d3", "d4", "d5"].map((id) => ({ id, title: id, text: `text of ${id}` })),
  queries: ["q1", "q2", "q3"].map((id) => ({ id, text: `query ${id}` })),
  qrels: new Map([
    ["q1", new Map([["d1", 1], ["d2", 0]])],
    ["q2", new Map([["d3", 2]])],
    ["q3", new Map([["d4", 1]])],
  ]),
};

describe("holdOut", () => {
  it("removes every document judged relevant (grade > 0) to the held-out queries, and only those", () => {
    const held = holdOut(dataset, 2, 7);
    expect(held.queries).toHaveLength(2);
    const relevant = new Set(held.queries.flatMap((query) => [...dataset.qrels.get(query.id)!].filter(([, grade]) => grade > 0).map(([id]) => id)));
    expect(held.removed).toBe(relevant.size);
    expect(held.corpus.map((document) => document.id)).toEqual(dataset.corpus.map((document) => document.id).filter((id) => !relevant.has(id)));
    // d2 is judged, but not relevant: it stays whoever is held out.
    expect(held.corpus.map((document) => document.id)).toContain("d2");
  });

  it("holds out the same queries for the same seed", () => {
    expect(holdOut(dataset, 2, 7).queries).toEqual(holdOut(dataset, 2, 7).queries);
  });
});

describe("floorTable", () => {
  const sample = (bestRelevance: number | null, topRelevant = false): FloorSample => ({ queryId: "q", bestRelevance, topRelevant });

  it("counts held-out queries whose best relevance reaches the floor, and relevant top hits below it", () => {
    const heldOut = [sample(0.2), sample(0.5), sample(null), sample(0.45)];
    const whole = [sample(0.6, true), sample(0.3, true), sample(0.9, false)];
    expect(floorTable(heldOut, whole, [0.4, 0.5])).toEqual([
      { floor: 0.4, falsePositives: 2 / 4, misses: 1 / 2 },
      { floor: 0.5, falsePositives: 1 / 4, misses: 1 / 2 },
    ]);
  });

  it("reads 0 for an empty side rather than dividing by zero", () => {
    expect(floorTable([], [sample(0.9, false)], [0.4])).toEqual([{ floor: 0.4, falsePositives: 0, misses: 0 }]);
  });
});
