/**
 * Safe retries (issue 19, defect 3), through the gateway on a real database: a write sent with an
 * `Idempotency-Key` happens once per organization and key, a retry gets the first answer, and a
 * write that outlives the gateway's deadline is either rolled back (no key) or answered from its
 * key on retry, never written twice.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { randomUUID } from "node:crypto";
import type { RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { startTestStack, type TestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

/** The gateway's deadline for a subgraph call (the deadline tests hold their write past it). */
const UPSTREAM_TIMEOUT_MS = 5_000;

let test: TestStack;
let gateway: string;
let conversations: RunningSubgraph;
let alice: string; // org A
let bob: string; // org A, a colleague
let mallory: string; // org B

const CREATE = `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id title messageCount } }`;
const APPEND = `mutation($id: ID!, $messages: [MessageInput!]!) {
  appendMessages(conversationId: $id, messages: $messages) { conversation { id messageCount } messages { id position } }
}`;
const COUNT = `query($id: ID!) { conversation(id: $id) { messageCount } }`;

const withKey = (key: string) => ({ "idempotency-key": key });

async function conversationRows(organizationId: string): Promise<number> {
  const [row] = await test.db.database.prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM conversations WHERE organization_id = ${organizationId}`;
  return row!.n;
}

async function messageCount(id: string, token: string): Promise<number> {
  const response = await graphql(gateway, COUNT, { id }, { token });
  return response.data!.conversation.messageCount;
}

async function newConversation(token: string): Promise<string> {
  const response = await graphql(gateway, CREATE, { input: { title: "retries" } }, { token });
  expect(response.errors).toBeUndefined();
  return response.data!.createConversation.id;
}

/** Requests the conversations subgraph has finished answering (its own counter), whoever was still listening. */
async function finishedRequests(): Promise<number> {
  const metric = await conversations.metrics.registry.getSingleMetric("subgraph_graphql_requests_total")!.get();
  return metric.values.reduce((sum, value) => sum + value.value, 0);
}

async function waitForFinishedRequests(count: number): Promise<void> {
  // Bounded only so that a hung subgraph fails the test instead of the suite.
  for (let waited = 0; (await finishedRequests()) < count; waited += 100) {
    if (waited > 120_000) throw new Error(`the conversations subgraph finished ${await finishedRequests()} requests, expected ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Locks a conversation's row until the returned function is called, so that a write to it
 * outlives the gateway's deadline on any machine, however fast (on PGlite the held transaction
 * keeps its one connection, which holds the write back just the same).
 */
async function holdConversation(id: string): Promise<() => Promise<void>> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holding = test.db.database.prisma.$transaction(
    async (tx) => {
      await tx.$queryRaw`SELECT id FROM conversations WHERE id = ${id}::uuid FOR UPDATE`;
      locked();
      await released;
    },
    { timeout: 120_000 },
  );
  await isLocked;
  return async () => {
    release();
    await holding;
  };
}

beforeAll(async () => {
  test = await startTestStack({ SEARCH_INDEXER: "false", UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS) });
  gateway = test.stack.gateway.url;
  conversations = test.stack.subgraphs.find((subgraph) => subgraph.name === "conversations")!;
  alice = await tokenFor("org-a", "alice", [], "admin");
  bob = await tokenFor("org-a", "bob");
  mallory = await tokenFor("org-b", "mallory");
  // Starts the token-counting worker, so no test's first call pays for that under the short deadline.
  expect((await graphql(gateway, CREATE, { input: { title: "warm", messages: [{ role: "USER", content: "hi" }] } }, { token: alice })).errors).toBeUndefined();
});

afterAll(async () => {
  await test?.stop();
  await closeWorkerPools();
});

describe("the same key and body", () => {
  it("gets the first answer again, with one conversation written", async () => {
    const key = randomUUID();
    const input = { input: { title: "Once only", messages: [{ role: "USER", content: "hello" }] } };
    const before = await conversationRows("org-a");
    const first = await graphql(gateway, CREATE, input, { token: alice, headers: withKey(key) });
    const second = await graphql(gateway, CREATE, input, { token: alice, headers: withKey(key) });
    expect(first.errors).toBeUndefined();
    expect(second.errors).toBeUndefined();
    expect(second.data).toEqual(first.data);
    expect(await conversationRows("org-a")).toBe(before + 1);
  });

  it("appends once, and the retry answers with the very messages the first call appended", async () => {
    const id = await newConversation(alice);
    const key = randomUUID();
    const messages = [{ role: "USER", content: "one" }, { role: "ASSISTANT", content: "two" }];
    const first = await graphql(gateway, APPEND, { id, messages }, { token: alice, headers: withKey(key) });
    // Something else appended in between: the retry still answers with the first call's messages.
    await graphql(gateway, APPEND, { id, messages: [{ role: "USER", content: "three" }] }, { token: alice });
    const retry = await graphql(gateway, APPEND, { id, messages }, { token: alice, headers: withKey(key) });
    expect(first.errors).toBeUndefined();
    expect(retry.errors).toBeUndefined();
    expect(retry.data!.appendMessages.messages).toEqual(first.data!.appendMessages.messages);
    expect(retry.data!.appendMessages.conversation.messageCount).toBe(3);
    expect(await messageCount(id, alice)).toBe(3);
  });

  it("costs a keyed append three statements more than a plain one, and its retry writes nothing", async () => {
    const id = await newConversation(alice);
    const messages = [{ role: "USER", content: "counted", tokenCount: 1 }];
    const statements = test.db.database.statements;
    const key = randomUUID();
    const counts: Record<string, number> = {};
    for (const [call, headers] of [["plain", {}], ["keyed", withKey(key)], ["retry", withKey(key)]] as const) {
      statements.reset();
      expect((await graphql(gateway, APPEND, { id, messages }, { token: alice, headers })).errors).toBeUndefined();
      counts[call] = statements.count;
      if (call === "retry") expect(statements.log.filter((sql) => /^\s*(INSERT|UPDATE|DELETE|WITH)\b/i.test(sql))).toEqual([]);
    }
    // Plain: the ownership read, then lock, insert, read back. Keyed: plus the look-up before
    // counting tokens, the key's insert and its receipt. Retry: the ownership read, the look-up
    // and two reads of the first answer.
    expect(counts).toEqual({ plain: 4, keyed: 7, retry: 4 });
    expect(await messageCount(id, alice)).toBe(2);
  });

  it("covers each mutation of one document on its own: two aliased appends under one key are two writes, each made once", async () => {
    const id = await newConversation(alice);
    const key = randomUUID();
    const document = `mutation($id: ID!) {
      a: appendMessages(conversationId: $id, messages: [{ role: USER, content: "a" }]) { messages { id } }
      b: appendMessages(conversationId: $id, messages: [{ role: USER, content: "b" }]) { messages { id } }
    }`;
    const first = await graphql(gateway, document, { id }, { token: alice, headers: withKey(key) });
    const retry = await graphql(gateway, document, { id }, { token: alice, headers: withKey(key) });
    expect(first.errors).toBeUndefined();
    expect(retry.data).toEqual(first.data);
    expect(await messageCount(id, alice)).toBe(2);
  });
});

describe("the same key with another request", () => {
  it("is refused with IDEMPOTENCY_KEY_REUSED naming the key, and writes nothing", async () => {
    const key = randomUUID();
    await graphql(gateway, CREATE, { input: { title: "First" } }, { token: alice, headers: withKey(key) });
    const before = await conversationRows("org-a");
    const other = await graphql(gateway, CREATE, { input: { title: "Second" } }, { token: alice, headers: withKey(key) });
    expect(errorCodes(other)).toEqual(["IDEMPOTENCY_KEY_REUSED"]);
    expect(other.errors![0]!.message).toContain(key);
    expect(other.errors![0]!.extensions).toMatchObject({ idempotencyKey: key, operation: "createConversation" });
    expect(await conversationRows("org-a")).toBe(before);
  });

  it("from a colleague with the same body is another request too: refused, not handed the first caller's answer", async () => {
    const key = randomUUID();
    const input = { input: { title: "Mine" } };
    await graphql(gateway, CREATE, input, { token: alice, headers: withKey(key) });
    expect(errorCodes(await graphql(gateway, CREATE, input, { token: bob, headers: withKey(key) }))).toEqual(["IDEMPOTENCY_KEY_REUSED"]);
  });
});

it("keys are per organization: another organization's same key and body is its own write", async () => {
  const key = randomUUID();
  const input = { input: { title: "Same everywhere" } };
  const a = await graphql(gateway, CREATE, input, { token: alice, headers: withKey(key) });
  const b = await graphql(gateway, CREATE, input, { token: mallory, headers: withKey(key) });
  expect(a.errors).toBeUndefined();
  expect(b.errors).toBeUndefined();
  expect(b.data!.createConversation.id).not.toBe(a.data!.createConversation.id);
});

it("concurrent duplicates make one write and all get its answer", async () => {
  const key = randomUUID();
  const input = { input: { title: "Raced", messages: [{ role: "USER", content: "go" }] } };
  const before = await conversationRows("org-a");
  const answers = await Promise.all(Array.from({ length: 8 }, () => graphql(gateway, CREATE, input, { token: alice, headers: withKey(key) })));
  for (const answer of answers) expect(answer.errors).toBeUndefined();
  expect(new Set(answers.map((answer) => answer.data!.createConversation.id)).size).toBe(1);
  expect(await conversationRows("org-a")).toBe(before + 1);
});

it("an expired key is free again, and the organization's next keyed write purges its other expired keys", async () => {
  const [key, stale] = [randomUUID(), randomUUID()];
  const input = { input: { title: "Later" } };
  const first = await graphql(gateway, CREATE, input, { token: alice, headers: withKey(key) });
  await graphql(gateway, CREATE, { input: { title: "Stale" } }, { token: alice, headers: withKey(stale) });
  await test.db.database.prisma.$executeRaw`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key IN (${key}, ${stale})`;
  const again = await graphql(gateway, CREATE, input, { token: alice, headers: withKey(key) });
  expect(again.errors).toBeUndefined();
  expect(again.data!.createConversation.id).not.toBe(first.data!.createConversation.id);
  const left = await test.db.database.prisma.$queryRaw<{ key: string }[]>`SELECT key FROM idempotency_keys WHERE key IN (${key}, ${stale})`;
  expect(left.map((row) => row.key)).toEqual([key]);
});

it("without a key, mutations behave as before: each call writes", async () => {
  const before = await conversationRows("org-a");
  for (let i = 0; i < 2; i++) expect((await graphql(gateway, CREATE, { input: { title: "No key" } }, { token: alice })).errors).toBeUndefined();
  expect(await conversationRows("org-a")).toBe(before + 2);
});

it("browsers may send the header: the CORS preflight of /graphql and /documents allows it", async () => {
  for (const url of [gateway, gateway.replace("/graphql", "/documents")]) {
    const preflight = await fetch(url, { method: "OPTIONS", headers: { origin: "http://localhost:3000", "access-control-request-method": "POST", "access-control-request-headers": "authorization,idempotency-key" } });
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("idempotency-key");
  }
});

it.each([
  ["empty", ""],
  ["too long", "k".repeat(256)],
  ["not printable ASCII", "clé"],
])("a key that is %s is BAD_USER_INPUT naming the header, and nothing is written", async (_case, key) => {
  const before = await conversationRows("org-a");
  const response = await graphql(gateway, CREATE, { input: { title: "Bad key" } }, { token: alice, headers: withKey(key) });
  expect(errorCodes(response)).toEqual(["BAD_USER_INPUT"]);
  expect(response.errors![0]!.extensions).toMatchObject({ field: "Idempotency-Key" });
  expect(await conversationRows("org-a")).toBe(before);
});

it("a key pasted with a character outside ASCII is refused naming that character and its position, as the caller typed it", async () => {
  // curl sends what the terminal gave it: the ellipsis as its three UTF-8 bytes. fetch sends a
  // header string's characters as bytes, so those bytes are spelled here as Latin-1 characters.
  const asCurlSendsIt = Buffer.from("5f0c…", "utf8").toString("latin1");
  const response = await graphql(gateway, CREATE, { input: { title: "Pasted key" } }, { token: alice, headers: withKey(asCurlSendsIt) });
  expect(errorCodes(response)).toEqual(["BAD_USER_INPUT"]);
  expect(response.errors![0]!.message).toContain('character 5 is "…" (U+2026), which is not ASCII');
});

describe("a write that outlives the gateway's deadline", () => {
  // What the hostile test sent: the largest call the limits admit (here also held past the deadline).
  const largest = Array.from({ length: 100 }, (_, i) => ({ role: "USER", content: `word${i} `.repeat(12_500).slice(0, 100_000) }));

  it("without a key is rolled back: the caller was told it failed, and nothing was written", async () => {
    const id = await newConversation(alice);
    const finished = await finishedRequests();
    const release = await holdConversation(id);
    const first = await graphql(gateway, APPEND, { id, messages: largest }, { token: alice });
    expect(first.status).toBe(200);
    expect(errorCodes(first)).toEqual(["SUBGRAPH_UNAVAILABLE"]);
    await release();
    await waitForFinishedRequests(finished + 1);
    expect(await messageCount(id, alice)).toBe(0);
  }, 180_000);

  it("with a key commits, and the retry with the key gets its answer instead of appending again", async () => {
    const id = await newConversation(alice);
    const key = randomUUID();
    const finished = await finishedRequests();
    const release = await holdConversation(id);
    const first = await graphql(gateway, APPEND, { id, messages: largest }, { token: alice, headers: withKey(key) });
    expect(first.status).toBe(200);
    expect(errorCodes(first)).toEqual(["SUBGRAPH_UNAVAILABLE"]);
    await release();
    await waitForFinishedRequests(finished + 1);
    const retry = await graphql(gateway, APPEND, { id, messages: largest }, { token: alice, headers: withKey(key) });
    expect(retry.errors).toBeUndefined();
    expect(retry.data!.appendMessages.conversation.messageCount).toBe(100);
    expect(retry.data!.appendMessages.messages.map((message: { position: number }) => message.position)).toEqual(largest.map((_, i) => i));
    expect(await messageCount(id, alice)).toBe(100);
  }, 180_000);
});

describe("every mutation that creates takes the key", () => {
  async function rows(table: "documents" | "knowledge_bases" | "saved_searches"): Promise<number> {
    const [row] = await test.db.database.prisma.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${table} WHERE organization_id = 'org-a'`);
    return row!.n;
  }

  it("POST /documents: a retried form upload answers with the first upload's document", async () => {
    const key = randomUUID();
    const upload = () => {
      const form = new FormData();
      form.set("file", new Blob(["# Runbook\n\nRestart the worker."], { type: "text/markdown" }), "runbook.md");
      return fetch(gateway.replace("/graphql", "/documents"), { method: "POST", headers: { authorization: `Bearer ${alice}`, ...withKey(key) }, body: form });
    };
    const before = await rows("documents");
    const first = (await (await upload()).json()) as { data: { uploadDocument: { id: string } } };
    const retry = (await (await upload()).json()) as { data: { uploadDocument: { id: string } } };
    expect(retry.data.uploadDocument.id).toBe(first.data.uploadDocument.id);
    expect(await rows("documents")).toBe(before + 1);
  });

  it("uploadDocument, createKnowledgeBase and saveSearch: once per key, and another body under the key is refused", async () => {
    const cases: [table: "documents" | "knowledge_bases" | "saved_searches", document: string, input: Record<string, unknown>, other: Record<string, unknown>][] = [
      [
        "documents",
        `mutation($input: UploadDocumentInput!) { uploadDocument(input: $input) { id } }`,
        { fileName: "a.md", contentBase64: Buffer.from("# A").toString("base64") },
        { fileName: "b.md", contentBase64: Buffer.from("# B").toString("base64") },
      ],
      ["knowledge_bases", `mutation($input: CreateKnowledgeBaseInput!) { createKnowledgeBase(input: $input) { id } }`, { name: "Handbook", scope: "COMPANY", backend: "LOCAL" }, { name: "Other", scope: "COMPANY", backend: "LOCAL" }],
      ["saved_searches", `mutation($input: SaveSearchInput!) { saveSearch(input: $input) { id } }`, { name: "Deadlocks", query: "deadlock" }, { name: "Timeouts", query: "timeout" }],
    ];
    for (const [table, document, input, other] of cases) {
      const key = randomUUID();
      const before = await rows(table);
      const first = await graphql(gateway, document, { input }, { token: alice, headers: withKey(key) });
      const retry = await graphql(gateway, document, { input }, { token: alice, headers: withKey(key) });
      expect(first.errors).toBeUndefined();
      expect(retry.data).toEqual(first.data);
      expect(errorCodes(await graphql(gateway, document, { input: other }, { token: alice, headers: withKey(key) }))).toEqual(["IDEMPOTENCY_KEY_REUSED"]);
      expect(await rows(table)).toBe(before + 1);
    }
  });
});
