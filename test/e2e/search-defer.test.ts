/**
 * Slow providers streamed with `@defer`, through the gateway over real HTTP: the page of the
 * LOCAL providers (`latency: LOCAL`) arrives as the first part while a web stand-in holds its
 * answer (until the test has read that part), and the page of every provider, its web hits included, arrives in the
 * deferred part; each part is a page of its own list, with cursors for that list. The same
 * operation without `@defer` is one answer. The LOCAL providers run once for both parts (SQL
 * statements counted), and a search subgraph cut off mid-stream ends the stream with an error
 * part rather than a hang. A `@defer` inside a search result (on `providers`, a hit's
 * `highlights`, its `item`, an item's own fields) is answered with its parent, complete, on
 * either planner, and so is a `@stream` on a root list field.
 */
import { ApolloClient, gql, HttpLink, InMemoryCache } from "@apollo/client";
import { Defer20220824Handler } from "@apollo/client/incremental";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { randomBytes } from "node:crypto";
import { gatewayOptionsFrom, startGateway, subgraphLocations, type RunningGateway } from "../../gateway/server.js";
import { silentLogger } from "../../lib/logger.js";
import { SerperStandIn } from "../support/external/serper-stand-in.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { readParts, type IncrementalPart } from "../support/incremental.js";
import { startTestStack, type TestStack } from "../support/stack.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { tokenFor } from "../support/tenants.js";

/**
 * The longest the web stand-in holds an answer. A gateway that did not stream would send nothing
 * until the web answered: the limit lets the answer go, and the order check fails instead of the
 * test hanging. Under the 4 s attempt timeout below: slow, not timed out.
 */
const WEB_HOLD_LIMIT_MS = 3_000;

const PAGE = `hits { score item { __typename ... on Conversation { id title } ... on WebResult { url } } } pageInfo { hasNextPage endCursor } providers { name status }`;
const DEFERRED = `query Streamed($input: SearchInput!, $local: SearchInput!) {
  fast: search(input: $local) { ${PAGE} }
  ... @defer(label: "all") { all: search(input: $input) { ${PAGE} } }
}`;
const UNDEFERRED = DEFERRED.replace(` @defer(label: "all")`, "");

let test: TestStack;
let serper: SerperStandIn;
let ada: string;
/** What happened, in the order it happened: the stand-in's answers and the parts the test read. */
let events: string[] = [];

type Page = { hits: Array<{ score: number; item: { __typename: string; id?: string; url?: string } | null }>; pageInfo: { hasNextPage: boolean; endCursor: string | null }; providers: Array<{ name: string; status: string }> };

const inputs = (query: string, extra: Record<string, unknown> = {}) => ({ input: { query, alpha: 1, limit: 3, ...extra }, local: { query, alpha: 1, limit: 3, latency: "LOCAL", ...extra } });

function post(url: string, query: string, variables: Record<string, unknown>, accept: string): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json", accept, authorization: `Bearer ${ada}` }, body: JSON.stringify({ query, variables }) });
}

/** Holds the web stand-in's answers until released: the order the test sees does not depend on how busy the machine is. */
const holdWeb = () => serper.holdUntilReleased(WEB_HOLD_LIMIT_MS);

/**
 * Sends a streamed operation with the web stand-in held, reads its parts and notes in `events`
 * when each was read; the web answer is let go once the first part has been read.
 */
async function postHeld(url: string, query: string, variables: Record<string, unknown>, accept = "multipart/mixed"): Promise<IncrementalPart[]> {
  const release = holdWeb();
  const response = await post(url, query, variables, accept);
  expect(response.status).toBe(200);
  return readParts(response, (part) => {
    events.push(part.incremental ? "deferred part read" : "first part read");
    if (!part.incremental) release();
  });
}

/** Sends the deferred operation: see postHeld. */
function streamed(query: string, accept = "multipart/mixed", url = test.stack.gateway.url): Promise<IncrementalPart[]> {
  return postHeld(url, DEFERRED, inputs(query), accept);
}

const types = (page: Page) => new Set(page.hits.map((hit) => hit.item?.__typename));
const status = (page: Page, name: string) => page.providers.find((provider) => provider.name === name)?.status;

beforeAll(async () => {
  serper = await SerperStandIn.start();
  serper.onAnswer = () => events.push("web answered");
  test = await startTestStack({
    SECRETS_ENCRYPTION_KEYS: `test-key:${randomBytes(32).toString("base64")}`,
    SERPER_API_KEY: serper.apiKey,
    SERPER_BASE_URL: serper.baseUrl,
    // Room for the stand-in's second: it must be slow, not timed out.
    SEARCH_PROVIDER_TIMEOUT_MS: "5000",
    EXTERNAL_ATTEMPT_TIMEOUT_MS: "4000",
    EXTERNAL_CALL_TIMEOUT_MS: "4500",
    SEARCH_INDEXER: "false",
  });
  ada = await tokenFor("org-defer", "ada", [], "admin");
  for (const title of ["Descaling the espresso machine", "Espresso grinder calibration", "Espresso crema troubleshooting", "Milk frothing for espresso drinks"]) {
    const created = await graphql(test.stack.gateway.url, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, {
      input: { title, messages: [{ role: "USER", content: `${title}: what should I do about the espresso?` }] },
    }, { token: ada });
    expect(created.errors).toBeUndefined();
  }
});

afterAll(async () => {
  await test?.stop();
  await serper?.close();
});

describe("search with @defer through the gateway", () => {
  it("sends the page of the local providers before the slow web provider answers, then the page of every provider", async () => {
    events = [];
    const parts = await streamed("espresso descaling");
    expect(parts).toHaveLength(2);
    const [first, second] = parts as [IncrementalPart, IncrementalPart];
    // The first part was read while the stand-in was still holding its answer.
    expect(events).toEqual(["first part read", "web answered", "deferred part read"]);

    expect(first.hasNext).toBe(true);
    expect(first.errors).toBeUndefined();
    expect(Object.keys(first.data!)).toEqual(["fast"]);
    const fast = first.data!.fast as Page;
    expect(types(fast)).toEqual(new Set(["Conversation"]));
    expect(status(fast, "conversations.keyword")).toBe("OK");
    expect(status(fast, "web.serper")).toBe("SKIPPED");

    expect(second.hasNext).toBe(false);
    expect(second.incremental).toHaveLength(1);
    const [deferred] = second.incremental!;
    expect(deferred!.label).toBe("all");
    expect(deferred!.path).toEqual([]);
    expect(deferred!.errors).toBeUndefined();
    const all = deferred!.data!.all as Page;
    expect(status(all, "web.serper")).toBe("OK");
    expect(status(all, "conversations.keyword")).toBe("OK");
    expect(types(all)).toEqual(new Set(["Conversation", "WebResult"]));
    expect(all.hits.find((hit) => hit.item?.__typename === "WebResult")!.item!.url).toMatch(/^https:\/\//);
  });

  it("answers each part with an operation of its own on the Rust plan, both sent to the search subgraph at once", async () => {
    const search = test.stack.subgraphs.find((subgraph) => subgraph.name === "search")!;
    search.operations.reset();
    events = [];
    await streamed("espresso descaling machine");
    expect(events).toEqual(["first part read", "web answered", "deferred part read"]);
    // The Rust plan keeps the client's aliases in the subgraph operation; the stitching runtime
    // sends `search(...)` under its own variable names. One search per part, nothing batched.
    expect(search.operations.count).toBe(2);
    expect(search.operations.recent.map((document) => /(\w+): search\(/.exec(document)?.[1]).sort()).toEqual(["all", "fast"]);
  });

  it("streams a @defer it does not split (here one with if:) through the JavaScript planner, first part first", async () => {
    const search = test.stack.subgraphs.find((subgraph) => subgraph.name === "search")!;
    search.operations.reset();
    events = [];
    const conditional = DEFERRED.replace("$local: SearchInput!)", "$local: SearchInput!, $stream: Boolean!)").replace('@defer(label: "all")', '@defer(label: "all", if: $stream)');
    const parts = await postHeld(test.stack.gateway.url, conditional, { ...inputs("espresso grinder calibration"), stream: true });
    expect(events).toEqual(["first part read", "web answered", "deferred part read"]);
    expect(types(parts[1]!.incremental![0]!.data!.all as Page)).toEqual(new Set(["Conversation", "WebResult"]));
    // The stitching runtime's subgraph operations: `search(...)` without the client's aliases.
    expect(search.operations.recent.some((document) => /\w+: search\(/.test(document))).toBe(false);
  });

  it("answers bad input in the first part with a coded error and still sends the deferred part", async () => {
    const { input, local } = inputs("espresso machine");
    const response = await post(test.stack.gateway.url, DEFERRED, { input, local: { ...local, limit: 0 } }, "multipart/mixed");
    const parts = await readParts(response);
    expect(parts[0]!.data).toEqual({ fast: null });
    expect(parts[0]!.errors!.map((error) => error.extensions?.code)).toEqual(["BAD_USER_INPUT"]);
    expect(parts[0]!.hasNext).toBe(true);
    const deferred = parts.at(-1)!.incremental![0]!;
    expect(deferred.errors).toBeUndefined();
    expect((deferred.data!.all as Page).hits.length).toBeGreaterThan(0);
    expect(parts.at(-1)!.hasNext).toBe(false);
  });

  it("streams the first part first with the JavaScript planner configured too", async () => {
    const gateway = await startGateway({ ...gatewayOptionsFrom(test.config), port: 0, queryPlanner: "js", supergraphSdl: test.stack.supergraphSdl, mcp: null, logger: silentLogger, runtimeLogLevel: false });
    try {
      events = [];
      const parts = await streamed("espresso calibration", "multipart/mixed", gateway.url);
      expect(events).toEqual(["first part read", "web answered", "deferred part read"]);
      expect(types(parts[1]!.incremental![0]!.data!.all as Page)).toEqual(new Set(["Conversation", "WebResult"]));
    } finally {
      await gateway.stop();
    }
  });

  it("streams the same two parts as text/event-stream", async () => {
    events = [];
    const parts = await streamed("espresso grinder", "text/event-stream");
    expect(events).toEqual(["first part read", "web answered", "deferred part read"]);
    expect(types(parts[0]!.data!.fast as Page)).toEqual(new Set(["Conversation"]));
    expect(types(parts[1]!.incremental![0]!.data!.all as Page)).toEqual(new Set(["Conversation", "WebResult"]));
    expect(parts.at(-1)!.hasNext).toBe(false);
  });

  it("is read by Apollo Client as it arrives: the local page first, then the page with the web hits", async () => {
    const client = new ApolloClient({
      link: new HttpLink({ uri: test.stack.gateway.url, headers: { authorization: `Bearer ${ada}` } }),
      cache: new InMemoryCache(),
      incrementalHandler: new Defer20220824Handler(),
    });
    events = [];
    const release = holdWeb();
    const pages: Array<{ fast?: Page; all?: Page }> = [];
    await new Promise<void>((resolve, reject) => {
      const subscription = client.watchQuery<{ fast?: Page; all?: Page }>({ query: gql(DEFERRED), variables: inputs("espresso milk frothing"), fetchPolicy: "no-cache" }).subscribe({
        next: (result) => {
          const data = result.data as { fast?: Page; all?: Page } | undefined;
          if (!data?.fast) return;
          pages.push(data);
          events.push(data.all ? "Apollo Client: all" : "Apollo Client: fast");
          release();
          if (data.all) {
            subscription.unsubscribe();
            resolve();
          }
        },
        error: reject,
      });
    });
    client.stop();
    expect(events).toEqual(["Apollo Client: fast", "web answered", "Apollo Client: all"]);
    expect(types(pages[0]!.fast!)).toEqual(new Set(["Conversation"]));
    expect(types(pages.at(-1)!.all!)).toEqual(new Set(["Conversation", "WebResult"]));
  });

  it("answers the operation without @defer in one part, after every provider", async () => {
    events = [];
    const response = await graphql(test.stack.gateway.url, UNDEFERRED, inputs("espresso crema"), { token: ada });
    events.push("answer read");
    expect(response.errors).toBeUndefined();
    expect(events).toEqual(["web answered", "answer read"]);
    expect(types(response.data!.fast as Page)).toEqual(new Set(["Conversation"]));
    expect(types(response.data!.all as Page)).toEqual(new Set(["Conversation", "WebResult"]));
     // A client that cannot read parts must leave @defer out: asked for JSON only, a streamed operation is refused.
    const refused = await post(test.stack.gateway.url, DEFERRED, inputs("espresso crema"), "application/json");
    expect(refused.status).toBe(406);
    await refused.body?.cancel();
  });

  it("gives each part cursors for its own list: the next page of each, and a clear error when they are swapped", async () => {
    const parts = await streamed("espresso machine");
    const fast = parts[0]!.data!.fast as Page;
    const all = parts[1]!.incremental![0]!.data!.all as Page;
    expect(fast.pageInfo.hasNextPage).toBe(true);
    expect(all.pageInfo.hasNextPage).toBe(true);
    const { input, local } = inputs("espresso machine");
    const next = await graphql(test.stack.gateway.url, `query($input: SearchInput!) { search(input: $input) { ${PAGE} } }`, { input: { ...local, after: fast.pageInfo.endCursor } }, { token: ada });
    expect(next.errors).toBeUndefined();
    const nextIds = (next.data!.search as Page).hits.map((hit) => hit.item!.id);
    expect(nextIds.length).toBeGreaterThan(0);
    expect(nextIds.some((id) => fast.hits.some((hit) => hit.item!.id === id))).toBe(false);
    const allNext = await graphql(test.stack.gateway.url, `query($input: SearchInput!) { search(input: $input) { ${PAGE} } }`, { input: { ...input, after: all.pageInfo.endCursor } }, { token: ada });
    expect(allNext.errors).toBeUndefined();
    const swapped = await graphql(test.stack.gateway.url, `query($input: SearchInput!) { search(input: $input) { ${PAGE} } }`, { input: { ...input, after: fast.pageInfo.endCursor } }, { token: ada });
    expect(errorCodes(swapped)).toEqual(["BAD_USER_INPUT"]);
    expect(swapped.errors![0]!.message).toMatch(/input\.after.*different search/);
  });

  // Identical provider calls are shared only while in flight (a finished answer served again
  // would skip the checks a cached page gets). The gateway sends both searches at once, but
  // whether the deferred one reaches the service while the first one's local providers still run
  // depends on timing (before the split, seen both ways: PGlite after, PostgreSQL sometimes
  // during). So each part runs its local providers at most once.
  it("runs the local providers at most once per part: between one and two searches' scoring statements", async () => {
    const scoring = () => test.db.database.statements.log.filter((sql) => sql.includes("keyword_postings")).length;
    // Warm: the organization's statistics are read on first use, then kept.
    await graphql(test.stack.gateway.url, `query($input: SearchInput!) { search(input: $input) { hits { score } } }`, { input: { query: "espresso warmup", alpha: 1 } }, { token: ada });
    test.db.database.statements.reset();
    const single = await graphql(test.stack.gateway.url, `query($input: SearchInput!) { search(input: $input) { hits { score } } }`, { input: { query: "espresso frothing", alpha: 1, limit: 3 } }, { token: ada });
    expect(single.errors).toBeUndefined();
    const once = scoring();
    expect(once).toBeGreaterThan(0);
    test.db.database.statements.reset();
    await streamed("espresso troubleshooting");
    expect(scoring()).toBeGreaterThanOrEqual(once);
    expect(scoring()).toBeLessThanOrEqual(2 * once);
  });

  it("lists each provider's latency in searchProviders", async () => {
    const response = await graphql(test.stack.gateway.url, `{ searchProviders { name latency } }`, {}, { token: ada });
    const latency = Object.fromEntries((response.data!.searchProviders as Array<{ name: string; latency: string }>).map((provider) => [provider.name, provider.latency]));
    expect(latency).toEqual({
      "conversations.keyword": "LOCAL",
      "conversations.semantic": "LOCAL",
      "documents.keyword": "LOCAL",
      "documents.semantic": "LOCAL",
      "knowledge-bases": "REMOTE",
      "web.serper": "REMOTE",
      "web.dataforseo": "REMOTE",
      "linkedin.posts": "REMOTE",
      "slack.messages": "REMOTE",
    });
  });

  it("ends the stream with an error part when the search subgraph goes away after the first part", async () => {
    const search = subgraphLocations(test.stack.supergraphSdl).find((subgraph) => subgraph.name === "search")!;
    const proxy = await TcpProxy.start(search.url);
    let gateway: RunningGateway | undefined;
    try {
      gateway = await startGateway({ ...gatewayOptionsFrom(test.config), port: 0, supergraphSdl: test.stack.supergraphSdl.replace(search.url, proxy.urlFor(search.url)), mcp: null, logger: silentLogger, runtimeLogLevel: false });
      const release = holdWeb();
      const response = await post(gateway.url, DEFERRED, inputs("espresso outage"), "multipart/mixed");
      const parts = await readParts(response, (part) => {
        // The deferred search is waiting on the web stand-in now: cut its connection.
        if (!part.incremental) void proxy.set("cut").then(release);
      });
      expect(parts[0]!.data!.fast).not.toBeNull();
      const last = parts.at(-1)!;
      expect(last.hasNext).toBe(false);
      const errors = last.incremental?.[0]?.errors ?? last.errors ?? [];
      expect(errors.map((error) => error.extensions?.code)).toContain("SUBGRAPH_UNAVAILABLE");
    } finally {
      await gateway?.stop();
      await proxy.close();
    }
  });
});

// Hive's stitching runtime leaves a deferred fragment out of the subgraph request and can fill it
// in only for an entity: inside a search result the fields came back null, `providers` as an
// error part, and a @defer inside `item` was sent on to the search subgraph, which refused it
// (gateway/inline-incremental.ts). Each shape must now answer exactly what the same operation without
// @defer answers, in one search subgraph request.
describe("@defer inside a search result", () => {
  const ITEM = `__typename ... on Conversation { id title messageCount }`;
  const shapes: Record<string, string> = {
    "the page's providers": `hits { score item { ${ITEM} } } ... @defer { providers { name status } }`,
    "a hit's highlights": `hits { score item { ${ITEM} } ... @defer(label: "highlights") { highlights { text matches { start end } } } } providers { name status }`,
    "a hit's item": `hits { score ... @defer { item { ${ITEM} } } } providers { name status }`,
    "an item's own fields": `hits { score item { __typename ... on Conversation { id ... @defer { title messageCount } } } } providers { name status }`,
    "a conversation fragment": `hits { score item { __typename ... on Conversation @defer { id title messageCount } } } providers { name status }`,
  };
  const operation = (selection: string) => `query Nested($local: SearchInput!) { search(input: $local) { ${selection} } }`;
  const undeferred = (selection: string) => selection.replace(/ @defer(\([^)]*\))?/g, "");

  for (const planner of ["rust", "js"] as const) {
    describe(`with the ${planner === "rust" ? "Rust" : "JavaScript"} planner configured`, () => {
      let gateway: RunningGateway | undefined;
      const url = () => (planner === "rust" ? test.stack.gateway.url : gateway!.url);
      beforeAll(async () => {
        if (planner === "js") gateway = await startGateway({ ...gatewayOptionsFrom(test.config), port: 0, queryPlanner: "js", supergraphSdl: test.stack.supergraphSdl, mcp: null, logger: silentLogger, runtimeLogLevel: false });
      });
      afterAll(async () => {
        await gateway?.stop();
      });

      for (const [shape, selection] of Object.entries(shapes)) {
        it(`answers a @defer on ${shape} complete, with its parent, in one search request`, async () => {
          const { local } = inputs("espresso machine");
          const expected = await graphql(url(), operation(undeferred(selection)), { local }, { token: ada });
          expect(expected.errors).toBeUndefined();
          const hits = (expected.data!.search as Page).hits;
          expect(hits.length).toBeGreaterThan(0);
          const search = test.stack.subgraphs.find((subgraph) => subgraph.name === "search")!;
          search.operations.reset();
          const parts = await readParts(await post(url(), operation(selection), { local }, "multipart/mixed"));
          expect(parts).toHaveLength(1);
          expect(parts[0]!.errors).toBeUndefined();
          expect(parts[0]!.data).toEqual(expected.data);
          expect(search.operations.count).toBe(1);
          expect(search.operations.recent[0]).not.toContain("@defer");
        });
      }

      it("answers a client that reads JSON only with one JSON answer, since nothing of it is streamed", async () => {
        const { local } = inputs("espresso machine");
        const selection = shapes["the page's providers"]!;
        const expected = await graphql(url(), operation(undeferred(selection)), { local }, { token: ada });
        const response = await post(url(), operation(selection), { local }, "application/json");
        expect(response.status).toBe(200);
        expect(response.headers.get("content-type")).toMatch(/^application\/json/);
        const body = (await response.json()) as { data?: unknown; errors?: unknown };
        expect(body.errors).toBeUndefined();
        expect(body.data).toEqual(expected.data);
      });

      it("answers @stream on a root list field whole instead of sending it on to the subgraph, which refused it", async () => {
        const expected = await graphql(url(), `{ searchProviders { name latency } }`, {}, { token: ada });
        expect(expected.errors).toBeUndefined();
        const parts = await readParts(await post(url(), `{ searchProviders @stream(initialCount: 1) { name latency } }`, {}, "multipart/mixed"));
        expect(parts).toHaveLength(1);
        expect(parts[0]!.errors).toBeUndefined();
        expect(parts[0]!.data).toEqual(expected.data);
      });

      it("answers a @defer(if:) inside a search result with its parent, whatever the condition", async () => {
        const { local } = inputs("espresso grinder");
        const selection = `hits { score ... @defer(if: $stream) { highlights { text } } }`;
        const query = `query Conditional($local: SearchInput!, $stream: Boolean!) { search(input: $local) { ${selection} } }`;
        const expected = await graphql(url(), operation(undeferred(selection)), { local }, { token: ada });
        expect(expected.errors).toBeUndefined();
        for (const stream of [true, false]) {
          const parts = await readParts(await post(url(), query, { local, stream }, "multipart/mixed"));
          expect(parts).toHaveLength(1);
          expect(parts[0]!.errors).toBeUndefined();
          expect(parts[0]!.data).toEqual(expected.data);
        }
      });

      it("still streams a root @defer whose search holds a nested one: the highlights arrive in the deferred part", async () => {
        const { input, local } = inputs(planner === "rust" ? "espresso crema descaling" : "espresso crema grinder");
        const query = `query($input: SearchInput!, $local: SearchInput!) {
          fast: search(input: $local) { hits { score } }
          ... @defer(label: "all") { all: search(input: $input) { hits { score ... @defer { highlights { text } } } } }
        }`;
        events = [];
        const parts = await postHeld(url(), query, { input, local });
        // The first part before the web stand-in answered, the deferred one after.
        expect(events[0]).toBe("first part read");
        expect(events.indexOf("web answered")).toBeGreaterThan(0);
        expect(events.at(-1)).toBe("deferred part read");
        expect(parts[0]!.errors).toBeUndefined();
        const [deferred] = parts.at(-1)!.incremental!;
        expect(deferred!.errors).toBeUndefined();
        const all = deferred!.data!.all as { hits: Array<{ highlights: Array<{ text: string }> | null }> };
        expect(all.hits.length).toBeGreaterThan(0);
        expect(all.hits.every((hit) => hit.highlights !== null)).toBe(true);
        expect(all.hits.flatMap((hit) => hit.highlights!.map((highlight) => highlight.text)).join(" ")).toMatch(/espresso/i);
      });
    });
  }
});
