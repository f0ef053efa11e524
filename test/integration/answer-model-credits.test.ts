/**
 * The answer model behind the external-search subgraph's paid-call path
 * (subgraphs/external-search/answer-model.ts), built by the runtime from configuration, with the
 * real `openai` client against the chat-completions stand-in and a real database (PGlite by
 * default): the estimate is reserved before, the ledger is charged the vendor's reported usage
 * after, a failed call costs 0, a dry run costs 0 and sends nothing, a budget for one call admits
 * one, a throttled vendor is retried before any text was streamed, and organizations' ledgers
 * stay apart. The stand-in's request count says what was sent.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";
import type { GenerationRequest } from "../../lib/language-models/language-model.js";
import { countPromptTokens } from "../../lib/language-models/prompt-tokens.js";
import { silentLogger } from "../../lib/logger.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { createExternalSearchRuntime, type ExternalSearchRuntime } from "../../subgraphs/external-search/runtime.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { ChatCompletionsStandIn } from "../support/external/chat-completions-stand-in.js";

const KEY = "sk-answers-0f3b";
const tenant = (organizationId: string): TenantContext => ({ organizationId, userId: "u1", teamIds: [], role: "member", userName: null, userEmail: null });
const request = (maxOutputTokens = 100): GenerationRequest => ({
  messages: [
    { role: "system", content: "Answer only from the passages below; cite passage ids in brackets." },
    { role: "user", content: "<passage id=\"p1\">ts_rank ranks matches.</passage>\nQuestion: how does PostgreSQL rank?" },
  ],
  maxOutputTokens,
});

let db: TestDatabase;
let standIn: ChatCompletionsStandIn;
let runtime: ExternalSearchRuntime;
let promptTokens: number;

// 2 credits per 1,000 prompt tokens, 10 per 1,000 output tokens.
const price = (input: number, output: number) => Math.round(((input * 2 + output * 10) / 1000) * 1000) / 1000;

beforeAll(async () => {
  db = await createTestDatabase();
  standIn = await ChatCompletionsStandIn.start();
  standIn.apiKeys.add(KEY);
  const config = loadConfig({
    ANSWER_MODEL_PROVIDER: "openai",
    ANSWER_MODEL: "stand-in-model",
    ANSWER_MODEL_BASE_URL: standIn.baseURL,
    ANSWER_MODEL_API_KEY: KEY,
    ANSWER_MODEL_CREDITS_PER_1K_INPUT_TOKENS: "2",
    ANSWER_MODEL_CREDITS_PER_1K_OUTPUT_TOKENS: "10",
    ANSWER_MODEL_MAX_OUTPUT_TOKENS: "200",
    ANSWER_MODEL_TIME_BUDGET_MS: "5000",
  });
  runtime = createExternalSearchRuntime({ database: db.database, config, logger: silentLogger });
  promptTokens = await countPromptTokens(request().messages);
});
afterEach(() => {
  standIn.behaviour = "answer";
  standIn.next.length = 0;
  standIn.requests.length = 0;
});
afterAll(async () => {
  await standIn?.close();
  await runtime?.close();
  await db?.dispose();
  await closeWorkerPools();
});

async function ledgerOf(organizationId: string) {
  const calls = await db.database.prisma.externalCall.findMany({ where: { organizationId }, include: { ledger: true }, orderBy: { createdAt: "asc" } });
  return calls.map((call) => ({ provider: call.provider, status: call.status, credits: Number(call.credits), ledger: Number(call.ledger!.credits), query: call.query }));
}

describe("the answer model's paid calls", () => {
  it("names its model, streams the answer, reserves the estimate and settles at the vendor's usage", async () => {
    expect(runtime.answerModel.model).toBe("openai-compatible:stand-in-model");
    const deltas: string[] = [];
    const outcome = await runtime.answerModel.call({ tenant: tenant("org-ok"), request: request(100), dryRun: false, onText: (delta) => deltas.push(delta) });
    if (outcome.status !== "OK") throw new Error(`expected OK, got ${JSON.stringify(outcome)}`);
    expect(deltas.join("")).toBe(standIn.answer);
    // The stand-in reports a token per word it streamed.
    const words = standIn.answer.split(" ").length;
    expect(outcome.result.usage).toEqual({ inputTokens: standIn.promptTokens, outputTokens: words });
    expect(outcome.charge).toEqual({ estimatedCredits: price(promptTokens, 100), credits: price(standIn.promptTokens, words) });
    expect(standIn.requests).toHaveLength(1);
    const rows = await ledgerOf("org-ok");
    expect(rows).toEqual([{ provider: "LANGUAGE_MODEL", status: "OK", credits: price(standIn.promptTokens, words), ledger: price(standIn.promptTokens, words), query: `openai-compatible:stand-in-model (${promptTokens} prompt tokens, at most 100 out)` }]);
    // The prompt (the organization's passages, the question) is not copied into the call record.
    expect(rows[0]!.query).not.toContain("ts_rank");
  });

  it("asks at most ANSWER_MODEL_MAX_OUTPUT_TOKENS whatever the request asks, and estimates with that", async () => {
    const outcome = await runtime.answerModel.call({ tenant: tenant("org-cap"), request: request(5_000), dryRun: true });
    expect(outcome).toEqual({ status: "SKIPPED", reason: "dry run: nothing was called or spent", charge: { estimatedCredits: price(promptTokens, 200), credits: 0 } });
    expect(runtime.answerModel.maxOutputTokens).toBe(200);
  });

  it("a dry run estimates, charges 0 and sends nothing", async () => {
    const outcome = await runtime.answerModel.call({ tenant: tenant("org-dry"), request: request(100), dryRun: true });
    expect(outcome.status).toBe("SKIPPED");
    expect(outcome.charge).toEqual({ estimatedCredits: price(promptTokens, 100), credits: 0 });
    expect(standIn.requests).toHaveLength(0);
    expect(await ledgerOf("org-dry")).toEqual([]);
  });

  it("a budget that holds one call's estimate admits one call, and the second is skipped unsent", async () => {
    const estimate = price(promptTokens, 100);
    await runtime.ledger.setBudget("org-budget", estimate);
    const first = await runtime.answerModel.call({ tenant: tenant("org-budget"), request: request(100), dryRun: false });
    expect(first.status).toBe("OK");
    // Settled at its real usage, below the estimate; what is left no longer holds a whole estimate.
    const second = await runtime.answerModel.call({ tenant: tenant("org-budget"), request: request(100), dryRun: false });
    expect(second.status).toBe("SKIPPED");
    if (second.status === "SKIPPED") expect(second.reason).toMatch(/^credit budget spent/);
    expect(second.charge.credits).toBe(0);
    expect(standIn.requests).toHaveLength(1);
    expect((await ledgerOf("org-budget")).map((row) => row.status)).toEqual(["OK"]);
  });

  it("a call the vendor refuses (401) charges 0 and is not retried; the error keeps its code", async () => {
    standIn.behaviour = "unauthorized";
    const outcome = await runtime.answerModel.call({ tenant: tenant("org-401"), request: request(), dryRun: false });
    if (outcome.status !== "ERROR") throw new Error(`expected ERROR, got ${outcome.status}`);
    expect(outcome.error.code).toBe("UNAUTHORIZED");
    expect(outcome.charge).toEqual({ estimatedCredits: price(promptTokens, 100), credits: 0 });
    expect(standIn.requests).toHaveLength(1);
    expect(await ledgerOf("org-401")).toMatchObject([{ status: "ERROR", credits: 0, ledger: 0 }]);
  });

  it("a throttled vendor is retried after its Retry-After, before anything was streamed", async () => {
    standIn.next.push("rate-limited");
    standIn.retryAfterSeconds = 1;
    const outcome = await runtime.answerModel.call({ tenant: tenant("org-429"), request: request(), dryRun: false });
    expect(outcome.status).toBe("OK");
    expect(standIn.requests).toHaveLength(2);
  });

  it("a stream that fails after text was passed on is not retried (the text cannot be taken back), and costs 0", async () => {
    standIn.next.push("cut-off");
    const deltas: string[] = [];
    const outcome = await runtime.answerModel.call({ tenant: tenant("org-cut"), request: request(), dryRun: false, onText: (delta) => deltas.push(delta) });
    if (outcome.status !== "ERROR") throw new Error(`expected ERROR, got ${outcome.status}`);
    expect(outcome.error.code).toBe("UNAVAILABLE");
    expect(deltas.length).toBe(2);
    expect(standIn.requests).toHaveLength(1);
    expect(outcome.charge.credits).toBe(0);
  });

  it("invalid UTF-8 fails as BAD_RESPONSE at 0 credits", async () => {
    standIn.behaviour = "invalid-utf8";
    const outcome = await runtime.answerModel.call({ tenant: tenant("org-utf8"), request: request(), dryRun: false });
    if (outcome.status !== "ERROR") throw new Error(`expected ERROR, got ${outcome.status}`);
    expect(outcome.error.code).toBe("BAD_RESPONSE");
    expect(outcome.charge.credits).toBe(0);
  });

  it("a failing vendor opens the model's breaker for that organization only: then calls are skipped unsent, and free", async () => {
    standIn.behaviour = "internal";
    const failures = runtime.policies.settingsOf("language-model").failuresToOpen;
    for (let i = 0; i < failures; i++) {
      const outcome = await runtime.answerModel.call({ tenant: tenant("org-breaker"), request: request(), dryRun: false });
      expect(outcome.status).toBe("ERROR");
    }
    const sent = standIn.requests.length;
    const skipped = await runtime.answerModel.call({ tenant: tenant("org-breaker"), request: request(), dryRun: false });
    expect(skipped.status).toBe("SKIPPED");
    if (skipped.status === "SKIPPED") expect(skipped.reason).toMatch(/circuit breaker is open/);
    expect(skipped.charge.credits).toBe(0);
    expect(standIn.requests).toHaveLength(sent);
    expect((await ledgerOf("org-breaker")).every((row) => row.credits === 0)).toBe(true);
    // Another organization's call still goes out.
    standIn.behaviour = "answer";
    expect((await runtime.answerModel.call({ tenant: tenant("org-unaffected"), request: request(), dryRun: false })).status).toBe("OK");
  });

  it("one organization's spending is not in another's report", async () => {
    const now = Date.now();
    const report = await runtime.ledger.report(tenant("org-elsewhere"), new Date(now - 86_400_000), new Date(now + 60_000));
    expect(report.usage).toEqual([]);
    const own = await runtime.ledger.report(tenant("org-ok"), new Date(now - 86_400_000), new Date(now + 60_000));
    expect(own.usage.map((row) => row.provider)).toEqual(["LANGUAGE_MODEL"]);
  });
});

describe("without a configured model", () => {
  it("has no model and skips every call unsent and free", async () => {
    const bare = createExternalSearchRuntime({ database: db.database, config: loadConfig({}), logger: silentLogger });
    try {
      expect(bare.answerModel.model).toBeNull();
      const outcome = await bare.answerModel.call({ tenant: tenant("org-bare"), request: request(), dryRun: false });
      expect(outcome).toEqual({ status: "SKIPPED", reason: "no answer model is configured (ANSWER_MODEL_PROVIDER): answers are extractive", charge: { estimatedCredits: 0, credits: 0 } });
      expect(standIn.requests).toHaveLength(0);
    } finally {
      await bare.close();
    }
  });
});
