/**
 * The embedders: OpenAI's client against a local server speaking OpenAI's embeddings protocol,
 * the bundled Universal Sentence Encoder (really loaded, offline), the hashing test aid, and
 * the cache in front of any of them.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { CachedEmbedder, embeddingCacheKey, type EmbeddingCacheEntry, type EmbeddingCacheStore } from "../../lib/retrieval/embeddings/cached-embedder.js";
import type { Embedder } from "../../lib/retrieval/embeddings/embedder.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { OpenAIEmbedder } from "../../lib/retrieval/embeddings/openai.js";
import { UniversalSentenceEncoderEmbedder } from "../../lib/retrieval/embeddings/universal-sentence-encoder.js";

const dot = (a: readonly number[], b: readonly number[]) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);
const norm = (a: readonly number[]) => Math.sqrt(dot(a, a));

// ---------------------------------------------------------------------------------------------
// A local server speaking OpenAI's embeddings protocol: POST /v1/embeddings
// {model, input: string[], dimensions?, encoding_format?} -> {object: "list", data: [{object:
// "embedding", index, embedding}], model, usage}. `embedding` is base64 of little-endian float32
// when the request asks for encoding_format "base64" (the openai client does by default).
// ---------------------------------------------------------------------------------------------
interface EmbeddingsRequest {
  headers: IncomingHttpHeaders;
  body: { model: string; input: string[]; dimensions?: number; encoding_format?: string };
}
type Reply = { status: number; body: unknown; headers?: Record<string, string> };
type Behaviour = (request: EmbeddingsRequest, standard: () => Reply) => Reply;

class LocalOpenAIEmbeddingsServer {
  readonly requests: EmbeddingsRequest[] = [];
  behaviour: Behaviour = (_request, standard) => standard();
  private server: Server | null = null;
  baseURL = "";

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        if (req.method !== "POST" || req.url !== "/v1/embeddings") {
          res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
          return;
        }
        const request: EmbeddingsRequest = { headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) };
        this.requests.push(request);
        const reply = this.behaviour(request, () => standardReply(request.body));
        res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers }).end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.baseURL = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  reset(): void {
    this.requests.length = 0;
    this.behaviour = (_request, standard) => standard();
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** A deterministic, not normalized vector per text, so tests can tell which text a vector belongs to. */
function fakeVector(text: string, dimensions: number): number[] {
  return Array.from({ length: dimensions }, (_, i) => (i === 0 ? text.length + 1 : Math.sin(text.charCodeAt(i % Math.max(text.length, 1)) + i)));
}

function encode(vector: number[], format: string | undefined): number[] | string {
  if (format !== "base64") return vector;
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString("base64");
}

function standardReply(body: EmbeddingsRequest["body"], dimensions = body.dimensions ?? 1536): Reply {
  return {
    status: 200,
    body: {
      object: "list",
      data: body.input.map((text, index) => ({ object: "embedding", index, embedding: encode(fakeVector(text, dimensions), body.encoding_format) })),
      model: body.model,
      usage: { prompt_tokens: body.input.length, total_tokens: body.input.length },
    },
  };
}

describe("OpenAIEmbedder, with the real openai client, against a local server speaking OpenAI's embeddings protocol", () => {
  const server = new LocalOpenAIEmbeddingsServer();
  beforeAll(() => server.start());
  afterAll(() => server.stop());
  const embedder = (options: Partial<ConstructorParameters<typeof OpenAIEmbedder>[0]> = {}) =>
    new OpenAIEmbedder({ apiKey: "sk-test-key", baseURL: server.baseURL, maxRetries: 0, ...options });

  it("splits large inputs into requests of at most batchSize inputs and maxRequestChars characters", async () => {
    server.reset();
    const texts = Array.from({ length: 7 }, (_, i) => `text number ${i}`);
    const vectors = await embedder({ batchSize: 3 }).embed(texts);
    expect(vectors).toHaveLength(7);
    expect(server.requests.map((request) => request.body.input.length)).toEqual([3, 3, 1]);
    expect(server.requests.flatMap((request) => request.body.input)).toEqual(texts);

    server.reset();
    const paragraphs = Array.from({ length: 5 }, (_, i) => `${i}`.repeat(100));
    await embedder({ maxRequestChars: 250 }).embed(paragraphs);
    expect(server.requests.map((request) => request.body.input.length)).toEqual([2, 2, 1]);

    server.reset();
    await embedder({ maxRequestChars: 50 }).embed(["x".repeat(80), "short"]);
    expect(server.requests.map((request) => request.body.input)).toEqual([["x".repeat(80)], ["short"]]);
  });

  it("returns vectors in input order even when the server lists them out of order", async () => {
    server.reset();
    server.behaviour = (_request, standard) => {
      const reply = standard();
      (reply.body as { data: unknown[] }).data.reverse();
      return reply;
    };
    const texts = ["alpha", "a somewhat longer beta", "gamma gamma", "d"];
    const vectors = await embedder().embed(texts);
    texts.forEach((text, i) => {
      const expected = fakeVector(text, 1536);
      expect(dot(vectors[i]!, expected) / norm(expected)).toBeCloseTo(1, 5);
    });
  });

  it("sends the API key as a bearer token, the model, and no dimensions unless asked", async () => {
    server.reset();
    const openai = embedder();
    await openai.embed(["hello"]);
    const [request] = server.requests;
    expect(request!.headers.authorization).toBe("Bearer sk-test-key");
    expect(request!.body.model).toBe("text-embedding-3-small");
    expect(request!.body).not.toHaveProperty("dimensions");
    expect(openai.dimensions).toBe(1536);
    // A custom base URL is recorded as "openai-compatible", never as the URL.
    expect(openai.model).toBe("openai-compatible/text-embedding-3-small");
    expect(new OpenAIEmbedder({ apiKey: "k" }).model).toBe("openai/text-embedding-3-small");
    expect(new OpenAIEmbedder({ apiKey: "k", baseURL: "http://user:secret@ollama.internal:11434/v1", model: "nomic-embed-text", nativeDimensions: 768, provider: "ollama" }).model).toBe("ollama/nomic-embed-text");
  });

  it("passes dimensions when set and records them in the model id", async () => {
    server.reset();
    const shortened = embedder({ dimensions: 512 });
    expect(shortened.model).toBe("openai-compatible/text-embedding-3-small@512");
    expect(new OpenAIEmbedder({ apiKey: "k", dimensions: 512 }).model).toBe("openai/text-embedding-3-small@512");
    expect(new OpenAIEmbedder({ apiKey: "k", dimensions: 1536 }).model).toBe("openai/text-embedding-3-small");
    const [vector] = await shortened.embed(["hello"]);
    expect(server.requests[0]!.body.dimensions).toBe(512);
    expect(vector).toHaveLength(512);
    expect(() => new OpenAIEmbedder({ apiKey: "k", model: "mxbai-embed-large" })).toThrow(/does not know how long "mxbai-embed-large"'s vectors are/);
  });

  it("returns unit vectors, decoding the base64 float32 the client asks for", async () => {
    server.reset();
    const vectors = await embedder().embed(["one", "two"]);
    expect(server.requests[0]!.body.encoding_format).toBe("base64");
    for (const vector of vectors) expect(norm(vector)).toBeCloseTo(1, 10);
  });

  it("also reads plain float arrays, from servers that ignore encoding_format", async () => {
    server.reset();
    server.behaviour = (request) => standardReply({ ...request.body, encoding_format: "float" });
    const [vector] = await embedder().embed(["hello"]);
    const expected = fakeVector("hello", 1536);
    expect(vector).toHaveLength(1536);
    expect(dot(vector!, expected) / norm(expected)).toBeCloseTo(1, 5);
  });

  it("sends an empty text as a single space, which the API accepts", async () => {
    server.reset();
    const vectors = await embedder().embed(["", "x"]);
    expect(server.requests[0]!.body.input).toEqual([" ", "x"]);
    expect(vectors).toHaveLength(2);
  });

  it("retries a 500 and then succeeds", async () => {
    server.reset();
    let calls = 0;
    server.behaviour = (_request, standard) => {
      calls += 1;
      return calls === 1 ? { status: 500, body: { error: { message: "temporary failure" } }, headers: { "retry-after-ms": "10" } } : standard();
    };
    const vectors = await embedder({ maxRetries: 2 }).embed(["hello", "world"]);
    expect(calls).toBe(2);
    expect(vectors).toHaveLength(2);
  });

  it("fails clearly when the server's vectors have the wrong length", async () => {
    server.reset();
    server.behaviour = (request) => standardReply(request.body, 3);
    await expect(embedder().embed(["hello"])).rejects.toThrow("openai-compatible/text-embedding-3-small: expected vectors of 1536 dimensions, got 3 for input 0");
  });

  it("fails clearly when the server returns the wrong number of vectors", async () => {
    server.reset();
    server.behaviour = (request) => standardReply({ ...request.body, input: request.body.input.slice(1) });
    await expect(embedder().embed(["a", "b", "c"])).rejects.toThrow("openai-compatible/text-embedding-3-small: expected 3 embeddings in the response, got 2");
  });

  it("names the model when the server refuses the request", async () => {
    server.reset();
    server.behaviour = () => ({ status: 400, body: { error: { message: "input is too long", type: "invalid_request_error" } } });
    await expect(embedder().embed(["hello"])).rejects.toThrow(/openai-compatible\/text-embedding-3-small: embeddings request for 1 text\(s\) failed: 400 input is too long/);
  });
});

// ---------------------------------------------------------------------------------------------
describe("UniversalSentenceEncoderEmbedder (the bundled model, loaded for real)", () => {
  const embedder = new UniversalSentenceEncoderEmbedder();
  const connections: string[] = [];
  const originalConnect = net.Socket.prototype.connect;
  const processListeners = () => ({ uncaughtException: process.listeners("uncaughtException").length, unhandledRejection: process.listeners("unhandledRejection").length });
  let listenersBeforeLoad: ReturnType<typeof processListeners>;

  beforeAll(async () => {
    listenersBeforeLoad = processListeners();
    // Any TCP connection while the model loads and runs would be a download attempt.
    net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
      connections.push(JSON.stringify(args[0]));
      return (originalConnect as (...a: unknown[]) => net.Socket).apply(this, args);
    } as typeof net.Socket.prototype.connect;
    await embedder.load();
  });
  afterAll(() => {
    net.Socket.prototype.connect = originalConnect;
  });

  it("loads from the bundled weights without opening a single connection", async () => {
    await embedder.embed(["a query after loading"]);
    expect(connections).toEqual([]);
    expect(embedder.model).toBe("universal-sentence-encoder-lite");
    // What the model reads, for chunking; the cache in front passes it on.
    expect(embedder.maxInputChars).toBe(450);
    expect(new CachedEmbedder(embedder, new MemoryCacheStore()).maxInputChars).toBe(450);
    expect(new CachedEmbedder(new FeatureHashingEmbedder(), new MemoryCacheStore()).maxInputChars).toBeUndefined();
  });

  it("leaves the process's uncaughtException and unhandledRejection handling as it was", () => {
    // The WASM backend's glue adds listeners that rethrow both; the embedder takes them off.
    expect(processListeners()).toEqual(listenersBeforeLoad);
  });

  it("returns 512-dimensional unit vectors", async () => {
    const vectors = await embedder.embed(["short", "A somewhat longer sentence about databases and locks."]);
    for (const vector of vectors) {
      expect(vector).toHaveLength(512);
      expect(norm(vector)).toBeCloseTo(1, 10);
    }
  });

  it("places related texts closer than unrelated ones", async () => {
    const [question, deadlock, travel, indexAdvice] = await embedder.embed([
      "How do I fix a deadlock in PostgreSQL?",
      "Two transactions lock rows in opposite order",
      "Four days in Lisbon with pastéis de nata",
      "Add an index on the foreign key so the update does not scan the whole table",
    ]);
    expect(dot(question!, deadlock!)).toBeGreaterThan(dot(question!, travel!));
    expect(dot(question!, indexAdvice!)).toBeGreaterThan(dot(question!, travel!));
    expect(dot(deadlock!, travel!)).toBeLessThan(0.3);
  });

  it("is deterministic, and a text's vector does not depend on its batch", async () => {
    const texts = Array.from({ length: 20 }, (_, i) => `Conversation ${i} about ${i % 2 ? "Kubernetes autoscaling" : "pricing pages"}`);
    const first = await embedder.embed(texts);
    expect(await embedder.embed(texts)).toEqual(first);
    const [alone] = await embedder.embed([texts[7]!]);
    expect(dot(alone!, first[7]!)).toBeCloseTo(1, 5);
  });

  it("embeds empty texts wherever they are in the batch (the package alone drops or rejects them)", async () => {
    const [onlyEmpty] = await embedder.embed([""]);
    const mixed = await embedder.embed(["first", "", "last", ""]);
    expect(mixed).toHaveLength(4);
    for (const vector of [onlyEmpty!, ...mixed]) expect(norm(vector)).toBeCloseTo(1, 10);
    expect(mixed[1]).toEqual(onlyEmpty);
    expect(mixed[3]).toEqual(onlyEmpty);
    expect(dot(mixed[0]!, mixed[2]!)).toBeLessThan(0.999);
    expect(await embedder.embed([])).toEqual([]);
  });

  it("reads only the beginning of a long text, and a very long one costs no more than that", async () => {
    const beginning = "Our checkout service deadlocks under load when two transactions update inventory rows in opposite order. ".repeat(12);
    const [a, b] = await embedder.embed([`${beginning} The rest is about Lisbon.`, `${beginning} The rest is about Kubernetes.`]);
    // The model clips every input to 128 word pieces: different endings, same vector.
    expect(dot(a!, b!)).toBeCloseTo(1, 5);
    // 200,000 characters: without the cut before tokenizing this would take minutes.
    const [huge] = await embedder.embed([beginning.repeat(150)]);
    expect(dot(huge!, a!)).toBeCloseTo(1, 5);
  });

  it("serves concurrent callers from the one model", async () => {
    const other = new UniversalSentenceEncoderEmbedder({ batchSize: 2 });
    const [x, y] = await Promise.all([embedder.embed(["alpha", "beta", "gamma"]), other.embed(["alpha", "delta", "epsilon"])]);
    expect(dot(x[0]!, y[0]!)).toBeCloseTo(1, 5);
  });
});

// ---------------------------------------------------------------------------------------------
describe("FeatureHashingEmbedder (test aid)", () => {
  it("is deterministic, 256-d, unit length, case-insensitive, and scores shared words", async () => {
    const embedder = new FeatureHashingEmbedder();
    const [a, b, c, empty] = await embedder.embed(["Deadlock in PostgreSQL", "postgresql DEADLOCK in", "Lisbon pastries", ""]);
    expect(embedder.model).toBe("feature-hashing-256");
    expect(a).toHaveLength(256);
    expect(a).toEqual(b);
    for (const vector of [a!, c!, empty!]) expect(norm(vector)).toBeCloseTo(1, 10);
    expect(dot(a!, c!)).toBeLessThan(dot(a!, b!));
    expect(await embedder.embed(["Deadlock in PostgreSQL"])).toEqual([a]);
  });
});

// ---------------------------------------------------------------------------------------------
class CountingEmbedder implements Embedder {
  readonly model = "counting";
  readonly dimensions = 4;
  readonly calls: string[][] = [];
  async embed(texts: readonly string[]): Promise<number[][]> {
    this.calls.push([...texts]);
    return texts.map((text) => [text.length, 1, 0, 0]);
  }
}

class MemoryCacheStore implements EmbeddingCacheStore {
  readonly entries = new Map<string, number[]>();
  gets = 0;
  async get(model: string, hashes: readonly string[]): Promise<Map<string, number[]>> {
    this.gets += 1;
    const found = new Map<string, number[]>();
    for (const hash of hashes) {
      const vector = this.entries.get(`${model}:${hash}`);
      if (vector) found.set(hash, vector);
    }
    return found;
  }
  async put(model: string, entries: readonly EmbeddingCacheEntry[]): Promise<void> {
    for (const entry of entries) if (!this.entries.has(`${model}:${entry.hash}`)) this.entries.set(`${model}:${entry.hash}`, entry.vector);
  }
}

describe("CachedEmbedder", () => {
  it("keys by the sha256 of the exact text", () => {
    expect(embeddingCacheKey("hello")).toBe("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
    expect(embeddingCacheKey("hello ")).not.toBe(embeddingCacheKey("hello"));
  });

  it("asks the inner embedder only for texts it has not seen, each once, and keeps input order", async () => {
    const inner = new CountingEmbedder();
    const store = new MemoryCacheStore();
    const cached = new CachedEmbedder(inner, store);
    expect(cached.model).toBe("counting");
    expect(cached.dimensions).toBe(4);

    const first = await cached.embed(["a", "bb", "a", "ccc", "bb"]);
    expect(inner.calls).toEqual([["a", "bb", "ccc"]]);
    expect(first.map((vector) => vector[0])).toEqual([1, 2, 1, 3, 2]);

    const second = await cached.embed(["ccc", "a", "bb"]);
    expect(inner.calls).toHaveLength(1);
    expect(second.map((vector) => vector[0])).toEqual([3, 1, 2]);

    const third = await cached.embed(["dddd", "a", "dddd"]);
    expect(inner.calls).toEqual([["a", "bb", "ccc"], ["dddd"]]);
    expect(third.map((vector) => vector[0])).toEqual([4, 1, 4]);
    expect(await cached.embed([])).toEqual([]);
  });

  it("re-embeds a cached vector of the wrong length", async () => {
    const inner = new CountingEmbedder();
    const store = new MemoryCacheStore();
    store.entries.set(`counting:${embeddingCacheKey("a")}`, [1, 2]);
    const [vector] = await new CachedEmbedder(inner, store).embed(["a"]);
    expect(vector).toEqual([1, 1, 0, 0]);
    expect(inner.calls).toEqual([["a"]]);
  });

  it("throws store errors, or reports them and embeds without the cache when asked to", async () => {
    const broken: EmbeddingCacheStore = {
      get: async () => Promise.reject(new Error("cache is down")),
      put: async () => Promise.reject(new Error("cache is still down")),
    };
    await expect(new CachedEmbedder(new CountingEmbedder(), broken).embed(["a"])).rejects.toThrow("cache is down");
    const reported: string[] = [];
    const tolerant = new CachedEmbedder(new CountingEmbedder(), broken, { onStoreError: (error, operation) => reported.push(`${operation}: ${(error as Error).message}`) });
    expect(await tolerant.embed(["a", "bb"])).toEqual([
      [1, 1, 0, 0],
      [2, 1, 0, 0],
    ]);
    expect(reported).toEqual(["get: cache is down", "put: cache is still down"]);
  });
});
