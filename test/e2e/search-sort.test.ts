/**
 * `SearchInput.sort: NEWEST` through the gateway: the search's best candidates, newest first by
 * creation time (conversations and document chunks alike), the same order whether read in one
 * page or in pages of two, never an item outside the best candidates, and cursors that belong to
 * one order only.
 */
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import type { RunningStack } from "../../app/stack.js";
import { uploadReadyDocument } from "../support/documents.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { startTestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

let stack: RunningStack;
let token: string;

const SEARCH = `query($input: SearchInput!) {
  search(input: $input) {
    hits { item { __typename ... on Conversation { title createdAt } ... on DocumentChunk { document { fileName createdAt } } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

interface Page {
  hits: { item: { __typename: string; title?: string; createdAt?: string; document?: { fileName: string; createdAt: string } } }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

const nameOf = (hit: Page["hits"][number]) => hit.item.title ?? hit.item.document!.fileName;
const createdOf = (hit: Page["hits"][number]) => hit.item.createdAt ?? hit.item.document!.createdAt;

async function search(input: Record<string, unknown>): Promise<Page> {
  const response = await graphql(stack.gateway.url, SEARCH, { input: { alpha: 1, ...input } }, { token });
  expect(response.errors).toBeUndefined();
  return response.data!.search as Page;
}

beforeAll(async () => {
  ({ stack } = await startTestStack({ GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0", SEARCH_CACHE_TTL_SECONDS: "0", SEARCH_PROVIDER_TIMEOUT_MS: "30000" }));
  token = await tokenFor("org-sort", "ada");
  // Created one after another, so each is newer than the one before; the oldest matches best
  // (the query's words three times), so NEWEST must reverse what RELEVANCE puts first.
  const contents = ["deadlock deadlock deadlock in the order service", "a deadlock once", "the worker deadlock", "unrelated release notes"];
  for (const [index, content] of contents.entries()) {
    const response = await graphql(stack.gateway.url, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, { input: { title: `Conversation ${index}`, messages: [{ role: "USER", content }] } }, { token });
    expect(response.errors).toBeUndefined();
  }
  await uploadReadyDocument(stack.gateway.url, token, "newest.md", "# Runbook\n\nA deadlock in the payments worker.\n");
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

it("lists the best candidates newest first, and only those", async () => {
  const relevance = await search({ query: "deadlock", limit: 10 });
  const newest = await search({ query: "deadlock", limit: 10, sort: "NEWEST" });
  expect(relevance.hits.map(nameOf)[0]).toBe("Conversation 0");
  expect(newest.hits.map(nameOf)).toEqual(["newest.md", "Conversation 2", "Conversation 1", "Conversation 0"]);
  const created = newest.hits.map(createdOf);
  expect([...created].sort().reverse()).toEqual(created);
  expect(new Set(newest.hits.map(nameOf))).toEqual(new Set(relevance.hits.map(nameOf)));
});

it("reads the same order in pages of two, and ends where the candidates do", async () => {
  const first = await search({ query: "deadlock", limit: 2, sort: "NEWEST" });
  expect(first.pageInfo.hasNextPage).toBe(true);
  const second = await search({ query: "deadlock", limit: 2, sort: "NEWEST", after: first.pageInfo.endCursor });
  expect([...first.hits, ...second.hits].map(nameOf)).toEqual(["newest.md", "Conversation 2", "Conversation 1", "Conversation 0"]);
  expect(second.pageInfo.hasNextPage).toBe(false);
});

it("refuses a cursor of the other order, and an order that does not exist", async () => {
  const relevance = await search({ query: "deadlock", limit: 2 });
  const mixed = await graphql(stack.gateway.url, SEARCH, { input: { query: "deadlock", alpha: 1, limit: 2, sort: "NEWEST", after: relevance.pageInfo.endCursor } }, { token });
  expect(errorCodes(mixed)).toEqual(["BAD_USER_INPUT"]);
  const unknown = await graphql(stack.gateway.url, SEARCH, { input: { query: "deadlock", sort: "OLDEST" } }, { token });
  expect(unknown.errors?.[0]?.message).toMatch(/OLDEST/);
});
