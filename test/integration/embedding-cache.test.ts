/**
 * The embedding cache in a real database (PGlite with pgvector, or PostgreSQL when DATABASE_URL
 * is set): vectors survive the round trip through pgvector's text form, reads and writes take
 * one statement however many texts there are, and an existing entry is never overwritten.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { CachedEmbedder, embeddingCacheKey, PostgresEmbeddingCacheStore } from "../../lib/retrieval/embeddings/cached-embedder.js";
import type { Embedder } from "../../lib/retrieval/embeddings/embedder.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

let db: TestDatabase;
let store: PostgresEmbeddingCacheStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = new PostgresEmbeddingCacheStore(db.database);
});
afterAll(() => db.dispose());

/** A unit vector with awkward values: tiny, negative, and not representable in float32. */
function vector(seed: number, dimensions = 512): number[] {
  const raw = Array.from({ length: dimensions }, (_, i) => Math.sin(seed * 1000 + i * 0.37) * (i % 7 === 0 ? 1e-6 : 1));
  const norm = Math.hypot(...raw);
  return raw.map((value) => value / norm);
}

function expectClose(actual: number[] | undefined, expected: number[]): void {
  expect(actual).toHaveLength(expected.length);
  // pgvector stores float32: about 7 significant digits survive.
  actual!.forEach((value, i) => expect(Math.abs(value - expected[i]!)).toBeLessThan(1e-7));
}

describe("PostgresEmbeddingCacheStore", () => {
  it("reads back what it stored, per model, and nothing else", async () => {
    const [a, b, c] = ["a", "b", "c"].map(embeddingCacheKey) as [string, string, string];
    await store.put("model-x", [
      { hash: a, vector: vector(1) },
      { hash: b, vector: vector(2) },
    ]);
    await store.put("model-y", [{ hash: a, vector: vector(3, 4) }]);

    const found = await store.get("model-x", [a, b, c]);
    expect([...found.keys()].sort()).toEqual([a, b].sort());
    expectClose(found.get(a), vector(1));
    expectClose(found.get(b), vector(2));
    expectClose((await store.get("model-y", [a, b])).get(a), vector(3, 4));
    expect((await store.get("model-y", [b])).size).toBe(0);
    expect((await store.get("model-z", [a])).size).toBe(0);
    expect((await store.get("model-x", [])).size).toBe(0);
  });

  it("keeps the first vector stored for a text, including duplicates within one write", async () => {
    const hash = embeddingCacheKey("kept");
    await store.put("model-keep", [{ hash, vector: vector(10, 8) }]);
    await store.put("model-keep", [
      { hash, vector: vector(11, 8) },
      { hash, vector: vector(12, 8) },
    ]);
    expectClose((await store.get("model-keep", [hash])).get(hash), vector(10, 8));
  });

  it("reads and writes many texts in one statement each", async () => {
    const entries = Array.from({ length: 300 }, (_, i) => ({ hash: embeddingCacheKey(`text ${i}`), vector: vector(100 + i, 64) }));
    db.database.statements.reset();
    await store.put("model-bulk", entries);
    expect(db.database.statements.count).toBe(1);
    db.database.statements.reset();
    const found = await store.get("model-bulk", entries.map((entry) => entry.hash));
    expect(db.database.statements.count).toBe(1);
    expect(found.size).toBe(300);
    expectClose(found.get(entries[299]!.hash), entries[299]!.vector);
  });

  it("treats a text with quotes and brackets as data, not SQL", async () => {
    const awkward = "'); DROP TABLE embedding_cache; --";
    await store.put(awkward, [{ hash: awkward, vector: vector(7, 3) }]);
    expectClose((await store.get(awkward, [awkward, "x"])).get(awkward), vector(7, 3));
  });
});

describe("CachedEmbedder over PostgreSQL", () => {
  it("embeds each distinct text once, ever, in input order", async () => {
    const hashing = new FeatureHashingEmbedder();
    const calls: string[][] = [];
    const inner: Embedder = {
      model: hashing.model,
      dimensions: hashing.dimensions,
      embed: (texts) => {
        calls.push([...texts]);
        return hashing.embed(texts);
      },
    };
    const cached = new CachedEmbedder(inner, store);
    const texts = ["How do I fix a deadlock?", "Lisbon in four days", "How do I fix a deadlock?"];
    const expected = await hashing.embed(texts);

    const first = await cached.embed(texts);
    expect(calls).toEqual([["How do I fix a deadlock?", "Lisbon in four days"]]);
    first.forEach((vector, i) => expectClose(vector, expected[i]!));

    // A new embedder over the same table: the vectors come from the database.
    const second = await new CachedEmbedder(inner, new PostgresEmbeddingCacheStore(db.database)).embed([...texts].reverse());
    expect(calls).toHaveLength(1);
    second.forEach((vector, i) => expectClose(vector, expected[texts.length - 1 - i]!));
  });
});
