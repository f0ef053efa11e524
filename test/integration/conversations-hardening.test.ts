/**
 * Regression tests for issue 8's defects in the conversations subgraph's writes, over real HTTP
 * against a real database: counting tokens (the expensive part of a write) only once the caller
 * may write, and text PostgreSQL cannot store refused as bad input naming its field.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { randomUUID } from "node:crypto";
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { startSubgraph, type RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import { tokenCountPool } from "../../lib/text/token-count.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { conversationsSubgraph } from "../../subgraphs/conversations/index.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { errorCodes, graphql, type GraphQLResponse } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let subgraph: RunningSubgraph;
let alice: string; // org A, owner
let bob: string; // org A, colleague
let mallory: string; // org B
let aliceConversation: string;

const reference = new Tiktoken(o200kBase);

const CREATE = `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id title messageCount tokenCount } }`;
const RENAME = `mutation($id: ID!, $title: String!) { renameConversation(id: $id, title: $title) { id title } }`;
const APPEND = `mutation($id: ID!, $messages: [MessageInput!]!) {
  appendMessages(conversationId: $id, messages: $messages) {
    conversation { id messageCount tokenCount }
    messages { position content tokenCount }
  }
}`;

beforeAll(async () => {
  db = await createTestDatabase();
  subgraph = await startSubgraph(conversationsSubgraph(db.database), { host: "127.0.0.1", port: 0, auth: TEST_AUTH, production: false, logger: silentLogger });
  alice = await tokenFor("org-a", "alice");
  bob = await tokenFor("org-a", "bob");
  mallory = await tokenFor("org-b", "mallory");
  const created = await graphql(subgraph.url, CREATE, { input: { title: "Deadlocks in the order service" } }, { token: alice });
  expect(created.errors).toBeUndefined();
  aliceConversation = created.data!.createConversation.id;
});

afterAll(async () => {
  await subgraph?.stop();
  await closeWorkerPools();
  await db?.dispose();
});

describe("appendMessages checks who may write before it counts a single token", () => {
  // The largest call the limits admit, made of the input js-tiktoken is quadratic on.
  const hostile = Array.from({ length: 100 }, (_, i) => ({ role: "USER", content: String.fromCharCode(97 + (i % 26)).repeat(100_000) }));

  it.each([
    ["a conversation that does not exist", () => randomUUID(), () => alice, "NOT_FOUND"],
    ["another organization's conversation", () => aliceConversation, () => mallory, "NOT_FOUND"],
    ["a colleague's conversation", () => aliceConversation, () => bob, "FORBIDDEN"],
  ])("%s: answers at once, without a counting task", async (_case, id, token, code) => {
    const tasksBefore = tokenCountPool().tasksSubmitted;
    const response = await graphql(subgraph.url, APPEND, { id: id(), messages: hostile }, { token: token() });
    expect(errorCodes(response)).toEqual([code]);
    expect(tokenCountPool().tasksSubmitted).toBe(tasksBefore);
  });

  it("still counts tokens for the owner, exactly as before, in one task for the whole call", async () => {
    const messages = [
      { role: "USER", content: "Our order service deadlocks under load. Here is the pg log." },
      { role: "ASSISTANT", content: "The two transactions lock rows in opposite order.", tokenCount: 42 },
      { role: "USER", content: "Ünïcödé café — 東京 👩‍💻 and <|endoftext|> as plain text" },
    ];
    const tasksBefore = tokenCountPool().tasksSubmitted;
    const response = await graphql(subgraph.url, APPEND, { id: aliceConversation, messages }, { token: alice });
    expect(response.errors).toBeUndefined();
    const appended = response.data!.appendMessages;
    const expected = [reference.encode(messages[0]!.content).length, 42, reference.encode(messages[2]!.content, [], []).length];
    expect(appended.messages.map((m: { tokenCount: number }) => m.tokenCount)).toEqual(expected);
    expect(appended.messages.map((m: { position: number }) => m.position)).toEqual([0, 1, 2]);
    expect(appended.conversation).toMatchObject({ messageCount: 3, tokenCount: expected.reduce((a, b) => a + b, 0) });
    expect(tokenCountPool().tasksSubmitted - tasksBefore).toBe(1);
  });

  it("counts a pathological message for its owner in bounded time, close to the true count", async () => {
    const response = await graphql(subgraph.url, APPEND, { id: aliceConversation, messages: [{ role: "TOOL", content: "a".repeat(100_000) }] }, { token: alice });
    expect(response.errors).toBeUndefined();
    expect(response.data!.appendMessages.messages[0].tokenCount).toBe(12_500);
  });
});

describe("text PostgreSQL cannot store is bad input, naming the field", () => {
  const cases: [string, string, () => Promise<GraphQLResponse>][] = [
    ["a NUL in a new conversation's title", "input.title", () => graphql(subgraph.url, CREATE, { input: { title: "before\u0000after" } }, { token: alice })],
    ["a NUL in a new title", "title", () => graphql(subgraph.url, RENAME, { id: aliceConversation, title: "x\u0000" }, { token: alice })],
    [
      "a NUL in a new conversation's message",
      "input.messages[1].content",
      () => graphql(subgraph.url, CREATE, { input: { title: "ok", messages: [{ role: "USER", content: "fine" }, { role: "USER", content: "\u0000" + "x" }] } }, { token: alice }),
    ],
    ["a NUL in an appended message", "messages[0].content", () => graphql(subgraph.url, APPEND, { id: aliceConversation, messages: [{ role: "USER", content: "a\u0000b" }] }, { token: alice })],
    ["an unpaired surrogate in a title", "title", () => graphql(subgraph.url, RENAME, { id: aliceConversation, title: "broken \ud800 emoji" }, { token: alice })],
    ["an unpaired surrogate in a message", "messages[0].content", () => graphql(subgraph.url, APPEND, { id: aliceConversation, messages: [{ role: "USER", content: "tail \udfff" }] }, { token: alice })],
  ];

  it.each(cases)("%s", async (_case, field, send) => {
    const response = await send();
    expect(errorCodes(response)).toEqual(["BAD_USER_INPUT"]);
    expect(response.errors![0]!.extensions).toMatchObject({ field });
    expect(response.errors![0]!.message).toMatch(/U\+(0000|D800|DFFF)/);
  });

  it("keeps well-formed text outside the Basic Multilingual Plane as it is", async () => {
    const title = "Emoji are fine 👩‍💻🚀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢";
    const response = await graphql(subgraph.url, RENAME, { id: aliceConversation, title }, { token: alice });
    expect(response.errors).toBeUndefined();
    expect(response.data!.renameConversation.title).toBe(title);
  });
});
