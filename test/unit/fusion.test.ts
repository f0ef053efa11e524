import { describe, expect, it } from "@jest/globals";
import { firstOfEachRanking, FUSION_METHODS, fuseRankedLists, providerWeight, rankingsOf, scoreNormalizer, stitchSegments, type RankedList } from "../../subgraphs/search/fusion.js";

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
      { provider: "kw", kind: "KEYWORD", rank: 3, weight: 0.7, contribution: 0.7 / 63, nativeScore: 98 },
      { provider: "sem", kind: "SEMANTIC", rank: 1, weight: 0.3, contribution: 0.3 / 61, nativeScore: 100 },
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

const scored = (provider: string, kind: "KEYWORD" | "SEMANTIC", weight: number, hits: [string, number][]): RankedList => ({
  provider,
  kind,
  weight,
  hits: hits.map(([id, nativeScore]) => ({ ref: ref(id), nativeScore })),
});

describe("score-aware fusion", () => {
  it("RELATIVE_SCORE maps each list to 0..1 by its own minimum and maximum: Σ w_p · (s - min) / (max - min)", () => {
    const fused = fuseRankedLists([scored("kw", "KEYWORD", 0.6, [["a", 12], ["b", 9], ["c", 3]]), scored("sem", "SEMANTIC", 0.4, [["c", 0.9], ["a", 0.5], ["d", 0.4]])], { k: 60, method: "RELATIVE_SCORE" });
    const byId = Object.fromEntries(fused.map((hit) => [hit.ref.id, hit.score]));
    expect(byId.a).toBeCloseTo(0.6 * 1 + 0.4 * (0.1 / 0.5), 12);
    expect(byId.b).toBeCloseTo(0.6 * (6 / 9), 12);
    expect(byId.c).toBeCloseTo(0.6 * 0 + 0.4 * 1, 12);
    expect(byId.d).toBeCloseTo(0, 12);
    expect(fused.map((hit) => hit.ref.id)).toEqual(["a", "c", "b", "d"]);
  });

  it("DISTRIBUTION_SCORE normalizes by mean ± 3 standard deviations, clamped to 0..1", () => {
    const scores = [10, 8, 6, 4, 2];
    const mean = 6;
    const deviation = Math.sqrt((16 + 4 + 0 + 4 + 16) / 5);
    const normalize = scoreNormalizer(scores, "DISTRIBUTION_SCORE");
    for (const score of scores) expect(normalize(score)).toBeCloseTo((score - (mean - 3 * deviation)) / (6 * deviation), 12);
    expect(normalize(1_000)).toBe(1);
    expect(normalize(-1_000)).toBe(0);
    // The bounds follow the spread of the whole list, not its two extremes: min-max always gives its best 1 and its worst 0.
    expect(normalize(10)).toBeLessThan(1);
    expect(normalize(2)).toBeGreaterThan(0);
  });

  it("a provider with one weak match no longer ties with another's best: under RRF they interleave, normalized the single hit counts half", () => {
    const strong = scored("documents.keyword", "KEYWORD", 1, [["runbook", 14.2], ["postmortem", 11], ["guide", 2.5]]);
    const weak = scored("conversations.keyword", "KEYWORD", 1, [["flaky-tests", 0.8]]);
    expect(fuseRankedLists([strong, weak], { k: 60 }).map((hit) => hit.ref.id).slice(0, 2)).toEqual(["flaky-tests", "runbook"]);
    for (const method of ["RELATIVE_SCORE", "DISTRIBUTION_SCORE"] as const) {
      const fused = fuseRankedLists([strong, weak], { k: 60, method });
      expect(fused[0]!.ref.id).toBe("runbook");
      expect(fused.find((hit) => hit.ref.id === "flaky-tests")!.score).toBe(0.5);
    }
  });

  it("gives a list of equal scores 0.5 each, and maps NaN and -Infinity to 0 and +Infinity to 1: never NaN", () => {
    for (const method of ["RELATIVE_SCORE", "DISTRIBUTION_SCORE"] as const) {
      expect(scoreNormalizer([3, 3, 3], method)(3)).toBe(0.5);
      expect(scoreNormalizer([7], method)(7)).toBe(0.5);
      expect(scoreNormalizer([], method)(1)).toBe(0.5);
      const hostile = scored("web", "KEYWORD", 1, [["a", Number.NaN], ["b", Infinity], ["c", -Infinity], ["d", 2], ["e", 1], ["f", Number.MAX_VALUE], ["g", -Number.MAX_VALUE]]);
      const fused = fuseRankedLists([hostile], { k: 60, method });
      expect(fused.every((hit) => Number.isFinite(hit.score) && hit.score >= 0 && hit.score <= 1)).toBe(true);
      const byId = Object.fromEntries(fused.map((hit) => [hit.ref.id, hit.score]));
      expect([byId.a, byId.b, byId.c]).toEqual([0, 1, 0]);
    }
  });

  it("pages the same way whatever the method: later segments keep what earlier ones showed", () => {
    const lists = [scored("kw", "KEYWORD", 1, Array.from({ length: 30 }, (_, index): [string, number] => [`k${index}`, 30 - index])), scored("sem", "SEMANTIC", 1, Array.from({ length: 30 }, (_, index): [string, number] => [`s${index}`, 1 - index / 40]))];
    for (const method of FUSION_METHODS) {
      const stitched = stitchSegments(lists, [{ window: 10, start: 0 }, { window: 40, start: 5 }], { k: 60, method });
      const first = fuseRankedLists(lists, { k: 60, method, window: 10 }).slice(0, 5);
      expect(stitched.slice(0, 5)).toEqual(first);
      expect(new Set(stitched.map((hit) => hit.ref.id)).size).toBe(stitched.length);
      expect(stitched).toHaveLength(60);
    }
  });
});

describe("distinct: a document's chunks fuse as one item", () => {
  const chunk = (id: string, document: string, nativeScore: number) => ({ ref: { typename: "DocumentChunk", id }, nativeScore, group: `Document:${document}` });
  const keyword: RankedList = { provider: "documents.keyword", kind: "KEYWORD", weight: 0.5, hits: [chunk("a1", "A", 9), chunk("b1", "B", 8), chunk("a2", "A", 7), { ref: ref("conv"), nativeScore: 6 }] };
  const semantic: RankedList = { provider: "documents.semantic", kind: "SEMANTIC", weight: 0.5, hits: [chunk("a3", "A", 0.9), chunk("b1", "B", 0.8), chunk("a1", "A", 0.7)] };

  it("gives each provider one vote per document, at its best chunk; shows the best-ranked chunk with the others as moreMatches", () => {
    const fused = fuseRankedLists([keyword, semantic], { k: 60, distinct: true });
    expect(fused.map((hit) => [hit.key, hit.ref.id, hit.moreMatches.map((more) => more.id)])).toEqual([
      ["group:Document:A", "a1", ["a3", "a2"]],
      ["group:Document:B", "b1", []],
      ["Conversation:conv", "conv", []],
    ]);
    const a = fused[0]!;
    expect(a.contributions.map((c) => [c.provider, c.rank])).toEqual([["documents.keyword", 1], ["documents.semantic", 1]]);
    expect(a.score).toBeCloseTo(0.5 / 61 + 0.5 / 61, 12);
  });

  it("without distinct every chunk is an item of its own, as before", () => {
    const fused = fuseRankedLists([keyword, semantic], { k: 60 });
    expect(fused.map((hit) => hit.ref.id).sort()).toEqual(["a1", "a2", "a3", "b1", "conv"]);
    expect(fused.every((hit) => hit.moreMatches.length === 0)).toBe(true);
  });

  it("pages a document once: deeper windows never show it again", () => {
    const many: RankedList = {
      provider: "documents.keyword",
      kind: "KEYWORD",
      weight: 1,
      hits: Array.from({ length: 60 }, (_, index) => chunk(`c${index}`, `D${index % 7}`, 60 - index)),
    };
    for (const method of FUSION_METHODS) {
      const stitched = stitchSegments([many], [{ window: 4, start: 0 }, { window: 16, start: 2 }, { window: 60, start: 5 }], { k: 60, method, distinct: true });
      expect(stitched.map((hit) => hit.key)).toEqual([...new Set(stitched.map((hit) => hit.key))]);
      expect(stitched).toHaveLength(7);
    }
  });
});

describe("score scales", () => {
  it("normalizes the lists of one scale together: a strong match in one outranks the other's best weak one", () => {
    const documents: RankedList = { ...scored("documents.keyword", "KEYWORD", 1, [["runbook", 13.7], ["guide", 6.1], ["notes", 2.4]]), scale: "okapi-bm25" };
    const conversations: RankedList = { ...scored("conversations.keyword", "KEYWORD", 1, [["payments", 12.1], ["orders", 11.9], ["carts", 11.7], ["postmortem", 3.9]]), scale: "okapi-bm25" };
    for (const method of ["RELATIVE_SCORE", "DISTRIBUTION_SCORE"] as const) {
      // Alone, each list's best is its own 1 (or near it): which comes first is a coin toss of the two spreads.
      const together = fuseRankedLists([documents, conversations], { k: 60, method });
      expect(together.map((hit) => hit.ref.id).slice(0, 4)).toEqual(["runbook", "payments", "orders", "carts"]);
      // One normalizer over both lists: the order of the raw BM25 scores.
      const normalize = scoreNormalizer([13.7, 6.1, 2.4, 12.1, 11.9, 11.7, 3.9], method);
      expect(together[0]!.score).toBeCloseTo(normalize(13.7), 12);
      // Apart (no scale), the conversations' best is normalized against its own list.
      const apart = fuseRankedLists([{ ...documents, scale: undefined }, { ...conversations, scale: undefined }], { k: 60, method });
      expect(apart.find((hit) => hit.ref.id === "payments")!.score).toBeCloseTo(scoreNormalizer([12.1, 11.9, 11.7, 3.9], method)(12.1), 12);
    }
  });
});

describe("hits ranked as another provider would rank them (ProviderHit.rankedAs)", () => {
  // The knowledge-bases provider (SEMANTIC, weighed as at 0.5 by default) passes on passages of the
  // platform's documents that our BM25 alone ranked: they join the BM25 scale and weigh as keyword hits.
  const conversations: RankedList = { ...scored("conversations.keyword", "KEYWORD", 1, [["orders", 12.0], ["payments", 8.0], ["carts", 2.0]]), scale: "okapi-bm25" };
  const passages = (rankedAs: boolean): RankedList => ({
    provider: "knowledge-bases",
    kind: "SEMANTIC",
    weight: 0.5,
    kindWeights: { KEYWORD: 1, SEMANTIC: 0 },
    hits: [
      { ref: { typename: "KnowledgeBasePassage", id: "runbook" }, nativeScore: 11.0, ...(rankedAs ? { rankedAs: { kind: "KEYWORD" as const, scoreScale: "okapi-bm25" } } : {}) },
      { ref: { typename: "KnowledgeBasePassage", id: "faq" }, nativeScore: 3.0, ...(rankedAs ? { rankedAs: { kind: "KEYWORD" as const, scoreScale: "okapi-bm25" } } : {}) },
    ],
  });

  it("normalizes them with that scale's other hits and weighs them as that kind: one order of raw BM25 scores", () => {
    for (const method of ["RELATIVE_SCORE", "DISTRIBUTION_SCORE"] as const) {
      const fused = fuseRankedLists([conversations, passages(true)], { k: 60, method });
      expect(fused.map((hit) => hit.ref.id)).toEqual(["orders", "runbook", "payments", "faq", "carts"]);
      const normalize = scoreNormalizer([12.0, 8.0, 2.0, 11.0, 3.0], method);
      const runbook = fused.find((hit) => hit.ref.id === "runbook")!;
      expect(runbook.score).toBeCloseTo(normalize(11.0), 12);
      expect(runbook.contributions).toEqual([expect.objectContaining({ provider: "knowledge-bases", weight: 1 })]);
    }
  });

  it("without rankedAs the provider's own scale and weight apply, as before: its best passage counts half", () => {
    const fused = fuseRankedLists([conversations, passages(false)], { k: 60, method: "RELATIVE_SCORE" });
    expect(fused.find((hit) => hit.ref.id === "runbook")!.score).toBeCloseTo(0.5, 12);
    expect(fused.map((hit) => hit.ref.id).slice(0, 2)).toEqual(["orders", "payments"]);
  });

  it("fuses a provider's several rankings as lists of their own: one vote each, ranks within each", () => {
    const both: RankedList = {
      provider: "knowledge-bases",
      kind: "SEMANTIC",
      weight: 0.5,
      kindWeights: { KEYWORD: 0.5, SEMANTIC: 0.5 },
      hits: [
        { ref: { typename: "KnowledgeBasePassage", id: "runbook" }, nativeScore: 11.0, rankedAs: { kind: "KEYWORD", scoreScale: "okapi-bm25" } },
        { ref: { typename: "KnowledgeBasePassage", id: "faq" }, nativeScore: 3.0, rankedAs: { kind: "KEYWORD", scoreScale: "okapi-bm25" } },
        { ref: { typename: "KnowledgeBasePassage", id: "faq" }, nativeScore: 0.9, rankedAs: { kind: "SEMANTIC", scoreScale: "similarity:pgvector:m" } },
        { ref: { typename: "KnowledgeBasePassage", id: "runbook" }, nativeScore: 0.4, rankedAs: { kind: "SEMANTIC", scoreScale: "similarity:pgvector:m" } },
      ],
    };
    expect(rankingsOf(both).map((list) => [list.kind, list.scale, list.weight, list.hits.map((hit) => hit.ref.id)])).toEqual([
      ["KEYWORD", "okapi-bm25", 0.5, ["runbook", "faq"]],
      ["SEMANTIC", "similarity:pgvector:m", 0.5, ["faq", "runbook"]],
    ]);
    const rrf = fuseRankedLists([both], { k: 60, method: "RRF" });
    // Each passage: first in one ranking, second in the other.
    for (const hit of rrf) expect(hit.score).toBeCloseTo(0.5 / 61 + 0.5 / 62, 12);
    // A tie, broken by key: faq, second by BM25 and first by vectors.
    expect(rrf[0]!.ref.id).toBe("faq");
    expect(rrf[0]!.contributions.map((contribution) => [contribution.kind, contribution.rank])).toEqual([["KEYWORD", 2], ["SEMANTIC", 1]]);
    // Cut per ranking: two of each when asked for two.
    expect(firstOfEachRanking([...both.hits, ...both.hits], 2)).toEqual(both.hits);
  });

  it("drops a hit whose kind this search gives no weight, and RRF weighs by its kind too", () => {
    const semanticOnly = { ...passages(true), kindWeights: { KEYWORD: 0, SEMANTIC: 1 } };
    expect(fuseRankedLists([conversations, semanticOnly], { k: 60, method: "RELATIVE_SCORE" }).map((hit) => hit.ref.id)).toEqual(["orders", "payments", "carts"]);
    const rrf = fuseRankedLists([passages(true)], { k: 60, method: "RRF" });
    expect(rrf[0]!.score).toBeCloseTo(1 / 61, 12);
  });
});
