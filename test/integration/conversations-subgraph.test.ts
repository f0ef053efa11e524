/**
 * The conversations subgraph over real HTTP against a real database (PGlite, or PostgreSQL
 * when DATABASE_URL is set): queries, mutations, pagination, tenancy, bad input, and the SQL
 * statement count behind `_entities`.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startSubgraph, type RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import { conversationsSubgraph } from "../../subgraphs/conversations/index.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let subgraph: RunningSubgraph;
let alice: string; // org A, owner of most conversations
let bob: string; // org A, colleague
let mallory: string; // org B

const CREATE = `mutation($input: CreateConversationInput!) {
  createConversation(input: $input) { id title ownerId messageCount tokenCount createdAt updatedAt }
}`;

async function create(token: string, title: string, messages: { role: string; content: string; tokenCount?: number }[] = []) {
  const response = await graphql(subgraph.url, CREATE, { input: { title, messages } }, { token });
  expect(response.errors).toBeUndefined();
  return response.data!.createConversation as { id: string; title: string; messageCount: number; tokenCount: number; createdAt: string; updatedAt: string; ownerId: string };
}

beforeAll(async () => {
  db = await createTestDatabase();
  subgraph = await startSubgraph(conversationsSubgraph(db.database), { host: "127.0.0.1", port: 0, auth: TEST_AUTH, production: false, logger: silentLogger });
  alice = await tokenFor("org-a", "alice");
  bob = await tokenFor("org-a", "bob");
  mallory = await tokenFor("org-b", "mallory");
});

afterAll(async () => {
  await subgraph?.stop();
  await db?.dispose();
});

describe("mutations", () => {
  it("creates a conversation with messages, counting tokens the client did not give", async () => {
    const conversation = await create(alice, "  Fixing a deadlock in the order service  ", [
      { role: "USER", content: "Our order service deadlocks under load. Here is the pg log." },
      { role: "ASSISTANT", content: "The two transactions lock rows in opposite order.", tokenCount: 42 },
    ]);
    expect(conversation.title).toBe("Fixing a deadlock in the order service");
    expect(conversation.ownerId).toBe("alice");
    expect(conversation.messageCount).toBe(2);
    expect(conversation.tokenCount).toBeGreaterThan(42 + 5);

    const read = await graphql(subgraph.url, `query($id: ID!) { conversation(id: $id) { messages { nodes { role content tokenCount position } } } }`, { id: conversation.id }, { token: alice });
    const messages = read.data!.conversation.messages.nodes;
    expect(messages.map((m: { role: string }) => m.role)).toEqual(["USER", "ASSISTANT"]);
    expect(messages[1].tokenCount).toBe(42);
    expect(messages.map((m: { position: number }) => m.position)).toEqual([0, 1]);
  });

  it("appends messages in order and keeps counters, updatedAt and the search vector current", async () => {
    const conversation = await create(alice, "Lisbon itinerary");
    const append = `mutation($id: ID!, $messages: [MessageInput!]!) {
      appendMessages(conversationId: $id, messages: $messages) {
        conversation { messageCount tokenCount updatedAt }
        messages { position role content }
      }
    }`;
    const first = await graphql(subgraph.url, append, { id: conversation.id, messages: [{ role: "USER", content: "Plan four days in Lisbon with pastéis de nata", tokenCount: 10 }] }, { token: alice });
    expect(first.errors).toBeUndefined();
    const second = await graphql(
      subgraph.url,
      append,
      { id: conversation.id, messages: [{ role: "ASSISTANT", content: "Day one: Alfama and the tram 28", tokenCount: 7 }, { role: "USER", content: "Add Sintra", tokenCount: 3 }] },
      { token: alice },
    );
    const payload = second.data!.appendMessages;
    expect(payload.messages.map((m: { position: number }) => m.position)).toEqual([1, 2]);
    expect(payload.conversation).toMatchObject({ messageCount: 3, tokenCount: 20 });
    expect(new Date(payload.conversation.updatedAt).getTime()).toBeGreaterThan(new Date(conversation.updatedAt).getTime());

    const [row] = await db.database.withSession((s) =>
      s.query<{ matches: boolean; title_match: boolean }>(
        `SELECT search_vector @@ to_tsquery('english', 'sintra & tram') AS matches,
                search_vector @@ to_tsquery('english', 'lisbon:A') AS title_match
         FROM conversations WHERE id = $1`,
        [conversation.id],
      ),
    );
    expect(row).toEqual({ matches: true, title_match: true });
  });

  it("re-indexes the title on rename and when a message is edited in the database", async () => {
    const conversation = await create(alice, "Kubernetes autoscaling", [{ role: "USER", content: "HPA keeps flapping", tokenCount: 4 }]);
    const renamed = await graphql(subgraph.url, `mutation($id: ID!) { renameConversation(id: $id, title: "Terraform drift") { title } }`, { id: conversation.id }, { token: alice });
    expect(renamed.data!.renameConversation.title).toBe("Terraform drift");
    await db.database.withSession((s) => s.query(`UPDATE messages SET content = 'redis eviction storm', token_count = 9 WHERE conversation_id = $1`, [conversation.id]));
    const [row] = await db.database.withSession((s) =>
      s.query<Record<string, unknown>>(
        `SELECT search_vector @@ to_tsquery('english', 'terraform:A') AS new_title,
                search_vector @@ to_tsquery('english', 'kubernetes') AS old_title,
                search_vector @@ to_tsquery('english', 'eviction') AS new_content,
                search_vector @@ to_tsquery('english', 'flapping') AS old_content,
                token_count, message_count
         FROM conversations WHERE id = $1`,
        [conversation.id],
      ),
    );
    expect(row).toEqual({ new_title: true, old_title: false, new_content: true, old_content: false, token_count: 9, message_count: 1 });
  });

  it("soft-deletes: the conversation disappears from reads but its rows remain", async () => {
    const conversation = await create(alice, "To be deleted", [{ role: "USER", content: "hello", tokenCount: 1 }]);
    const deleted = await graphql(subgraph.url, `mutation($id: ID!) { deleteConversation(id: $id) { id deletedAt } }`, { id: conversation.id }, { token: alice });
    expect(deleted.data!.deleteConversation.id).toBe(conversation.id);
    const read = await graphql(subgraph.url, `query($id: ID!) { conversation(id: $id) { id } }`, { id: conversation.id }, { token: alice });
    expect(read.data!.conversation).toBeNull();
    const again = await graphql(subgraph.url, `mutation($id: ID!) { deleteConversation(id: $id) { id } }`, { id: conversation.id }, { token: alice });
    expect(errorCodes(again)).toEqual(["NOT_FOUND"]);
    const rows = await db.database.withSession((s) => s.query(`SELECT deleted_at FROM conversations WHERE id = $1`, [conversation.id]));
    expect(rows).toHaveLength(1);
  });

  it("lets only the owner change a conversation; colleagues can read it", async () => {
    const conversation = await create(alice, "Alice's plan");
    const read = await graphql(subgraph.url, `query($id: ID!) { conversation(id: $id) { title } }`, { id: conversation.id }, { token: bob });
    expect(read.data!.conversation.title).toBe("Alice's plan");
    const rename = await graphql(subgraph.url, `mutation($id: ID!) { renameConversation(id: $id, title: "Bob was here") { title } }`, { id: conversation.id }, { token: bob });
    expect(errorCodes(rename)).toEqual(["FORBIDDEN"]);
  });
});

describe("tenancy", () => {
  it("never shows, changes or hints at another organization's conversations", async () => {
    const secret = await create(alice, "Org A secret roadmap", [{ role: "USER", content: "confidential", tokenCount: 1 }]);
    const read = await graphql(subgraph.url, `query($id: ID!) { conversation(id: $id) { id } }`, { id: secret.id }, { token: mallory });
    expect(read.errors).toBeUndefined();
    expect(read.data!.conversation).toBeNull();

    const list = await graphql(subgraph.url, `{ conversations(first: 100) { totalCount nodes { id } } }`, {}, { token: mallory });
    expect(list.data!.conversations.nodes.map((n: { id: string }) => n.id)).not.toContain(secret.id);

    const entities = await graphql(subgraph.url, `query($r: [_Any!]!) { _entities(representations: $r) { ... on Conversation { id title } } }`, { r: [{ __typename: "Conversation", id: secret.id }] }, { token: mallory });
    expect(entities.data!._entities).toEqual([null]);

    // The same answer as for an id that never existed: no hint that it exists.
    const rename = await graphql(subgraph.url, `mutation($id: ID!) { renameConversation(id: $id, title: "pwned") { id } }`, { id: secret.id }, { token: mallory });
    const missing = await graphql(subgraph.url, `mutation($id: ID!) { renameConversation(id: $id, title: "pwned") { id } }`, { id: "00000000-0000-4000-8000-000000000000" }, { token: mallory });
    expect(errorCodes(rename)).toEqual(["NOT_FOUND"]);
    expect(rename.errors![0]!.message.replace(secret.id, "ID")).toBe(missing.errors![0]!.message.replace("00000000-0000-4000-8000-000000000000", "ID"));

    const append = await graphql(subgraph.url, `mutation($id: ID!) { appendMessages(conversationId: $id, messages: [{ role: USER, content: "x" }]) { conversation { id } } }`, { id: secret.id }, { token: mallory });
    expect(errorCodes(append)).toEqual(["NOT_FOUND"]);
    const [row] = await db.database.withSession((s) => s.query<{ title: string; message_count: number }>(`SELECT title, message_count FROM conversations WHERE id = $1`, [secret.id]));
    expect(row).toEqual({ title: "Org A secret roadmap", message_count: 1 });
  });

  it("requires a valid token for data and for the subgraph's SDL (or the gateway's signature, see gateway-security)", async () => {
    const anonymous = await graphql(subgraph.url, `{ conversations { nodes { id } } }`);
    expect(errorCodes(anonymous)).toEqual(["UNAUTHENTICATED"]);
    const forged = await graphql(subgraph.url, `{ conversations { nodes { id } } }`, {}, { token: `${alice.slice(0, -4)}AAAA` });
    expect(forged.status).toBe(401);
    expect(errorCodes(forged)).toEqual(["UNAUTHENTICATED"]);
    const strangerSdl = await graphql(subgraph.url, `{ _service { sdl } }`);
    expect(errorCodes(strangerSdl)).toEqual(["UNAUTHENTICATED"]);
    const service = await graphql(subgraph.url, `{ _service { sdl } }`, {}, { token: alice });
    expect(service.data!._service.sdl).toContain("type Conversation");
  });

  it("marks every answer, data or error, as not to be stored by HTTP caches (no schema has cache hints)", async () => {
    const data = await graphql(subgraph.url, `{ conversations { nodes { id title } } }`, {}, { token: alice });
    expect(data.errors).toBeUndefined();
    expect(data.headers.get("cache-control")).toBe("no-store");
    const refused = await graphql(subgraph.url, `{ conversations { nodes { id } } }`);
    expect(errorCodes(refused)).toEqual(["UNAUTHENTICATED"]);
    expect(refused.headers.get("cache-control")).toBe("no-store");
  });
});

describe("pagination", () => {
  it("pages newest first with no duplicates or gaps, and counts the total", async () => {
    const pager = await tokenFor("org-pages", "pat");
    const created: string[] = [];
    for (let i = 0; i < 7; i++) created.push((await create(pager, `Conversation ${i}`)).id);
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const page: any = await graphql(subgraph.url, `query($after: String) { conversations(first: 3, after: $after) { totalCount edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage endCursor } } }`, { after }, { token: pager });
      const connection = page.data.conversations;
      expect(connection.totalCount).toBe(7);
      expect(connection.pageInfo.hasPreviousPage).toBe(after !== null);
      seen.push(...connection.edges.map((edge: { node: { id: string } }) => edge.node.id));
      after = connection.pageInfo.hasNextPage ? connection.pageInfo.endCursor : null;
      pages += 1;
    } while (after);
    expect(pages).toBe(3);
    expect(seen).toEqual([...created].reverse());
  });

  it("pages a conversation's messages oldest first", async () => {
    const conversation = await create(alice, "Long chat", Array.from({ length: 5 }, (_, i) => ({ role: i % 2 ? "ASSISTANT" : "USER", content: `message ${i}`, tokenCount: 1 })));
    const query = `query($id: ID!, $after: String) { conversation(id: $id) { messages(first: 2, after: $after) { nodes { content } pageInfo { hasNextPage endCursor } } } }`;
    const contents: string[] = [];
    let after: string | null = null;
    do {
      const page: any = await graphql(subgraph.url, query, { id: conversation.id, after }, { token: alice });
      const messages = page.data.conversation.messages;
      contents.push(...messages.nodes.map((node: { content: string }) => node.content));
      after = messages.pageInfo.hasNextPage ? messages.pageInfo.endCursor : null;
    } while (after);
    expect(contents).toEqual(["message 0", "message 1", "message 2", "message 3", "message 4"]);
  });
});

describe("batching", () => {
  it("resolves 50 entity references with exactly one SQL statement", async () => {
    const owner = await tokenFor("org-batch", "bea");
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) ids.push((await create(owner, `Batch ${i}`)).id);
    const representations = [...ids, "00000000-0000-4000-8000-000000000001", "not-a-uuid"].map((id) => ({ __typename: "Conversation", id }));
    db.database.statements.reset();
    const response = await graphql(subgraph.url, `query($r: [_Any!]!) { _entities(representations: $r) { ... on Conversation { id title messageCount } } }`, { r: representations }, { token: owner });
    expect(response.errors).toBeUndefined();
    expect(db.database.statements.count).toBe(1);
    const entities = response.data!._entities as ({ id: string } | null)[];
    expect(entities.slice(0, 50).map((entity) => entity!.id)).toEqual(ids);
    expect(entities.slice(50)).toEqual([null, null]);
  });

  it("names owners in one SQL statement, and shows only the id of another organization's user", async () => {
    const owner = await tokenFor("org-people-a", "ann");
    await tokenFor("org-people-b", "bea").then((token) => create(token, "Bea's notes"));
    for (let i = 0; i < 5; i++) await create(owner, `Ann ${i}`);
    const representations = ["ann", "bea", "nobody", "x".repeat(500)].map((id) => ({ __typename: "User", id }));
    db.database.statements.reset();
    const response = await graphql(subgraph.url, `query($r: [_Any!]!) { _entities(representations: $r) { ... on User { id name } } }`, { r: representations }, { token: owner });
    expect(response.errors).toBeUndefined();
    expect(db.database.statements.count).toBe(1);
    expect(response.data!._entities).toEqual([
      { id: "ann", name: "ann name" },
      { id: "bea", name: "bea" },
      { id: "nobody", name: "nobody" },
      { id: "x".repeat(500), name: "x".repeat(500) },
    ]);
    const page = await graphql(subgraph.url, `{ conversations(first: 10) { nodes { owner { id name } } } }`, {}, { token: owner });
    expect(page.errors).toBeUndefined();
    expect(new Set(page.data!.conversations.nodes.map((node: { owner: { name: string } }) => node.owner.name))).toEqual(new Set(["ann name"]));
  });

  it("loads the first page of messages of 20 conversations with one SQL statement", async () => {
    const owner = await tokenFor("org-batch-messages", "mo");
    for (let i = 0; i < 20; i++) await create(owner, `Chat ${i}`, [{ role: "USER", content: `question ${i}`, tokenCount: 2 }, { role: "ASSISTANT", content: `answer ${i}`, tokenCount: 2 }]);
    db.database.statements.reset();
    const response = await graphql(subgraph.url, `{ conversations(first: 20) { nodes { title messages(first: 1) { nodes { content } pageInfo { hasNextPage } } } } }`, {}, { token: owner });
    expect(response.errors).toBeUndefined();
    // One statement for the page of conversations, one for all their messages.
    expect(db.database.statements.count).toBe(2);
    for (const node of response.data!.conversations.nodes) {
      expect(node.messages.nodes).toHaveLength(1);
      expect(node.messages.pageInfo.hasNextPage).toBe(true);
      expect(node.messages.nodes[0].content).toBe(node.title.replace("Chat", "question"));
    }
  });
});

describe("bad input", () => {
  const cases: [string, string, Record<string, unknown>, string][] = [
    ["a non-UUID id", `query($id: ID!) { conversation(id: $id) { id } }`, { id: "42; DROP TABLE conversations" }, "id"],
    ["an empty title", CREATE, { input: { title: "   " } }, "input.title"],
    ["a 501-character title", CREATE, { input: { title: "x".repeat(501) } }, "input.title"],
    ["message content over 100,000 characters", CREATE, { input: { title: "t", messages: [{ role: "USER", content: "x".repeat(100_001) }] } }, "input.messages[0].content"],
    ["first above 100", `{ conversations(first: 101) { nodes { id } } }`, {}, "first"],
    ["first below 1", `{ conversations(first: 0) { nodes { id } } }`, {}, "first"],
    ["a cursor that does not decode", `{ conversations(after: "not a cursor!") { nodes { id } } }`, {}, "after"],
    ["a cursor of another list", `{ conversations(after: "WyJtIiwzXQ") { nodes { id } } }`, {}, "after"],
  ];
  it.each(cases)("rejects %s with BAD_USER_INPUT naming the field", async (_name, query, variables, field) => {
    const response = await graphql(subgraph.url, query, variables, { token: alice });
    expect(errorCodes(response)).toEqual(["BAD_USER_INPUT"]);
    expect(response.errors![0]!.extensions!.field).toBe(field);
    expect(response.errors![0]!.message).toContain(field);
    expect(JSON.stringify(response.errors)).not.toMatch(/stacktrace|at \w+ \(/);
  });

  it("rejects an expired token with UNAUTHENTICATED", async () => {
    const { signToken } = await import("../../lib/tenancy/token.js");
    const expired = await signToken({ organizationId: "org-a", userId: "alice" }, TEST_AUTH, Math.floor(Date.now() / 1000) - 60);
    const response = await graphql(subgraph.url, `{ conversations { nodes { id } } }`, {}, { token: expired });
    expect(errorCodes(response)).toEqual(["UNAUTHENTICATED"]);
    expect(response.errors![0]!.message).toMatch(/expired/i);
  });
});
