/**
 * The pure halves of typo tolerance: the "did you mean" text built from the corrections the
 * providers report (lib/retrieval/typo-tolerance.ts), and the seeded misspeller the evaluation
 * uses (lib/evaluation/typos.ts). What the SQL expands is tested through the gateway
 * (test/e2e/typo-tolerance.test.ts).
 */
import { describe, expect, it } from "@jest/globals";
import { misspell } from "../../lib/evaluation/typos.js";
import { suggestQuery, type WordCorrection } from "../../lib/retrieval/typo-tolerance.js";

const correction = (typed: string, word: string, boost: number, documents: number): WordCorrection => ({ typed, word, term: word, boost, documents });

describe("suggestQuery", () => {
  it("replaces each misspelled word by its correction and keeps the rest as typed", () => {
    expect(suggestQuery("why the deadlcok, again?", [correction("deadlcok", "deadlock", 0.8, 3)])).toBe("why the deadlock, again?");
  });

  it("keeps the typed word's capitalization", () => {
    expect(suggestQuery("Deadlcok in BILLNG", [correction("deadlcok", "deadlock", 0.8, 1), correction("billng", "billing", 0.77, 1)])).toBe("Deadlock in BILLING");
  });

  it("prefers fewer edits, then the correction found in more documents", () => {
    const corrections = [correction("lcok", "lock", 0.6, 10), correction("lcok", "look", 0.72, 1), correction("lcok", "lack", 0.72, 4)];
    expect(suggestQuery("lcok", corrections)).toBe("lack");
  });

  it("suggests nothing without corrections", () => {
    expect(suggestQuery("deadlcok", [])).toBeNull();
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
