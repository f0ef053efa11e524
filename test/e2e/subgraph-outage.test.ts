/**
 * One subgraph down, through the gateway: the search subgraph stops, and a query that asks for
 * conversations and search still gets its conversations (HTTP 200), with `search` null and an
 * error that says, with a code, that the search service could not answer. With each planner.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { startStack, type RunningStack } from "../../app/stack.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

let db: TestDatabase;

function stackConfig(planner: "rust" | "js") {
  const config = loadConfig({ GATEWAY_PORT: "0", CONVERSATIONS_PORT: "0", SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0", EMBEDDER: "hashing", SEARCH_INDEXER: "false", QUERY_PLANNER: planner, GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" });
  return { ...config, auth: { ...config.auth, ...TEST_AUTH, usingDevSecret: false } };
}

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.dispose();
});

const BOTH = `{ conversations(first: 5) { nodes { id title } } search(input: { query: "deadlock" }) { hits { score } } }`;

describe.each(["rust", "js"] as const)("with the %s planner and the search subgraph down", (planner) => {
  let stack: RunningStack;
  let token: string;

  beforeAll(async () => {
    token = await tokenFor(`org-outage-${planner}`, "olga");
    stack = await startStack({ config: stackConfig(planner), database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false } });
    const created = await graphql(stack.gateway.url, `mutation { createConversation(input: { title: "Deadlock in the order service" }) { id } }`, {}, { token });
    expect(created.errors).toBeUndefined();
    // Up: both answer.
    const up = await graphql(stack.gateway.url, BOTH, {}, { token });
    expect(up.errors).toBeUndefined();
    expect(up.data!.search.hits.length).toBeGreaterThan(0);
    await stack.subgraphs.find((subgraph) => subgraph.name === "search")!.stop();
  });

  afterAll(async () => {
    await stack?.gateway.stop();
    await stack?.subgraphs.find((subgraph) => subgraph.name === "conversations")?.stop();
  });

  it("answers 200 with the conversations, search null and a coded error at search", async () => {
    const response = await graphql(stack.gateway.url, BOTH, {}, { token });
    expect(response.status).toBe(200);
    expect(response.data!.conversations.nodes.map((node: { title: string }) => node.title)).toEqual(["Deadlock in the order service"]);
    expect(response.data!.search).toBeNull();
    expect(response.errors).toEqual([
      {
        message: "The search service could not answer; the fields it provides are null in this answer. Try again shortly.",
        path: ["search"],
        extensions: { code: "SUBGRAPH_UNAVAILABLE", service: "search" },
      },
    ]);
  });

  it("nulls each search root field on its own", async () => {
    const response = await graphql(stack.gateway.url, `{ searchProviders { name } searchIndexStatus { pending } conversations(first: 1) { nodes { id } } }`, {}, { token });
    expect(response.status).toBe(200);
    expect(response.data!.searchProviders).toBeNull();
    expect(response.data!.searchIndexStatus).toBeNull();
    expect(response.data!.conversations.nodes).toHaveLength(1);
    // One error per failed subgraph call: the Rust planner asks for both fields in one call, the JS planner in two.
    expect(errorCodes(response).length).toBeGreaterThan(0);
    expect(new Set(errorCodes(response))).toEqual(new Set(["SUBGRAPH_UNAVAILABLE"]));
  });

  it("answers a conversations-only query as if nothing happened", async () => {
    const response = await graphql(stack.gateway.url, `{ conversations(first: 5) { nodes { title } } }`, {}, { token });
    expect(response.status).toBe(200);
    expect(response.errors).toBeUndefined();
    expect(response.data!.conversations.nodes).toHaveLength(1);
  });

  it("answers a search-only query 200 with search null and a coded error, not 500", async () => {
    const response = await graphql(stack.gateway.url, `{ search(input: { query: "deadlock" }) { hits { score } } }`, {}, { token });
    expect(response.status).toBe(200);
    expect(response.data).toEqual({ search: null });
    expect(errorCodes(response)).toEqual(["SUBGRAPH_UNAVAILABLE"]);
  });
});
