/**
 * A platform team runs our gateway over its own supergraph, which may hold only some of our
 * subgraphs beside theirs, or none of them. The gateway must start and serve it:
 * - the MCP tools whose operations this supergraph cannot run are left out, each with one warning
 *   naming the file and the GraphQL error, and the others are served;
 * - on a supergraph with none of our subgraphs it serves the team's own fields;
 * - `MCP_ENABLED=false` turns `/mcp` off.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginInlineTraceDisabled } from "@apollo/server/plugin/disabled";
import { startStandaloneServer } from "@apollo/server/standalone";
import { buildSubgraphSchema } from "@apollo/subgraph";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { parse } from "graphql";
import { composeSupergraph, loadSubgraphSchemas } from "../../lib/composition/compose.js";
import { readSupergraphConfig } from "../../lib/composition/supergraph-config.js";
import { loadConfig, type Config } from "../../lib/config.js";
import { startSubgraph, type RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import { gatewayOptionsFrom, startGateway, type RunningGateway } from "../../gateway/server.js";
import { conversationsSubgraph } from "../../subgraphs/conversations/index.js";
import { ConversationsKeywordProvider } from "../../subgraphs/conversations/search/keyword-provider.js";
import { searchSubgraph } from "../../subgraphs/search/index.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { graphql } from "../support/graphql.js";
import { recordingLogger } from "../support/recording-logger.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

// A team's own subgraph, nothing of ours in it.
const PRODUCTS_SDL = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key"])
  type Query { products: [Product!]! }
  type Product @key(fields: "upc") { upc: ID! name: String! }`;

let db: TestDatabase;
let config: Config;
let conversations: RunningSubgraph;
let search: RunningSubgraph;
let products: ApolloServer;
let productsUrl: string;
let token: string;
const gateways: RunningGateway[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  config = loadConfig({ GATEWAY_PORT: "0", EMBEDDER: "hashing", SEARCH_INDEXER: "false", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" });
  config = { ...config, auth: { ...TEST_AUTH, usingDevSecret: false } };
  const serverOptions = { host: "127.0.0.1", port: 0, auth: config.auth, production: false, drainTimeoutMs: 1_000, metricsPublic: false, tracing: null, operationLimits: config.operationLimits, logger: silentLogger };
  conversations = await startSubgraph(conversationsSubgraph(db.database), serverOptions);
  search = await startSubgraph(await searchSubgraph({ database: db.database, config, logger: silentLogger, providers: [new ConversationsKeywordProvider(db.database.prisma)] }), serverOptions);
  products = new ApolloServer({ schema: buildSubgraphSchema({ typeDefs: parse(PRODUCTS_SDL), resolvers: { Query: { products: () => [{ upc: "1", name: "Teapot" }] } } }), plugins: [ApolloServerPluginInlineTraceDisabled()] });
  ({ url: productsUrl } = await startStandaloneServer(products, { listen: { host: "127.0.0.1", port: 0 } }));
  token = await tokenFor("org-any", "ana");
});

afterAll(async () => {
  for (const gateway of gateways) await gateway.stop();
  await products?.stop();
  await search?.stop();
  await conversations?.stop();
  await db?.dispose();
});

async function gatewayOver(supergraphSdl: string, env: Record<string, string> = {}) {
  const logger = recordingLogger();
  const gatewayConfig = { ...loadConfig({ GATEWAY_PORT: "0", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0", ...env }), auth: config.auth };
  const gateway = await startGateway({ ...gatewayOptionsFrom(gatewayConfig), supergraphSdl, logger, runtimeLogLevel: false });
  gateways.push(gateway);
  return { gateway, logger };
}

async function mcpToolNames(gateway: RunningGateway): Promise<string[]> {
  const client = new Client({ name: "any-supergraph-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url.replace(/\/graphql$/, "/mcp")), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  try {
    return (await client.listTools()).tools.map((tool) => tool.name).sort();
  } finally {
    await client.close();
  }
}

describe("a supergraph with only the conversations and search subgraphs", () => {
  let supergraphSdl: string;
  beforeAll(async () => {
    const all = await loadSubgraphSchemas(readSupergraphConfig("supergraph.yaml", { CONVERSATIONS_URL: conversations.url, SEARCH_URL: search.url }));
    supergraphSdl = composeSupergraph(all.filter((subgraph) => subgraph.name === "conversations" || subgraph.name === "search"));
  });

  it("starts, serves search, and leaves out only the MCP tools it cannot run, one warning each", async () => {
    const { gateway, logger } = await gatewayOver(supergraphSdl);
    const created = await graphql(gateway.url, `mutation { createConversation(input: { title: "Walrus census", messages: [{ role: USER, content: "counting walruses" }] }) { id } }`, {}, { token });
    expect(created.errors).toBeUndefined();
    const found = await graphql(gateway.url, `query($input: SearchInput!) { search(input: $input) { hits { item { ... on Conversation { title } } } } }`, { input: { query: "walrus", alpha: 1 } }, { token });
    expect(found.errors).toBeUndefined();
    expect(found.data!.search.hits).toEqual([{ item: { title: "Walrus census" } }]);

    const warnings = logger.lines.filter((line) => line.startsWith("warn MCP tool"));
    const leftOut = warnings.map((line) => /tools\/([a-z_]+)\.graphql: does not validate against the supergraph: .+; the tool is left out of \/mcp$/.exec(line)?.[1]);
    expect(leftOut).not.toContain(undefined);
    // The document, knowledge-base and web tools need the subgraphs this supergraph lacks; so
    // does `search`, whose operation selects the fields of documents and web results.
    expect(leftOut).toEqual(expect.arrayContaining(["get_document", "query_knowledge_base", "research", "estimate_credits", "search"]));
    expect(new Set(leftOut).size).toBe(leftOut.length);
    const served = await mcpToolNames(gateway);
    expect(served).toEqual(expect.arrayContaining(["get_conversation", "list_saved_searches", "save_search", "rename_saved_search", "delete_saved_search"]));
    expect(served.filter((name) => leftOut.includes(name))).toEqual([]);
  });
});

describe("a foreign supergraph, none of our subgraphs in it", () => {
  it("starts and serves the team's own fields, with every MCP tool left out", async () => {
    const supergraphSdl = composeSupergraph([{ name: "products", url: productsUrl, typeDefs: parse(PRODUCTS_SDL) }]);
    const { gateway, logger } = await gatewayOver(supergraphSdl);
    const response = await graphql(gateway.url, `{ products { upc name } }`, {}, { token });
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({ products: [{ upc: "1", name: "Teapot" }] });
    expect(await mcpToolNames(gateway)).toEqual([]);
    expect(logger.lines.filter((line) => line.startsWith("warn MCP tool")).length).toBeGreaterThanOrEqual(13);
    expect(logger.lines.filter((line) => !line.startsWith("warn MCP tool"))).toEqual([]);
  });

  it("turns /mcp off with MCP_ENABLED=false, and says nothing about tools", async () => {
    const supergraphSdl = composeSupergraph([{ name: "products", url: productsUrl, typeDefs: parse(PRODUCTS_SDL) }]);
    const { gateway, logger } = await gatewayOver(supergraphSdl, { MCP_ENABLED: "false" });
    const mcp = await fetch(gateway.url.replace(/\/graphql$/, "/mcp"), { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}" });
    expect(mcp.status).toBe(404);
    expect(logger.lines).toEqual([]);
  });
});
