/**
 * Issue 20, item 5: `searchSuggestions`, through a real gateway (Rust planner) in front of the
 * real conversations, knowledge-base and search subgraphs, on a real database. Past queries get
 * there as in production: searches through the gateway, written by the batched query log, whose
 * trigger keeps the aggregates suggestions read. Checked:
 * - "dead" completes to a "deadlock" conversation title (at its start, and at a later word), the
 *   caller's past query, the organization's widely asked query and the caller's document, ranked
 *   own queries > organization queries > names, each saying its source and, for a name, its entity;
 * - isolation: another organization's titles and queries, a colleague's rare query and a
 *   colleague's private document never show; the organization's query needs 3 distinct users;
 * - `%`, `_` and `\` are matched literally; bad input is BAD_USER_INPUT naming the argument;
 * - one statement per source (the search tables, conversations, documents) per request.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { composeFromConfig } from "../../lib/composition/compose.js";
import { readSupergraphConfig } from "../../lib/composition/supergraph-config.js";
import { loadConfig, type Config } from "../../lib/config.js";
import { startSubgraph, type RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import { gatewayOptionsFrom, startGateway, type RunningGateway } from "../../gateway/server.js";
import { conversationsSubgraph } from "../../subgraphs/conversations/index.js";
import { knowledgeBaseSubgraph } from "../../subgraphs/knowledge-base/index.js";
import { searchSubgraph, type SearchSubgraph } from "../../subgraphs/search/index.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

const SUGGEST = `query Suggest($prefix: String!, $limit: Int) {
  searchSuggestions(prefix: $prefix, limit: $limit) { text source item { __typename ... on Conversation { id } ... on Document { id } } }
}`;

interface Suggestion {
  text: string;
  source: string;
  item: { __typename: string; id: string } | null;
}

let db: TestDatabase;
let search: SearchSubgraph;
const servers: RunningSubgraph[] = [];
let gateway: RunningGateway;
const tokens: Record<string, string> = {};
const conversationIds: Record<string, string> = {};
let runbookId: string;

async function call(token: string, query: string, variables: Record<string, unknown>) {
  return graphql(gateway.url, query, variables, { token });
}

async function suggest(token: string, prefix: string, limit?: number): Promise<Suggestion[]> {
  const response = await call(token, SUGGEST, limit === undefined ? { prefix } : { prefix, limit });
  expect(response.errors).toBeUndefined();
  return response.data!.searchSuggestions as Suggestion[];
}

async function createConversation(token: string, title: string): Promise<string> {
  const response = await call(token, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, { input: { title } });
  expect(response.errors).toBeUndefined();
  return response.data!.createConversation.id as string;
}

async function searchFor(token: string, query: string): Promise<void> {
  const response = await call(token, `query($input: SearchInput!) { search(input: $input) { tookMs } }`, { input: { query, alpha: 1, providers: ["conversations.keyword"] } });
  expect(response.errors).toBeUndefined();
}

async function upload(token: string, fileName: string, shareWithTeamId?: string): Promise<string> {
  const input = { fileName, contentBase64: Buffer.from(`# ${fileName}\n\nSome notes.`).toString("base64"), ...(shareWithTeamId ? { shareWithTeamId } : {}) };
  const response = await call(token, `mutation($input: UploadDocumentInput!) { uploadDocument(input: $input) { id } }`, { input });
  expect(response.errors).toBeUndefined();
  return response.data!.uploadDocument.id as string;
}

beforeAll(async () => {
  db = await createTestDatabase();
  let config: Config = loadConfig({ GATEWAY_PORT: "0", EMBEDDER: "hashing", SEARCH_INDEXER: "false", SEARCH_CACHE_TTL_SECONDS: "0", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" });
  config = { ...config, auth: { ...TEST_AUTH, usingDevSecret: false } };
  const serverOptions = { host: config.host, port: 0, auth: config.auth, production: false, drainTimeoutMs: 1_000, metricsPublic: false, tracing: null, operationLimits: config.operationLimits, logger: silentLogger };
  search = await searchSubgraph({ database: db.database, config, logger: silentLogger });
  servers.push(await startSubgraph(conversationsSubgraph(db.database), serverOptions));
  servers.push(await startSubgraph(search, serverOptions));
  servers.push(await startSubgraph(knowledgeBaseSubgraph({ database: db.database, config, logger: silentLogger, embedder: search.embedder }), serverOptions));
  const [conversations, searchServer, knowledgeBase] = servers;
  // The external-search subgraph does not run: nothing here is planned onto it.
  const supergraphSdl = await composeFromConfig(
    readSupergraphConfig(config.gateway.supergraphConfigPath, { CONVERSATIONS_URL: conversations!.url, SEARCH_URL: searchServer!.url, KNOWLEDGE_BASE_URL: knowledgeBase!.url }),
  );
  gateway = await startGateway({ ...gatewayOptionsFrom(config), supergraphSdl, logger: silentLogger, queryPlanner: "rust", runtimeLogLevel: false, mcp: null });

  for (const user of ["ann", "bob", "cat", "dan", "eve"]) tokens[user] = await tokenFor("acme", user, user === "ann" || user === "bob" ? ["platform"] : []);
  for (const user of ["gus", "hal", "ivy"]) tokens[user] = await tokenFor("globex", user);

  conversationIds.starts = await createConversation(tokens.bob!, "Deadlock in the payment service");
  conversationIds.laterWord = await createConversation(tokens.cat!, "Debugging a deadlock   with Ann");
  conversationIds.other = await createConversation(tokens.ann!, "Quarterly planning");
  conversationIds.percent = await createConversation(tokens.ann!, "100% uptime plan");
  conversationIds.percentLookalike = await createConversation(tokens.ann!, "100 percent coverage");
  conversationIds.underscore = await createConversation(tokens.ann!, "snake_case names");
  conversationIds.underscoreLookalike = await createConversation(tokens.ann!, "snakeXcase names");
  conversationIds.backslash = await createConversation(tokens.ann!, "C:\\temp cleanup");
  conversationIds.globex = await createConversation(tokens.gus!, "Deadly globex secret");

  runbookId = await upload(tokens.ann!, "deadlock-runbook.md");
  await upload(tokens.bob!, "dead-letter-queue-private.md");
  await upload(tokens.bob!, "deadline-shared-with-platform.md", "platform");
  await upload(tokens.cat!, "deadwood-cat-only.md");

  await searchFor(tokens.ann!, "deadline for the Q4 report");
  await searchFor(tokens.ann!, "Deadline   for the q4 REPORT"); // the same query: one suggestion, as last typed
  for (const user of ["bob", "cat", "dan"]) await searchFor(tokens[user]!, `Deadlock detection${user === "cat" ? "  " : ""}`);
  await searchFor(tokens.eve!, "dead drop at the old mill"); // eve's alone: never anyone else's suggestion
  await searchFor(tokens.bob!, "dead drop at the old mill"); // two users: still under 3
  for (const user of ["gus", "hal", "ivy"]) await searchFor(tokens[user]!, "dead pixels on globex screens");
  await search.queryLog.flush();
}, 300_000);

afterAll(async () => {
  await gateway?.stop();
  for (const server of servers.reverse()) await server.stop();
  await db?.dispose();
});

describe("searchSuggestions", () => {
  it('completes "dead": own query, then the organization\'s, then titles and names the caller may see', async () => {
    const suggestions = await suggest(tokens.ann!, "dead");
    expect(suggestions).toEqual([
      // Asked twice, spelled two ways: once, as last typed (whitespace collapsed).
      { text: "Deadline for the q4 REPORT", source: "MY_QUERY", item: null },
      { text: "deadlock detection", source: "ORGANIZATION_QUERY", item: null },
      // Names that start with the prefix (in key order: " " sorts before "-"), then a later word.
      { text: "deadline-shared-with-platform.md", source: "DOCUMENT_NAME", item: { __typename: "Document", id: expect.any(String) } },
      { text: "Deadlock in the payment service", source: "CONVERSATION_TITLE", item: { __typename: "Conversation", id: conversationIds.starts } },
      { text: "deadlock-runbook.md", source: "DOCUMENT_NAME", item: { __typename: "Document", id: runbookId } },
      { text: "Debugging a deadlock   with Ann", source: "CONVERSATION_TITLE", item: { __typename: "Conversation", id: conversationIds.laterWord } },
    ]);
  });

  it("is case- and whitespace-insensitive and honours the limit", async () => {
    expect((await suggest(tokens.ann!, "  DEADLINE   FOR ")).map((s) => s.text)).toEqual(["Deadline for the q4 REPORT"]);
    expect(await suggest(tokens.ann!, "dead", 2)).toHaveLength(2);
    expect((await suggest(tokens.ann!, "a dead")).map((s) => s.text)).toEqual(["Debugging a deadlock   with Ann"]);
  });

  it("never shows a colleague's rare query, a colleague's private document or another organization's text", async () => {
    const eve = await suggest(tokens.eve!, "dead");
    expect(eve.filter((s) => s.source === "MY_QUERY").map((s) => s.text)).toEqual(["dead drop at the old mill"]);
    for (const user of ["ann", "cat", "dan"]) {
      const texts = (await suggest(tokens[user]!, "dead")).map((s) => s.text.toLowerCase());
      expect(texts).not.toContain("dead drop at the old mill");
      expect(texts).not.toContain("dead-letter-queue-private.md");
      expect(texts.join("|")).not.toMatch(/globex|pixels/);
    }
    // Team sharing is respected: cat is not in "platform"; the organization query still needs 3 users.
    const cat = (await suggest(tokens.cat!, "dead")).map((s) => s.text);
    expect(cat).not.toContain("deadline-shared-with-platform.md");
    expect(cat).toContain("deadwood-cat-only.md");
    // cat asked it too: cat's own spelling, once.
    expect(cat).toContain("Deadlock detection");
    expect((await suggest(tokens.eve!, "deadlock")).slice(0, 1)).toEqual([{ text: "deadlock detection", source: "ORGANIZATION_QUERY", item: null }]);

    const gus = await suggest(tokens.gus!, "dead");
    expect(gus).toEqual([
      { text: "dead pixels on globex screens", source: "MY_QUERY", item: null },
      { text: "Deadly globex secret", source: "CONVERSATION_TITLE", item: { __typename: "Conversation", id: conversationIds.globex } },
    ]);
    // hal's own query comes first for hal; it is also the organization's, shown once.
    expect((await suggest(tokens.hal!, "dead pix")).map((s) => s.source)).toEqual(["MY_QUERY"]);
  });

  it("places what was typed in each suggestion (matches), at its start or at the later word it matched", async () => {
    const marked = async (prefix: string) => {
      const response = await call(tokens.ann!, `query($prefix: String!) { searchSuggestions(prefix: $prefix) { text matches { start end } } }`, { prefix });
      expect(response.errors).toBeUndefined();
      return (response.data!.searchSuggestions as { text: string; matches: { start: number; end: number }[] }[]).map(({ text, matches }) => [text, matches.map(({ start, end }) => text.slice(start, end))]);
    };
    expect(await marked("dead")).toEqual([
      ["Deadline for the q4 REPORT", ["Dead"]],
      ["deadlock detection", ["dead"]],
      ["deadline-shared-with-platform.md", ["dead"]],
      ["Deadlock in the payment service", ["Dead"]],
      ["deadlock-runbook.md", ["dead"]],
      ["Debugging a deadlock   with Ann", ["dead"]],
    ]);
    // Case and runs of whitespace as typed do not matter; the range covers the text's own.
    expect(await marked("  DEADLINE   FOR ")).toEqual([["Deadline for the q4 REPORT", ["Deadline for"]]]);
    expect(await marked("deadlock with")).toEqual([["Debugging a deadlock   with Ann", ["deadlock   with"]]]);
    expect(await marked("c:\\")).toEqual([["C:\\temp cleanup", ["C:\\"]]]);
  });

  it("matches %, _ and \\ literally", async () => {
    expect((await suggest(tokens.ann!, "100%")).map((s) => s.text)).toEqual(["100% uptime plan"]);
    expect((await suggest(tokens.ann!, "snake_")).map((s) => s.text)).toEqual(["snake_case names"]);
    expect(await suggest(tokens.ann!, "_")).toEqual([]);
    expect(await suggest(tokens.ann!, "%")).toEqual([]);
    expect((await suggest(tokens.ann!, "c:\\")).map((s) => s.text)).toEqual(["C:\\temp cleanup"]);
    expect(await suggest(tokens.ann!, "\\")).toEqual([]);
  });

  it("refuses bad input with BAD_USER_INPUT naming the argument and what to send", async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ prefix: "" }, "prefix", /at least one character/],
      [{ prefix: "   \t " }, "prefix", /at least one character/],
      [{ prefix: "\u0000\u0007" }, "prefix", /at least one character/],
      [{ prefix: "x".repeat(201) }, "prefix", /at most 200 characters, got 201/],
      [{ prefix: "é".repeat(100_000) }, "prefix", /at most 200 characters/],
      [{ prefix: "dead", limit: 0 }, "limit", /between 1 and 20, got 0/],
      [{ prefix: "dead", limit: 21 }, "limit", /between 1 and 20, got 21/],
    ];
    for (const [variables, field, message] of cases) {
      const response = await call(tokens.ann!, SUGGEST, variables);
      expect(response.data?.searchSuggestions ?? null).toBeNull();
      expect(response.errors).toHaveLength(1);
      expect(response.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", field });
      expect(response.errors![0]!.message).toMatch(message);
    }
    // 200 characters (code points, not UTF-16 units) is allowed.
    expect(await suggest(tokens.ann!, "😀".repeat(200))).toEqual([]);
  });

  it("sends one statement per source: the search tables, conversations, documents", async () => {
    db.database.statements.reset();
    await suggest(tokens.ann!, "dead");
    // Data statements only: transaction control and the tenant scope's set_config are overhead.
    expect(db.database.statements.count).toBe(3);
    const data = db.database.statements.log.filter((sql) => /search_query_users|FROM conversations|FROM documents/.test(sql));
    expect(data.filter((sql) => sql.includes("search_query_users"))).toHaveLength(1);
    expect(data.filter((sql) => sql.includes("FROM conversations"))).toHaveLength(1);
    expect(data.filter((sql) => sql.includes("FROM documents"))).toHaveLength(1);
  });
});
