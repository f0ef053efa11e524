/**
 * The Bedrock Converse model (lib/language-models/bedrock-converse.ts), with the real
 * `@aws-sdk/client-bedrock-runtime` (SigV4-signed, HTTP/2, AWS's binary event stream) against
 * the local Converse stand-in (test/support/aws/): streaming in order, usage, stop reasons, our
 * own token and time bounds, invalid UTF-8, and each failure as the contract's code.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { AwsCredentialSource } from "../../lib/aws/credentials.js";
import { BedrockConverseModel } from "../../lib/language-models/bedrock-converse.js";
import type { GenerationRequest } from "../../lib/language-models/language-model.js";
import { countTokens } from "../../lib/text/token-count.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { AwsStandIn } from "../support/aws/aws-stand-in.js";
import { BedrockConverseStandIn } from "../support/aws/bedrock-converse-stand-in.js";
import { failureOf } from "../support/language-models.js";

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

describe("BedrockConverseModel with an assumed role (ANSWER_MODEL_AWS_ROLE_ARN)", () => {
  const ROLE_ARN = "arn:aws:iam::123456789012:role/AnswerWriter";
  let sts: AwsStandIn;
  let converse: BedrockConverseStandIn;

  beforeAll(async () => {
    sts = await AwsStandIn.start();
    sts.addAccessKey(PLATFORM.accessKeyId, PLATFORM.secretAccessKey);
    sts.roles.set(ROLE_ARN, { externalId: "answers-external-1" });
    converse = await BedrockConverseStandIn.start();
    // Only the role's temporary credentials open Bedrock here, never the platform's own keys.
    converse.trustIssuer((accessKeyId) => sts.issuedSecret(accessKeyId));
  });
  afterAll(async () => {
    await converse.close();
    await sts.close();
  });

  it("asks STS for the role with its external id, then signs Converse with the role's session", async () => {
    const source = new AwsCredentialSource({ platformKeys: PLATFORM, sts: { region: "eu-central-1", endpoint: sts.endpoint } });
    const credentials = source.providerFor({ mode: "assume-role", roleArn: ROLE_ARN, externalId: "answers-external-1" }, "answer-model");
    const model = new BedrockConverseModel({ modelId: MODEL_ID, region: "eu-central-1", credentials, endpoint: converse.endpoint, timeBudgetMs: 5_000 });
    converse.answer = "Written under the role [1].";
    const first = await model.generate(request(50));
    const second = await model.generate(request(50));
    expect([first.text, second.text]).toEqual([converse.answer, converse.answer]);
    // One AssumeRole for both calls (cached credentials), with the external id; both calls signed with its key.
    const assumed = sts.requests.filter((recorded) => recorded.body.Action === "AssumeRole");
    expect(assumed).toHaveLength(1);
    expect(assumed[0]!.body).toMatchObject({ RoleArn: ROLE_ARN, ExternalId: "answers-external-1" });
    expect(sts.issuedRoleCredentials).toHaveLength(1);
    expect(converse.requests.map((recorded) => recorded.accessKeyId)).toEqual([sts.issuedRoleCredentials[0]!.accessKeyId, sts.issuedRoleCredentials[0]!.accessKeyId]);
  });

  it("a role STS refuses is UNAUTHORIZED, and Bedrock is never called", async () => {
    const source = new AwsCredentialSource({ platformKeys: PLATFORM, sts: { region: "eu-central-1", endpoint: sts.endpoint } });
    const credentials = source.providerFor({ mode: "assume-role", roleArn: ROLE_ARN, externalId: "the-wrong-external-id" }, "answer-model");
    const model = new BedrockConverseModel({ modelId: MODEL_ID, region: "eu-central-1", credentials, endpoint: converse.endpoint, timeBudgetMs: 5_000 });
    const before = converse.requests.length;
    expect((await failureOf(model.generate(request(50)))).code).toBe("UNAUTHORIZED");
    expect(converse.requests.length).toBe(before);
  });
});
