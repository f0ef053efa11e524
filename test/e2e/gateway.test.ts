/**
 * The supergraph end to end: the conversations subgraph and the gateway on real ports in this
 * process, composed from supergraph.yaml, queried over HTTP the way a frontend does.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { loadConfig, APOLLO_SANDBOX_ORIGIN } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { startStack, type RunningStack } from "../../app/stack.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let stack: RunningStack;
let token: string;

/** The search subgraph's background indexer is off: it shares the database, and these tests count SQL statements. */
function stackConfig(planner: "rust" | "js") {
  const config = loadConfig({ GATEWAY_PORT: "0", CONVERSATIONS_PORT: "0", SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0", EMBEDDER: "hashing", SEARCH_INDEXER: "false", QUERY_PLANNER: planner, CORS_ORIGINS: "http://localhost:3000" });
  return { ...config, auth: { ...TEST_AUTH, usingDevSecret: false } };
}

beforeAll(async () => {
  db = await createTestDatabase();
  stack = await startStack({ config: stackConfig("rust"), database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false } });
  token = await tokenFor("org-e2e", "erin");
  const create = `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`;
  for (let i = 0; i < 25; i++) {
    const response = await graphql(stack.gateway.url, create, { input: { title: `E2E conversation ${i}`, messages: [{ role: "USER", content: `hello ${i}`, tokenCount: 2 }] } }, { token });
    expect(response.errors).toBeUndefined();
  }
});

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
});

describe("through the gateway", () => {
  it("serves the organization's conversations", async () => {
    const response = await graphql(stack.gateway.url, `{ conversations(first: 5) { totalCount nodes { title messageCount messages { nodes { content } } } pageInfo { hasNextPage } } }`, {}, { token });
    expect(response.errors).toBeUndefined();
    const connection = response.data!.conversations;
    expect(connection.totalCount).toBe(25);
    expect(connection.nodes.map((n: { title: string }) => n.title)).toEqual([24, 23, 22, 21, 20].map((i) => `E2E conversation ${i}`));
    expect(connection.nodes[0].messages.nodes[0].content).toBe("hello 24");
    expect(connection.pageInfo.hasNextPage).toBe(true);
  });

  it("passes the subgraph's error codes through to the client", async () => {
    const anonymous = await graphql(stack.gateway.url, `{ conversations { nodes { id } } }`);
    expect(errorCodes(anonymous)).toContain("UNAUTHENTICATED");
    const bad = await graphql(stack.gateway.url, `{ conversation(id: "nope") { id } }`, {}, { token });
    expect(errorCodes(bad)).toEqual(["BAD_USER_INPUT"]);
    expect(bad.errors![0]!.message).toContain("id");
  });

  it("answers a page of conversations with their messages in one subgraph call and two SQL statements", async () => {
    const conversations = stack.subgraphs.find((subgraph) => subgraph.name === "conversations")!;
    conversations.operations.reset();
    db.database.statements.reset();
    const response = await graphql(stack.gateway.url, `{ conversations(first: 20) { nodes { id title messages(first: 5) { nodes { content } } } } }`, {}, { token });
    expect(response.errors).toBeUndefined();
    expect(response.data!.conversations.nodes).toHaveLength(20);
    expect(conversations.operations.count).toBe(1);
    // One for the page of conversations, one for all twenty pages of messages (DataLoader).
    expect(db.database.statements.count).toBe(2);
  });

  it("shows an offline GraphiQL to a browser at / and /graphql", async () => {
    const root = await fetch(stack.gateway.url.replace("/graphql", "/"), { redirect: "manual", headers: { accept: "text/html" } });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/graphql");
    const page = await fetch(stack.gateway.url, { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toMatch(/graphiql/i);
    // Self-contained: no script or stylesheet from a CDN.
    expect(html).not.toMatch(/<script[^>]+src=["']https?:/i);
    expect(html).not.toMatch(/<link[^>]+href=["']https?:/i);
  });

  it("admits Apollo Sandbox's and the configured frontend origins, and no others", async () => {
    for (const origin of [APOLLO_SANDBOX_ORIGIN, "http://localhost:3000"]) {
      const preflight = await fetch(stack.gateway.url, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" } });
      expect(preflight.headers.get("access-control-allow-origin")).toBe(origin);
      expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("authorization");
    }
    const evil = await fetch(stack.gateway.url, { method: "OPTIONS", headers: { origin: "https://evil.example", "access-control-request-method": "POST" } });
    expect(evil.headers.get("access-control-allow-origin")).not.toBe("https://evil.example");
  });

  it("answers introspection outside production, as Sandbox needs", async () => {
    const response = await graphql(stack.gateway.url, `{ __schema { queryType { name } } __type(name: "Conversation") { description } }`);
    expect(response.data!.__schema.queryType.name).toBe("Query");
    expect(response.data!.__type.description).toMatch(/conversation/i);
  });

  it("reports health and readiness", async () => {
    const base = stack.gateway.url.replace("/graphql", "");
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`, { headers: { authorization: `Bearer ${token}` } });
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { subgraphs: { name: string; ok: boolean }[] }).subgraphs).toEqual([
      expect.objectContaining({ name: "conversations", ok: true }),
      expect.objectContaining({ name: "external-search", ok: true }),
      expect.objectContaining({ name: "knowledge-base", ok: true }),
      expect.objectContaining({ name: "search", ok: true }),
    ]);
  });

  it("plans with the Rust query planner's native module", () => {
    const maps = fs.readFileSync("/proc/self/maps", "utf8");
    expect(maps).toMatch(/hive_router_query_planner/);
  });
});

describe("gateway with the JavaScript planner and a subgraph down", () => {
  it("serves the same answer with the JS planner", async () => {
    const jsStack = await startStack({ config: stackConfig("js"), database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false } });
    try {
      const query = `{ conversations(first: 3) { nodes { title } } }`;
      const viaJs = await graphql(jsStack.gateway.url, query, {}, { token });
      const viaRust = await graphql(stack.gateway.url, query, {}, { token });
      expect(viaJs.errors).toBeUndefined();
      expect(viaJs.data).toEqual(viaRust.data);
    } finally {
      await jsStack.stop();
    }
  });

  it("reports not ready, and answers with an error rather than crashing, when a subgraph is down", async () => {
    const doomed = await startStack({ config: stackConfig("rust"), database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false } });
    try {
      await doomed.subgraphs.find((subgraph) => subgraph.name === "conversations")!.stop();
      const base = doomed.gateway.url.replace("/graphql", "");
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(503);
      const response = await graphql(doomed.gateway.url, `{ conversations { nodes { id } } }`, {}, { token });
      expect(response.errors?.length).toBeGreaterThan(0);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    } finally {
      await doomed.stop();
    }
  });
});
