/**
 * Generative answers end to end with the real parts wired as a deployment wires them:
 * `ANSWER_MODEL_PROVIDER=openai` in the environment, the external-search domain's paid answer
 * model (credits by tokens), the real `openai` package, and a local stand-in of an
 * OpenAI-compatible chat-completions server (test/support/external/chat-completions-stand-in.ts:
 * it streams a given text in the documented SSE shape; it is not a model and not OpenAI).
 * The pipeline's own rules (fences, dropped citations, other organizations) are covered with a
 * test double in answers-generative.test.ts; this file checks that the pieces meet.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { RunningStack } from "../../app/stack.js";
import type { TestDatabase } from "../support/database.js";
import { ChatCompletionsStandIn } from "../support/external/chat-completions-stand-in.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { uploadReadyDocument } from "../support/documents.js";
import { startTestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

const KEY = "sk-answers-e2e";
const ANSWER = `query($input: AnswerInput!) {
  answer(input: $input) { status mode text grounded model credits estimatedCredits usage { inputTokens outputTokens } citations { number passage { text } } passages { number text } }
}`;
const CREDITS = `{ credits { spentThisMonth } }`;
const input = (extra: Record<string, unknown> = {}) => ({ question: "How fast are damaged parcels refunded?", providers: ["documents.keyword"], ...extra });

let db: TestDatabase;
let stack: RunningStack;
let standIn: ChatCompletionsStandIn;
let ada: string;

const gql = (query: string, variables: Record<string, unknown> = {}) => graphql(stack.gateway.url, query, variables, { token: ada });
const spent = async () => ((await gql(CREDITS)).data!.credits as { spentThisMonth: number }).spentThisMonth;

beforeAll(async () => {
  standIn = await ChatCompletionsStandIn.start();
  standIn.apiKeys.add(KEY);
  ({ db, stack } = await startTestStack({
    SEARCH_CACHE_TTL_SECONDS: "0",
    GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0",
    ANSWER_MODEL_PROVIDER: "openai",
    ANSWER_MODEL: "stand-in-model",
    ANSWER_MODEL_BASE_URL: standIn.baseURL,
    ANSWER_MODEL_API_KEY: KEY,
  }));
  ada = await tokenFor("org-answers-openai", "ada");
  await uploadReadyDocument(stack.gateway.url, ada, "refunds.md", "# Refunds\n\nDamaged parcels are refunded in full within 14 days of the claim.\n");
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
  await standIn?.close();
});

describe("answer with an OpenAI-compatible model configured", () => {
  it("writes a generative, grounded answer through the real client and charges its tokens", async () => {
    standIn.answer = "Damaged parcels are refunded in full within 14 days [1].";
    const before = await spent();
    const requests = standIn.requests.length;
    const response = await gql(ANSWER, { input: input() });
    expect(response.errors).toBeUndefined();
    const answer = response.data!.answer;
    expect(answer).toMatchObject({ status: "ANSWERED", mode: "GENERATIVE", grounded: true, text: standIn.answer, model: "stand-in-model" });
    expect(answer.citations).toEqual([{ number: 1, passage: { text: answer.passages[0].text } }]);
    expect(answer.passages[0].text).toContain("14 days");
    // One request to the vendor, streamed, carrying the fenced passage and the deployment's key.
    expect(standIn.requests.length).toBe(requests + 1);
    const sent = standIn.requests.at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.body).toMatchObject({ model: "stand-in-model", stream: true });
    const user = (sent.body!.messages as { role: string; content: string }[]).find((message) => message.role === "user")!.content;
    expect(user).toMatch(/<passage id="1"[^>]*>[^]*14 days[^]*<\/passage>/);
    // Settled at the usage the stand-in reported: its prompt tokens and the streamed words.
    expect(answer.usage).toEqual({ inputTokens: standIn.promptTokens, outputTokens: standIn.answer.split(/(?<= )/).length });
    expect(answer.credits).toBeGreaterThan(0);
    expect(answer.credits).toBeLessThanOrEqual(answer.estimatedCredits);
    expect(await spent()).toBeCloseTo(before + answer.credits, 3);
  });

  it("a dry run estimates and sends nothing", async () => {
    const before = await spent();
    const requests = standIn.requests.length;
    const response = await gql(ANSWER, { input: input({ dryRun: true }) });
    expect(response.errors).toBeUndefined();
    expect(response.data!.answer.credits).toBe(0);
    expect(response.data!.answer.estimatedCredits).toBeGreaterThan(0);
    expect(standIn.requests.length).toBe(requests);
    expect(await spent()).toBeCloseTo(before, 3);
  });

  it("a key the vendor refuses is a coded error, sent once and charged nothing", async () => {
    const before = await spent();
    const requests = standIn.requests.length;
    standIn.next.push("unauthorized");
    const response = await gql(ANSWER, { input: input() });
    expect(errorCodes(response)).toEqual(["MODEL_UNAUTHORIZED"]);
    expect(standIn.requests.length).toBe(requests + 1);
    expect(await spent()).toBeCloseTo(before, 3);
  });
});
