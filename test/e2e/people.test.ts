/**
 * People by name through the gateway: a conversation's and a document's `owner` is a `User`
 * whose name the conversations subgraph resolves from the organization's records (the token's
 * `name` claim at the user's first write). Forged references (another organization's user, an
 * unrecorded id) and the statement count: test/integration/conversations-subgraph.test.ts.
 */
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import type { RunningStack } from "../../app/stack.js";
import { uploadReadyDocument } from "../support/documents.js";
import { graphql } from "../support/graphql.js";
import { startTestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

let stack: RunningStack;
let ada: string;
let grace: string;
let otherOrganization: string;

beforeAll(async () => {
  ({ stack } = await startTestStack({ GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0", SEARCH_CACHE_TTL_SECONDS: "0" }));
  ada = await tokenFor("org-people", "ada", ["team-a"]);
  grace = await tokenFor("org-people", "grace", ["team-a"]);
  otherOrganization = await tokenFor("org-people-other", "mallory");
  for (const [token, title] of [
    [ada, "Ada's deadlock notes"],
    [grace, "Grace's deadlock notes"],
    [otherOrganization, "Mallory's deadlock notes"],
  ] as const) {
    const created = await graphql(stack.gateway.url, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, { input: { title, messages: [{ role: "USER", content: "deadlock in the order service" }] } }, { token });
    expect(created.errors).toBeUndefined();
  }
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

it("names each conversation's owner", async () => {
  const response = await graphql(stack.gateway.url, `{ conversations(first: 10) { nodes { title ownerId owner { id name } } } }`, {}, { token: grace });
  expect(response.errors).toBeUndefined();
  const nodes = (response.data!.conversations as { nodes: { title: string; ownerId: string; owner: { id: string; name: string } }[] }).nodes;
  expect(nodes.map((node) => [node.title, node.owner]).sort()).toEqual([
    ["Ada's deadlock notes", { id: "ada", name: "ada name" }],
    ["Grace's deadlock notes", { id: "grace", name: "grace name" }],
  ]);
});

it("names a document's owner and the owner of a search hit", async () => {
  await uploadReadyDocument(stack.gateway.url, ada, "runbook.md", "# Deadlocks\n\nLock rows in one order.\n", { shareWithTeamId: "team-a" });
  const response = await graphql(
    stack.gateway.url,
    `query($input: SearchInput!) { search(input: $input) { hits { item { __typename ... on Conversation { owner { name } } ... on DocumentChunk { document { owner { id name } } } } } } }`,
    { input: { query: "deadlock", alpha: 1 } },
    { token: grace },
  );
  expect(response.errors).toBeUndefined();
  const hits = (response.data!.search as { hits: { item: { __typename: string; owner?: { name: string }; document?: { owner: { id: string; name: string } } } }[] }).hits;
  const owners = hits.map((hit) => (hit.item.__typename === "Conversation" ? hit.item.owner!.name : hit.item.document!.owner.name));
  expect(owners.sort()).toEqual(["ada name", "ada name", "grace name"]);
});
