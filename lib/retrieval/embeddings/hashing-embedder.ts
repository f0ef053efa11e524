/**
 * A test and development aid, not a semantic model: a bag of lowercased words hashed into 256
 * buckets ("feature hashing"), L2-normalized. It loads instantly and is deterministic, so tests
 * of indexing, storage and fusion can run without loading a real model. Texts score as similar
 * only when they share words; synonyms and paraphrases mean nothing to it. Never use it to
 * judge search quality.
 */
import type { EmbedderAlpha } from "./default-alpha.js";
import type { Embedder } from "./embedder.js";

const DIMENSIONS = 256;
const WORD = /[\p{L}\p{N}]+/gu;

export class FeatureHashingEmbedder implements Embedder {
  readonly model = "feature-hashing-256";
  readonly dimensions = DIMENSIONS;
  /**
   * Keyword only: on SciFact (train, 809 queries) every amount of this embedder's vote made the
   * ranking worse than BM25 alone (docs/evaluation/scifact-train-feature-hashing-256.json). It
   * only sees shared words, which BM25 already weighs better.
   */
  readonly defaultAlpha: EmbedderAlpha = {
    alpha: 1,
    basis: "MEASURED",
    source: "docs/evaluation/scifact-train-feature-hashing-256.json: SciFact nDCG@10 0.698 keyword only, 0.472 at alpha 0.5, 0.216 semantic only",
  };

  async embed(texts: readonly string[]): Promise<number[][]> {
    return texts.map(embedOne);
  }
}

function embedOne(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const [word] of text.toLowerCase().matchAll(WORD)) {
    const hash = fnv1a(word);
    // A sign from another bit of the hash makes colliding words cancel as often as they add,
    // so collisions do not inflate every similarity (the usual "hashing trick").
    vector[hash % DIMENSIONS]! += hash & 0x100 ? 1 : -1;
  }
  let sum = 0;
  for (const value of vector) sum += value * value;
  // A text without words (or whose words cancel out) has no direction of its own; the contract
  // asks for unit vectors, so all such texts share one fixed, arbitrary direction.
  if (sum === 0) {
    vector[0] = 1;
    return vector;
  }
  const norm = Math.sqrt(sum);
  return vector.map((value) => value / norm);
}

/** 32-bit FNV-1a over UTF-16 code units: tiny, fast and stable across runs and platforms. */
function fnv1a(word: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) {
    hash ^= word.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
