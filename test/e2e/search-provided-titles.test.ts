/**
 * Issue 12, lever 3: the search subgraph provides `Conversation.title` on its hits
 * (`SearchHit.item @provides(fields: "... on Conversation { title }")`), so a page of hits with
 * titles is one subgraph fetch, not two. Checked through real gateways with both query planners
 * (Rust and JavaScript) in front of the real conversations and search subgraphs, counting the
 * calls each subgraph executed and the statements the database received:
 * - titles only: the conversations subgraph is not called, and the titles cost one statement;
 * - any field the search subgraph does not provide (`messages`, `createdAt`) still comes from
 *   the owner, in one `_entities` call;
 * - the title is read live: a rename shows at once, even on a page from the result cache;
 * - a conversation that is gone, or belongs to another organization, is a null item, never a title.
 *
 * The search subgraph ranks with the real conversations keyword provider, plus a stand-in for
 * a lagging index (an external vector store that has not caught up with a deletion): it returns
 * whatever conversation ids the test gives it, so a hit naming a deleted conversation, or another
 * organization's, reaches the item resolver deterministically.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import { composeFromConfig } from "../../lib/composition/compose.js";
import { readSupergraphConfig } from "../../lib/composition/supergraph-config.js";
import { loadConfig, type Config, type QueryPlanner } from "../../lib/config.js";
import { startSubgraph, type RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import type { ProviderHit, ProviderRequest, SearchProvider } from "../../lib/retrieval/search-provider.js";
import { gatewayOptionsFrom, startGateway, type RunningGateway } from "../../gateway/server.js";
import { conversationsSubgraph } from "../../subgraphs/conversations/index.js";
import { ConversationsKeywordProvider } from "../../subgraphs/conversations/search/keyword-provider.js";
import { searchSubgraph } from "../../subgraphs/search/index.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

/** Stand-in for an index that lags behind deletions: answers with the ids it was last given. */
class LaggingIndexProvider implements SearchProvider {
  readonly latency = "LOCAL" as const;
  readonly name = "test.lagging-index";
  readonly kind = "KEYWORD" as const;
  readonly description = "Test stand-in for an index that has not caught up with deletions.";
  ids: string[] = [];
  async search(_request: ProviderRequest): Promise<ProviderHit[]> {
    return this.ids.map((id, index) => ({ ref: { typename: "Conversation", id }, nativeScore: 1 / (index + 1) }));
  }
}

const TITLES_ONLY = `query Titles($input: SearchInput!) {
  search(input: $input) { cached hits { score item { __typename ... on Conversation { id title } } } }
}`;
// A named fragment, as clients write them: the search subgraph must see the title through it.
const TITLES_IN_FRAGMENT = `query Titles($input: SearchInput!) {
  search(input: $input) { hits { item { ...Hit } } }
}
fragment Hit on Conversation { id title }`;
const WITH_MESSAGES = `query WithMessages($input: SearchInput!) {
  search(input: $input) { hits { item { ... on Conversation { id title createdAt messages(first: 5) { nodes { content } } } } } }
}`;

// The statement the search subgraph sends for a page's titles (subgraphs/conversations/search/live-titles.ts).
const isTitleRead = (sql: string) => sql.includes("SELECT id::text AS id, title FROM conversations");

let db: TestDatabase;
let config: Config;
let conversations: RunningSubgraph;
let search: RunningSubgraph;
const gateways = new Map<QueryPlanner, RunningGateway>();
const lagging = new LaggingIndexProvider();
let token: string;
let otherToken: string;
const ids: string[] = [];
/** What each conversation's title is now (the rename tests change two). */
const titleOf = new Map<string, string>();
let otherOrgId: string;

async function createConversation(gatewayUrl: string, bearer: string, title: string, content: string): Promise<string> {
  const response = await graphql(gatewayUrl, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, { input: { title, messages: [{ role: "USER", content, tokenCount: 5 }] } }, { token: bearer });
  expect(response.errors).toBeUndefined();
  return response.data!.createConversation.id as string;
}

beforeAll(async () => {
  db = await createTestDatabase();
  config = loadConfig({ GATEWAY_PORT: "0", CONVERSATIONS_PORT: "0", SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0", EMBEDDER: "hashing", SEARCH_INDEXER: "false", SEARCH_CACHE_TTL_SECONDS: "60", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" });
  // (The gateway's response cache is off: this is about what the subgraphs do per request.)
  config = { ...config, auth: { ...TEST_AUTH, usingDevSecret: false } };
  const serverOptions = { host: config.host, port: 0, auth: config.auth, production: false, drainTimeoutMs: 1_000, metricsPublic: false, tracing: null, operationLimits: config.operationLimits, logger: silentLogger };
  conversations = await startSubgraph(conversationsSubgraph(db.database), serverOptions);
  search = await startSubgraph(
    await searchSubgraph({ database: db.database, config, logger: silentLogger, providers: [new ConversationsKeywordProvider(db.database.prisma), lagging] }),
    serverOptions,
  );
  // Only these two subgraphs run: the plans under test never reach the others.
  const supergraphSdl = await composeFromConfig(readSupergraphConfig(config.gateway.supergraphConfigPath, { CONVERSATIONS_URL: conversations.url, SEARCH_URL: search.url }));
  for (const queryPlanner of ["rust", "js"] as const) {
    gateways.set(queryPlanner, await startGateway({ ...gatewayOptionsFrom(config), supergraphSdl, logger: silentLogger, queryPlanner, runtimeLogLevel: false, mcp: null }));
  }
  token = await tokenFor("org-titles", "tia");
  otherToken = await tokenFor("org-elsewhere", "oz");
  const gatewayUrl = gateways.get("rust")!.url;
  for (let i = 0; i < 6; i++) {
    ids.push(await createConversation(gatewayUrl, token, `Zeppelin mooring incident ${i}`, `the zeppelin mast ${i} lost its mooring line`));
    titleOf.set(ids[i]!, `Zeppelin mooring incident ${i}`);
  }
  otherOrgId = await createConversation(gatewayUrl, otherToken, "Secret zeppelin plans", "the zeppelin plans of another organization");
});

afterAll(async () => {
  for (const gateway of gateways.values()) await gateway.stop();
  await search?.stop();
  await conversations?.stop();
  await db?.dispose();
});

beforeEach(() => {
  lagging.ids = [];
});

function reset() {
  conversations.operations.reset();
  search.operations.reset();
  db.database.statements.reset();
}

describe.each(["rust", "js"] as const)("with the %s query planner", (planner) => {
  const url = () => gateways.get(planner)!.url;

  it("answers a page of hits with titles in one fetch: no call to the conversations subgraph, one statement for the titles", async () => {
    for (const document of [TITLES_ONLY, TITLES_IN_FRAGMENT]) {
      reset();
      const response = await graphql(url(), document, { input: { query: "zeppelin mooring", limit: 20, alpha: 1, providers: ["conversations.keyword"] } }, { token });
      expect(response.errors).toBeUndefined();
      const hits = response.data!.search.hits as { item: { id: string; title: string } }[];
      expect(hits).toHaveLength(6);
      for (const hit of hits) expect(hit.item.title).toBe(titleOf.get(hit.item.id));
      expect(search.operations.count).toBe(1);
      expect(conversations.operations.count).toBe(0);
      expect(db.database.statements.log.filter(isTitleRead)).toHaveLength(1);
    }
  });

  it("still asks the owner, once, for the fields the search subgraph does not provide", async () => {
    reset();
    const response = await graphql(url(), WITH_MESSAGES, { input: { query: "zeppelin mooring", limit: 20, alpha: 1, providers: ["conversations.keyword"] } }, { token });
    expect(response.errors).toBeUndefined();
    const hits = response.data!.search.hits as { item: { id: string; title: string; createdAt: string; messages: { nodes: { content: string }[] } } }[];
    expect(hits).toHaveLength(6);
    for (const hit of hits) {
      const i = ids.indexOf(hit.item.id);
      expect(hit.item.title).toBe(titleOf.get(hit.item.id));
      expect(hit.item.messages.nodes).toEqual([{ content: `the zeppelin mast ${i} lost its mooring line` }]);
      expect(Number.isNaN(Date.parse(hit.item.createdAt))).toBe(false);
    }
    expect(conversations.operations.count).toBe(1);
    expect(conversations.operations.recent[0]).toContain("_entities");
  });

  it("shows a renamed conversation's new title at once, even on a page from the result cache", async () => {
    const input = { query: `zeppelin mast ${planner}`, limit: 20, alpha: 1, providers: ["conversations.keyword"] };
    const first = (await graphql(url(), TITLES_ONLY, { input }, { token })).data!.search;
    expect(first.cached).toBe(false);
    const target = ids[planner === "rust" ? 2 : 3]!;
    const renamed = await graphql(url(), `mutation($id: ID!, $title: String!) { renameConversation(id: $id, title: $title) { id } }`, { id: target, title: `Renamed under ${planner}` }, { token });
    expect(renamed.errors).toBeUndefined();
    titleOf.set(target, `Renamed under ${planner}`);
    const second = (await graphql(url(), TITLES_ONLY, { input }, { token })).data!.search;
    expect(second.cached).toBe(true);
    const titles = new Map((second.hits as { item: { id: string; title: string } }[]).map((hit) => [hit.item.id, hit.item.title]));
    expect(titles.get(target)).toBe(`Renamed under ${planner}`);
    expect(titles.size).toBe(first.hits.length);
  });

  it("gives a conversation that is gone, or another organization's, a null item and never its title", async () => {
    const victim = await createConversation(url(), token, `Doomed zeppelin ${planner}`, "soon deleted");
    const deleted = await graphql(url(), `mutation($id: ID!) { deleteConversation(id: $id) { id } }`, { id: victim }, { token });
    expect(deleted.errors).toBeUndefined();
    lagging.ids = [ids[0]!, victim, otherOrgId];
    reset();
    const response = await graphql(url(), TITLES_ONLY, { input: { query: `lagging ${planner}`, limit: 20, alpha: 1, providers: ["test.lagging-index"] } }, { token });
    expect(response.errors).toBeUndefined();
    const items = (response.data!.search.hits as { item: { id: string; title: string } | null }[]).map((hit) => hit.item);
    expect(items).toEqual([{ __typename: "Conversation", id: ids[0], title: titleOf.get(ids[0]!) }, null, null]);
    expect(JSON.stringify(response)).not.toContain("Secret zeppelin");
    expect(conversations.operations.count).toBe(0);
    expect(db.database.statements.log.filter(isTitleRead)).toHaveLength(1);
  });
});

describe("the search subgraph asked directly", () => {
  it("sends no statement for titles when none is asked", async () => {
    reset();
    const response = await graphql(search.url, `query($input: SearchInput!) { search(input: $input) { hits { item { ... on Conversation { id } } } } }`, { input: { query: "zeppelin", alpha: 1, providers: ["conversations.keyword"] } }, { token });
    expect(response.errors).toBeUndefined();
    expect(response.data!.search.hits.length).toBeGreaterThan(0);
    expect(db.database.statements.log.filter(isTitleRead)).toHaveLength(0);
  });
});
