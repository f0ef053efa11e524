/**
 * What a query asks for in BM25 points (queryInformation) and a hit's share of it
 * (bm25Relevance): the arithmetic behind SearchHit.relevance and SearchResult.weakMatches.
 */
import { describe, expect, it } from "@jest/globals";
import { BM25_K1, bm25Idf, bm25Relevance, queryInformation } from "../../lib/retrieval/bm25.js";

/** Each word of a query can score at most (k1 + 1) · idf. */
const MAX = BM25_K1 + 1;

const N = 1_000;

describe("queryInformation", () => {
  it("is the most a text can score: (k1 + 1) times the sum of the query's words' idfs", () => {
    expect(queryInformation([{ df: 10 }, { df: 100 }], [], N)).toBeCloseTo(MAX * (bm25Idf(10, N) + bm25Idf(100, N)), 12);
  });

  it("counts a word found nowhere as a term in no document, the most a word can weigh", () => {
    expect(bm25Idf(0, N)).toBeGreaterThan(bm25Idf(1, N));
    expect(queryInformation([{ df: 10 }, { df: 0 }], [], N)).toBeCloseTo(MAX * (bm25Idf(10, N) + bm25Idf(0, N)), 12);
  });

  it("counts a corrected word as its best correction (boost · idf), not as a word found nowhere", () => {
    const corrections = [
      { typed: "deadlcok", boost: 0.8, documents: 5 },
      { typed: "deadlcok", boost: 0.6, documents: 50 },
    ];
    expect(queryInformation([{ df: 10 }, { df: 0 }], corrections, N)).toBeCloseTo(MAX * (bm25Idf(10, N) + 0.8 * bm25Idf(5, N)), 12);
    // A second unknown word without a correction still counts in full.
    expect(queryInformation([{ df: 10 }, { df: 0 }, { df: 0 }], corrections, N)).toBeCloseTo(MAX * (bm25Idf(10, N) + 0.8 * bm25Idf(5, N) + bm25Idf(0, N)), 12);
  });

  it("is 0 for a query of no words (only stop words), and relevance is then unknown", () => {
    expect(queryInformation([], [], N)).toBe(0);
    expect(bm25Relevance(3, 0)).toBeUndefined();
  });
});

describe("bm25Relevance", () => {
  it("is the score's share of the query's information, capped to 0..1, and never NaN", () => {
    expect(bm25Relevance(2, 8)).toBe(0.25);
    expect(bm25Relevance(12, 8)).toBe(1);
    expect(bm25Relevance(Number.NaN, 8)).toBeUndefined();
    expect(bm25Relevance(Number.POSITIVE_INFINITY, 8)).toBeUndefined();
  });
});
