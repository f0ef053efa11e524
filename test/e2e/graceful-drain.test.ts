/**
 * Graceful drain (issue 8, defect 4): on the stop path SIGTERM takes, readiness turns 503 at once,
 * new connections are refused, every request already received finishes with its real answer, and
 * only then do the servers stop and the database close. Requests are held in flight honestly: the
 * conversations store waits at a gate before running its real SQL, so all 200 are provably inside
 * the subgraph when the stop begins, and their SQL runs after it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";
import { startSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import { startStack } from "../../app/stack.js";
import { ConversationStore } from "../../subgraphs/conversations/conversation-store.js";
import { conversationsSubgraph } from "../../subgraphs/conversations/index.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { connectOutcome } from "../support/drain-under-load.js";
import { graphql, type GraphQLResponse } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";
import { productScriptArguments } from "../../lib/project-files.js";

const IN_FLIGHT = 200;
const PAGE_QUERY = `query Page($first: Int!) { conversations(first: $first) { totalCount nodes { title } } }`;
const TITLES = ["Drain 0", "Drain 1", "Drain 2", "Drain 3", "Drain 4"];

let db: TestDatabase;
let token: string;

function stackConfig() {
  const config = loadConfig({ GATEWAY_PORT: "0", CONVERSATIONS_PORT: "0", SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0", EMBEDDER: "hashing", SEARCH_INDEXER: "false", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" });
  return { ...config, auth: { ...config.auth, ...TEST_AUTH, usingDevSecret: false } };
}

/** Holds every `listPage` call until `open()`; each then runs the real query. */
function gateListPage() {
  const original = ConversationStore.prototype.listPage;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const gate = { waiting: 0, answered: 0, open: () => open() };
  jest.spyOn(ConversationStore.prototype, "listPage").mockImplementation(async function (this: ConversationStore, ...args) {
    gate.waiting += 1;
    await opened;
    const page = await original.apply(this, args);
    gate.answered += 1;
    return page;
  });
  return gate;
}

/** Polls until `condition` holds; a bounded wait, generous for a loaded machine. */
async function eventually(condition: () => boolean, what: string, timeoutMs = 120_000) {
  for (const until = Date.now() + timeoutMs; !condition(); ) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function get(url: string, agent: http.Agent, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, headers }, (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString()));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      })
      .on("error", reject);
  });
}

/**
 * The listener closes shortly after the drain begins (it first accepts what the kernel's backlog
 * holds, until no connection arrives for a moment); from then on, a new connection is refused.
 */
async function refusesNewConnections(port: number) {
  for (const until = Date.now() + 10_000; ; ) {
    const outcome = await connectOutcome(port);
    if (outcome === "ECONNREFUSED") return outcome;
    if (Date.now() > until) return outcome;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function expectFullPage(response: GraphQLResponse) {
  expect(response.status).toBe(200);
  expect(response.errors).toBeUndefined();
  expect(response.data!.conversations.totalCount).toBe(TITLES.length);
  expect(response.data!.conversations.nodes.map((node: { title: string }) => node.title)).toEqual([...TITLES].reverse().slice(0, 3));
}

beforeAll(async () => {
  db = await createTestDatabase();
  token = await tokenFor("org-drain", "dana");
  const subgraph = await startSubgraph(conversationsSubgraph(db.database), { host: "127.0.0.1", port: 0, auth: TEST_AUTH, production: false, logger: silentLogger });
  try {
    for (const title of TITLES) {
      const created = await graphql(subgraph.url, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, { input: { title, messages: [{ role: "USER", content: `about ${title}` }] } }, { token });
      expect(created.errors).toBeUndefined();
    }
  } finally {
    await subgraph.stop();
  }
});

afterEach(() => {
  jest.restoreAllMocks();
});

afterAll(async () => {
  await db?.dispose();
});

describe("the one-process stack on SIGTERM's stop path", () => {
  it(`finishes all ${IN_FLIGHT} in-flight gateway requests while readiness says draining and new connections are refused`, async () => {
    const stack = await startStack({ config: stackConfig(), database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false, deduplicateInflightRequests: false } });
    const base = stack.gateway.url.replace("/graphql", "");
    // A load balancer's persistent connection, open before the stop begins.
    const probe = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await get(`${base}/healthz`, probe)).status).toBe(200);
      const gate = gateListPage();
      const requests = Array.from({ length: IN_FLIGHT }, () => graphql(stack.gateway.url, PAGE_QUERY, { first: 3 }, { token }));
      await eventually(() => gate.waiting === IN_FLIGHT, `${IN_FLIGHT} requests inside the conversations subgraph`);

      let answeredWhenStopped: number | null = null;
      const stopping = stack.stop().then(() => (answeredWhenStopped = gate.answered));
      const readiness = await get(`${base}/readyz`, probe);
      expect(readiness.status).toBe(503);
      expect(JSON.parse(readiness.body)).toEqual({ status: "draining" });
      expect(readiness.headers.connection).toBe("close");
      expect(await refusesNewConnections(stack.gateway.port)).toBe("ECONNREFUSED");

      // Their SQL runs now, after the stop began: the database and the subgraphs are still there.
      gate.open();
      const responses = await Promise.all(requests);
      for (const response of responses) expectFullPage(response);
      await stopping;
      // Every query had run its SQL before the stop resolved; the caller closes the database after it.
      expect(answeredWhenStopped).toBe(IN_FLIGHT);
      // The subgraphs have drained too: nothing listens any more.
      for (const subgraph of stack.subgraphs) expect(await connectOutcome(subgraph.port)).toBe("ECONNREFUSED");
      // The database was left open for whoever closes it last (scripts/start.ts): it still answers.
      await expect(db.database.prisma.$queryRaw`SELECT 1`).resolves.toBeDefined();
    } finally {
      probe.destroy();
      await stack.stop();
    }
  }, 300_000);

  it("answers requests still running at the drain deadline with a retryable SHUTTING_DOWN, so a stuck request cannot hold the stop forever", async () => {
    const config = { ...stackConfig(), shutdown: { drainTimeoutMs: 200 } };
    const stack = await startStack({ config, database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false } });
    const gate = gateListPage();
    try {
      const stuck = graphql(stack.gateway.url, PAGE_QUERY, { first: 3 }, { token });
      await eventually(() => gate.waiting === 1, "the request inside the subgraph");
      await stack.stop();
      const answer = await stuck;
      expect(answer.status).toBe(503);
      expect(answer.headers.get("retry-after")).toBe("1");
      expect(answer.headers.get("connection")).toBe("close");
      expect(answer.errors?.map((error) => error.extensions?.code)).toEqual(["SHUTTING_DOWN"]);
      expect(answer.errors?.[0]?.message).toMatch(/shutting down.*send it again/);
    } finally {
      gate.open();
      await stack.stop();
    }
  }, 300_000);
});

describe("readiness", () => {
  it("tells anyone ready or not, and only a caller with a valid token which subgraph is where", async () => {
    const stack = await startStack({ config: stackConfig(), database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false } });
    try {
      const base = stack.gateway.url.replace("/graphql", "");
      const anonymous = await fetch(`${base}/readyz`);
      expect(anonymous.status).toBe(200);
      const anonymousText = await anonymous.text();
      expect(JSON.parse(anonymousText)).toEqual({ status: "ready" });
      expect(anonymousText).not.toMatch(/127\.0\.0\.1|localhost|http:/);

      const forged = await fetch(`${base}/readyz`, { headers: { authorization: "Bearer not.a.token" } });
      expect(await forged.json()).toEqual({ status: "ready" });

      const trusted = await fetch(`${base}/readyz`, { headers: { authorization: `Bearer ${token}` } });
      const details = (await trusted.json()) as { status: string; subgraphs: { name: string; url: string; ok: boolean }[] };
      expect(details.status).toBe("ready");
      expect(details.subgraphs.map((subgraph) => [subgraph.name, subgraph.ok])).toEqual([
        ["conversations", true],
        ["external-search", true],
        ["knowledge-base", true],
        ["search", true],
      ]);
      expect(details.subgraphs[0]!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/graphql$/);
    } finally {
      await stack.stop();
    }
  }, 300_000);

  it("a subgraph's /health says unavailable without the reason, which can name hosts and credentials", async () => {
    const definition = {
      ...conversationsSubgraph(db.database),
      async checkHealth() {
        throw new Error("connect ECONNREFUSED postgresql://app:s3cret@db.internal:5432/context");
      },
    };
    const subgraph = await startSubgraph(definition, { host: "127.0.0.1", port: 0, auth: TEST_AUTH, production: false, logger: silentLogger });
    try {
      const health = await fetch(subgraph.url.replace("/graphql", "/health"));
      expect(health.status).toBe(503);
      const text = await health.text();
      expect(JSON.parse(text)).toEqual({ status: "unavailable", subgraph: "conversations" });
      expect(text).not.toMatch(/s3cret|db\.internal|postgresql/);
    } finally {
      await subgraph.stop();
    }
  });
});

describe("a subgraph alone", () => {
  it(`finishes all ${IN_FLIGHT} requests in flight when stopped, before its database closes`, async () => {
    const subgraph = await startSubgraph(conversationsSubgraph(db.database), { host: "127.0.0.1", port: 0, auth: TEST_AUTH, production: false, logger: silentLogger });
    const gate = gateListPage();
    try {
      const requests = Array.from({ length: IN_FLIGHT }, () => graphql(subgraph.url, PAGE_QUERY, { first: 3 }, { token }));
      await eventually(() => gate.waiting === IN_FLIGHT, `${IN_FLIGHT} requests inside the subgraph`);
      let answeredWhenStopped: number | null = null;
      const stopping = subgraph.stop().then(() => (answeredWhenStopped = gate.answered));
      expect(await refusesNewConnections(subgraph.port)).toBe("ECONNREFUSED");
      gate.open();
      const responses = await Promise.all(requests);
      for (const response of responses) expectFullPage(response);
      await stopping;
      // scripts/start-subgraph.ts closes the database once stop() resolves: every query had run its SQL by then.
      expect(answeredWhenStopped).toBe(IN_FLIGHT);
    } finally {
      gate.open();
      await subgraph.stop();
    }
  }, 300_000);
});

describe("the process", () => {
  let dataRoot: string;
  let child: ChildProcess | null = null;

  beforeAll(() => {
    dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), "graceful-drain-"));
  });

  afterAll(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    fs.rmSync(dataRoot, { recursive: true, force: true });
  });

  function exitOf(process: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return new Promise((resolve) => process.once("exit", (code, signal) => resolve({ code, signal })));
  }

  /** Waits for `pattern` in the child's output; rejects (bounded) if it never comes or the child exits. */
  function waitFor(process: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<string> {
    let output = "";
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${pattern} in ${timeoutMs} ms:\n${output}`)), timeoutMs);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (pattern.test(output)) {
          clearTimeout(timer);
          resolve(output);
        }
      };
      process.stdout!.on("data", onData);
      process.stderr!.on("data", onData);
      process.once("exit", (code) => {
        clearTimeout(timer);
        if (!pattern.test(output)) reject(new Error(`exited with ${code} before ${pattern}:\n${output}`));
      });
    });
  }

  it("npm start exits with code 0 on SIGTERM while it is serving and indexing", async () => {
    // As `npm start` runs it: compiled.
    child = spawn(process.execPath, productScriptArguments("scripts/start.ts"), {
      env: {
        ...process.env,
        NODE_OPTIONS: "",
        GATEWAY_PORT: "0",
        CONVERSATIONS_PORT: "0",
        SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0",
        EMBEDDER: "hashing",
        PGLITE_DATA_DIR: path.join(dataRoot, "pglite"),
        DEMO_CONVERSATIONS: "30",
        DATABASE_URL: db.url ?? "",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = exitOf(child);
    const output = await waitFor(child, /Try it:[\s\S]*-d '/, 120_000);
    const url = /GraphQL endpoint \+ GraphiQL: (\S+)/.exec(output)![1]!;
    const devToken = /Dev token[^\n]*\n\s+(\S+)/.exec(output)![1]!;
    const answer = await graphql(url, `{ conversations(first: 2) { nodes { id } } }`, {}, { token: devToken });
    expect(answer.errors).toBeUndefined();
    child.kill("SIGTERM");
    // 0 means the drain and cleanup finished and the process really exited; 1 is the deadline.
    expect(await exited).toEqual({ code: 0, signal: null });
  }, 300_000);

  it("is ended even when native work on the thread pool would hold process.exit() forever", async () => {
    child = spawn(process.execPath, ["--import", "tsx", "test/support/stuck-thread-pool.ts"], { env: { ...process.env, NODE_OPTIONS: "" }, stdio: ["ignore", "pipe", "pipe"] });
    const exited = exitOf(child);
    await waitFor(child, /ready/, 60_000);
    child.kill("SIGTERM");
    // Without the exit watchdog this waits for a pbkdf2 of 2e9 iterations (hours); the bound is generous.
    const outcome = await Promise.race([exited, new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), 60_000).unref())]);
    expect(outcome).toEqual({ code: null, signal: "SIGKILL" });
  }, 120_000);
});
