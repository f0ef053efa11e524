/**
 * The database goes away under a running stack: every subgraph answers SERVICE_UNAVAILABLE with
 * a retry hint (HTTP 503 with Retry-After when that is the whole answer), search providers
 * report ERROR in words, no SQLSTATE, driver text or stack reaches a client, and /readyz turns
 * 503 within 2 s, then ready again once the database is back.
 *
 * On PostgreSQL the stack's database sits behind a TCP proxy of ours, which the test cuts (every
 * connection reset) and restores; then the database refuses connections (ALLOW_CONNECTIONS
 * false, SQLSTATE 55000, what the hostile test saw) and finally is dropped. A closed database
 * (PGlite's "PGlite is closed", pg's ended pool) is tested on both.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import pg from "pg";
import { loadConfig } from "../../lib/config.js";
import { startSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import { conversationsSubgraph } from "../../subgraphs/conversations/index.js";
import { createTestDatabase, usingPostgres } from "../support/database.js";
import { errorCodes, graphql, type GraphQLResponse } from "../support/graphql.js";
import { startTestStack, type TestStack } from "../support/stack.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

const ENV = { SEARCH_INDEXER: "false", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0", SEARCH_CACHE_TTL_SECONDS: "0" };
const CONVERSATIONS = `{ conversations(first: 5) { nodes { id title } } }`;
const SEARCH = `{ search(input: { query: "deadlock", providers: ["conversations.keyword"] }) { providers { name status error } } }`;
const KEYWORD_UNAVAILABLE = { name: "conversations.keyword", status: "ERROR", error: "the database is unavailable right now; try again shortly" };
/** The providers that ran (the others are SKIPPED: not among input.providers). */
const ran = (providers: { status: string }[]) => providers.filter((provider) => provider.status !== "SKIPPED");
/** What must never reach a client, whatever the fault. */
const LEAKS = /SQLSTATE|Prisma|\$queryRaw|invocation|ECONN|terminat|55000|57P0|3D000|08\d\d\d|does not exist|accepting connections|PGlite|pool|127\.0\.0\.1|\bat .+:\d+:\d+/i;

const readyzOf = (stack: TestStack) => new URL("/readyz", stack.stack.gateway.url).toString();

/** Polls until the predicate holds on /readyz's status, up to `withinMs`; returns the status seen last and when. */
async function readyzBecomes(stack: TestStack, status: number, withinMs: number): Promise<{ status: number; afterMs: number }> {
  const started = performance.now();
  let seen = 0;
  while (performance.now() - started < withinMs) {
    seen = (await fetch(readyzOf(stack))).status;
    if (seen === status) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { status: seen, afterMs: performance.now() - started };
}

function expectUnavailable(response: GraphQLResponse, raw: string) {
  expect(response.errors?.length).toBeGreaterThan(0);
  expect(new Set(errorCodes(response))).toEqual(new Set(["SERVICE_UNAVAILABLE"]));
  for (const error of response.errors!) expect(error.extensions).toMatchObject({ retryable: true, retryAfterSeconds: expect.any(Number) });
  expect(raw).not.toMatch(LEAKS);
}

async function rawGraphQL(url: string, query: string, token: string): Promise<{ response: GraphQLResponse; raw: string }> {
  const reply = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ query }) });
  const raw = await reply.text();
  const body = JSON.parse(raw) as Omit<GraphQLResponse, "status" | "headers">;
  return { raw, response: { ...body, status: reply.status, headers: reply.headers } };
}

describe("a closed database", () => {
  let stack: TestStack;
  let token: string;

  beforeAll(async () => {
    stack = await startTestStack(ENV);
    token = await tokenFor("org-closed-db", "carla");
    const created = await graphql(stack.stack.gateway.url, `mutation { createConversation(input: { title: "Deadlock in the order service" }) { id } }`, {}, { token });
    expect(created.errors).toBeUndefined();
    expect((await fetch(readyzOf(stack))).status).toBe(200);
    await stack.db.database.close();
  });

  afterAll(async () => {
    await stack?.stack.stop().catch(() => undefined);
    await stack?.db.dispose().catch(() => undefined);
  });

  it("is SERVICE_UNAVAILABLE through the gateway, HTTP 503 with Retry-After when that is the whole answer", async () => {
    const { response, raw } = await rawGraphQL(stack.stack.gateway.url, CONVERSATIONS, token);
    expectUnavailable(response, raw);
    expect(response.status).toBe(503);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("leaves a partial answer 200, with the code and retry hint at the field it could not fill", async () => {
    const { response, raw } = await rawGraphQL(stack.stack.gateway.url, `{ searchProviders { name } conversation(id: "00000000-0000-4000-8000-000000000000") { id } }`, token);
    expect(response.status).toBe(200);
    expect(response.data!.searchProviders.length).toBeGreaterThan(0);
    expect(response.data!.conversation).toBeNull();
    expectUnavailable(response, raw);
    expect(response.errors!.map((error) => error.path)).toEqual([["conversation"]]);
  });

  it("is SERVICE_UNAVAILABLE at the subgraph itself, with 503 and Retry-After", async () => {
    const conversations = stack.stack.subgraphs.find((subgraph) => subgraph.name === "conversations")!;
    const { response, raw } = await rawGraphQL(conversations.url, CONVERSATIONS, token);
    expectUnavailable(response, raw);
    expect(response.status).toBe(503);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("reports the search provider as ERROR with a readable reason", async () => {
    const { response, raw } = await rawGraphQL(stack.stack.gateway.url, SEARCH, token);
    expect(raw).not.toMatch(LEAKS);
    const providers = response.data?.search?.providers as { name: string; status: string; error: string }[] | undefined;
    if (providers) {
      expect(ran(providers)).toEqual([KEYWORD_UNAVAILABLE]);
    } else {
      expectUnavailable(response, raw);
    }
  });

  it("turns /readyz 503, and each subgraph's /readyz too", async () => {
    expect((await readyzBecomes(stack, 503, 2_000)).status).toBe(503);
    for (const subgraph of stack.stack.subgraphs) {
      const reply = await fetch(new URL("/readyz", subgraph.url));
      expect(reply.status).toBe(503);
      expect(await reply.text()).not.toMatch(LEAKS);
    }
  });
});

describe("readiness under a flood of probes", () => {
  it("costs one database check for 50 probes at once", async () => {
    const db = await createTestDatabase();
    const subgraph = await startSubgraph(conversationsSubgraph(db.database), { host: "127.0.0.1", port: 0, auth: TEST_AUTH, production: false, logger: silentLogger, readiness: { timeoutMs: 1_000, cacheMs: 60_000 } });
    try {
      db.database.statements.reset();
      const probes = await Promise.all(Array.from({ length: 50 }, () => fetch(new URL("/readyz", subgraph.url))));
      expect(probes.map((probe) => probe.status)).toEqual(Array(50).fill(200));
      expect(db.database.statements.log.filter((statement) => /SELECT 1/.test(statement))).toHaveLength(1);
    } finally {
      await subgraph.stop();
      await db.dispose();
    }
  });
});

(usingPostgres ? describe : describe.skip)("PostgreSQL that goes away and comes back", () => {
  let stack: TestStack;
  let proxy: TcpProxy;
  let token: string;
  let admin: pg.Client;
  let databaseName: string;

  beforeAll(async () => {
    const base = new URL(loadConfig().database.url!);
    proxy = await TcpProxy.start({ host: base.hostname, port: Number(base.port || 5432) });
    stack = await startTestStack(ENV, { database: { connectAt: (url) => proxy.urlFor(url) } });
    databaseName = new URL(stack.db.url!).pathname.slice(1);
    admin = new pg.Client({ connectionString: loadConfig().database.url! });
    await admin.connect();
    token = await tokenFor("org-db-faults", "pat");
    const created = await graphql(stack.stack.gateway.url, `mutation { createConversation(input: { title: "Deadlock in the order service" }) { id } }`, {}, { token });
    expect(created.errors).toBeUndefined();
  });

  afterAll(async () => {
    await proxy?.set("open");
    await admin?.query(`ALTER DATABASE "${databaseName}" ALLOW_CONNECTIONS true`).catch(() => undefined);
    await stack?.stop();
    await admin?.end();
    await proxy?.close();
  });

  async function expectServing() {
    const up = await graphql(stack.stack.gateway.url, CONVERSATIONS, {}, { token });
    expect(up.errors).toBeUndefined();
    expect(up.data!.conversations.nodes).toHaveLength(1);
  }

  it("with every connection reset: SERVICE_UNAVAILABLE, /readyz 503 within 2 s, then ready and serving once it is back", async () => {
    await expectServing();
    expect((await fetch(readyzOf(stack))).status).toBe(200);

    await proxy.set("cut");
    const down = await readyzBecomes(stack, 503, 2_000);
    expect(down.status).toBe(503);
    for (const query of [CONVERSATIONS, `{ conversation(id: "00000000-0000-4000-8000-000000000000") { id } }`]) {
      const { response, raw } = await rawGraphQL(stack.stack.gateway.url, query, token);
      expectUnavailable(response, raw);
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).not.toBeNull();
    }
    const { response: searched, raw } = await rawGraphQL(stack.stack.gateway.url, SEARCH, token);
    expect(raw).not.toMatch(LEAKS);
    if (searched.data?.search) expect(ran(searched.data.search.providers)).toEqual([KEYWORD_UNAVAILABLE]);
    else expectUnavailable(searched, raw);

    await proxy.set("open");
    expect((await readyzBecomes(stack, 200, 10_000)).status).toBe(200);
    await expectServing();
  });

  it("refusing connections (ALLOW_CONNECTIONS false, SQLSTATE 55000): SERVICE_UNAVAILABLE and not ready, then back", async () => {
    await admin.query(`ALTER DATABASE "${databaseName}" ALLOW_CONNECTIONS false`);
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [databaseName]);
    expect((await readyzBecomes(stack, 503, 2_000)).status).toBe(503);
    const { response, raw } = await rawGraphQL(stack.stack.gateway.url, CONVERSATIONS, token);
    expectUnavailable(response, raw);
    expect(response.status).toBe(503);

    await admin.query(`ALTER DATABASE "${databaseName}" ALLOW_CONNECTIONS true`);
    expect((await readyzBecomes(stack, 200, 10_000)).status).toBe(200);
    await expectServing();
  });

  it("that stops answering without resetting anything: /readyz 503 within 2 s (the check's own timeout), then ready once it answers again", async () => {
    await proxy.set("stalled");
    expect((await readyzBecomes(stack, 503, 2_500)).status).toBe(503);
    await proxy.set("open");
    expect((await readyzBecomes(stack, 200, 10_000)).status).toBe(200);
    await expectServing();
  });

  it("dropped (3D000): SERVICE_UNAVAILABLE and not ready", async () => {
    await admin.query(`DROP DATABASE "${databaseName}" WITH (FORCE)`);
    expect((await readyzBecomes(stack, 503, 2_000)).status).toBe(503);
    const { response, raw } = await rawGraphQL(stack.stack.gateway.url, CONVERSATIONS, token);
    expectUnavailable(response, raw);
    expect(response.status).toBe(503);
  });
});
