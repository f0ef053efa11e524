/**
 * Remembers vectors by (model, sha256 of the exact text), so re-indexing an unchanged
 * conversation, or a chunk that many conversations share, costs a lookup instead of a model
 * call (or an API bill).
 */
import { createHash } from "node:crypto";
import type { Database } from "../../database/connect.js";
import type { EmbedderAlpha } from "./default-alpha.js";
import type { Embedder } from "./embedder.js";

export interface EmbeddingCacheEntry {
  /** sha256 hex of the text. */
  hash: string;
  vector: number[];
}

export interface EmbeddingCacheStore {
  /** The cached vectors among `hashes` for `model`; hashes not cached are absent from the map. */
  get(model: string, hashes: readonly string[]): Promise<Map<string, number[]>>;
  /** Stores vectors; an entry already cached for (model, hash) is left as it is. */
  put(model: string, entries: readonly EmbeddingCacheEntry[]): Promise<void>;
}

export interface CachedEmbedderOptions {
  /**
   * Called when the store fails; embedding then goes on without the cache (a failed read counts
   * as all misses, a failed write loses only the caching). Without it, store errors are thrown.
   */
  onStoreError?: (error: unknown, operation: "get" | "put") => void;
}

export function embeddingCacheKey(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

export class CachedEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  /** The inner embedder's, when it says how much text it reads (chunking sizes itself by it). */
  readonly maxInputChars?: number;
  /** The inner embedder's: the cache does not change what the vectors are worth. */
  readonly defaultAlpha?: EmbedderAlpha;

  constructor(
    private readonly inner: Embedder,
    private readonly store: EmbeddingCacheStore,
    private readonly options: CachedEmbedderOptions = {},
  ) {
    this.model = inner.model;
    this.dimensions = inner.dimensions;
    this.maxInputChars = (inner as { maxInputChars?: number }).maxInputChars;
    if (inner.defaultAlpha) this.defaultAlpha = inner.defaultAlpha;
  }

  async embed(texts: readonly string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    const hashes = texts.map(embeddingCacheKey);
    const unique = [...new Set(hashes)];
    const known = await this.attempt("get", () => this.store.get(this.model, unique), new Map<string, number[]>());

    // One inner call for every distinct text the cache does not hold (or holds with the wrong
    // length, e.g. written by an older configuration: re-embedding it is the safe answer).
    const vectors = new Map<string, number[]>();
    const missing: { hash: string; text: string }[] = [];
    const seen = new Set<string>();
    hashes.forEach((hash, index) => {
      const cached = known.get(hash);
      if (cached && cached.length === this.dimensions) vectors.set(hash, cached);
      else if (!seen.has(hash)) missing.push({ hash, text: texts[index]! });
      seen.add(hash);
    });

    if (missing.length > 0) {
      const embedded = await this.inner.embed(missing.map((item) => item.text));
      if (embedded.length !== missing.length) {
        throw new Error(`${this.model}: expected ${missing.length} vectors from the embedder, got ${embedded.length}`);
      }
      const entries = missing.map((item, index) => {
        const vector = embedded[index]!;
        if (vector.length !== this.dimensions) {
          throw new Error(`${this.model}: expected vectors of ${this.dimensions} dimensions from the embedder, got ${vector.length}`);
        }
        vectors.set(item.hash, vector);
        return { hash: item.hash, vector };
      });
      await this.attempt("put", () => this.store.put(this.model, entries), undefined);
    }
    // Copies: a caller that changes a returned vector must not change a duplicate's or the cache's.
    return hashes.map((hash) => [...vectors.get(hash)!]);
  }

  private async attempt<T>(operation: "get" | "put", work: () => Promise<T>, fallback: T): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (!this.options.onStoreError) throw error;
      this.options.onStoreError(error, operation);
      return fallback;
    }
  }
}

/** The cache in PostgreSQL (or PGlite): table `embedding_cache`, created by the search migration. */
export class PostgresEmbeddingCacheStore implements EmbeddingCacheStore {
  constructor(private readonly database: Database) {}

  async get(model: string, hashes: readonly string[]): Promise<Map<string, number[]>> {
    const found = new Map<string, number[]>();
    if (hashes.length === 0) return found;
    const rows = await this.database.prisma.$queryRawUnsafe<{ text_hash: string; embedding: string }[]>(
      `SELECT text_hash, embedding::text AS embedding FROM embedding_cache WHERE model = $1 AND text_hash = ANY($2::text[])`,
      model,
      [...hashes],
    );
    for (const row of rows) found.set(row.text_hash, parseVector(row.embedding, model, row.text_hash));
    return found;
  }

  async put(model: string, entries: readonly EmbeddingCacheEntry[]): Promise<void> {
    if (entries.length === 0) return;
    // One statement for all entries: two parallel arrays, unnested into rows. pgvector reads a
    // vector from its text form "[0.1,0.2,...]".
    await this.database.prisma.$executeRawUnsafe(
      `INSERT INTO embedding_cache (model, text_hash, embedding)
       SELECT $1, entry.text_hash, entry.embedding::vector
       FROM unnest($2::text[], $3::text[]) AS entry(text_hash, embedding)
       ON CONFLICT (model, text_hash) DO NOTHING`,
      model,
      entries.map((entry) => entry.hash),
      entries.map((entry) => formatVector(entry.vector, model, entry.hash)),
    );
  }
}

function formatVector(vector: readonly number[], model: string, hash: string): string {
  if (!vector.every(Number.isFinite)) throw new Error(`${model}: cannot cache a vector with non-finite values (text ${hash})`);
  return `[${vector.join(",")}]`;
}

function parseVector(text: string, model: string, hash: string): number[] {
  // pgvector prints "[0.1,0.2,...]", which is JSON; it never stores NaN or infinities.
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed) || !parsed.every((value) => typeof value === "number")) {
    throw new Error(`${model}: expected a cached embedding like "[0.1,0.2]" for text ${hash}, got ${text.slice(0, 60)}`);
  }
  return parsed as number[];
}
