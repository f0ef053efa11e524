/**
 * The pure halves of typo tolerance: the query's corrections and the "did you mean" text built
 * from what the providers report (lib/retrieval/typo-tolerance.ts), and the seeded misspeller the evaluation
 * uses (lib/evaluation/typos.ts). What the SQL expands is tested through the gateway
 * (test/e2e/typo-tolerance.test.ts).
 */
import { describe, expect, it } from "@jest/globals";
import { misspell } from "../../lib/evaluation/typos.js";
import { queryCorrections, suggestQuery, type WordCorrection } from "../../lib/retrieval/typo-tolerance.js";

const correction = (typed: string, word: string, boost: number, documents: number): WordCorrection => ({ typed, word, term: word, boost, documents });

const suggest = (query: string, corrections: WordCorrection[]) => suggestQuery(query, queryCorrections(query, corrections));

describe("suggestQuery", () => {
  it("replaces each misspelled word by its correction and keeps the rest as typed", () => {
    expect(suggest("why the deadlcok, again?", [correction("deadlcok", "deadlock", 0.8, 3)])).toBe("why the deadlock, again?");
  });

  it("keeps the typed word's capitalization", () => {
    expect(suggest("Deadlcok in BILLNG", [correction("deadlcok", "deadlock", 0.8, 1), correction("billng", "billing", 0.77, 1)])).toBe("Deadlock in BILLING");
  });

  it("prefers fewer edits, then the correction found in more documents", () => {
    const corrections = [correction("lcok", "lock", 0.6, 10), correction("lcok", "look", 0.72, 1), correction("lcok", "lack", 0.72, 4)];
    expect(suggest("lcok", corrections)).toBe("lack");
  });

  it("suggests nothing without corrections", () => {
    expect(suggest("deadlcok", [])).toBeNull();
  });
});

describe("queryCorrections", () => {
  it("lists each misspelled word once, in query order and as first typed, with its corrections best first", () => {
    const corrections = [
      // Two providers report the same corrections with their own document counts.
      correction("lcok", "lock", 0.6, 10),
      correction("billng", "billing", 0.77, 2),
      correction("lcok", "lack", 0.72, 4),
      correction("lcok", "look", 0.72, 1),
      correction("lcok", "look", 0.72, 6),
    ];
    expect(queryCorrections("Billng lcok, then billng again", corrections)).toEqual([
      { word: "Billng", searchedAs: ["billing"] },
      { word: "lcok", searchedAs: ["look", "lack", "lock"] },
    ]);
  });

  it("ranks alphabetically when edits and documents tie, and lists nothing without corrections", () => {
    expect(queryCorrections("lcok", [correction("lcok", "lock", 0.72, 2), correction("lcok", "lack", 0.72, 2)])).toEqual([{ word: "lcok", searchedAs: ["lack", "lock"] }]);
    expect(queryCorrections("deadlcok", [])).toEqual([]);
  });

  it("leaves out a correction for a word the query does not hold", () => {
    expect(queryCorrections("deadlock", [correction("deadlcok", "deadlock", 0.8, 3)])).toEqual([]);
  });
});

describe("misspell", () => {
  it("is deterministic for a seed and edits one or two words of 5 letters or more by one edit", () => {
    const text = "Vitamin D supplementation reduces fracture risk in older adults";
    for (let seed = 0; seed < 200; seed++) {
      const first = misspell(text, seed);
      expect(misspell(text, seed)).toEqual(first);
      expect(first.edits.length).toBeGreaterThanOrEqual(1);
      expect(first.edits.length).toBeLessThanOrEqual(2);
      for (const [original, misspelled] of first.edits) {
        expect(original.length).toBeGreaterThanOrEqual(5);
        expect(misspelled).not.toBe(original);
        expect(Math.abs(misspelled.length - original.length)).toBeLessThanOrEqual(1);
      }
    }
    expect(misspell(text, 1, 5, 1).edits).toHaveLength(1);
  });

  it("leaves a query with no long word alone", () => {
    expect(misspell("is it ok", 7)).toEqual({ text: "is it ok", edits: [] });
  });
});
