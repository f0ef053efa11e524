/**
 * Our subgraphs behind Apollo's own router stack, as a platform team on Apollo's toolchain runs
 * them: the supergraph composed by `@apollo/composition` and served by `@apollo/gateway` (Apollo's
 * query planner) on Apollo Server, in front of the real conversations and search subgraphs. Both
 * are Elastic-2.0 devDependencies, used here only. Checked by counting the operations each
 * subgraph executed:
 * - a page of search hits with titles is one fetch (the search subgraph provides the title);
 * - fields the search subgraph does not provide come from their owner in one `_entities` call;
 * - the caller's token reaches the subgraphs, and their error codes reach the caller.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { ApolloGateway, RemoteGraphQLDataSource } from "@apollo/gateway";
import { ApolloServer } from "@apollo/server";
import { startStandaloneServer } from "@apollo/server/standalone";
import { loadSubgraphSchemas } from "../../lib/composition/compose.js";
import { readSupergraphConfig } from "../../lib/composition/supergraph-config.js";
import { loadConfig, type Config } from "../../lib/config.js";
import { startSubgraph, type RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import { conversationsSubgraph } from "../../subgraphs/conversations/index.js";
import { ConversationsKeywordProvider } from "../../subgraphs/conversations/search/keyword-provider.js";
import { searchSubgraph } from "../../subgraphs/search/index.js";
import { composeWith } from "../support/composers.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

interface GatewayContext {
  authorization?: string;
}

/** Forwards the caller's bearer token to every subgraph, as a team's own gateway would. */
class ForwardingDataSource extends RemoteGraphQLDataSource<GatewayContext> {
  override willSendRequest({ request, context }: Parameters<NonNullable<RemoteGraphQLDataSource<GatewayContext>["willSendRequest"]>>[0]) {
    if (context.authorization) request.http?.headers.set("authorization", context.authorization);
  }
}

const PAGE_WITH_TITLES = `query Page($input: SearchInput!) {
  search(input: $input) { hits { score item { __typename ... on Conversation { id title } } } pageInfo { hasNextPage endCursor } }
}`;
const PAGE_WITH_DATES = `query Page($input: SearchInput!) {
  search(input: $input) { hits { item { ... on Conversation { id title createdAt messageCount } } } }
}`;
const INPUT = { query: "lighthouse lens", limit: 10, alpha: 1, providers: ["conversations.keyword"] };

let db: TestDatabase;
let conversations: RunningSubgraph;
let search: RunningSubgraph;
let server: ApolloServer<GatewayContext>;
let url: string;
let token: string;
const titles = new Map<string, string>();

beforeAll(async () => {
  db = await createTestDatabase();
  let config: Config = loadConfig({ EMBEDDER: "hashing", SEARCH_INDEXER: "false", SEARCH_CACHE_TTL_SECONDS: "0" });
  config = { ...config, auth: { ...TEST_AUTH, usingDevSecret: false } };
  const serverOptions = { host: "127.0.0.1", port: 0, auth: config.auth, production: false, drainTimeoutMs: 1_000, metricsPublic: false, tracing: null, operationLimits: config.operationLimits, logger: silentLogger };
  conversations = await startSubgraph(conversationsSubgraph(db.database), serverOptions);
  search = await startSubgraph(await searchSubgraph({ database: db.database, config, logger: silentLogger, providers: [new ConversationsKeywordProvider(db.database.prisma)] }), serverOptions);
  const subgraphs = await loadSubgraphSchemas(readSupergraphConfig("supergraph.yaml", { CONVERSATIONS_URL: conversations.url, SEARCH_URL: search.url }));
  const composition = composeWith("apollo", subgraphs);
  expect(composition.errors).toEqual([]);
  const gateway = new ApolloGateway({ supergraphSdl: composition.supergraphSdl!, buildService: ({ url: serviceUrl }) => new ForwardingDataSource({ url: serviceUrl }) });
  server = new ApolloServer<GatewayContext>({ gateway, includeStacktraceInErrorResponses: false });
  ({ url } = await startStandaloneServer(server, { listen: { host: "127.0.0.1", port: 0 }, context: async ({ req }) => ({ authorization: req.headers.authorization }) }));

  token = await tokenFor("org-apollo", "ada");
  for (let i = 0; i < 4; i++) {
    const title = `Lighthouse lens ${i}`;
    const created = await graphql(url, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id title } }`, { input: { title, messages: [{ role: "USER", content: `the lighthouse lens ${i} needs polishing` }] } }, { token });
    expect(created.errors).toBeUndefined();
    titles.set(created.data!.createConversation.id as string, title);
  }
});

afterAll(async () => {
  await server?.stop();
  await search?.stop();
  await conversations?.stop();
  await db?.dispose();
});

function resetCounts() {
  conversations.operations.reset();
  search.operations.reset();
}

describe("@apollo/gateway over the Apollo-composed supergraph", () => {
  it("answers a page of search hits with titles in one fetch, to the search subgraph only", async () => {
    resetCounts();
    const response = await graphql(url, PAGE_WITH_TITLES, { input: INPUT }, { token });
    expect(response.errors).toBeUndefined();
    const hits = response.data!.search.hits as { item: { __typename: string; id: string; title: string } }[];
    expect(hits).toHaveLength(4);
    for (const hit of hits) {
      expect(hit.item.__typename).toBe("Conversation");
      expect(hit.item.title).toBe(titles.get(hit.item.id));
    }
    expect(search.operations.count).toBe(1);
    expect(conversations.operations.count).toBe(0);
  });

  it("loads the fields the search subgraph does not provide from their owner, in one _entities call", async () => {
    resetCounts();
    const response = await graphql(url, PAGE_WITH_DATES, { input: INPUT }, { token });
    expect(response.errors).toBeUndefined();
    const items = (response.data!.search.hits as { item: { id: string; title: string; createdAt: string; messageCount: number } }[]).map((hit) => hit.item);
    expect(items).toHaveLength(4);
    for (const item of items) {
      expect(item.title).toBe(titles.get(item.id));
      expect(item.messageCount).toBe(1);
      expect(Number.isNaN(Date.parse(item.createdAt))).toBe(false);
    }
    expect(search.operations.count).toBe(1);
    expect(conversations.operations.count).toBe(1);
    expect(conversations.operations.recent[0]).toContain("_entities");
  });

  it("passes the subgraphs' error codes through: no token is UNAUTHENTICATED, bad input is BAD_USER_INPUT", async () => {
    const anonymous = await graphql(url, PAGE_WITH_TITLES, { input: INPUT });
    expect(anonymous.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    const bad = await graphql(url, PAGE_WITH_TITLES, { input: { ...INPUT, alpha: 7 } }, { token });
    expect(bad.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    expect(JSON.stringify(anonymous) + JSON.stringify(bad)).not.toContain("Lighthouse");
  });
});
