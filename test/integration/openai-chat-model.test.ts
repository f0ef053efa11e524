/**
 * The OpenAI-compatible chat model (lib/language-models/openai-chat.ts), with the real `openai`
 * package, against the local chat-completions stand-in (test/support/external/): streaming in
 * order, usage, our own bounds (tokens, time, bytes, UTF-8), refusals, and each failure as the
 * contract's code. No database.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import type { GenerationRequest } from "../../lib/language-models/language-model.js";
import { OpenAIChatModel } from "../../lib/language-models/openai-chat.js";
import { VendorFailure } from "../../lib/language-models/vendor-failure.js";
import { countTokens } from "../../lib/text/token-count.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { ChatCompletionsStandIn } from "../support/external/chat-completions-stand-in.js";
import { failureOf } from "../support/language-models.js";

const KEY = "sk-stand-in-7d1e";
const ANSWER = "PostgreSQL ranks full-text matches with ts_rank [p1], and BM25 needs term statistics [p2].";

function request(maxOutputTokens = 200, signal?: AbortSignal): GenerationRequest {
  return {
    messages: [
      { role: "system", content: "Answer only from the passages; cite them by id." },
      { role: "user", content: "<passage id=\"p1\">ts_rank</passage>\nHow does PostgreSQL rank?" },
    ],
    maxOutputTokens,
    ...(signal ? { signal } : {}),
  };
}

describe("OpenAIChatModel against the chat-completions stand-in", () => {
  let standIn: ChatCompletionsStandIn;
  let model: OpenAIChatModel;

  beforeAll(async () => {
    standIn = await ChatCompletionsStandIn.start();
    standIn.apiKeys.add(KEY);
    model = new OpenAIChatModel({ baseURL: standIn.baseURL, apiKey: KEY, model: "stand-in-model", timeBudgetMs: 5_000 });
  });
  afterEach(() => {
    standIn.behaviour = "answer";
    standIn.next.length = 0;
    standIn.requests.length = 0;
  });
  afterAll(async () => {
    await standIn.close();
    await closeWorkerPools();
  });

  it("sends a streaming request with the key, the messages, the token bound and include_usage", async () => {
    await model.generate(request(150));
    expect(standIn.requests).toHaveLength(1);
    const [sent] = standIn.requests;
    expect(sent!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent!.headers["openai-organization"]).toBeUndefined();
    expect(sent!.body).toMatchObject({ model: "stand-in-model", stream: true, stream_options: { include_usage: true }, max_completion_tokens: 150 });
    expect(sent!.body!.max_tokens).toBeUndefined();
    expect((sent!.body!.messages as { role: string }[]).map((message) => message.role)).toEqual(["system", "user"]);
  });

  it("sends max_tokens instead when told to (servers that predate max_completion_tokens)", async () => {
    const older = new OpenAIChatModel({ baseURL: standIn.baseURL, apiKey: KEY, model: "llama3", maxTokensParameter: "max_tokens" });
    await older.generate(request(77));
    expect(standIn.requests[0]!.body).toMatchObject({ max_tokens: 77 });
    expect(standIn.requests[0]!.body!.max_completion_tokens).toBeUndefined();
  });

  it("passes the deltas on in order as they stream, and reads the vendor's usage and model", async () => {
    const deltas: string[] = [];
    const result = await model.generate(request(), (delta) => deltas.push(delta));
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.join("")).toBe(standIn.answer);
    expect(result).toEqual({ text: standIn.answer, stopReason: "END", usage: { inputTokens: 123, outputTokens: standIn.answer.split(/(?<= )/).length }, model: "stand-in-model" });
  });

  it("answers MAX_TOKENS when the vendor stops at the limit (finish_reason length)", async () => {
    // Words that are one token each in o200k_base too, so the stand-in's limit is the vendor's, not ours.
    standIn.answer = "the answer is in the first passage and in the second one";
    const result = await model.generate(request(4));
    standIn.answer = ANSWER;
    expect(result.stopReason).toBe("MAX_TOKENS");
    // Ours stops first: the trailing space would be a fifth token in o200k_base.
    expect(result.text).toBe("the answer is in");
    expect(result.usage.outputTokens).toBe(4);
  });

  it("cuts a stream that ignores the limit and never ends at maxOutputTokens (counted here), and closes it", async () => {
    standIn.behaviour = "endless";
    const deltas: string[] = [];
    const result = await model.generate(request(50), (delta) => deltas.push(delta));
    expect(result.stopReason).toBe("MAX_TOKENS");
    expect(deltas.join("")).toBe(result.text);
    expect(await countTokens(result.text)).toBeLessThanOrEqual(50);
    expect(await countTokens(result.text)).toBeGreaterThanOrEqual(45);
    // No usage chunk came: our own counts stand in.
    expect(result.usage.outputTokens).toBeLessThanOrEqual(50);
    expect(result.usage.inputTokens).toBeGreaterThan(10);
    await waitFor(() => standIn.openStreams === 0);
  });

  it("cuts a stream that sends nothing but keep-alives at its time budget: TIMEOUT", async () => {
    standIn.behaviour = "silent";
    const quick = new OpenAIChatModel({ baseURL: standIn.baseURL, apiKey: KEY, model: "m", timeBudgetMs: 300 });
    const error = await failureOf(quick.generate(request()));
    expect(error.code).toBe("TIMEOUT");
    expect(error.message).toMatch(/300 ms time budget/);
    await waitFor(() => standIn.openStreams === 0);
  });

  it("cuts an endless stream at its time budget when the token bound is far away: TIMEOUT", async () => {
    standIn.behaviour = "endless";
    const quick = new OpenAIChatModel({ baseURL: standIn.baseURL, apiKey: KEY, model: "m", timeBudgetMs: 300 });
    const error = await failureOf(quick.generate(request(1_000_000)));
    expect(error.code).toBe("TIMEOUT");
  });

  it("a request that never gets headers is cut at the time budget too", async () => {
    standIn.behaviour = "hang";
    const quick = new OpenAIChatModel({ baseURL: standIn.baseURL, apiKey: KEY, model: "m", timeBudgetMs: 300 });
    expect((await failureOf(quick.generate(request()))).code).toBe("TIMEOUT");
  });

  it("the caller's signal cancels the call: TIMEOUT", async () => {
    standIn.behaviour = "endless";
    const controller = new AbortController();
    const call = model.generate(request(1_000_000, controller.signal), () => controller.abort());
    const error = await failureOf(call);
    expect(error.code).toBe("TIMEOUT");
    expect(error.message).toMatch(/caller went away/);
  });

  it("invalid UTF-8 in the stream is BAD_RESPONSE, never text with U+FFFD", async () => {
    standIn.behaviour = "invalid-utf8";
    const deltas: string[] = [];
    const error = await failureOf(model.generate(request(), (delta) => deltas.push(delta)));
    expect(error.code).toBe("BAD_RESPONSE");
    expect(error.message).toMatch(/not valid UTF-8/);
    expect(deltas.join("")).not.toContain("\ufffd");
  });

  it("a refusal is REFUSED, and a content filter stop is REFUSED", async () => {
    standIn.behaviour = "refusal";
    const refused = await model.generate(request());
    expect(refused.stopReason).toBe("REFUSED");
    expect(refused.text).toBe("");
    standIn.behaviour = "content-filter";
    const filtered = await model.generate(request());
    expect(filtered.stopReason).toBe("REFUSED");
    expect(filtered.text).toBe("Here is");
  });

  it("maps 401 to UNAUTHORIZED, 429 to THROTTLED with its Retry-After, 500 to UNAVAILABLE, each after one request (the SDK does not retry)", async () => {
    standIn.behaviour = "unauthorized";
    expect((await failureOf(model.generate(request()))).code).toBe("UNAUTHORIZED");
    expect(standIn.requests).toHaveLength(1);
    standIn.behaviour = "rate-limited";
    standIn.retryAfterSeconds = 3;
    const throttled = await failureOf(model.generate(request()));
    expect(throttled.code).toBe("THROTTLED");
    expect(throttled).toBeInstanceOf(VendorFailure);
    expect((throttled as VendorFailure).retryAfterMs).toBe(3_000);
    standIn.behaviour = "internal";
    expect((await failureOf(model.generate(request()))).code).toBe("UNAVAILABLE");
    expect(standIn.requests).toHaveLength(3);
  });

  it("a wrong key is UNAUTHORIZED and names the variable to fix, never the key", async () => {
    const wrong = new OpenAIChatModel({ baseURL: standIn.baseURL, apiKey: "sk-wrong-key-123", model: "m" });
    const error = await failureOf(wrong.generate(request()));
    expect(error.code).toBe("UNAUTHORIZED");
    expect(error.message).toMatch(/ANSWER_MODEL_API_KEY/);
    expect(error.message).not.toContain("sk-wrong-key-123");
  });

  it("an event that is not JSON is BAD_RESPONSE; a stream closed before finish_reason is UNAVAILABLE", async () => {
    standIn.behaviour = "malformed";
    expect((await failureOf(model.generate(request()))).code).toBe("BAD_RESPONSE");
    standIn.behaviour = "cut-off";
    const cut = await failureOf(model.generate(request()));
    expect(cut.code).toBe("UNAVAILABLE");
    expect(cut.message).toMatch(/ended before the model finished/);
  });

  it("a body past maxResponseBytes is BAD_RESPONSE", async () => {
    standIn.behaviour = "endless";
    const small = new OpenAIChatModel({ baseURL: standIn.baseURL, apiKey: KEY, model: "m", maxResponseBytes: 4_096 });
    const error = await failureOf(small.generate(request(1_000_000)));
    expect(error.code).toBe("BAD_RESPONSE");
    expect(error.message).toMatch(/4096 bytes/);
  });

  it("a server that is not there is UNAVAILABLE", async () => {
    const nowhere = new OpenAIChatModel({ baseURL: "http://127.0.0.1:1/v1", apiKey: KEY, model: "m" });
    expect((await failureOf(nowhere.generate(request()))).code).toBe("UNAVAILABLE");
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
