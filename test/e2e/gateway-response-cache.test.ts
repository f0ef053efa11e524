/**
 * The gateway's response cache for `search`: a repeated search is answered without calling
 * either subgraph, but only for the token that asked, only while that token is valid, and
 * never after a mutation through the gateway in the caller's organization.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import type { RunningStack } from "../../app/stack.js";
import { signToken } from "../../lib/tenancy/token.js";
import type { TestDatabase } from "../support/database.js";
import { startTestStack } from "../support/stack.js";
import { errorCodes, graphql, postRaw } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

// The search subgraph's own result cache is off here: this suite is about the gateway's. (With it
// on, a new conversation joins a cached search page only when that page expires.)
let db: TestDatabase;
let stack: RunningStack;
let acme: string;
let globex: string;
let searchSubgraph: RunningSubgraph;
let conversationsSubgraph: RunningSubgraph;
const ids: Record<string, string> = {};

const SEARCH = `query Search($input: SearchInput!) {
  search(input: $input) {
    hits { item { __typename ... on Conversation { id title } } }
    providers { name status }
  }
}`;
const input = { input: { query: "terraform state lock", limit: 5, alpha: 1 } };

const search = (token: string) => graphql(stack.gateway.url, SEARCH, input, { token });
const subgraphCalls = () => searchSubgraph.operations.count + conversationsSubgraph.operations.count;
const hit = (response: { extensions?: Record<string, unknown> }) => (response.extensions?.responseCache as { hit?: boolean } | undefined)?.hit ?? false;

/** A document's first request goes through uncached while the gateway learns it is a search; the second fills the cache. */
async function warm(token: string) {
  await search(token);
  await search(token);
}

beforeAll(async () => {
  ({ db, stack } = await startTestStack({ SEARCH_INDEXER: "false", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "60", SEARCH_CACHE_TTL_SECONDS: "0" }));
  searchSubgraph = stack.subgraphs.find((subgraph) => subgraph.name === "search")!;
  conversationsSubgraph = stack.subgraphs.find((subgraph) => subgraph.name === "conversations")!;
  acme = await tokenFor("acme", "ann");
  globex = await tokenFor("globex", "gus");
  const create = `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`;
  for (const [key, token, title] of [
    ["acme", acme, "Terraform state lock stuck"],
    ["globex", globex, "Globex terraform state lock"],
  ] as const) {
    const response = await graphql(stack.gateway.url, create, { input: { title, messages: [{ role: "USER", content: "the state lock is held by a dead CI job", tokenCount: 9 }] } }, { token });
    expect(response.errors).toBeUndefined();
    ids[key] = response.data!.createConversation.id;
  }
});

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
});

describe("the gateway's response cache for search", () => {
  it("answers a repeated search without calling either subgraph", async () => {
    await warm(acme);
    const before = subgraphCalls();
    const response = await search(acme);
    expect(response.errors).toBeUndefined();
    expect(hit(response)).toBe(true);
    expect(subgraphCalls()).toBe(before);
    expect(response.data!.search.hits.map((h: { item: { id: string } }) => h.item.id)).toEqual([ids.acme]);
    expect(response.data!.search.hits[0].item.title).toBe("Terraform state lock stuck");
  });

  it("keeps organizations apart: the same search by another tenant gets its own answer", async () => {
    await warm(acme);
    const first = await search(globex);
    expect(hit(first)).toBe(false);
    expect(first.data!.search.hits.map((h: { item: { id: string } }) => h.item.id)).toEqual([ids.globex]);
    await search(globex);
    const cached = await search(globex);
    expect(hit(cached)).toBe(true);
    expect(cached.data!.search.hits.map((h: { item: { id: string } }) => h.item.id)).toEqual([ids.globex]);
  });

  it("never serves a cached answer to a forged token or to a token that has expired", async () => {
    await warm(acme);
    const forged = await signToken({ organizationId: "acme", userId: "ann", teamIds: [], name: "ann name" }, { ...TEST_AUTH, jwtSecret: "another-secret-that-is-long-enough-for-hs256" });
    for (let i = 0; i < 3; i++) {
      const response = await search(forged);
      expect(hit(response)).toBe(false);
      expect(errorCodes(response)).toEqual(["UNAUTHENTICATED"]);
    }

    const shortLived = await signToken({ organizationId: "acme", userId: "ann", teamIds: [], name: "ann name" }, TEST_AUTH, "2s");
    await warm(shortLived);
    expect(hit(await search(shortLived))).toBe(true);
    // Past its exp and the tests' one-second clock tolerance.
    await new Promise((resolve) => setTimeout(resolve, 3_200));
    const expired = await search(shortLived);
    expect(hit(expired)).toBe(false);
    expect(errorCodes(expired)).toEqual(["UNAUTHENTICATED"]);
  });

  it("retires an organization's answers after its mutations: rename, create, delete; other organizations keep theirs", async () => {
    await warm(acme);
    await warm(globex);
    expect(hit(await search(acme))).toBe(true);
    const renamed = await graphql(stack.gateway.url, `mutation($id: ID!) { renameConversation(id: $id, title: "Terraform state lock released") { id title } }`, { id: ids.acme }, { token: acme });
    expect(renamed.errors).toBeUndefined();
    const afterRename = await search(acme);
    expect(hit(afterRename)).toBe(false);
    expect(afterRename.data!.search.hits[0].item.title).toBe("Terraform state lock released");
    // Globex's answers were not touched by Acme's write.
    expect(hit(await search(globex))).toBe(true);

    expect(hit(await search(acme))).toBe(true);
    const created = await graphql(stack.gateway.url, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, { input: { title: "Terraform state lock again" } }, { token: acme });
    expect(created.errors).toBeUndefined();
    const afterCreate = await search(acme);
    expect(hit(afterCreate)).toBe(false);
    expect(afterCreate.data!.search.hits.map((h: { item: { id: string } }) => h.item.id)).toContain(created.data!.createConversation.id);

    expect(hit(await search(acme))).toBe(true);
    // The delete payload is not a Conversation, so entity-based invalidation alone would miss it.
    const deleted = await graphql(stack.gateway.url, `mutation($id: ID!) { deleteConversation(id: $id) { id } }`, { id: created.data!.createConversation.id }, { token: acme });
    expect(deleted.errors).toBeUndefined();
    const afterDelete = await search(acme);
    expect(hit(afterDelete)).toBe(false);
    expect(afterDelete.data!.search.hits.map((h: { item: { id: string } }) => h.item.id)).not.toContain(created.data!.createConversation.id);
  });

  it("lets no mutation without a verified token retire anyone's answers", async () => {
    await warm(acme);
    expect(hit(await search(acme))).toBe(true);
    const rename = `mutation($id: ID!) { renameConversation(id: $id, title: "hijacked") { id } }`;
    const anonymous = await graphql(stack.gateway.url, rename, { id: ids.acme });
    expect(anonymous.status).toBe(401);
    // A token that claims Acme's organization but is not signed by us.
    const forged = await signToken({ organizationId: "acme", userId: "mallory", teamIds: [] }, { ...TEST_AUTH, jwtSecret: "another-secret-that-is-long-enough-for-hs256" });
    const forgedWrite = await graphql(stack.gateway.url, rename, { id: ids.acme }, { token: forged });
    expect(forgedWrite.status).toBe(401);
    expect(hit(await search(acme))).toBe(true);
  });

  it("leaves every other operation's document as the client sent it (the cache only rewrites what it caches)", async () => {
    conversationsSubgraph.operations.reset();
    const response = await graphql(stack.gateway.url, `{ conversations(first: 2) { nodes { id title } } }`, {}, { token: acme });
    expect(response.errors).toBeUndefined();
    expect(conversationsSubgraph.operations.recent.join("\n")).not.toMatch(/__responseCache/);
  });

  it("refuses variables nested 10,000 levels with OPERATION_LIMIT_EXCEEDED, with or without a token, never a 500", async () => {
    // Written by hand: JSON.stringify itself would recurse 10,000 levels. The cache used to
    // serialize these variables for its key before the limits could refuse them.
    const depth = 10_000;
    const body = `{"query":"query($input: SearchInput!) { search(input: $input) { tookMs } }","variables":{"input":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}}`;
    for (const token of [null, acme]) {
      const response = await postRaw(stack.gateway.url, body, { token });
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body)).toContain("OPERATION_LIMIT_EXCEEDED");
    }
    // The gateway still answers, and still caches.
    await warm(acme);
    expect(hit(await search(acme))).toBe(true);
  });

  it("does not cache other operations", async () => {
    const list = `{ conversations(first: 5) { nodes { id title } } }`;
    for (let i = 0; i < 3; i++) {
      const response = await graphql(stack.gateway.url, list, {}, { token: acme });
      expect(response.errors).toBeUndefined();
      expect(hit(response)).toBe(false);
    }
  });
});
