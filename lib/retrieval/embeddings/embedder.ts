/**
 * Turns text into vectors. Every vector we store records `model`, and a query is only ever
 * compared with vectors of the same model: vectors of different models live in different
 * spaces, and comparing them returns confident nonsense.
 */
import type { EmbedderAlpha } from "./default-alpha.js";

export interface Embedder {
  /** Stable id of the model, stored with every vector (e.g. "universal-sentence-encoder-lite", "openai/text-embedding-3-small"). */
  readonly model: string;
  /** Length of every vector this embedder returns. */
  readonly dimensions: number;
  /**
   * About how many characters of text the model actually reads; longer inputs are cut or
   * averaged into mush. The indexer chunks text to this size. Unset: no practical limit.
   */
  readonly maxInputChars?: number;
  /**
   * The alpha searches use with this embedder when the caller gives none, and where that number
   * comes from (default-alpha.ts). Unset: the conventional 0.5, reported as not measured.
   */
  readonly defaultAlpha?: EmbedderAlpha;
  /**
   * Embeds texts, returning one unit-length (L2-normalized) vector per text, in order.
   * Implementations split large inputs into batches themselves.
   */
  embed(texts: readonly string[]): Promise<number[][]>;
}
