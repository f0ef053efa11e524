/**
 * A local stand-in for an OpenAI-compatible embeddings endpoint (`POST /v1/embeddings`), for
 * running the real `openai` package (lib/retrieval/embeddings/openai.ts) against, in this process
 * or in a child one (EMBEDDER=openai, OPENAI_BASE_URL). It is NOT a model: its vectors are the
 * feature-hashing embedder's, sent back as the protocol's base64 float32 (or as numbers when
 * `encoding_format` is "float"), so texts that share words come out similar.
 *
 * A test can stop it answering after a number of requests (`holdAfter`): the next request is left
 * hanging, and the test learns of it, so a caller is stopped mid-work at a point the test chose,
 * counted rather than timed. Every answered request's inputs are recorded in `answered`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { FeatureHashingEmbedder } from "../../../lib/retrieval/embeddings/hashing-embedder.js";
import { StandInServer, sendJson } from "./stand-in-server.js";

const vectors = new FeatureHashingEmbedder();

export class EmbeddingsStandIn {
  /** The inputs of every request answered, one array per request, in order. */
  readonly answered: string[][] = [];
  /** Vector length (the feature-hashing embedder's): what OPENAI_EMBEDDING_DIMENSIONS must say. */
  readonly dimensions = vectors.dimensions;
  private answersLeft = Number.POSITIVE_INFINITY;
  private onHeld: (() => void) | null = null;

  private constructor(private readonly server: StandInServer) {}

  static async start(): Promise<EmbeddingsStandIn> {
    let standIn: EmbeddingsStandIn | undefined;
    const server = await StandInServer.start((request, rawBody, response) => void standIn!.handle(request, rawBody, response));
    standIn = new EmbeddingsStandIn(server);
    return standIn;
  }

  get baseURL(): string {
    return `${this.server.origin}/v1`;
  }

  /**
   * Answers `requests` more requests, then leaves every later one hanging until `answerAll()`.
   * Resolves when the first request is held: its caller is now waiting on it.
   */
  holdAfter(requests: number): Promise<void> {
    this.answersLeft = requests;
    return new Promise((resolve) => (this.onHeld = resolve));
  }

  /** Answers every request from now on (one already held stays held: its caller is gone or will give up). */
  answerAll(): void {
    this.answersLeft = Number.POSITIVE_INFINITY;
    this.onHeld = null;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private async handle(request: IncomingMessage, rawBody: string, response: ServerResponse): Promise<void> {
    if (request.method !== "POST" || !request.url?.endsWith("/embeddings")) return sendJson(response, 404, { error: { message: `no route ${request.method} ${request.url}` } });
    const body = JSON.parse(rawBody) as { model?: string; input?: string | string[]; encoding_format?: string };
    const inputs = typeof body.input === "string" ? [body.input] : body.input;
    if (!Array.isArray(inputs) || inputs.length === 0) return sendJson(response, 400, { error: { message: "input must be a string or a non-empty array of strings", type: "invalid_request_error" } });
    if (this.answersLeft <= 0) {
      this.server.hang(response);
      const held = this.onHeld;
      this.onHeld = null;
      held?.();
      return;
    }
    this.answersLeft -= 1;
    this.answered.push(inputs);
    const embedded = await vectors.embed(inputs);
    const asFloats = body.encoding_format === "float";
    sendJson(response, 200, {
      object: "list",
      model: body.model,
      data: embedded.map((vector, index) => ({ object: "embedding", index, embedding: asFloats ? vector : Buffer.from(new Float32Array(vector).buffer).toString("base64") })),
      usage: { prompt_tokens: 0, total_tokens: 0 },
    });
  }
}
