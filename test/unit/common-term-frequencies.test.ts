/**
 * CommonTermFrequencies: which dfs a keyword statement is given, for how long, and how many.
 */
import { describe, expect, it } from "@jest/globals";
import { CommonTermFrequencies } from "../../lib/retrieval/bm25.js";

function clock() {
  let now = 1_000;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

describe("CommonTermFrequencies", () => {
  it("keeps only terms at least fromDf frequent, per collection", () => {
    const terms = new CommonTermFrequencies({ ttlMs: 10_000, fromDf: 100, maxTerms: 10 });
    expect(terms.known("acme")).toEqual({ terms: [], dfs: [] });
    terms.remember("acme", [
      { term: "the", df: 5_000 },
      { term: "lisbon", df: 3 },
      { term: "order", df: 100 },
    ]);
    expect(terms.known("acme")).toEqual({ terms: ["the", "order"], dfs: [5_000, 100], literals: { terms: '{"the","order"}', dfs: "{5000,100}" } });
    expect(terms.known("globex")).toEqual({ terms: [], dfs: [] });
  });

  it("expires a collection's terms together, counted from the first one remembered", () => {
    const time = clock();
    const terms = new CommonTermFrequencies({ ttlMs: 10_000, fromDf: 1, maxTerms: 10, clock: time });
    terms.remember("acme", [{ term: "the", df: 50 }]);
    time.advance(9_000);
    terms.remember("acme", [{ term: "order", df: 20 }]);
    expect(terms.known("acme").terms).toEqual(["the", "order"]);
    time.advance(1_001);
    // "order" was counted only 1 s ago, but it goes with the collection: no df outlives the statistics' TTL.
    expect(terms.known("acme")).toEqual({ terms: [], dfs: [] });
    terms.remember("acme", [{ term: "order", df: 21 }]);
    expect(terms.known("acme")).toMatchObject({ terms: ["order"], dfs: [21] });
  });

  it("keeps the most frequent terms when full", () => {
    const terms = new CommonTermFrequencies({ ttlMs: 10_000, fromDf: 1, maxTerms: 2 });
    terms.remember("acme", [
      { term: "a", df: 10 },
      { term: "b", df: 30 },
    ]);
    terms.remember("acme", [{ term: "c", df: 5 }]); // rarer than both: not kept
    expect(new Set(terms.known("acme").terms)).toEqual(new Set(["a", "b"]));
    terms.remember("acme", [{ term: "d", df: 20 }]); // takes the rarest one's place
    const known = terms.known("acme");
    expect(Object.fromEntries(known.terms.map((term, i) => [term, known.dfs[i]]))).toEqual({ b: 30, d: 20 });
    // A term already kept is updated in place, full or not.
    terms.remember("acme", [{ term: "b", df: 31 }]);
    expect(terms.known("acme").dfs).toContain(31);
  });

  it("forgets a collection on request", () => {
    const terms = new CommonTermFrequencies({ ttlMs: 10_000, fromDf: 1, maxTerms: 10 });
    terms.remember("acme", [{ term: "the", df: 50 }]);
    terms.forget("acme");
    expect(terms.known("acme").terms).toEqual([]);
  });
});

describe("textArrayLiteral", () => {
  it("quotes every element so commas, braces, quotes, backslashes and NULL stay text", async () => {
    const { textArrayLiteral } = await import("../../lib/retrieval/bm25.js");
    expect(textArrayLiteral([])).toBe("{}");
    expect(textArrayLiteral(["a", 'b"c', "d\\e", "{f,g}", "NULL", " h "])).toBe('{"a","b\\"c","d\\\\e","{f,g}","NULL"," h "}');
  });
});
