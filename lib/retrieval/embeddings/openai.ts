/**
 * Embeddings from OpenAI's API (`text-embedding-3-small` by default), or from any server that
 * speaks its `POST /v1/embeddings` protocol (Ollama, vLLM, Hugging Face TEI) through `baseURL`.
 */
import OpenAI from "openai";
import { CONVENTIONAL_ALPHA, type EmbedderAlpha } from "./default-alpha.js";
import type { Embedder } from "./embedder.js";

const OPENAI_BASE_URL = "https://api.openai.com/v1";
const DEFAULT_MODEL = "text-embedding-3-small";
/** Vector lengths OpenAI's models return when no `dimensions` is requested. */
const NATIVE_DIMENSIONS: Readonly<Record<string, number>> = {
  "text-embedding-3-small": 1536,
  "text-embedding-3-large": 3072,
  "text-embedding-ada-002": 1536,
};
// OpenAI accepts up to 2,048 inputs and 300,000 tokens per request. 256 inputs keeps a request
// (and a retry of it) small; 200,000 characters stays under the token limit even for scripts
// that spend 1.5 tokens per character, where English spends about 0.25.
const DEFAULT_BATCH_SIZE = 256;
const DEFAULT_MAX_REQUEST_CHARS = 200_000;

export interface OpenAIEmbedderOptions {
  apiKey: string;
  /** An OpenAI-compatible server, e.g. "http://127.0.0.1:11434/v1" for Ollama. Default: OpenAI. */
  baseURL?: string;
  /** Default "text-embedding-3-small". */
  model?: string;
  /**
   * Ask for vectors of this length (the text-embedding-3 models can shorten theirs). Sent to the
   * API only when set here; the vectors then live in a space of their own ("…@512").
   */
  dimensions?: number;
  /**
   * Length of the model's vectors when no `dimensions` is asked for. Known for OpenAI's models;
   * required for any other model unless `dimensions` is set.
   */
  nativeDimensions?: number;
  /**
   * Names the provider in the model id recorded on vectors: "openai" for OpenAI's API,
   * "openai-compatible" for any other base URL unless set (e.g. "ollama"). The URL itself is
   * never recorded: it can carry credentials, and moving a server does not change its vectors.
   */
  provider?: string;
  /** Inputs per request (default 256, at most 2,048). */
  batchSize?: number;
  /** Characters per request, summed over its inputs (default 200,000); a longer single text goes alone. */
  maxRequestChars?: number;
  /** Per request, in milliseconds (the client's default: 10 minutes). */
  timeout?: number;
  /** Retries of a failed request: connection errors, 408, 409, 429 and 5xx (the client's default: 2). */
  maxRetries?: number;
}

export class OpenAIEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  /**
   * The conventional hybrid default, not a measurement: no OpenAI-compatible server is reachable
   * where this project is evaluated. Deployments measure theirs with `npm run eval` and set
   * SEARCH_DEFAULT_ALPHA.
   */
  readonly defaultAlpha: EmbedderAlpha = {
    alpha: CONVENTIONAL_ALPHA,
    basis: "CONVENTIONAL",
    source: "not measured for OpenAI-compatible embedders: the conventional hybrid default (measure with npm run eval, then set SEARCH_DEFAULT_ALPHA)",
  };
  private readonly client: OpenAI;
  private readonly apiModel: string;
  private readonly requestedDimensions: number | undefined;
  private readonly batchSize: number;
  private readonly maxRequestChars: number;

  constructor(options: OpenAIEmbedderOptions) {
    if (!options.apiKey) throw new Error("OpenAIEmbedder needs an apiKey (any non-empty string for servers that ignore it)");
    this.apiModel = options.model ?? DEFAULT_MODEL;
    this.requestedDimensions = positiveInteger("dimensions", options.dimensions);
    const native = positiveInteger("nativeDimensions", options.nativeDimensions) ?? NATIVE_DIMENSIONS[this.apiModel];
    const dimensions = this.requestedDimensions ?? native;
    if (dimensions === undefined) {
      throw new Error(`OpenAIEmbedder does not know how long "${this.apiModel}"'s vectors are: pass nativeDimensions (or dimensions, which is sent to the API)`);
    }
    this.dimensions = dimensions;
    this.batchSize = positiveInteger("batchSize", options.batchSize) ?? DEFAULT_BATCH_SIZE;
    if (this.batchSize > 2048) throw new RangeError(`batchSize must be at most 2048 (the API's limit), got ${this.batchSize}`);
    this.maxRequestChars = positiveInteger("maxRequestChars", options.maxRequestChars) ?? DEFAULT_MAX_REQUEST_CHARS;

    const baseURL = options.baseURL?.replace(/\/+$/, "") || OPENAI_BASE_URL;
    const provider = options.provider ?? (baseURL === OPENAI_BASE_URL ? "openai" : "openai-compatible");
    const suffix = this.requestedDimensions !== undefined && this.requestedDimensions !== native ? `@${this.requestedDimensions}` : "";
    this.model = `${provider}/${this.apiModel}${suffix}`;

    this.client = new OpenAI({
      apiKey: options.apiKey,
      // Set explicitly so the client takes no credentials, URL or account from OPENAI_*
      // environment variables: configuration comes from the caller. (It still honours its
      // debugging switches OPENAI_LOG and OPENAI_CUSTOM_HEADERS, which no option turns off.)
      baseURL,
      adminAPIKey: null,
      organization: null,
      project: null,
      webhookSecret: null,
      ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
      ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    });
  }

  async embed(texts: readonly string[]): Promise<number[][]> {
    const vectors: number[][] = [];
    for (const batch of this.batches(texts)) vectors.push(...(await this.request(batch)));
    return vectors;
  }

  private *batches(texts: readonly string[]): Generator<string[]> {
    let batch: string[] = [];
    let chars = 0;
    for (const text of texts) {
      if (batch.length > 0 && (batch.length >= this.batchSize || chars + text.length > this.maxRequestChars)) {
        yield batch;
        batch = [];
        chars = 0;
      }
      // The API rejects an empty input; a single space says the same thing: nothing.
      batch.push(text.length === 0 ? " " : text);
      chars += text.length;
    }
    if (batch.length > 0) yield batch;
  }

  private async request(inputs: string[]): Promise<number[][]> {
    let response: OpenAI.CreateEmbeddingResponse;
    try {
      response = await this.client.embeddings.create({
        model: this.apiModel,
        input: inputs,
        ...(this.requestedDimensions !== undefined ? { dimensions: this.requestedDimensions } : {}),
        // Asked for explicitly so the client hands the data back undecoded: some compatible
        // servers ignore the format and send floats, which the client's own base64 decoding
        // silently turns into vectors a quarter of the length. `decodeEmbedding` accepts both.
        encoding_format: "base64",
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`${this.model}: embeddings request for ${inputs.length} text(s) failed: ${reason}`, { cause: error });
    }
    return this.readVectors(response, inputs.length);
  }

  private readVectors(response: unknown, expected: number): number[][] {
    const data = (response as { data?: unknown } | null)?.data;
    if (!Array.isArray(data)) throw new Error(`${this.model}: expected a response with a data array, got ${preview(response)}`);
    if (data.length !== expected) throw new Error(`${this.model}: expected ${expected} embeddings in the response, got ${data.length}`);
    const vectors: number[][] = new Array(expected);
    data.forEach((item: { index?: unknown; embedding?: unknown }, position) => {
      // The protocol says each item carries its input's index; order in the array is not promised.
      const index = item?.index ?? position;
      if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= expected || vectors[index]) {
        throw new Error(`${this.model}: expected each index 0..${expected - 1} once in the response, got index ${preview(index)}`);
      }
      const vector = decodeEmbedding(item?.embedding);
      if (!vector) throw new Error(`${this.model}: expected embedding ${index} as base64 float32 or an array of numbers, got ${preview(item?.embedding)}`);
      if (vector.length !== this.dimensions) {
        throw new Error(`${this.model}: expected vectors of ${this.dimensions} dimensions, got ${vector.length} for input ${index}`);
      }
      vectors[index] = normalize(vector, this.model, index);
    });
    return vectors;
  }
}

/** base64 of little-endian float32 values (what `encoding_format: "base64"` means), or a plain array. */
function decodeEmbedding(embedding: unknown): number[] | null {
  if (typeof embedding === "string") {
    const bytes = Buffer.from(embedding, "base64");
    if (bytes.length % 4 !== 0) return null;
    const vector = new Array<number>(bytes.length / 4);
    for (let i = 0; i < vector.length; i++) vector[i] = bytes.readFloatLE(i * 4);
    return vector;
  }
  if (Array.isArray(embedding) && embedding.every((value) => typeof value === "number")) return embedding as number[];
  return null;
}

function normalize(vector: number[], model: string, index: number): number[] {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const norm = Math.sqrt(sum);
  if (!(norm > 0) || !Number.isFinite(norm)) throw new Error(`${model}: embedding ${index} cannot be normalized (norm ${norm})`);
  return vector.map((value) => value / norm);
}

function positiveInteger(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

function preview(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}
