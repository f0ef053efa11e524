/**
 * One subgraph out, through the gateway: the fields it owns are null with a coded error, and
 * every other field of the same document still answers, with HTTP 200, within the gateway's
 * subgraph timeout. For each of the four subgraphs, two kinds of outage: down (its port refuses
 * connections) and frozen (connections are accepted and never answered, as a SIGSTOPped process
 * or a hung backend behind a load balancer does). With each planner.
 *
 * Each subgraph sits behind a TCP proxy of ours (test/support/tcp-proxy.ts) that the test
 * switches between open, down and frozen, so one stack serves every case.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { gatewayOptionsFrom, startGateway, subgraphLocations, type RunningGateway } from "../../gateway/server.js";
import { silentLogger } from "../../lib/logger.js";
import { errorCodes, graphql, type GraphQLResponse } from "../support/graphql.js";
import { startTestStack, type TestStack } from "../support/stack.js";
import { TcpProxy, type ProxyState } from "../support/tcp-proxy.js";
import { tokenFor } from "../support/tenants.js";

/**
 * Small, so a frozen subgraph costs each test two seconds, yet well above what a subgraph call
 * takes on a loaded machine: a healthy subgraph past it would fail the test.
 */
const UPSTREAM_TIMEOUT_MS = 2_000;
/** Room for a loaded machine; the answer must still come long before a client would give up. */
const ANSWER_MARGIN_MS = 4_000;

/** A root field of every subgraph in one document. */
const EVERY_SUBGRAPH = `{
  conversations(first: 5) { nodes { title } }
  documents(first: 5) { nodes { fileName } }
  externalProviders { provider configured }
  search(input: { query: "deadlock" }) { hits { score } }
}`;

/** The root field of EVERY_SUBGRAPH that each subgraph owns. */
const FIELD_OF = { conversations: "conversations", "knowledge-base": "documents", "external-search": "externalProviders", search: "search" } as const;
type SubgraphName = keyof typeof FIELD_OF;
const SUBGRAPHS = Object.keys(FIELD_OF) as SubgraphName[];

let test: TestStack;
let proxies: Map<string, TcpProxy>;
let gateways: Record<"rust" | "js", RunningGateway>;
let token: string;
/** EVERY_SUBGRAPH's answer with every subgraph up. */
let whole: Record<string, unknown>;

beforeAll(async () => {
  test = await startTestStack({ UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS), SEARCH_INDEXER: "false", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" });
  proxies = new Map();
  let supergraphSdl = test.stack.supergraphSdl;
  for (const { name, url } of subgraphLocations(supergraphSdl)) {
    const proxy = await TcpProxy.start(url);
    proxies.set(name, proxy);
    supergraphSdl = supergraphSdl.replace(url, proxy.urlFor(url));
  }
  const start = (queryPlanner: "rust" | "js") =>
    startGateway({ ...gatewayOptionsFrom(test.config), port: 0, queryPlanner, supergraphSdl, mcp: null, logger: silentLogger, runtimeLogLevel: false });
  gateways = { rust: await start("rust"), js: await start("js") };

  token = await tokenFor("org-outage", "olga");
  // Seeded at the subgraphs themselves: a first upload may take longer than the gateway's short timeout here.
  const subgraphUrl = (name: string) => test.stack.subgraphs.find((subgraph) => subgraph.name === name)!.url;
  const conversation = await graphql(subgraphUrl("conversations"), `mutation { createConversation(input: { title: "Deadlock in the order service" }) { id } }`, {}, { token });
  expect(conversation.errors).toBeUndefined();
  const file = { fileName: "runbook.md", contentBase64: Buffer.from("# Deadlocks\n\nTake the locks in one order.").toString("base64") };
  const document = await graphql(subgraphUrl("knowledge-base"), `mutation($file: UploadDocumentInput!) { uploadDocument(input: $file) { id } }`, { file }, { token });
  expect(document.errors).toBeUndefined();
  const up = await graphql(gateways.rust.url, EVERY_SUBGRAPH, {}, { token });
  expect(up.errors).toBeUndefined();
  whole = up.data!;
  expect(whole).toMatchObject({ conversations: { nodes: [{ title: "Deadlock in the order service" }] }, documents: { nodes: [{ fileName: "runbook.md" }] } });
  expect((whole.externalProviders as unknown[]).length).toBeGreaterThan(0);
  expect((whole.search as { hits: unknown[] }).hits.length).toBeGreaterThan(0);
});

afterAll(async () => {
  for (const proxy of proxies?.values() ?? []) await proxy.close();
  await gateways?.rust.stop();
  await gateways?.js.stop();
  await test?.stop();
});

/** Runs `body` with `subgraph`'s proxy in `state`, and opens it again afterwards whatever happens. */
async function withOutage<T>(subgraph: SubgraphName, state: ProxyState, body: () => Promise<T>): Promise<T> {
  await proxies.get(subgraph)!.set(state);
  try {
    return await body();
  } finally {
    await proxies.get(subgraph)!.set("open");
  }
}

async function timed(run: () => Promise<GraphQLResponse>): Promise<{ response: GraphQLResponse; elapsedMs: number }> {
  const started = performance.now();
  const response = await run();
  return { response, elapsedMs: performance.now() - started };
}

/** Each error is this subgraph's outage at its field: the code, the service, no address. */
function expectOutageErrors(response: GraphQLResponse, subgraph: SubgraphName, field: string) {
  expect(response.errors?.length).toBeGreaterThan(0);
  for (const error of response.errors!) {
    expect(error.extensions).toEqual({ code: "SUBGRAPH_UNAVAILABLE", service: subgraph });
    expect(error.path).toEqual([field]);
    expect(error.message).toMatch(new RegExp(`^The ${subgraph} service could not answer`));
  }
  expect(JSON.stringify(response)).not.toContain("127.0.0.1");
}

describe.each(["rust", "js"] as const)("with the %s planner", (planner) => {
  describe.each(["down", "frozen"] as const)("a subgraph %s", (state) => {
    it.each(SUBGRAPHS)("%s: nulls only its own field, 200, within the subgraph timeout", async (subgraph) => {
      const field = FIELD_OF[subgraph];
      const { response, elapsedMs } = await withOutage(subgraph, state, () => timed(() => graphql(gateways[planner].url, EVERY_SUBGRAPH, {}, { token })));
      expect(response.status).toBe(200);
      expect(response.data).toEqual({ ...whole, [field]: null });
      expectOutageErrors(response, subgraph, field);
      if (state === "frozen") expect(response.errors![0]!.message).toMatch(/in time/);
      expect(elapsedMs).toBeLessThan(UPSTREAM_TIMEOUT_MS + ANSWER_MARGIN_MS);
    });
  });

  it("isolates the fields of a multi-mutation document: the down subgraph's mutation is null, the others run", async () => {
    const response = await withOutage("conversations", "down", () =>
      graphql(
        gateways[planner].url,
        `mutation { createConversation(input: { title: "Written while down" }) { id } saveSearch(input: { name: "deadlocks ${planner}", query: "deadlock" }) { name } }`,
        {},
        { token },
      ),
    );
    expect(response.status).toBe(200);
    expect(response.data).toEqual({ createConversation: null, saveSearch: { name: `deadlocks ${planner}` } });
    expectOutageErrors(response, "conversations", "createConversation");
  });

  it.each(["down", "frozen"] as const)("keeps the search when the owner of its hits' items is %s", async (state) => {
    const query = `{ search(input: { query: "deadlock" }) { hits { score item { ... on Conversation { messageCount } } } } }`;
    const response = await withOutage("conversations", state, () => graphql(gateways[planner].url, query, {}, { token }));
    expect(response.status).toBe(200);
    expect(response.data!.search.hits.length).toBeGreaterThan(0);
    // The JS planner nulls each item, as the spec says (messageCount is non-null); the Rust
    // planner leaves the item without the field. Neither has a value from the subgraph that is out.
    for (const hit of response.data!.search.hits) expect(hit.item?.messageCount ?? null).toBeNull();
    expect(new Set(response.errors!.map((error) => JSON.stringify(error.extensions)))).toEqual(new Set([JSON.stringify({ code: "SUBGRAPH_UNAVAILABLE", service: "conversations" })]));
  });

  it("nulls each search root field, each with an error of its own", async () => {
    const response = await withOutage("search", "down", () =>
      graphql(gateways[planner].url, `{ searchProviders { name } searchIndexStatus { pending } conversations(first: 1) { nodes { id } } }`, {}, { token }),
    );
    expect(response.status).toBe(200);
    expect(response.data!.searchProviders).toBeNull();
    expect(response.data!.searchIndexStatus).toBeNull();
    expect(response.data!.conversations.nodes).toHaveLength(1);
    // An error at each null field: the Rust planner asks for both in one call and put its error at the first only.
    expect(response.errors!.map((error) => error.path)).toEqual([["searchProviders"], ["searchIndexStatus"]]);
    expect(errorCodes(response)).toEqual(["SUBGRAPH_UNAVAILABLE", "SUBGRAPH_UNAVAILABLE"]);
  });

  it("answers a conversations-only query as if nothing happened", async () => {
    const response = await withOutage("search", "frozen", () => graphql(gateways[planner].url, `{ conversations(first: 5) { nodes { title } } }`, {}, { token }));
    expect(response.status).toBe(200);
    expect(response.errors).toBeUndefined();
    expect(response.data!.conversations.nodes.length).toBeGreaterThan(0);
  });

  it.each(["down", "frozen"] as const)("answers a query of one subgraph that is %s 200 with its field null and a coded error, not 500 or 504", async (state) => {
    const response = await withOutage("conversations", state, () => graphql(gateways[planner].url, `{ conversations(first: 5) { nodes { title } } }`, {}, { token }));
    expect(response.status).toBe(200);
    expect(response.data).toEqual({ conversations: null });
    expect(errorCodes(response)).toEqual(["SUBGRAPH_UNAVAILABLE"]);
  });
});
