/**
 * What a request costs others, and what it pays (issue 19, defects 5 and 6), on the real stack:
 * bodies bounded at 16 MiB whether or not they declare their length, budgets charged by the
 * bytes really read, by the operation's estimated cost, by each message of an MCP batch and by
 * what a schema read returns; `/readyz` probing the subgraphs once a second whatever the number
 * of callers; and no connection left in a bad state by a body a subgraph refuses.
 *
 * Budgets (per 60 s): 400 points per user, 20 per anonymous address; each test spends those of
 * a user of its own.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { MAX_REQUEST_BODY_BYTES } from "../../lib/http-body.js";
import { startTestStack, type TestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";
import { errorCodes, graphql } from "../support/graphql.js";

const USER_POINTS = 400;
const ANONYMOUS_POINTS = 20;
const UPLOAD = `mutation($input: UploadDocumentInput!) { uploadDocument(input: $input) { id } }`;
const SMALL_READ = `{ documents(first: 1) { nodes { id } } }`;

let test: TestStack;
let gatewayUrl: string;
let victim: string;

beforeAll(async () => {
  test = await startTestStack({
    RATE_LIMIT_USER_POINTS: String(USER_POINTS),
    RATE_LIMIT_ORGANIZATION_POINTS: "1000000",
    RATE_LIMIT_ANONYMOUS_POINTS: String(ANONYMOUS_POINTS),
    RATE_LIMIT_WINDOW_SECONDS: "60",
    // Subgraphs check their database at every probe, so counting checks counts the gateway's probes.
    READINESS_CACHE_MS: "0",
  });
  gatewayUrl = test.stack.gateway.url;
  victim = await tokenFor("org-victim", "victor");
}, 120_000);

afterAll(async () => test?.stop());

/** A POST whose body is streamed without a Content-Length (chunked), as an attacker can send it. */
async function postChunked(url: string, token: string | null, body: string) {
  const bytes = Buffer.from(body);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let offset = 0; offset < bytes.length; offset += 1024 * 1024) controller.enqueue(bytes.subarray(offset, offset + 1024 * 1024));
      controller.close();
    },
  });
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: stream,
    duplex: "half",
  } as RequestInit);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: JSON.parse(text) as { data?: unknown; errors?: { extensions?: Record<string, unknown> }[] } };
}

const codesOf = (body: { errors?: { extensions?: Record<string, unknown> }[] }) => (body.errors ?? []).map((error) => String(error.extensions?.code));

async function victimReadsAtOnce() {
  const answer = await graphql(gatewayUrl, SMALL_READ, {}, { token: victim });
  expect(answer.errors).toBeUndefined();
  expect(answer.data).toEqual({ documents: { nodes: [] } });
}

describe("request bodies", () => {
  it("refuses a body over 16 MiB with 413 REQUEST_ENTITY_TOO_LARGE, declared or chunked", async () => {
    const token = await tokenFor("org-bodies", "bob");
    const oversized = JSON.stringify({ query: `{ __typename }`, variables: { padding: "a".repeat(MAX_REQUEST_BODY_BYTES) } });
    const declared = await fetch(gatewayUrl, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: oversized });
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe("REQUEST_ENTITY_TOO_LARGE");

    const chunked = await postChunked(gatewayUrl, token, oversized);
    expect(chunked.status).toBe(413);
    expect(codesOf(chunked.body)).toEqual(["REQUEST_ENTITY_TOO_LARGE"]);
    await victimReadsAtOnce();
  }, 60_000);

  it("leaves no connection in a bad state after a 13 MB upload, admitted or refused", async () => {
    const mallory = await tokenFor("org-attacker", "mallory");
    // 13 MB of base64 (under the body limit: the knowledge-base subgraph reads it and refuses the text) ...
    const admitted = await graphql(gatewayUrl, UPLOAD, { input: { fileName: "big.txt", contentBase64: Buffer.alloc(9_750_000, "a").toString("base64") } }, { token: mallory });
    expect(errorCodes(admitted)).toEqual(["BAD_USER_INPUT"]);
    await victimReadsAtOnce();
    // ... and a 13 MB file (17.3 MB of base64), refused by the gateway before it reaches anyone.
    const refused = await fetch(gatewayUrl, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${mallory}` },
      body: JSON.stringify({ query: UPLOAD, variables: { input: { fileName: "big.txt", contentBase64: Buffer.alloc(13_000_000, "a").toString("base64") } } }),
    });
    expect(refused.status).toBe(413);
    await victimReadsAtOnce();
  }, 60_000);

  it("a subgraph that refuses a body closes that connection, so the next request on the pool is answered", async () => {
    const knowledgeBase = test.stack.subgraphs.find((subgraph) => subgraph.name === "knowledge-base")!;
    // One pooled keep-alive connection, as the gateway keeps to each subgraph.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const post = (body: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = http.request(knowledgeBase.url, { method: "POST", agent, headers: { "content-type": "application/json" }, signal: AbortSignal.timeout(20_000) }, (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks).toString() }));
        });
        request.on("error", (error) => (error.name === "AbortError" ? reject(error) : resolve({ status: 0, body: String(error) })));
        request.end(body);
      });
    try {
      const refused = await post(JSON.stringify({ query: `{ __typename }`, variables: { padding: "a".repeat(MAX_REQUEST_BODY_BYTES + 1024 * 1024) } }));
      if (refused.status !== 0) expect(refused.status).toBe(413);
      const next = await post(JSON.stringify({ query: `{ __typename }` }));
      expect(next).toEqual({ status: 200, body: expect.stringContaining(`"__typename":"Query"`) });
    } finally {
      agent.destroy();
    }
  }, 60_000);
});

describe("rate-limit points", () => {
  it("charges a chunked body by the bytes read, as if it had declared its length", async () => {
    const token = await tokenFor("org-chunked", "chuck");
    // A 10 MB comment is no token: only its bytes can cost anything (1 + 152 points each).
    const body = JSON.stringify({ query: `{ __typename } #${"a".repeat(10_000_000)}` });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await postChunked(gatewayUrl, token, body)).status);
    expect(statuses).toEqual([200, 200, 429]);
  }, 60_000);

  it("charges an operation by its estimated cost: aliased searches cost what as many searches do", async () => {
    const token = await tokenFor("org-aliases", "alice");
    const aliases = `{ ${Array.from({ length: 24 }, (_, i) => `s${i}: search(input: { query: "deadlock ${i}" }) { tookMs }`).join(" ")} }`;
    const first = await graphql(gatewayUrl, aliases, {}, { token });
    expect(first.errors).toBeUndefined();
    // 24 × 500 cost units: 120 points besides the request's own one, so the fourth is refused before execution.
    const codes: string[][] = [];
    for (let i = 0; i < 3; i += 1) codes.push(errorCodes(await graphql(gatewayUrl, aliases, {}, { token })));
    expect(codes).toEqual([[], [], ["RATE_LIMITED"]]);
  }, 120_000);

  it("charges a call straight to a subgraph as the gateway charges it, and the gateway's own calls not again", async () => {
    const token = await tokenFor("org-direct", "dana");
    const search = test.stack.subgraphs.find((subgraph) => subgraph.name === "search")!;
    const aliases = `{ ${Array.from({ length: 24 }, (_, i) => `s${i}: search(input: { query: "straight ${i}" }) { tookMs }`).join(" ")} }`;
    // Unsigned, so no gateway charged it: 1 + 120 points each from the same user budget of 400.
    const codes: string[][] = [];
    for (let i = 0; i < 4; i += 1) codes.push(errorCodes(await graphql(search.url, aliases, {}, { token })));
    expect(codes).toEqual([[], [], [], ["RATE_LIMITED"]]);
    const refused = await fetch(search.url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ query: aliases }) });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // (The aliased searches through the gateway above cost 121 points each, not 242: the gateway's
    // signed calls are charged once, at the gateway.)
  }, 120_000);

  it("charges each message of an MCP batch, and a schema read by what it returns", async () => {
    const token = await tokenFor("org-mcp", "mia");
    const mcpUrl = gatewayUrl.replace(/\/graphql$/, "/mcp");
    const batch = (size: number, from: number) => Array.from({ length: size }, (_, i) => ({ jsonrpc: "2.0", id: from + i, method: "resources/read", params: { uri: "schema://supergraph" } }));
    const send = (messages: unknown) =>
      fetch(mcpUrl, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, "mcp-protocol-version": "2025-06-18" }, body: JSON.stringify(messages) });
    const read = await send(batch(1, 1));
    expect(read.status).toBe(200);
    expect(JSON.stringify(await read.json())).toContain("schema://supergraph");
    const tooLarge = await send(batch(11, 10));
    expect(tooLarge.status).toBe(400);
    expect(((await tooLarge.json()) as { error: { message: string } }).error.message).toMatch(/at most 10 messages, this one has 11/);
    // Batches of 10 reads: at least a point each, so the budget is spent by the 41st.
    const statuses: number[] = [];
    for (let i = 0; i < USER_POINTS / 10; i += 1) statuses.push((await send(batch(10, 100 + 10 * i))).status);
    expect(statuses).toContain(200);
    const flood = await send(batch(10, 1_000));
    expect(flood.status).toBe(429);
    expect(((await flood.json()) as { error: { data: { code: string } } }).error.data.code).toBe("RATE_LIMITED");
  }, 60_000);

  it("MCP calls without a token spend their address's anonymous budget: 401s, then 429 RATE_LIMITED, another address untouched", async () => {
    const mcp = new URL(gatewayUrl.replace(/\/graphql$/, "/mcp"));
    // From addresses of their own (all of 127/8 is loopback), so /readyz's test spends another budget.
    const call = (localAddress: string) =>
      new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve, reject) => {
        const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
        const request = http.request({ host: mcp.hostname, port: mcp.port, path: mcp.pathname, method: "POST", localAddress, headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "content-length": String(Buffer.byteLength(body)) } }, (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers["retry-after"] as string | undefined, body: Buffer.concat(chunks).toString("utf8") }));
        });
        request.on("error", reject);
        request.end(body);
      });
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < ANONYMOUS_POINTS + 3; i += 1) {
      const answer = await call("127.0.0.5");
      statuses.push(answer.status);
      if (answer.status === 429) limited = answer;
    }
    expect(statuses.slice(0, ANONYMOUS_POINTS)).toEqual(Array.from({ length: ANONYMOUS_POINTS }, () => 401));
    expect(statuses.slice(-3)).toEqual([429, 429, 429]);
    expect((JSON.parse(limited!.body) as { error: { data: { code: string } } }).error.data.code).toBe("RATE_LIMITED");
    expect(Number(limited!.retryAfter)).toBeGreaterThan(0);
    expect((await call("127.0.0.6")).status).toBe(401);
  });
});

describe("/readyz", () => {
  const readyzUrl = () => gatewayUrl.replace(/\/graphql$/, "/readyz");
  // Each subgraph's readiness is one `SELECT 1` on its database (they share the test's database).
  const readinessChecks = () => test.db.database.statements.log.filter((statement) => /^\s*SELECT 1\s*$/.test(statement)).length;

  it("probes each subgraph once for any number of concurrent callers", async () => {
    const token = await tokenFor("org-probe", "pat");
    // Past the gateway's cached answer, so the first caller's probe reaches each database check.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    test.db.database.statements.reset();
    const probe = () => fetch(readyzUrl(), { headers: { authorization: `Bearer ${token}` } });
    // Concurrent callers share the probe in flight; the next ones, one after the other, its answer.
    const answers = await Promise.all(Array.from({ length: 12 }, probe));
    for (let i = 0; i < 3; i += 1) answers.push(await probe());
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 15 }, () => 200));
    expect(readinessChecks()).toBe(test.stack.subgraphs.length);
  });

  it("spends the anonymous budget of the caller's address", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < ANONYMOUS_POINTS + 5; i += 1) statuses.push((await fetch(readyzUrl())).status);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(5);
    const refused = await fetch(readyzUrl());
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe("RATE_LIMITED");
  });
});

describe("limits agree between the gateway and the subgraphs", () => {
  const searches = (count: number, selection: string) => `{ ${Array.from({ length: count }, (_, i) => `s${i}: search(input: { query: "agree ${i}" }) { ${selection} }`).join(" ")} }`;

  // [selection, the most aliased searches the gateway admits, the limit one more exceeds]: the
  // gateway counts the client's aliases only, and the search subgraph leaves the `__typename`
  // fields that the response cache and the planner add to every selection set (and to the
  // planner's own fragments) uncounted (GATEWAY_ADDED_TYPENAMES). A search costs 500, so 50 of
  // them reach the alias and the cost limit at once; with a page of hits, cost comes first.
  const shapes: [string, number, string][] = [
    ["tookMs", 50, "alias"],
    ["hits { score item { __typename ... on Conversation { title } } }", 46, "cost"],
  ];

  it.each(shapes)("the most aliases the gateway admits of search { %s } are answered by the search subgraph, one more is refused at the gateway", async (selection, most, limit) => {
    const token = await tokenFor("org-agree", `ann-${most}`);
    const admitted = await graphql(gatewayUrl, searches(most, selection), {}, { token });
    expect(admitted.errors).toBeUndefined();
    expect(Object.keys(admitted.data ?? {})).toHaveLength(most);

    const refused = await graphql(gatewayUrl, searches(most + 1, selection), {}, { token });
    expect(refused.status).toBe(400);
    expect(refused.errors).toHaveLength(1);
    expect(refused.errors![0]!.extensions).toMatchObject({ code: "OPERATION_LIMIT_EXCEEDED", limit });
    expect(refused.errors![0]!.extensions!.serviceName).toBeUndefined();
  }, 60_000);
});
