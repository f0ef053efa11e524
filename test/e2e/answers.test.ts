/**
 * `answer` without a language model, through the gateway over real HTTP on a real database:
 * an extractive answer over conversations and documents, each sentence quoted from a passage
 * and cited by a label that names it; the passages come from the page's highlights (one
 * statement per domain, counted); another organization's documents that share the question's
 * words never appear; bad input is BAD_USER_INPUT naming the field; a dry run writes nothing;
 * `@defer` gives the passages in the first part and the answer in the deferred one; and the
 * MCP tool `answer_question` answers as the same operation does.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { RunningStack } from "../../app/stack.js";
import type { TestDatabase } from "../support/database.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { readParts } from "../support/incremental.js";
import { uploadReadyDocument } from "../support/documents.js";
import { startTestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let stack: RunningStack;
let ada: string;
let otto: string;

const ANSWER = `query($input: AnswerInput!) {
  answer(input: $input) {
    status mode text grounded groundingNote truncated model credits estimatedCredits
    citations { label number start end quoteStart quoteEnd passage { number } }
    passages { number label text matches { start end } hit { score item { __typename ... on Conversation { id title } ... on DocumentChunk { id document { fileName } } } } }
    providers { name status }
  }
}`;

const OWN = ["conversations.keyword", "documents.keyword"];
const gql = (token: string, query: string, variables: Record<string, unknown> = {}) => graphql(stack.gateway.url, query, variables, { token });
const highlightStatements = () => db.database.statements.log.filter((sql) => sql.includes("query_terms AS MATERIALIZED"));

const upload = (token: string, fileName: string, markdown: string) => uploadReadyDocument(stack.gateway.url, token, fileName, markdown);

beforeAll(async () => {
  ({ db, stack } = await startTestStack({ SEARCH_CACHE_TTL_SECONDS: "0", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" }));
  ada = await tokenFor("org-answers", "ada");
  otto = await tokenFor("org-answers-other", "otto");
  const created = await gql(ada, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, {
    input: { title: "Espresso machine care", messages: [{ role: "USER", content: "How often should the espresso machine be descaled? The office one tastes bitter." }, { role: "ASSISTANT", content: "Descale the espresso machine every month with citric acid. Rinse twice afterwards." }] },
  });
  expect(created.errors).toBeUndefined();
  await upload(ada, "kitchen.md", "# Kitchen handbook\n\nThe espresso machine is descaled on the first Monday of every month. Facilities keeps the citric acid in the cupboard.\n\nThe fridge is emptied on Fridays.\n");
  // Another organization, the same words, a secret of its own.
  await upload(otto, "secret.md", "# Otto's handbook\n\nThe espresso machine is descaled with SECRET-OTTO-VINEGAR every month.\n");
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
});

describe("answer, extractive", () => {
  it("answers from conversations and documents, every sentence quoted and cited, one highlights statement per domain", async () => {
    const before = highlightStatements().length;
    const response = await gql(ada, ANSWER, { input: { question: "How often is the espresso machine descaled?", providers: OWN, passages: 5 } });
    expect(response.errors).toBeUndefined();
    const answer = response.data!.answer;
    expect(answer).toMatchObject({ status: "ANSWERED", mode: "EXTRACTIVE", grounded: true, groundingNote: null, truncated: false, model: null, credits: 0, estimatedCredits: 0 });
    const types = new Set(answer.passages.map((passage: any) => passage.hit.item.__typename));
    expect(types).toEqual(new Set(["Conversation", "DocumentChunk"]));
    // The conversation and the document: two domains, two highlights statements, however many passages.
    expect(highlightStatements().length - before).toBe(2);
    expect(answer.citations.length).toBeGreaterThan(0);
    for (const citation of answer.citations) {
      expect(answer.text.slice(citation.start, citation.end)).toBe(citation.label);
      expect(citation.label).toBe(`[${citation.passage.number}]`);
      const passage = answer.passages.find((candidate: any) => candidate.number === citation.number);
      const quote = passage.text.slice(citation.quoteStart, citation.quoteEnd);
      // The sentence before the label is the passage's own text.
      expect(answer.text.slice(0, citation.start)).toContain(quote);
      expect(quote.toLowerCase()).toMatch(/descal|espresso/);
    }
    expect(answer.passages.every((passage: any) => passage.matches.length > 0)).toBe(true);
    expect(JSON.stringify(answer)).not.toContain("SECRET-OTTO");
  });

  it("answers the other organization from its own documents only", async () => {
    const response = await gql(otto, ANSWER, { input: { question: "How often is the espresso machine descaled?", providers: OWN } });
    expect(response.errors).toBeUndefined();
    const answer = response.data!.answer;
    expect(answer.passages.map((passage: any) => passage.hit.item.document?.fileName)).toEqual(["secret.md"]);
    expect(answer.text).toContain("SECRET-OTTO-VINEGAR");
    expect(JSON.stringify(answer)).not.toMatch(/citric|kitchen\.md|Espresso machine care/);
  });

  it("says so when nothing matches, and keeps to maxLength", async () => {
    const none = (await gql(ada, ANSWER, { input: { question: "zebra xylophone quartz", providers: OWN } })).data!.answer;
    expect(none).toMatchObject({ status: "NO_PASSAGES", text: null, grounded: false, citations: [], passages: [] });
    expect(none.groundingNote).toMatch(/no passage/);
    const short = (await gql(ada, ANSWER, { input: { question: "How often is the espresso machine descaled?", providers: OWN, maxLength: 40 } })).data!.answer;
    expect(short.text.length).toBeLessThanOrEqual(40);
  });

  it("refuses bad input with BAD_USER_INPUT naming the field", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ question: "x".repeat(1_001) }, "input.question"],
      [{ question: "   " }, "input.question"],
      [{ question: "espresso", maxLength: 0 }, "input.maxLength"],
      [{ question: "espresso", maxLength: 4_001 }, "input.maxLength"],
      [{ question: "espresso", passages: 11 }, "input.passages"],
      [{ question: "espresso", providers: ["nope"] }, "input.providers"],
      [{ question: "espresso", alpha: 2 }, "input.alpha"],
    ];
    for (const [input, field] of cases) {
      const response = await gql(ada, ANSWER, { input });
      expect(errorCodes(response)).toEqual(["BAD_USER_INPUT"]);
      expect(response.errors![0]!.extensions!.field).toBe(field);
      expect(response.data?.answer ?? null).toBeNull();
    }
  });

  it("writes nothing on a dry run", async () => {
    const answer = (await gql(ada, ANSWER, { input: { question: "How often is the espresso machine descaled?", dryRun: true } })).data!.answer;
    expect(answer).toMatchObject({ status: "DRY_RUN", text: null, citations: [], credits: 0, estimatedCredits: 0 });
    expect(answer.passages.length).toBeGreaterThan(0);
  });
});

describe("answerSettings", () => {
  it("says answers are quoted and free without a language model, to every organization, and nothing without a token", async () => {
    const query = "{ answerSettings { model spendsCredits } }";
    for (const token of [ada, otto]) {
      const response = await gql(token, query);
      expect(response.errors).toBeUndefined();
      expect(response.data!.answerSettings).toEqual({ model: null, spendsCredits: false });
    }
    const anonymous = await graphql(stack.gateway.url, query, {});
    expect(errorCodes(anonymous)).toEqual(["UNAUTHENTICATED"]);
    expect(anonymous.data?.answerSettings ?? null).toBeNull();
  });
});

describe("answer, streamed", () => {
  it("gives the passages in the first part and the answer in the deferred part", async () => {
    const query = `query($input: AnswerInput!) {
      found: answer(input: $input) { passages { label text } }
      ... @defer(label: "answer") { written: answer(input: $input) { mode text citations { label } grounded } }
    }`;
    const response = await fetch(stack.gateway.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "multipart/mixed", authorization: `Bearer ${ada}` },
      body: JSON.stringify({ query, variables: { input: { question: "How often is the espresso machine descaled?", providers: OWN } } }),
    });
    expect(response.status).toBe(200);
    const parts = await readParts(response);
    expect(parts.length).toBe(2);
    expect(parts[0]!.data!.found.passages.length).toBeGreaterThan(0);
    expect(parts[0]!.data!.written).toBeUndefined();
    const deferred = parts[1]!.incremental![0]!;
    expect(deferred.label).toBe("answer");
    expect(deferred.data!.written).toMatchObject({ mode: "EXTRACTIVE", grounded: true });
    expect(deferred.data!.written.citations.length).toBeGreaterThan(0);
  });
});

describe("answer_question (MCP)", () => {
  it("answers as the same operation sent as GraphQL", async () => {
    const client = new Client({ name: "answers-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.gateway.url.replace(/\/graphql$/, "/mcp")), { requestInit: { headers: { authorization: `Bearer ${ada}` } } }));
    try {
      const args = { question: "How often is the espresso machine descaled?", providers: OWN };
      const result = (await client.callTool({ name: "answer_question", arguments: args })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const document = readFileSync(new URL("../../gateway/mcp/tools/answer_question.graphql", import.meta.url), "utf8");
      const direct = await gql(ada, document, args);
      expect(direct.errors).toBeUndefined();
      expect(result.structuredContent).toEqual(direct.data);
      expect((direct.data!.answer as any).citations.length).toBeGreaterThan(0);
      const dry = (await client.callTool({ name: "answer_question", arguments: { ...args, dryRun: true } })) as CallToolResult;
      expect((dry.structuredContent as any).answer).toMatchObject({ status: "DRY_RUN", text: null, credits: 0 });
    } finally {
      await client.close();
    }
  });
});
