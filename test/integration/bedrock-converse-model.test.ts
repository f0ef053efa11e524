/**
 * The Bedrock Converse model (lib/language-models/bedrock-converse.ts), with the real
 * `@aws-sdk/client-bedrock-runtime` (SigV4-signed, HTTP/2, AWS's binary event stream) against
 * the local Converse stand-in (test/support/aws/): streaming in order, usage, stop reasons, our
 * own token and time bounds, invalid UTF-8, and each failure as the contract's code.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { AwsCredentialSource } from "../../lib/aws/credentials.js";
import { BedrockConverseModel } from "../../lib/language-models/bedrock-converse.js";
import { LanguageModelError, type GenerationRequest } from "../../lib/language-models/language-model.js";
import { countTokens } from "../../lib/text/token-count.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { BedrockConverseStandIn } from "../support/aws/bedrock-converse-stand-in.js";

const PLATFORM = { accessKeyId: "AKIASTANDINANSWERS01", secretAccessKey: "stand-in-secret-for-answers-0123456789" };
const MODEL_ID = "anthropic.claude-3-5-haiku-20241022-v1:0";

function request(maxOutputTokens = 200, signal?: AbortSignal): GenerationRequest {
  return {
    messages: [
      { role: "system", content: "Answer only from the passages; cite them by id." },
      { role: "user", content: "<passage id=\"p1\">ts_rank</passage>" },
      { role: "user", content: "How does PostgreSQL rank?" },
    ],
    maxOutputTokens,
    ...(signal ? { signal } : {}),
  };
}

async function failureOf(call: Promise<unknown>): Promise<LanguageModelError> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!("error" in outcome)) throw new Error(`expected the call to fail, it returned ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(LanguageModelError);
  return outcome.error as LanguageModelError;
}

describe("BedrockConverseModel against the Converse stand-in", () => {
  let standIn: BedrockConverseStandIn;
  let model: BedrockConverseModel;
  const credentials = new AwsCredentialSource({ platformKeys: PLATFORM }).providerFor({ mode: "platform" }, "answer-model");

  beforeAll(async () => {
    standIn = await BedrockConverseStandIn.start();
    standIn.addAccessKey(PLATFORM.accessKeyId, PLATFORM.secretAccessKey);
    model = new BedrockConverseModel({ modelId: MODEL_ID, region: "eu-central-1", credentials, endpoint: standIn.endpoint, timeBudgetMs: 5_000 });
  });
  afterEach(() => {
    standIn.behaviour = "answer";
    standIn.requests.length = 0;
  });
  afterAll(async () => {
    await standIn.close();
    await closeWorkerPools();
  });

  it("signs a ConverseStream request with the system prompt apart, consecutive user turns joined, and maxTokens", async () => {
    await model.generate(request(120));
    expect(standIn.requests).toHaveLength(1);
    const [sent] = standIn.requests;
    expect(sent).toMatchObject({ operation: "ConverseStream", modelId: MODEL_ID, region: "eu-central-1", accessKeyId: PLATFORM.accessKeyId });
    expect(sent!.body).toEqual({
      system: [{ text: "Answer only from the passages; cite them by id." }],
      messages: [{ role: "user", content: [{ text: "<passage id=\"p1\">ts_rank</passage>" }, { text: "How does PostgreSQL rank?" }] }],
      inferenceConfig: { maxTokens: 120 },
    });
  });

  it("passes the deltas on in order and reads usage and end_turn", async () => {
    const deltas: string[] = [];
    const result = await model.generate(request(), (delta) => deltas.push(delta));
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join("")).toBe(standIn.answer);
    expect(result).toEqual({ text: standIn.answer, stopReason: "END", usage: { inputTokens: 57, outputTokens: standIn.answer.split(" ").length }, model: MODEL_ID });
  });

  it("max_tokens → MAX_TOKENS, guardrail_intervened → REFUSED", async () => {
    expect((await model.generate(request(3))).stopReason).toBe("MAX_TOKENS");
    standIn.behaviour = "guardrail";
    expect((await model.generate(request())).stopReason).toBe("REFUSED");
  });

  it("cuts a stream that ignores maxTokens at maxOutputTokens (counted here)", async () => {
    standIn.behaviour = "endless";
    const result = await model.generate(request(40));
    expect(result.stopReason).toBe("MAX_TOKENS");
    expect(await countTokens(result.text)).toBeLessThanOrEqual(40);
    expect(result.usage.outputTokens).toBeLessThanOrEqual(40);
  });

  it("cuts an endless stream at its time budget: TIMEOUT", async () => {
    standIn.behaviour = "endless";
    const quick = new BedrockConverseModel({ modelId: MODEL_ID, region: "eu-central-1", credentials, endpoint: standIn.endpoint, timeBudgetMs: 300 });
    expect((await failureOf(quick.generate(request(1_000_000)))).code).toBe("TIMEOUT");
  });

  it("invalid UTF-8 in an event is BAD_RESPONSE, never text with U+FFFD", async () => {
    standIn.behaviour = "invalid-utf8";
    const deltas: string[] = [];
    const error = await failureOf(model.generate(request(), (delta) => deltas.push(delta)));
    expect(error.code).toBe("BAD_RESPONSE");
    expect(error.message).toMatch(/not valid UTF-8/);
    expect(deltas.join("")).not.toContain("\ufffd");
  });

  it("maps AccessDenied and unknown keys to UNAUTHORIZED, throttling to THROTTLED (also inside the stream), 500 to UNAVAILABLE", async () => {
    standIn.behaviour = "access-denied";
    expect((await failureOf(model.generate(request()))).code).toBe("UNAUTHORIZED");
    const stranger = new BedrockConverseModel({
      modelId: MODEL_ID,
      region: "eu-central-1",
      credentials: new AwsCredentialSource({ platformKeys: { accessKeyId: "AKIAUNKNOWN000000009", secretAccessKey: "unknown-secret-0123456789abcdef" } }).providerFor({ mode: "platform" }, "x"),
      endpoint: standIn.endpoint,
    });
    standIn.behaviour = "answer";
    expect((await failureOf(stranger.generate(request()))).code).toBe("UNAUTHORIZED");
    standIn.behaviour = "throttling";
    expect((await failureOf(model.generate(request()))).code).toBe("THROTTLED");
    standIn.behaviour = "stream-throttled";
    expect((await failureOf(model.generate(request()))).code).toBe("THROTTLED");
    standIn.behaviour = "internal";
    expect((await failureOf(model.generate(request()))).code).toBe("UNAVAILABLE");
  });
});
