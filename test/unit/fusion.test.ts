import { describe, expect, it } from "@jest/globals";
import { fuseRankedLists, providerWeight, stitchSegments, type RankedList } from "../../subgraphs/search/fusion.js";

const ref = (id: string) => ({ typename: "Conversation", id });
const list = (provider: string, kind: "KEYWORD" | "SEMANTIC", weight: number, ids: string[]): RankedList => ({
  provider,
  kind,
  weight,
  hits: ids.map((id, index) => ({ ref: ref(id), nativeScore: 100 - index })),
});

describe("fuseRankedLists", () => {
  it("computes Σ w_p / (k + r_p) exactly", () => {
    const fused = fuseRankedLists([list("kw", "KEYWORD", 0.7, ["a", "b", "c"]), list("sem", "SEMANTIC", 0.3, ["c", "a"])], { k: 60 });
    const byId = Object.fromEntries(fused.map((hit) => [hit.ref.id, hit]));
    expect(byId.a!.score).toBeCloseTo(0.7 / 61 + 0.3 / 62, 12);
    expect(byId.b!.score).toBeCloseTo(0.7 / 62, 12);
    expect(byId.c!.score).toBeCloseTo(0.7 / 63 + 0.3 / 61, 12);
    expect(byId.c!.contributions).toEqual([
      { provider: "kw", rank: 3, weight: 0.7, contribution: 0.7 / 63, nativeScore: 98 },
      { provider: "sem", rank: 1, weight: 0.3, contribution: 0.3 / 61, nativeScore: 100 },
    ]);
    expect(fused.map((hit) => hit.ref.id)).toEqual(["a", "c", "b"]);
  });

  it("derives weights from alpha: 1 is keyword only, 0 semantic only", () => {
    expect(providerWeight("KEYWORD", 1)).toBe(1);
    expect(providerWeight("SEMANTIC", 1)).toBe(0);
    expect(providerWeight("SEMANTIC", 0.25, 2)).toBe(1.5);
    const lists = (alpha: number) => [
      list("kw", "KEYWORD", providerWeight("KEYWORD", alpha), ["a", "b"]),
      list("sem", "SEMANTIC", providerWeight("SEMANTIC", alpha), ["b", "z"]),
    ];
    expect(fuseRankedLists(lists(1), { k: 60 }).map((hit) => hit.ref.id)).toEqual(["a", "b"]);
    expect(fuseRankedLists(lists(0), { k: 60 }).map((hit) => hit.ref.id)).toEqual(["b", "z"]);
  });

  it("breaks ties by best single rank, then by id", () => {
    // x: rank 1 in A only; y: rank 1 in B only (same weight) -> tie on score and best rank -> id order.
    const tie = fuseRankedLists([list("A", "KEYWORD", 0.5, ["y2", "m"]), list("B", "SEMANTIC", 0.5, ["y1", "n"])], { k: 60 });
    expect(tie.map((hit) => hit.ref.id)).toEqual(["y1", "y2", "m", "n"]);
    // Equal scores but different best ranks: 2/(k+2) from one list vs 1/(k+1)+1/(k+3)... constructed directly.
    const a = fuseRankedLists([list("A", "KEYWORD", 1, ["p", "q"]), list("B", "KEYWORD", 1, ["r", "q"])], { k: 1 });
    // q: 1/3 + 1/3 = 0.667; p: 1/2; r: 1/2 -> q first; p and r tie on score and rank -> id order.
    expect(a.map((hit) => hit.ref.id)).toEqual(["q", "p", "r"]);
  });

  it("counts an entity a provider returned twice once, at its better rank, and skips zero-weight lists", () => {
    const fused = fuseRankedLists([list("A", "KEYWORD", 1, ["a", "a", "b"]), list("B", "SEMANTIC", 0, ["c"])], { k: 60 });
    expect(fused.map((hit) => [hit.ref.id, hit.contributions.map((c) => c.rank)])).toEqual([["a", [1]], ["b", [3]]]);
  });

  it("rejects k below 1", () => {
    expect(() => fuseRankedLists([], { k: 0 })).toThrow(/at least 1/);
  });
});

describe("stitchSegments", () => {
  it("keeps what an earlier, shallower window showed, so deeper pages repeat nothing and skip nothing", () => {
    // With window 2, B's rank-3 item "a" is invisible; with window 4 it lifts "a" above "x".
    const lists = [list("A", "KEYWORD", 0.5, ["x", "a", "y", "z"]), list("B", "SEMANTIC", 0.5, ["w", "v", "a", "u"])];
    const shallow = fuseRankedLists(lists, { k: 60, window: 2 }).map((hit) => hit.ref.id);
    const deep = fuseRankedLists(lists, { k: 60, window: 4 }).map((hit) => hit.ref.id);
    expect(shallow.slice(0, 2)).not.toEqual(deep.slice(0, 2));
    const pageOne = stitchSegments(lists, [{ window: 2, start: 0 }], { k: 60 }).slice(0, 2).map((hit) => hit.ref.id);
    const stitched = stitchSegments(lists, [{ window: 2, start: 0 }, { window: 4, start: 2 }], { k: 60 }).map((hit) => hit.ref.id);
    expect(stitched.slice(0, 2)).toEqual(pageOne);
    expect(new Set(stitched).size).toBe(stitched.length);
    expect([...stitched].sort()).toEqual([...deep].sort());
  });

  it("applies minScore after fusion", () => {
    const lists = [list("A", "KEYWORD", 1, ["a", "b", "c"])];
    expect(stitchSegments(lists, [{ window: 3, start: 0 }], { k: 1, minScore: 1 / 3 }).map((hit) => hit.ref.id)).toEqual(["a", "b"]);
  });
});
