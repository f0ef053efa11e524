/**
 * The MCP server, through the SDK's real client: over Streamable HTTP at the gateway's `/mcp`
 * and over stdio (`scripts/mcp.ts` spawned against the same running stack). Each tool's
 * structured result is compared with the same operation sent as plain GraphQL with the same
 * token; a dry run is shown to spend nothing (and a real web search through the same tool to
 * spend, so the check can fail); another organization's user sees nothing of the first's.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { RunningStack } from "../../app/stack.js";
import { apiSchemaOf } from "../../gateway/mcp/api-schema.js";
import { loadToolCatalog, toolFromSource } from "../../gateway/mcp/tool-catalog.js";
import type { TestDatabase } from "../support/database.js";
import { uploadReadyDocument } from "../support/documents.js";
import { startTestStack } from "../support/stack.js";
import { SerperStandIn } from "../support/external/serper-stand-in.js";
import { graphql } from "../support/graphql.js";
import { tokenFor } from "../support/tenants.js";
import { productScriptArguments } from "../../lib/project-files.js";

let db: TestDatabase;
let stack: RunningStack;
let serper: SerperStandIn;
let ada: string;
let otto: string;
let mcpUrl: URL;
const ids: Record<string, string> = {};
const clients: Client[] = [];

const CORE_TOOLS = ["answer_question", "discover_search_questions", "estimate_credits", "get_conversation", "get_document", "query_knowledge_base", "query_platform_knowledge", "research", "search"];
const SAVED_SEARCH_TOOLS = ["delete_saved_search", "list_saved_searches", "rename_saved_search", "run_saved_search", "save_search"];
const OWN_PROVIDERS = ["conversations.keyword", "documents.keyword"];
const TOOLS_DIRECTORY = new URL("../../gateway/mcp/tools/", import.meta.url);
const LONG_MESSAGE = "The checkout service retries the payment call with exponential backoff. ".repeat(300);

async function connect(token: string | null): Promise<Client> {
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** The tool's own operation, sent as plain GraphQL with the same arguments and token. */
async function sameAsGraphQL(tool: string, variables: Record<string, unknown>, token: string) {
  const document = readFileSync(new URL(`${tool}.graphql`, TOOLS_DIRECTORY), "utf8");
  const response = await graphql(stack.gateway.url, document, variables, { token });
  expect(response.errors).toBeUndefined();
  return response.data;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

const text = (result: CallToolResult) => result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
const spent = async (token: string) => (await graphql(stack.gateway.url, `{ credits { spentThisMonth } }`, {}, { token })).data!.credits.spentThisMonth as number;

beforeAll(async () => {
  serper = await SerperStandIn.start();
  ({ db, stack } = await startTestStack({
    SEARCH_CACHE_TTL_SECONDS: "0", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0",
    SERPER_API_KEY: serper.apiKey, SERPER_BASE_URL: serper.baseUrl,
  }));
  mcpUrl = new URL(stack.gateway.url.replace(/\/graphql$/, "/mcp"));
  ada = await tokenFor("org-mcp", "ada", ["platform"]);
  otto = await tokenFor("org-other", "otto", ["platform"]);

  const conversation = await graphql(stack.gateway.url, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, {
    input: {
      title: "Checkout payment retries",
      messages: [
        { role: "USER", content: "Why does the checkout service time out on payment retries?" },
        { role: "ASSISTANT", content: "The payment gateway answers slowly under load; the checkout retries stack up." },
        { role: "USER", content: "How should the retry backoff be configured?" },
      ],
    },
  }, { token: ada });
  expect(conversation.errors).toBeUndefined();
  ids.conversation = conversation.data!.createConversation.id;

  // Long enough that a page of it passes the output bounds.
  const long = await graphql(stack.gateway.url, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, {
    input: { title: "A very long incident review", messages: Array.from({ length: 8 }, (_, index) => ({ role: index % 2 ? "ASSISTANT" : "USER", content: `${index}: ${LONG_MESSAGE}` })) },
  }, { token: ada });
  expect(long.errors).toBeUndefined();
  ids.long = long.data!.createConversation.id;

  ids.document = await uploadReadyDocument(stack.gateway.url, ada, "payments-runbook.md", "# Payments runbook\n\n## Checkout retries\n\nSet the checkout payment retry backoff to 200 ms doubling, at most five attempts.\n\n## Refunds\n\nRefunds settle within three days.");
});

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await stack?.stop();
  await db?.dispose();
  await serper?.close();
});

describe("MCP over Streamable HTTP at /mcp", () => {
  it("lists every tool with a description and a JSON Schema input whose every argument is described", async () => {
    const client = await connect(ada);
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual([...CORE_TOOLS, ...SAVED_SEARCH_TOOLS].sort());
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe("object");
      for (const [name, property] of Object.entries(tool.inputSchema.properties ?? {})) {
        expect([tool.name, name, typeof (property as { description?: string }).description]).toEqual([tool.name, name, "string"]);
      }
    }
    const search = tools.find((tool) => tool.name === "search")!;
    expect(search.inputSchema.required).toEqual(["query"]);
    expect(search.inputSchema.properties).toMatchObject({ query: { type: "string" }, alpha: { type: "number" }, limit: { type: "integer", default: 10 }, providers: { type: "array", items: { type: "string" } }, typoTolerance: { type: "boolean", default: true }, dryRun: { type: "boolean", default: false } });
    // No default alpha in the tool: left out, the search uses the deployment's (measured per embedder).
    expect((search.inputSchema.properties as Record<string, object>).alpha).not.toHaveProperty("default");
    // The filter as the schema's SearchFilter: an object of described fields, enums spelled out.
    const filter = (search.inputSchema.properties as Record<string, any>).filter;
    expect(filter).toMatchObject({ type: "object", properties: { kinds: { type: "array", items: { type: "string", enum: expect.arrayContaining(["CONVERSATION", "DOCUMENT_CHUNK"]) } }, created: { type: "object", properties: { from: { type: "string", format: "date-time" } } } } });
    const saveSearch = tools.find((tool) => tool.name === "save_search")!;
    expect(saveSearch.inputSchema.properties).toMatchObject({ filter: { type: "object" }, typoTolerance: { type: "boolean", default: true } });
    expect(tools.find((tool) => tool.name === "get_conversation")!.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.find((tool) => tool.name === "delete_saved_search")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });

  it("saves, lists, runs (with what is new since the last run), renames and deletes a saved search, privately", async () => {
    const client = await connect(ada);
    const saved = await call(client, "save_search", { name: "Payment retries", query: "checkout payment retry backoff", alpha: 1, providers: OWN_PROVIDERS });
    expect(saved.isError).toBeFalsy();
    const id = (saved.structuredContent as any).saveSearch.id as string;
    expect((saved.structuredContent as any).saveSearch).toMatchObject({ name: "Payment retries", alpha: 1, providers: OWN_PROVIDERS, filter: null, typoTolerance: true, lastRunAt: null });

    // A filter and typo tolerance are saved with it and applied at every run.
    const documentsOnly = await call(client, "save_search", { name: "Payment retries, documents", query: "checkout paymnet retry", alpha: 1, providers: OWN_PROVIDERS, filter: { kinds: ["DOCUMENT_CHUNK"] }, typoTolerance: false });
    expect((documentsOnly.structuredContent as any).saveSearch).toMatchObject({ filter: { kinds: ["DOCUMENT_CHUNK"], created: null }, typoTolerance: false });
    const documentsRun = (await call(client, "run_saved_search", { id: (documentsOnly.structuredContent as any).saveSearch.id })).structuredContent as any;
    expect(new Set(documentsRun.runSavedSearch.result.hits.map((hit: any) => hit.item.__typename))).toEqual(new Set(["DocumentChunk"]));
    expect(documentsRun.runSavedSearch.result.corrections).toEqual([]);
    expect(documentsRun.runSavedSearch.result.providers.find((provider: any) => provider.name === "conversations.keyword").status).toBe("SKIPPED");
    await call(client, "delete_saved_search", { id: (documentsOnly.structuredContent as any).saveSearch.id });

    const list = await call(client, "list_saved_searches", {});
    expect(list.structuredContent).toEqual(await sameAsGraphQL("list_saved_searches", {}, ada));
    expect((list.structuredContent as any).savedSearches.nodes.map((node: any) => node.id)).toEqual([id]);

    const first = (await call(client, "run_saved_search", { id })).structuredContent as any;
    const hitIds = first.runSavedSearch.result.hits.map((hit: any) => hit.item.id);
    expect(hitIds).toContain(ids.conversation);
    expect(first.runSavedSearch.newHits.map((hit: any) => hit.item.id)).toEqual(hitIds);
    // Its cursor pages on with `search` and the saved settings, as the tool's description says.
    const next = await call(client, "search", { query: "checkout payment retry backoff", alpha: 1, providers: OWN_PROVIDERS, after: first.runSavedSearch.result.pageInfo.endCursor });
    expect([next.isError ?? false, text(next).slice(0, 200)]).toEqual([false, expect.any(String)]);
    const again = (await call(client, "run_saved_search", { id })).structuredContent as any;
    expect(again.runSavedSearch.newHits).toEqual([]);
    expect(again.runSavedSearch.savedSearch.lastRunAt).not.toBeNull();

    // Another organization's user (and so anyone else) cannot run, rename or delete it.
    const outsider = await connect(otto);
    for (const [tool, args] of [["run_saved_search", { id }], ["rename_saved_search", { id, name: "Mine now" }], ["delete_saved_search", { id }]] as const) {
      const refused = await call(outsider, tool, args);
      expect([tool, refused.isError, text(refused)]).toEqual([tool, true, expect.stringMatching(/^NOT_FOUND: /)]);
    }
    expect(((await call(outsider, "list_saved_searches", {})).structuredContent as any).savedSearches.nodes).toEqual([]);

    const renamed = await call(client, "rename_saved_search", { id, name: "Checkout retries" });
    expect((renamed.structuredContent as any).renameSavedSearch).toMatchObject({ id, name: "Checkout retries" });
    expect((await call(client, "delete_saved_search", { id })).structuredContent).toEqual({ deleteSavedSearch: { id } });
    expect(((await call(client, "list_saved_searches", {})).structuredContent as any).savedSearches.nodes).toEqual([]);
  });

  it("finds the conversation and the document with search, as the same GraphQL query does, and opens both", async () => {
    const client = await connect(ada);
    const args = { query: "checkout payment retry backoff", alpha: 1, providers: OWN_PROVIDERS };
    const result = await call(client, "search", args);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(await sameAsGraphQL("search", args, ada));
    const items = (result.structuredContent as any).search.hits.map((hit: any) => hit.item);
    expect(items).toEqual(expect.arrayContaining([expect.objectContaining({ __typename: "Conversation", id: ids.conversation }), expect.objectContaining({ __typename: "DocumentChunk", document: expect.objectContaining({ id: ids.document }) })]));
    expect(text(result)).toContain("Checkout payment retries");
    expect((result.structuredContent as any).search.corrections).toEqual([]);

    // A misspelled word: the assistant is told what else was searched, and can search it as typed.
    const misspelled = await call(client, "search", { ...args, query: "checkout paymnet retry" });
    expect((misspelled.structuredContent as any).search).toMatchObject({ suggestion: "checkout payment retry", corrections: [{ word: "paymnet", searchedAs: expect.arrayContaining(["payment"]) }] });
    const exact = await call(client, "search", { ...args, query: "checkout paymnet retry", typoTolerance: false });
    expect((exact.structuredContent as any).search).toMatchObject({ suggestion: null, corrections: [] });

    // A filter narrows the hits to what it names, as in GraphQL.
    const filtered = { ...args, filter: { kinds: ["DOCUMENT_CHUNK"] } };
    const documents = await call(client, "search", filtered);
    expect(documents.structuredContent).toEqual(await sameAsGraphQL("search", filtered, ada));
    const kinds = new Set((documents.structuredContent as any).search.hits.map((hit: any) => hit.item.__typename));
    expect(kinds).toEqual(new Set(["DocumentChunk"]));
    const badFilter = await call(client, "search", { ...args, filter: { kinds: [] } });
    expect([badFilter.isError, text(badFilter)]).toEqual([true, expect.stringMatching(/^BAD_USER_INPUT: .*filter\.kinds/)]);

    const conversation = await call(client, "get_conversation", { id: ids.conversation, first: 2 });
    expect(conversation.structuredContent).toEqual(await sameAsGraphQL("get_conversation", { id: ids.conversation, first: 2 }, ada));
    const messages = (conversation.structuredContent as any).conversation.messages;
    expect(messages.nodes.map((message: any) => message.position)).toEqual([0, 1]);
    expect(messages.pageInfo.hasNextPage).toBe(true);
    expect(text(conversation)).toContain(`after: ${JSON.stringify(messages.pageInfo.endCursor)}`);
    const next = await call(client, "get_conversation", { id: ids.conversation, first: 2, after: messages.pageInfo.endCursor });
    expect((next.structuredContent as any).conversation.messages.nodes.map((message: any) => message.position)).toEqual([2]);

    const document = await call(client, "get_document", { id: ids.document });
    expect(document.structuredContent).toEqual(await sameAsGraphQL("get_document", { id: ids.document }, ada));
    expect((document.structuredContent as any).document).toMatchObject({ fileName: "payments-runbook.md", status: "READY" });
    expect((document.structuredContent as any).document.chunks.nodes.map((chunk: any) => chunk.text).join(" ")).toContain("200 ms doubling");
  });

  it("answers the knowledge and credit tools as GraphQL does", async () => {
    const client = await connect(ada);
    const cases: [string, Record<string, unknown>][] = [
      ["query_knowledge_base", { query: "checkout retry backoff", limit: 3 }],
      ["query_platform_knowledge", { capability: "payments-support", query: "refunds" }],
      ["discover_search_questions", { query: "payment retry backoff", dryRun: true }],
      ["research", { query: "how to configure payment retry backoff", dryRun: true }],
      ["estimate_credits", { query: "payment retry backoff" }],
    ];
    for (const [tool, args] of cases) {
      const result = await call(client, tool, args);
      expect([tool, result.isError ?? false]).toEqual([tool, false]);
      expect([tool, result.structuredContent]).toEqual([tool, await sameAsGraphQL(tool, args, ada)]);
    }
    const knowledge = (await call(client, "query_knowledge_base", { query: "checkout retry backoff", limit: 3 })).structuredContent as any;
    expect(knowledge.queryKnowledgeBase.passages[0].source.documentId).toBe(ids.document);
    const estimate = (await call(client, "estimate_credits", { query: "payment retry backoff" })).structuredContent as any;
    expect(estimate.webSearch.estimatedCredits).toBeGreaterThan(0);
    expect(estimate.discoverQuestions.estimatedCredits).toBeGreaterThan(0);
  });

  it("a dry run spends nothing and calls no provider; the same search without it does spend", async () => {
    const client = await connect(ada);
    const before = await spent(ada);
    const requests = serper.requests.length;
    const dry = await call(client, "search", { query: "payment retry backoff guide", dryRun: true });
    expect(dry.structuredContent).toEqual({ webEstimate: expect.objectContaining({ estimatedCredits: 3 }) });
    for (const [tool, args] of [["discover_search_questions", { query: "payment retry backoff guide", dryRun: true }], ["research", { query: "payment retry backoff guide", dryRun: true }], ["estimate_credits", { query: "payment retry backoff guide" }]] as const) {
      const result = await call(client, tool, args);
      expect([tool, result.isError ?? false]).toEqual([tool, false]);
    }
    expect(serper.requests.length).toBe(requests);
    expect(await spent(ada)).toBe(before);

    const real = await call(client, "search", { query: "payment retry backoff guide", providers: ["web.serper"] });
    expect((real.structuredContent as any).search.providers).toContainEqual({ name: "web.serper", status: "OK", error: null });
    expect(serper.requests.length).toBe(requests + 1);
    expect(await spent(ada)).toBe(before + 3);
  });

  it("a user of another organization finds and opens nothing of the first's", async () => {
    const client = await connect(otto);
    const search = await call(client, "search", { query: "checkout payment retry backoff", alpha: 1, providers: OWN_PROVIDERS });
    expect((search.structuredContent as any).search.hits).toEqual([]);
    const conversation = await call(client, "get_conversation", { id: ids.conversation });
    expect(conversation.structuredContent).toEqual({ conversation: null });
    expect(text(conversation)).toContain("nothing found");
    expect((await call(client, "get_document", { id: ids.document })).structuredContent).toEqual({ document: null });
    expect(((await call(client, "query_knowledge_base", { query: "checkout retry backoff" })).structuredContent as any).queryKnowledgeBase.passages).toEqual([]);
  });

  it("returns GraphQL and argument errors as tool errors with their code", async () => {
    const client = await connect(ada);
    const empty = await call(client, "search", { query: "   ", providers: OWN_PROVIDERS });
    expect(empty.isError).toBe(true);
    expect(text(empty)).toMatch(/^BAD_USER_INPUT: /);
    expect(empty.structuredContent).toEqual({ errors: [expect.objectContaining({ code: "BAD_USER_INPUT" })] });

    const wrongType = await call(client, "search", { query: "retries", limit: "ten" });
    expect(wrongType.isError).toBe(true);
    expect(text(wrongType)).toContain('BAD_USER_INPUT: Argument "limit"');

    const unknown = await call(client, "get_document", { id: ids.document, pages: 3 });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toContain('takes no argument "pages"');

    const missing = await call(client, "get_conversation", {});
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain('Argument "id"');
  });

  it("bounds the output: text and structured content are cut, and the text says how to page", async () => {
    const client = await connect(ada);
    const result = await call(client, "get_conversation", { id: ids.long, first: 8 });
    expect(result.isError).toBeFalsy();
    const body = text(result);
    expect(body.length).toBeLessThanOrEqual(25_000);
    expect(body).toContain("ask for a smaller page");
    expect(JSON.stringify(result.structuredContent).length).toBeLessThanOrEqual(100_000);
    // Unbounded, the page is about 8 × 21,600 characters of messages.
    expect(8 * LONG_MESSAGE.length).toBeGreaterThan(150_000);
    const paged = await call(client, "get_conversation", { id: ids.long, first: 1 });
    expect(text(paged)).toContain("call get_conversation again with after:");
    expect((paged.structuredContent as any).conversation.messages.nodes[0].content).toBe(`0: ${LONG_MESSAGE}`);
  });

  it("serves the API schema as a resource and the research prompt", async () => {
    const client = await connect(ada);
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(["schema://supergraph"]);
    const schema = await client.readResource({ uri: "schema://supergraph" });
    const sdl = (schema.contents[0] as { text: string }).text;
    expect(sdl).toContain("type Query");
    expect(sdl).not.toContain("join__");
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(["research_question"]);
    const prompt = await client.getPrompt({ name: "research_question", arguments: { question: "Why do payment retries time out?" } });
    expect((prompt.messages[0]!.content as { text: string }).text).toContain("get_conversation");
  });

  it("refuses a session without a valid bearer token with 401 and WWW-Authenticate: Bearer", async () => {
    await expect(connect(null)).rejects.toThrow(/invalid_token.*Missing Authorization header/);
    const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
    const post = (headers: Record<string, string>) =>
      fetch(mcpUrl, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body: JSON.stringify(initialize) });
    const anonymous = await post({});
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer realm=/);
    const forged = await post({ authorization: "Bearer not.a.token" });
    expect(forged.status).toBe(401);
    expect(forged.headers.get("www-authenticate")).toMatch(/^Bearer .*error="invalid_token"/);
    // A valid token passes the same door.
    expect((await post({ authorization: `Bearer ${ada}` })).status).toBe(200);
  });

  it("refuses a body over the limit and a browser origin not on the CORS list", async () => {
    const oversized = await fetch(mcpUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${ada}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "search", arguments: { query: "x".repeat(2 * 1024 * 1024) } } }),
    });
    expect(oversized.status).toBe(413);
    const foreign = await fetch(mcpUrl, { method: "POST", headers: { origin: "https://evil.example", authorization: `Bearer ${ada}`, "content-type": "application/json" }, body: "{}" });
    expect(foreign.status).toBe(403);
  });
});

describe("tool definitions", () => {
  const api = () => apiSchemaOf(stack.supergraphSdl);

  it("leaves out, naming the file and the GraphQL error, a tool whose operation this supergraph cannot run", () => {
    const directory = mkdtempSync(path.join(tmpdir(), "mcp-tools-"));
    try {
      writeFileSync(path.join(directory, "broken_search.graphql"), "# Searches.\n#\n# @param query What to find.\nquery Broken($query: String!) { search(input: { query: $query }) { hits { scor } } }\n");
      writeFileSync(path.join(directory, "good_search.graphql"), "# Searches.\n#\n# @param query What to find.\nquery Good($query: String!) { search(input: { query: $query }) { hits { score } } }\n");
      const catalog = loadToolCatalog(api().schema, directory);
      expect(catalog.tools.map((tool) => tool.name)).toEqual(["good_search"]);
      expect(catalog.unsupported.map((problem) => problem.message)).toEqual([expect.stringMatching(/broken_search\.graphql: does not validate against the supergraph: Cannot query field "scor" on type "SearchHit"/)]);
      // A file that is wrong whatever the supergraph still stops the start.
      writeFileSync(path.join(directory, "torn.graphql"), "# Torn.\nquery Torn { search(");
      expect(() => loadToolCatalog(api().schema, directory)).toThrow(/torn\.graphql: does not parse/);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it("refuses a tool without a description, or with a variable nobody describes", () => {
    expect(() => toolFromSource(api().schema, "bare", "query Bare($id: ID!) { conversation(id: $id) { id } }")).toThrow(/bare\.graphql: needs a description/);
    // Without @param, a variable takes the description of the argument it is passed to; one inside a list has none.
    expect(toolFromSource(api().schema, "open", "# Opens.\nquery Open($id: ID!) { conversation(id: $id) { id } }").inputSchema.properties.id!.description).toBe("The conversation's id (a UUID).");
    expect(() => toolFromSource(api().schema, "vague", "# Searches.\nquery Vague($p: String!) { search(input: { query: \"a\", providers: [$p] }) { tookMs } }")).toThrow(/vague\.graphql: describe \$p with a "# @param" line/);
    expect(() => toolFromSource(api().schema, "typo", "# Opens.\n# @param idd The id.\nquery Typo($id: ID!) { conversation(id: $id) { id } }")).toThrow(/@param idd names no variable/);
  });
});

describe("MCP over stdio (npm run mcp)", () => {
  // `npm run mcp`'s own command: the compiled script.
  const command = productScriptArguments("scripts/mcp.ts");

  it("lists the tools and runs search against the running gateway as the token's user", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: command,
      env: { PATH: process.env.PATH ?? "", GATEWAY_URL: stack.gateway.url, CONTEXT_SEARCH_TOKEN: ada },
      stderr: "pipe",
    });
    const client = new Client({ name: "mcp-stdio-test", version: "1.0.0" });
    await client.connect(transport);
    clients.push(client);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([...CORE_TOOLS, ...SAVED_SEARCH_TOOLS].sort());
    const args = { query: "checkout payment retry backoff", alpha: 1, providers: OWN_PROVIDERS };
    const result = await call(client, "search", args);
    expect(result.structuredContent).toEqual(await sameAsGraphQL("search", args, ada));
    expect((result.structuredContent as any).search.hits.map((hit: any) => hit.item.id)).toContain(ids.conversation);
  });

  it("refuses to start without CONTEXT_SEARCH_TOKEN, saying so on stderr and nothing on stdout", async () => {
    const child = spawn(process.execPath, command, { env: { PATH: process.env.PATH ?? "", GATEWAY_URL: stack.gateway.url }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(1);
    expect(stderr).toContain("CONTEXT_SEARCH_TOKEN is not set");
    expect(stdout).toBe("");
  });
});
