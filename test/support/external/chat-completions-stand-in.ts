/**
 * A local stand-in for an OpenAI-compatible chat-completions endpoint (`POST /chat/completions`),
 * for testing the real `openai` package against. It is NOT a language model and NOT OpenAI: it
 * streams a text it was given (`answer`), word by word, in the documented server-sent-events
 * shape (`chat.completion.chunk` objects, `delta.content`, a last chunk with `finish_reason`,
 * the usage chunk with empty `choices` when `stream_options.include_usage` is set, then
 * `data: [DONE]`), or one JSON `chat.completion` when `stream` is false.
 *
 * It checks `Authorization: Bearer <key>` against `apiKeys` (401 otherwise) and honours
 * `max_tokens` / `max_completion_tokens` by counting words as tokens (finish_reason "length").
 * `behaviour` switches on what real endpoints do when they fail or misbehave (see
 * ChatCompletionsBehaviour). Every request is recorded in `requests`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { StandInServer, bearerToken, sendJson, type RecordedVendorRequest } from "./stand-in-server.js";

export type ChatCompletionsBehaviour =
  /** Streams `answer` and stops (finish_reason "stop"), or at the token limit ("length"). */
  | "answer"
  /** HTTP 401, OpenAI's invalid_api_key error. */
  | "unauthorized"
  /** HTTP 429 with Retry-After: `retryAfterSeconds`. */
  | "rate-limited"
  /** HTTP 500. */
  | "internal"
  /** Never sends the response headers. */
  | "hang"
  /** Streams words forever, ignoring the token limit, never finishing. */
  | "endless"
  /** Sends the headers and then only SSE comments (keep-alives) forever: no token, no end. */
  | "silent"
  /** One delta whose bytes are not UTF-8 (0xC3 0x28 in the middle of a word). */
  | "invalid-utf8"
  /** The model declines: `delta.refusal` text, finish_reason "stop", no content. */
  | "refusal"
  /** The vendor's content filter stops the answer: finish_reason "content_filter". */
  | "content-filter"
  /** A `data:` line that is not JSON. */
  | "malformed"
  /** The connection closes after two deltas, without finish_reason or [DONE]. */
  | "cut-off";

export interface RecordedChatRequest extends RecordedVendorRequest {
  body: Record<string, unknown> | undefined;
}

export class ChatCompletionsStandIn {
  readonly requests: RecordedChatRequest[] = [];
  readonly apiKeys = new Set<string>();
  behaviour: ChatCompletionsBehaviour = "answer";
  /** Behaviours for the next requests, first one first; `behaviour` applies once they are used up. */
  readonly next: ChatCompletionsBehaviour[] = [];
  answer = "PostgreSQL ranks full-text matches with ts_rank [p1], and BM25 needs term statistics [p2].";
  retryAfterSeconds = 1;
  /** Usage reported for the prompt. */
  promptTokens = 123;
  /** Milliseconds between streamed chunks. */
  chunkDelayMs = 2;
  /** Streams still open (endless and silent ones until the client goes away). */
  openStreams = 0;

  private constructor(private readonly server: StandInServer) {}

  static async start(): Promise<ChatCompletionsStandIn> {
    let standIn: ChatCompletionsStandIn | undefined;
    const server = await StandInServer.start((request, rawBody, response) => void standIn!.handle(request, rawBody, response));
    standIn = new ChatCompletionsStandIn(server);
    return standIn;
  }

  get baseURL(): string {
    return `${this.server.origin}/v1`;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private async handle(request: IncomingMessage, rawBody: string, response: ServerResponse): Promise<void> {
    const body = parseJson(rawBody);
    this.requests.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers, rawBody, body });
    if (request.method !== "POST" || request.url !== "/v1/chat/completions") {
      return sendJson(response, 404, { error: { message: `Unknown request URL: ${request.method} ${request.url}`, type: "invalid_request_error", code: "unknown_url" } });
    }
    const behaviour = this.next.shift() ?? this.behaviour;
    const key = bearerToken(request);
    if (behaviour === "unauthorized" || !key || !this.apiKeys.has(key)) {
      return sendJson(response, 401, { error: { message: "Incorrect API key provided.", type: "invalid_request_error", code: "invalid_api_key" } });
    }
    if (!body || typeof body.model !== "string" || !Array.isArray(body.messages) || body.messages.length === 0) {
      return sendJson(response, 400, { error: { message: "'model' and a non-empty 'messages' are required.", type: "invalid_request_error", code: null } });
    }
    if (behaviour === "rate-limited") {
      return sendJson(response, 429, { error: { message: "Rate limit reached for requests", type: "requests", code: "rate_limit_exceeded" } }, { "retry-after": String(this.retryAfterSeconds) });
    }
    if (behaviour === "internal") return sendJson(response, 500, { error: { message: "The server had an error while processing your request.", type: "server_error", code: null } });
    if (behaviour === "hang") return this.server.hang(response);

    const model = body.model;
    const limit = Number(body.max_completion_tokens ?? body.max_tokens ?? Infinity);
    const words = this.answer.split(/(?<= )/);
    const id = `chatcmpl-${crypto.randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] });

    if (body.stream !== true) {
      const kept = words.slice(0, limit);
      return sendJson(response, 200, {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{ index: 0, message: { role: "assistant", content: kept.join(""), refusal: null }, finish_reason: kept.length < words.length ? "length" : "stop" }],
        usage: { prompt_tokens: this.promptTokens, completion_tokens: kept.length, total_tokens: this.promptTokens + kept.length },
      });
    }

    response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
    this.openStreams += 1;
    response.on("close", () => (this.openStreams -= 1));
    const send = (data: unknown) => response.write(`data: ${JSON.stringify(data)}\n\n`);
    const pause = () => new Promise((resolve) => setTimeout(resolve, this.chunkDelayMs));
    const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    const finish = (reason: string, completionTokens: number) => {
      send(chunk({}, reason));
      if (includeUsage) send({ id, object: "chat.completion.chunk", created, model, choices: [], usage: { prompt_tokens: this.promptTokens, completion_tokens: completionTokens, total_tokens: this.promptTokens + completionTokens } });
      response.end("data: [DONE]\n\n");
    };

    send(chunk({ role: "assistant", content: "", refusal: null }));
    switch (behaviour) {
      case "endless":
        for (let i = 0; !response.destroyed; i++) {
          send(chunk({ content: `word${i} ` }));
          await pause();
        }
        return;
      case "silent":
        while (!response.destroyed) {
          response.write(": keep-alive\n\n");
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return;
      case "invalid-utf8":
        send(chunk({ content: "Post" }));
        // A JSON string whose bytes are not UTF-8: 0xC3 must be followed by a continuation byte.
        {
          const [before, after] = JSON.stringify(chunk({ content: "gre\u0000SQL" })).split("\\u0000") as [string, string];
          response.write(Buffer.concat([Buffer.from(`data: ${before}`), Buffer.from([0xc3, 0x28]), Buffer.from(`${after}\n\n`)]));
        }
        return finish("stop", 3);
      case "refusal":
        send(chunk({ refusal: "I'm sorry, I can't help with that." }));
        return finish("stop", 9);
      case "content-filter":
        send(chunk({ content: "Here is" }));
        return finish("content_filter", 2);
      case "malformed":
        response.write("data: {\"id\": \"chatcmpl-1\", \"choices\": [\n\n");
        return finish("stop", 0);
      case "cut-off":
        send(chunk({ content: words[0] }));
        send(chunk({ content: words[1] }));
        response.end();
        return;
      default: {
        let sent = 0;
        for (const word of words) {
          if (sent >= limit || response.destroyed) break;
          send(chunk({ content: word }));
          sent += 1;
          await pause();
        }
        if (!response.destroyed) finish(sent < words.length ? "length" : "stop", sent);
      }
    }
  }
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
