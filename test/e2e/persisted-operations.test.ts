/**
 * Persisted operations through the gateway, over real HTTP: Apollo Client's PersistedQueryLink
 * (automatic persisted queries, POST and GET), a trusted-documents manifest sent by
 * @apollo/persisted-query-lists, and a persisted operation meeting the same limits, identity,
 * rate limits and response cache as a document sent in full. Redis is real when REDIS_URL is set
 * (CI); a Redis that is down is a closed port.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from "@apollo/client";
import { PersistedQueryLink } from "@apollo/client/link/persisted-queries";
import { addTypenameToDocument, print } from "@apollo/client/utilities";
import { createRequire } from "node:module";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { gatewayOptionsFrom, startGateway, type GatewayOptions, type RunningGateway } from "../../gateway/server.js";
import { sha256Hex } from "../../gateway/persisted-query-manifest.js";
import { loadConfig } from "../../lib/config.js";
import type { RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import { startTestStack, type TestStack } from "../support/stack.js";
import { graphql } from "../support/graphql.js";
import { tokenFor } from "../support/tenants.js";

// Loaded by Node's own require, not through the test's ES module graph: the package is CommonJS
// and requires @apollo/client/core, which Node 22+ resolves to the ES build ("module-sync") that
// this file's graph is still evaluating, and Node refuses a require(esm) in a cycle.
const { generatePersistedQueryIdsFromManifest } = createRequire(import.meta.url)("@apollo/persisted-query-lists") as typeof import("@apollo/persisted-query-lists");

const SEARCH = `query Search($query: String!) {
  search(input: { query: $query, limit: 5, alpha: 1 }) {
    hits { item { __typename ... on Conversation { id title } } }
  }
}`;
const CONVERSATION_TITLES = `query ConversationTitles {
  conversations(first: 5) { nodes { title } }
}`;
// Within the token limit (so APQ registers it) but over the alias limit (50), which is checked at validation.
const ALIAS_FLOOD = `query AliasFlood { ${Array.from({ length: 60 }, (_, i) => `a${i}: __typename`).join(" ")} }`;
const CREATE = `mutation CreateConversation { createConversation(input: { title: "made by a persisted mutation" }) { id } }`;

let test: TestStack;
let token: string;
let searchSubgraph: RunningSubgraph;
let directory: string;
const extraGateways: RunningGateway[] = [];

/** What a client sent: method, URL and body of each request, through a fetch of our own. */
interface Sent {
  method: string;
  url: string;
  body: Record<string, unknown> | null;
  status: number;
}

function recordingFetch(sent: Sent[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    sent.push({ method: init?.method ?? "GET", url, body: typeof init?.body === "string" ? JSON.parse(init.body) : null, status: response.status });
    return response;
  };
}

function apolloClient(uri: string, link: ApolloLink, sent: Sent[], authToken: string | null = token): ApolloClient {
  const http = new HttpLink({ uri, fetch: recordingFetch(sent), headers: authToken ? { authorization: `Bearer ${authToken}` } : {} });
  return new ApolloClient({ link: ApolloLink.from([link, http]), cache: new InMemoryCache() });
}

const apq = (options: { useGETForHashedQueries?: boolean } = {}) => new PersistedQueryLink({ sha256: sha256Hex, ...options });

/** A raw request with a persistedQuery extension: POST with a JSON body, or GET with the same fields in the URL. */
async function persisted(url: string, fields: { query?: string; hash: unknown; version?: unknown; variables?: Record<string, unknown> }, options: { method?: "GET" | "POST"; token?: string | null } = {}) {
  const body = {
    ...(fields.query !== undefined ? { query: fields.query } : {}),
    ...(fields.variables ? { variables: fields.variables } : {}),
    extensions: { persistedQuery: { version: fields.version ?? 1, sha256Hash: fields.hash } },
  };
  const headers: Record<string, string> = { accept: "application/graphql-response+json, application/json" };
  const authorization = options.token === undefined ? token : options.token;
  if (authorization) headers.authorization = `Bearer ${authorization}`;
  let response: Response;
  if (options.method === "GET") {
    const query = new URLSearchParams(Object.entries(body).map(([key, value]) => [key, typeof value === "string" ? value : JSON.stringify(value)]));
    response = await fetch(`${url}?${query}`, { headers });
  } else {
    response = await fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) });
  }
  const text = await response.text();
  return { status: response.status, cacheControl: response.headers.get("cache-control"), body: JSON.parse(text) as { data?: Record<string, any> | null; errors?: { message: string; extensions?: Record<string, unknown> }[]; extensions?: Record<string, unknown> } };
}

const codes = (body: { errors?: { extensions?: Record<string, unknown> }[] }) => (body.errors ?? []).map((error) => error.extensions?.code);

async function extraGateway(overrides: Partial<GatewayOptions>): Promise<RunningGateway> {
  const gateway = await startGateway({
    ...gatewayOptionsFrom(test.config),
    port: 0,
    supergraphSdl: test.stack.supergraphSdl,
    mcp: null,
    logger: silentLogger,
    runtimeLogLevel: false,
    ...overrides,
  });
  extraGateways.push(gateway);
  return gateway;
}

const memoryApq = { ttlSeconds: 60, redisUrl: null, redisKeyPrefix: "unused:", maxEntries: 100, maxBytes: 1024 * 1024 };

/** A document as Apollo Client sends it (with `__typename` added), which is what a generated manifest holds. */
const asSent = (document: string) => print(addTypenameToDocument(gql(document)));

function writeManifest(operations: { name: string; type: string; body: string; id?: string }[]): string {
  const file = path.join(directory, `manifest-${randomUUID()}.json`);
  const manifest = { format: "apollo-persisted-query-manifest", version: 1, operations: operations.map((operation) => ({ id: sha256Hex(operation.body), ...operation })) };
  writeFileSync(file, JSON.stringify(manifest));
  return file;
}

beforeAll(async () => {
  test = await startTestStack({ SEARCH_INDEXER: "false", SEARCH_CACHE_TTL_SECONDS: "0", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "60" });
  searchSubgraph = test.stack.subgraphs.find((subgraph) => subgraph.name === "search")!;
  directory = mkdtempSync(path.join(tmpdir(), "persisted-operations-"));
  token = await tokenFor("org-persisted", "pia");
  const created = await graphql(test.stack.gateway.url, `mutation { createConversation(input: { title: "Deadlock in the billing job", messages: [{ role: USER, content: "the billing job deadlocks nightly", tokenCount: 6 }] }) { id } }`, {}, { token });
  expect(created.errors).toBeUndefined();
});

afterAll(async () => {
  await Promise.all(extraGateways.map((gateway) => gateway.stop()));
  await test?.stop();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe("automatic persisted queries with Apollo Client's PersistedQueryLink", () => {
  it("misses once, registers the document, then sends only the hash", async () => {
    const sent: Sent[] = [];
    const first = await apolloClient(test.stack.gateway.url, apq(), sent).query({ query: gql(CONVERSATION_TITLES) });
    expect(first.data).toEqual({ conversations: { __typename: "ConversationConnection", nodes: [{ __typename: "Conversation", title: "Deadlock in the billing job" }] } });
    // The hash alone, refused as unknown; then the document with its hash.
    expect(sent.map((request) => [request.method, request.status, typeof request.body?.query])).toEqual([
      ["POST", 200, "undefined"],
      ["POST", 200, "string"],
    ]);
    const hash = (sent[0]!.body!.extensions as { persistedQuery: { sha256Hash: string } }).persistedQuery.sha256Hash;
    expect(hash).toMatch(/^[0-9a-f]{64}$/);

    // A new client (an empty cache, as after a page load): one request, no document in it.
    const again: Sent[] = [];
    const second = await apolloClient(test.stack.gateway.url, apq(), again).query({ query: gql(CONVERSATION_TITLES) });
    expect(second.data).toEqual(first.data);
    expect(again).toHaveLength(1);
    expect(again[0]!.body).not.toHaveProperty("query");
    expect(again[0]!.body!.extensions).toMatchObject({ persistedQuery: { version: 1, sha256Hash: hash } });
  });

  it("sends hashed queries as GET when asked to, and registers through POST", async () => {
    const sent: Sent[] = [];
    const query = gql(`query SearchByGet($query: String!) { search(input: { query: $query, limit: 3, alpha: 1 }) { hits { item { __typename ... on Conversation { title } } } } }`);
    const first = await apolloClient(test.stack.gateway.url, apq({ useGETForHashedQueries: true }), sent).query({ query, variables: { query: "billing deadlock" } });
    expect((first.data as Record<string, any>).search.hits.map((hit: { item: { title: string } }) => hit.item.title)).toEqual(["Deadlock in the billing job"]);
    expect(sent.map((request) => [request.method, request.status])).toEqual([
      ["GET", 200],
      ["POST", 200],
    ]);
    expect(new URL(sent[0]!.url).searchParams.has("query")).toBe(false);

    const again: Sent[] = [];
    const second = await apolloClient(test.stack.gateway.url, apq({ useGETForHashedQueries: true }), again).query({ query, variables: { query: "billing deadlock" } });
    expect(second.data).toEqual(first.data);
    expect(again.map((request) => [request.method, request.status])).toEqual([["GET", 200]]);
  });

  it("never runs a mutation sent by GET, even one registered by POST", async () => {
    // An organization of its own, so the other tests' listings do not see what this one writes.
    const writer = await tokenFor("org-persisted-writes", "wes");
    const hash = sha256Hex(CREATE);
    const registered = await persisted(test.stack.gateway.url, { query: CREATE, hash }, { token: writer });
    expect(registered.status).toBe(200);
    const count = async () => (await graphql(test.stack.gateway.url, `{ conversations(first: 50) { nodes { id } } }`, {}, { token: writer })).data!.conversations.nodes.length;
    const before = await count();
    expect(before).toBe(1);
    const byGet = await persisted(test.stack.gateway.url, { hash }, { method: "GET", token: writer });
    expect(byGet.status).toBe(405);
    expect(await count()).toBe(before);
  });
});

describe("bad persisted-query extensions", () => {
  it("answers a hash that is not 64 hex digits with 400 naming the field, by POST and by GET", async () => {
    for (const method of ["POST", "GET"] as const) {
      for (const hash of ["abc123", "Z".repeat(64), "A".repeat(64), 42, null, "0".repeat(65)]) {
        const response = await persisted(test.stack.gateway.url, { hash }, { method });
        expect([method, hash, response.status]).toEqual([method, hash, 400]);
        expect(codes(response.body)).toEqual(["PERSISTED_QUERY_INVALID"]);
        expect(response.body.errors![0]!.message).toContain("extensions.persistedQuery.sha256Hash must be 64 lower-case hexadecimal digits");
      }
    }
    const version = await persisted(test.stack.gateway.url, { hash: sha256Hex(SEARCH), version: 2 });
    expect(version.status).toBe(400);
    expect(version.body.errors![0]!.message).toBe("extensions.persistedQuery.version must be 1, got 2");
  });

  it("answers a persistedQuery of the wrong shape, or a request with neither document nor id, with 400 and what to send", async () => {
    for (const extensions of [{ persistedQuery: "abc" }, { persistedQuery: null }, { persistedQuery: [] }, { persistedQuery: { sha256Hash: sha256Hex(SEARCH) } }]) {
      const response = await fetch(test.stack.gateway.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ extensions }) });
      const body = (await response.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
      expect([extensions, response.status, codes(body)]).toEqual([extensions, 400, ["PERSISTED_QUERY_INVALID"]]);
      expect(body.errors[0]!.message).toMatch(/^extensions\.persistedQuery/);
    }
    const neither = await fetch(test.stack.gateway.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ variables: {} }) });
    expect(neither.status).toBe(400);
    expect(await neither.json()).toEqual({
      errors: [{ message: "Missing query: send the document as `query`, or a persisted operation's id as extensions.persistedQuery.sha256Hash", extensions: { code: "BAD_REQUEST" } }],
    });
  });

  it("answers an unknown hash with PersistedQueryNotFound, never a 500", async () => {
    const response = await persisted(test.stack.gateway.url, { hash: sha256Hex(`query Unknown${randomUUID().replace(/-/g, "")} { __typename }`) });
    // As Apollo Server and the Router answer it: 200, the protocol working, and never stored by a
    // cache between (a hashed GET's miss kept there would outlive the registration).
    expect(response.status).toBe(200);
    expect(response.cacheControl).toBe("private, no-cache, must-revalidate");
    expect(response.body.errors).toEqual([{ message: "PersistedQueryNotFound", extensions: { code: "PERSISTED_QUERY_NOT_FOUND" } }]);
    const byGet = await persisted(test.stack.gateway.url, { hash: sha256Hex(`query Unknown${randomUUID().replace(/-/g, "")} { __typename }`) }, { method: "GET" });
    expect([byGet.status, byGet.cacheControl, codes(byGet.body)]).toEqual([200, "private, no-cache, must-revalidate", ["PERSISTED_QUERY_NOT_FOUND"]]);
  });

  it("refuses a document whose hash is not its SHA-256 (400), and keeps nothing under that hash", async () => {
    const wrong = sha256Hex("query Other { __typename }");
    const response = await persisted(test.stack.gateway.url, { query: CONVERSATION_TITLES, hash: wrong });
    expect(response.status).toBe(400);
    expect(codes(response.body)).toEqual(["PERSISTED_QUERY_HASH_MISMATCH"]);
    expect(response.body.errors![0]!.message).toContain(sha256Hex(CONVERSATION_TITLES));
    expect(codes((await persisted(test.stack.gateway.url, { hash: wrong })).body)).toEqual(["PERSISTED_QUERY_NOT_FOUND"]);
  });
});

describe("a persisted operation meets the same walls as any other", () => {
  it("never stores a document that a limit refuses (tokens before parsing, aliases at validation) or that does not validate", async () => {
    const overTokens = `query Huge { ${Array.from({ length: 3_000 }, () => "__typename").join(" ")} }`;
    for (const [document, code] of [
      [overTokens, "OPERATION_LIMIT_EXCEEDED"],
      [ALIAS_FLOOD, "OPERATION_LIMIT_EXCEEDED"],
      ["query NoSuchField { noSuchField }", "GRAPHQL_VALIDATION_FAILED"],
    ] as const) {
      const hash = sha256Hex(document);
      const registering = await persisted(test.stack.gateway.url, { query: document, hash });
      expect([document.slice(0, 20), registering.status, codes(registering.body)]).toEqual([document.slice(0, 20), 400, [code]]);
      expect(codes((await persisted(test.stack.gateway.url, { hash })).body)).toEqual(["PERSISTED_QUERY_NOT_FOUND"]);
    }
  });

  it("needs a token for data, as a document sent in full does", async () => {
    const hash = sha256Hex(CONVERSATION_TITLES);
    await persisted(test.stack.gateway.url, { query: CONVERSATION_TITLES, hash });
    const anonymous = await persisted(test.stack.gateway.url, { hash }, { token: null });
    expect(anonymous.status).toBe(401);
    expect(codes(anonymous.body)).toEqual(["UNAUTHENTICATED"]);
  });

  it("is answered from the response cache like the same search sent in full", async () => {
    const hash = sha256Hex(SEARCH);
    const variables = { query: "nightly billing deadlocks" };
    expect((await persisted(test.stack.gateway.url, { query: SEARCH, hash, variables })).status).toBe(200);
    // The cache learns the document is a search on its first parse and stores the second answer.
    await persisted(test.stack.gateway.url, { hash, variables });
    const before = searchSubgraph.operations.count;
    const cached = await persisted(test.stack.gateway.url, { hash, variables });
    expect(cached.body.data!.search.hits.map((hit: { item: { title: string } }) => hit.item.title)).toEqual(["Deadlock in the billing job"]);
    expect((cached.body.extensions?.responseCache as { hit?: boolean } | undefined)?.hit).toBe(true);
    expect(searchSubgraph.operations.count).toBe(before);
  });

  it("spends the caller's rate-limit budget, one request each", async () => {
    const limited = await extraGateway({
      rateLimit: { windowSeconds: 60, organizationPoints: 0, userPoints: 4, anonymousPoints: 0, redisUrl: null },
      persistedOperations: { manifestPath: null, ids: "sha256", only: false, apq: memoryApq },
    });
    const hash = sha256Hex(CONVERSATION_TITLES);
    const statuses = [(await persisted(limited.url, { query: CONVERSATION_TITLES, hash })).status];
    for (let i = 0; i < 4; i++) statuses.push((await persisted(limited.url, { hash })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
  });
});

describe("trusted documents from a manifest", () => {
  let gateway: RunningGateway;
  let manifestFile: string;

  beforeAll(async () => {
    manifestFile = writeManifest([
      { name: "ConversationTitles", type: "query", body: asSent(CONVERSATION_TITLES) },
      { name: "AliasFlood", type: "query", body: ALIAS_FLOOD },
    ]);
    gateway = await extraGateway({ persistedOperations: { manifestPath: manifestFile, ids: "sha256", only: true, apq: memoryApq }, mcp: {} });
  });

  it("runs a manifest operation by its id, as @apollo/persisted-query-lists sends it: one request, no document", async () => {
    const sent: Sent[] = [];
    const { readFileSync } = await import("node:fs");
    const link = new PersistedQueryLink(generatePersistedQueryIdsFromManifest({ loadManifest: async () => JSON.parse(readFileSync(manifestFile, "utf8")) }));
    const result = await apolloClient(gateway.url, link, sent).query({ query: gql(CONVERSATION_TITLES) });
    expect((result.data as Record<string, any>).conversations.nodes).toEqual([{ __typename: "Conversation", title: "Deadlock in the billing job" }]);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).not.toHaveProperty("query");
    expect(sent[0]!.body!.extensions).toMatchObject({ persistedQuery: { version: 1, sha256Hash: sha256Hex(asSent(CONVERSATION_TITLES)) } });
  });

  it("refuses any document sent as text, in the manifest or not, and registers nothing", async () => {
    for (const body of [{ query: SEARCH, variables: { query: "x" } }, { query: CONVERSATION_TITLES }, { query: CONVERSATION_TITLES, extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(CONVERSATION_TITLES) } } }]) {
      const response = await fetch(gateway.url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
      expect(response.status).toBe(400);
      const refused = (await response.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
      expect(codes(refused)).toEqual(["PERSISTED_QUERY_ID_REQUIRED"]);
      expect(refused.errors[0]!.message).toMatch(/^This gateway accepts only persisted operations/);
    }
    // APQ is off here: a hash the manifest lacks stays unknown after a "registration".
    await persisted(gateway.url, { query: SEARCH, hash: sha256Hex(SEARCH) });
    expect(codes((await persisted(gateway.url, { hash: sha256Hex(SEARCH), variables: { query: "x" } })).body)).toEqual(["PERSISTED_QUERY_NOT_FOUND"]);
  });

  it("still runs the gateway's own operations: an MCP tool call", async () => {
    const client = new Client({ name: "persisted-operations-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", gateway.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const result = (await client.callTool({ name: "search", arguments: { query: "billing deadlock" } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.structuredContent)).toContain("Deadlock in the billing job");
    } finally {
      await client.close();
    }
  });

  it("answers an id that is not in the manifest with PERSISTED_QUERY_NOT_FOUND", async () => {
    const response = await persisted(gateway.url, { hash: "f".repeat(64) });
    expect(response.status).toBe(200);
    expect(codes(response.body)).toEqual(["PERSISTED_QUERY_NOT_FOUND"]);
  });

  it("still applies the operation limits to a manifest operation", async () => {
    const response = await persisted(gateway.url, { hash: sha256Hex(ALIAS_FLOOD) });
    expect(response.status).toBe(400);
    expect(codes(response.body)).toEqual(["OPERATION_LIMIT_EXCEEDED"]);
  });

  it("stops the start at a manifest entry whose id is not its body's hash, naming the file and the entry", async () => {
    const file = path.join(directory, "tampered.json");
    const body = CONVERSATION_TITLES;
    writeFileSync(file, JSON.stringify({ format: "apollo-persisted-query-manifest", version: 1, operations: [{ id: sha256Hex(`${body} `), name: "ConversationTitles", type: "query", body }] }));
    await expect(extraGateway({ persistedOperations: { manifestPath: file, ids: "sha256", only: true, apq: null } })).rejects.toThrow(
      `Persisted documents manifest ${file}: operations[0] ("ConversationTitles") has the id ${sha256Hex(`${body} `)}, but the SHA-256 of its body is ${sha256Hex(body)}`,
    );
  });
});

describe("the store of automatic persisted queries", () => {
  const redisUrl = loadConfig().search.redisUrl;
  (redisUrl ? it : it.skip)("in Redis, is shared by two gateways (REDIS_URL)", async () => {
    const shared = { ...memoryApq, redisUrl, redisKeyPrefix: `test-apq-${randomUUID()}:` };
    const [first, second] = [await extraGateway({ persistedOperations: { manifestPath: null, ids: "sha256", only: false, apq: shared } }), await extraGateway({ persistedOperations: { manifestPath: null, ids: "sha256", only: false, apq: shared } })];
    const hash = sha256Hex(CONVERSATION_TITLES);
    expect(codes((await persisted(second.url, { hash })).body)).toEqual(["PERSISTED_QUERY_NOT_FOUND"]);
    expect((await persisted(first.url, { query: CONVERSATION_TITLES, hash })).status).toBe(200);
    const fromSecond = await persisted(second.url, { hash });
    expect(fromSecond.status).toBe(200);
    expect(fromSecond.body.data!.conversations.nodes).toEqual([{ title: "Deadlock in the billing job" }]);
  });

  it("with Redis down, asks for the document (PersistedQueryNotFound) and serves it, never a 500", async () => {
    const down = await extraGateway({ persistedOperations: { manifestPath: null, ids: "sha256", only: false, apq: { ...memoryApq, redisUrl: "redis://127.0.0.1:1" } } });
    const sent: Sent[] = [];
    const result = await apolloClient(down.url, apq(), sent).query({ query: gql(CONVERSATION_TITLES) });
    expect((result.data as Record<string, any>).conversations.nodes).toEqual([{ __typename: "Conversation", title: "Deadlock in the billing job" }]);
    expect(sent.map((request) => request.status)).toEqual([200, 200]);
    expect(sent.map((request) => typeof request.body?.query)).toEqual(["undefined", "string"]);
  });

  it("in memory, keeps at most its bound of documents, the least recently used going first", async () => {
    const small = await extraGateway({ persistedOperations: { manifestPath: null, ids: "sha256", only: false, apq: { ...memoryApq, maxEntries: 2 } } });
    const documents = ["query A { __typename }", "query B { __typename }", "query C { __typename }"];
    for (const document of documents) expect((await persisted(small.url, { query: document, hash: sha256Hex(document) })).status).toBe(200);
    const found = [];
    for (const document of documents) found.push(codes((await persisted(small.url, { hash: sha256Hex(document) })).body));
    expect(found).toEqual([["PERSISTED_QUERY_NOT_FOUND"], [], []]);
  });
});
