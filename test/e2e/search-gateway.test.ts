/**
 * `search` through the gateway: hits come from the search subgraph as references, and the
 * gateway loads their Conversation fields from the conversations subgraph: one `_entities`
 * call and one SQL statement for a page of 20 conversation hits.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { RunningStack } from "../../app/stack.js";
import type { TestDatabase } from "../support/database.js";
import { startTestStack } from "../support/stack.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let stack: RunningStack;
let token: string;

const SEARCH = `query Search($input: SearchInput!) {
  search(input: $input) {
    hits { score item { __typename ... on Conversation { id title messageCount } } explanation { provider rank weight contribution } }
    providers { name kind status returned error }
    pageInfo { hasNextPage endCursor }
    cached
  }
}`;

beforeAll(async () => {
  // (The gateway's response cache is off: these tests look at what the subgraphs do per request;
  // gateway-response-cache.test.ts covers it.)
  ({ db, stack } = await startTestStack({ SEARCH_CACHE_TTL_SECONDS: "60", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" }));
  token = await tokenFor("org-search", "sam");
  const create = `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`;
  for (let i = 0; i < 30; i++) {
    const response = await graphql(stack.gateway.url, create, { input: { title: `Kafka consumer lag incident ${i}`, messages: [{ role: "USER", content: `consumer group lag grew on partition ${i} of the orders topic`, tokenCount: 9 }] } }, { token });
    expect(response.errors).toBeUndefined();
  }
  // Wait for the background indexer to embed them.
  for (let i = 0; i < 100; i++) {
    const status = await graphql(stack.gateway.url, `{ searchIndexStatus { pending failing } }`, {}, { token });
    if (status.data?.searchIndexStatus.pending === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
});

describe("search through the gateway", () => {
  it("returns fused conversation hits with titles loaded from the conversations subgraph", async () => {
    // alpha 0.5 explicitly: this is about fusing keyword and semantic hits. Without an alpha the
    // hashing embedder's measured default (keyword only) would skip the semantic providers, as
    // test/integration/default-alpha.test.ts shows.
    const response = await graphql(stack.gateway.url, SEARCH, { input: { query: "kafka consumer lag on the orders topic", limit: 20, alpha: 0.5 } }, { token });
    expect(response.errors).toBeUndefined();
    const result = response.data!.search;
    expect(result.hits).toHaveLength(20);
    for (const hit of result.hits) {
      expect(hit.item.__typename).toBe("Conversation");
      expect(hit.item.title).toMatch(/^Kafka consumer lag incident \d+$/);
      expect(hit.item.messageCount).toBe(1);
    }
    expect(result.providers.map((p: { name: string; status: string }) => [p.name, p.status])).toEqual([
      ["conversations.keyword", "OK"],
      ["conversations.semantic", "OK"],
      ["documents.keyword", "OK"],
      ["documents.semantic", "OK"],
      ["knowledge-bases", "OK"],
      // No external provider is configured here: each says so and the rest answer.
      ["web.serper", "SKIPPED"],
      ["web.dataforseo", "SKIPPED"],
      ["slack.messages", "SKIPPED"],
      ["linkedin.posts", "SKIPPED"],
    ]);
    expect(result.pageInfo.hasNextPage).toBe(true);
  });

  it("costs one _entities call and one SQL statement for a page of 20 conversation hits", async () => {
    const conversations = stack.subgraphs.find((subgraph) => subgraph.name === "conversations")!;
    conversations.operations.reset();
    db.database.statements.reset();
    const response = await graphql(stack.gateway.url, SEARCH, { input: { query: "partition lag incident", limit: 20, alpha: 1 } }, { token });
    expect(response.errors).toBeUndefined();
    expect(response.data!.search.hits).toHaveLength(20);
    expect(conversations.operations.count).toBe(1);
    expect(conversations.operations.recent[0]).toContain("_entities");
    // The search subgraph and its indexer share this database, so count the conversations
    // subgraph's entity reads by their shape: one SELECT … WHERE id IN (…) for all 20.
    const entityReads = db.database.statements.log.filter((sql) => /FROM "public"\."conversations" WHERE \("public"\."conversations"\."id" IN/.test(sql) || /FROM "public"\."conversations" WHERE "public"\."conversations"\."id" IN/.test(sql));
    expect(entityReads).toHaveLength(1);
    expect((entityReads[0]!.match(/\$\d+/g) ?? []).length).toBeGreaterThanOrEqual(20);
  });

  it("serves a repeated search from the cache", async () => {
    const input = { query: "cache me kafka", limit: 5 };
    expect((await graphql(stack.gateway.url, SEARCH, { input }, { token })).data!.search.cached).toBe(false);
    expect((await graphql(stack.gateway.url, SEARCH, { input }, { token })).data!.search.cached).toBe(true);
  });

  it("drops a conversation deleted since from a cached page instead of failing", async () => {
    const input = { query: "kafka consumer lag incident 7", limit: 3, alpha: 1 };
    const first = (await graphql(stack.gateway.url, SEARCH, { input }, { token })).data!.search;
    const victim = first.hits[0].item.id as string;
    const deleted = await graphql(stack.gateway.url, `mutation($id: ID!) { deleteConversation(id: $id) { id } }`, { id: victim }, { token });
    expect(deleted.errors).toBeUndefined();
    const cached = await graphql(stack.gateway.url, SEARCH, { input }, { token });
    expect(cached.errors).toBeUndefined();
    expect(cached.data!.search.cached).toBe(true);
    const ids = cached.data!.search.hits.map((hit: { item: { id: string } }) => hit.item.id);
    expect(ids).not.toContain(victim);
    expect(ids).toEqual(first.hits.slice(1).map((hit: { item: { id: string } }) => hit.item.id));
  });

  it("honours the alpha extremes", async () => {
    const keywordOnly = (await graphql(stack.gateway.url, SEARCH, { input: { query: "kafka", alpha: 1 } }, { token })).data!.search;
    expect(keywordOnly.providers.map((p: { status: string }) => p.status)).toEqual(["OK", "SKIPPED", "OK", "SKIPPED", "SKIPPED", "SKIPPED", "SKIPPED", "SKIPPED", "SKIPPED"]);
    expect(keywordOnly.hits.every((hit: { explanation: { provider: string }[] }) => hit.explanation.every((c) => c.provider === "conversations.keyword"))).toBe(true);
    const semanticOnly = (await graphql(stack.gateway.url, SEARCH, { input: { query: "kafka", alpha: 0 } }, { token })).data!.search;
    expect(semanticOnly.providers.map((p: { status: string }) => p.status)).toEqual(["SKIPPED", "OK", "SKIPPED", "OK", "OK", "SKIPPED", "SKIPPED", "SKIPPED", "SKIPPED"]);
  });

  it("rejects bad input with BAD_USER_INPUT naming the field, through the gateway", async () => {
    const response = await graphql(stack.gateway.url, SEARCH, { input: { query: "x", alpha: 2 } }, { token });
    expect(errorCodes(response)).toEqual(["BAD_USER_INPUT"]);
    expect(response.errors![0]!.message).toMatch(/^input\.alpha/);
    const anonymous = await graphql(stack.gateway.url, SEARCH, { input: { query: "x" } });
    expect(errorCodes(anonymous)).toContain("UNAUTHENTICATED");
  });
});
