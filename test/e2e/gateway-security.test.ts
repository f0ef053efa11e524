/**
 * The gateway's front door under hostile or careless clients: identity is checked once, before
 * planning (401 and no subgraph call); subgraph calls are signed and `_service` is not served to
 * strangers; responses keep the spec's shape on the Rust planner; errors carry no internal URLs
 * or query text; CORS admits only listed origins; GraphiQL is served compressed.
 */
import http from "node:http";
import { createHmac } from "node:crypto";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { defaultParamsSerializer } from "@graphql-mesh/hmac-upstream-signature";
import { SignJWT } from "jose";
import { startGateway } from "../../gateway/server.js";
import { loadConfig, APOLLO_SANDBOX_ORIGIN, type Config } from "../../lib/config.js";
import type { RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import { startStack, type RunningStack } from "../../app/stack.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let stack: RunningStack;
let jsStack: RunningStack;
let config: Config;
let token: string;
let conversations: RunningSubgraph;
let search: RunningSubgraph;

const subgraphCalls = () => conversations.operations.count + search.operations.count;

function stackConfig(planner: "rust" | "js"): Config {
  const loaded = loadConfig({ GATEWAY_PORT: "0", CONVERSATIONS_PORT: "0", SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0", EMBEDDER: "hashing", SEARCH_INDEXER: "false", QUERY_PLANNER: planner, CORS_ORIGINS: "http://localhost:3000" });
  return { ...loaded, auth: { ...TEST_AUTH, usingDevSecret: false } };
}

beforeAll(async () => {
  db = await createTestDatabase();
  config = stackConfig("rust");
  stack = await startStack({ config, database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false } });
  jsStack = await startStack({ config: stackConfig("js"), database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false } });
  conversations = stack.subgraphs.find((subgraph) => subgraph.name === "conversations")!;
  search = stack.subgraphs.find((subgraph) => subgraph.name === "search")!;
  token = await tokenFor("org-security", "sam");
});

afterAll(async () => {
  await jsStack?.stop();
  await stack?.stop();
  await db?.dispose();
});

describe("identity at the gateway", () => {
  it("answers a bad token with HTTP 401 UNAUTHENTICATED and calls no subgraph", async () => {
    const before = subgraphCalls();
    const forged = await new SignJWT({ org: "org-security" }).setProtectedHeader({ alg: "HS256" }).setSubject("sam").setExpirationTime("1h").sign(new TextEncoder().encode("not-the-secret-but-long-enough-for-hs256!"));
    for (const authorization of ["Bearer not.a.jwt", `Bearer ${forged}`, "Basic c2FtOnNhbQ=="]) {
      const response = await graphql(stack.gateway.url, `{ conversations { nodes { id } } }`, {}, { headers: { authorization } });
      expect(response.status).toBe(401);
      expect(errorCodes(response)).toEqual(["UNAUTHENTICATED"]);
    }
    expect(subgraphCalls()).toBe(before);
  });

  it("answers a data field without a token with 401 before planning, and meta fields with 200", async () => {
    const before = subgraphCalls();
    const anonymous = await graphql(stack.gateway.url, `query { ...Root } fragment Root on Query { search(input: { query: "x" }) { tookMs } }`);
    expect(anonymous.status).toBe(401);
    expect(errorCodes(anonymous)).toEqual(["UNAUTHENTICATED"]);
    expect(anonymous.data).toBeUndefined();
    expect(subgraphCalls()).toBe(before);
    const meta = await graphql(stack.gateway.url, `{ __typename }`);
    expect(meta.status).toBe(200);
    expect(meta.data).toEqual({ __typename: "Query" });
  });

  it("refuses a token without exp (it would be valid forever)", async () => {
    const forever = await new SignJWT({ org: "org-security" }).setProtectedHeader({ alg: "HS256" }).setSubject("sam").setIssuedAt().sign(new TextEncoder().encode(TEST_AUTH.jwtSecret!));
    const response = await graphql(stack.gateway.url, `{ conversations { nodes { id } } }`, {}, { token: forever });
    expect(response.status).toBe(401);
    expect(response.errors![0]!.message).toMatch(/exp/);
  });
});

describe("gateway-to-subgraph signatures", () => {
  it("signs every subgraph call, and the subgraph recognises the signature", async () => {
    conversations.operations.reset();
    const response = await graphql(stack.gateway.url, `{ conversations(first: 1) { nodes { id } } }`, {}, { token });
    expect(response.errors).toBeUndefined();
    expect(conversations.operations.count).toBe(1);
    expect(conversations.operations.signedByGateway).toBe(1);
  });

  it("serves `_service` to the gateway's signature or a valid token, never to a stranger", async () => {
    const query = "{ _service { sdl } }";
    const post = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      fetch(conversations.url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

    const stranger = await post({ query });
    expect(stranger.status).toBe(401);
    expect(JSON.stringify(await stranger.json())).not.toMatch(/type Conversation/);

    const forgedSignature = await post({ query, extensions: { "hmac-signature": Buffer.alloc(32, 7).toString("base64") } });
    expect(forgedSignature.status).toBe(401);

    const signature = createHmac("sha256", TEST_AUTH.subgraphSigningSecret).update(defaultParamsSerializer({ query })!).digest("base64");
    const signed = await post({ query, extensions: { "hmac-signature": signature } });
    expect(signed.status).toBe(200);
    expect(((await signed.json()) as { data: { _service: { sdl: string } } }).data._service.sdl).toMatch(/type Conversation/);

    const withToken = await post({ query }, { authorization: `Bearer ${token}` });
    expect(withToken.status).toBe(200);
  });
});

describe("spec conformance on both planners", () => {
  it.each(["rust", "js"] as const)("%s: an execution error keeps `data`, with the failed root field null", async (planner) => {
    const url = planner === "rust" ? stack.gateway.url : jsStack.gateway.url;
    const response = await graphql(url, `mutation { renameConversation(id: "00000000-0000-4000-8000-000000000000", title: "x") { id } }`, {}, { token });
    expect(response.status).toBe(200);
    expect(errorCodes(response)).toEqual(["NOT_FOUND"]);
    expect(response.data).toEqual({ renameConversation: null });
  });

  it.each(["rust", "js"] as const)("%s: a variable coercion failure is HTTP 400 with a code, and calls no subgraph", async (planner) => {
    const url = planner === "rust" ? stack.gateway.url : jsStack.gateway.url;
    const before = subgraphCalls();
    const response = await graphql(url, `query($id: ID!) { conversation(id: $id) { id } }`, { id: null }, { token, headers: { accept: "application/graphql-response+json" } });
    expect(response.status).toBe(400);
    expect(response.errors![0]!.message).toMatch(/\$id/);
    expect(response.data).toBeUndefined();
    if (planner === "rust") {
      expect(errorCodes(response)).toEqual(["BAD_USER_INPUT"]);
      expect(subgraphCalls()).toBe(before);
    }
  });
});

describe("no internal detail in errors", () => {
  it("drops the subgraph's URL and the query text the gateway sent when a subgraph call times out", async () => {
    // A "subgraph" that answers too late: the gateway's timeout error used to carry
    // `extensions.request` with the subgraph's URL and the exact query sent to it.
    const broken = http.createServer((_request, response) => {
      const timer = setTimeout(() => response.end("{}"), 3_000);
      response.on("close", () => clearTimeout(timer));
    });
    await new Promise<void>((resolve) => broken.listen(0, "127.0.0.1", resolve));
    const brokenUrl = `http://127.0.0.1:${(broken.address() as AddressInfo).port}/graphql`;
    const gateway = await startGateway({
      supergraphSdl: stack.supergraphSdl.replace(conversations.url.replace("localhost", "127.0.0.1"), brokenUrl),
      host: "127.0.0.1",
      port: 0,
      queryPlanner: "rust",
      corsOrigins: [],
      production: true,
      auth: config.auth,
      upstreamTimeoutMs: 300,
      logger: silentLogger,
      runtimeLogLevel: false,
    });
    try {
      const response = await graphql(gateway.url, `{ conversations { nodes { id title } } }`, {}, { token });
      // An outage like any other: HTTP 200 with the coded error, not a 504 for the whole answer.
      expect(response.status).toBe(200);
      expect(errorCodes(response)).toEqual(["SUBGRAPH_UNAVAILABLE"]);
      const body = JSON.stringify(response);
      expect(body).not.toContain(brokenUrl);
      expect(body).not.toContain("127.0.0.1");
      expect(body).not.toMatch(/conversations\s*\{\s*nodes/);
      for (const error of response.errors!) expect(error.extensions?.request).toBeUndefined();
    } finally {
      broken.closeAllConnections();
      await gateway.stop();
      await new Promise<void>((resolve) => broken.close(() => resolve()));
    }
  });
});

describe("CORS", () => {
  const preflight = (origin: string) =>
    fetch(stack.gateway.url, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" } });

  it("gives a listed origin its own origin back, credentials and a preflight cache", async () => {
    for (const origin of [APOLLO_SANDBOX_ORIGIN, "http://localhost:3000"]) {
      const response = await preflight(origin);
      expect(response.headers.get("access-control-allow-origin")).toBe(origin);
      expect(response.headers.get("access-control-allow-credentials")).toBe("true");
      expect(Number(response.headers.get("access-control-max-age"))).toBeGreaterThanOrEqual(600);
    }
  });

  it("gives an unlisted origin and `Origin: null` no CORS headers at all", async () => {
    for (const origin of ["https://evil.example", "null", "http://localhost:3000.evil.example"]) {
      const response = await preflight(origin);
      expect(response.headers.get("access-control-allow-origin")).toBeNull();
      expect(response.headers.get("access-control-allow-credentials")).toBeNull();
    }
  });
});

describe("the GraphiQL page", () => {
  it("is sent compressed, with an ETag that turns a reload into a 304", async () => {
    const page = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get(stack.gateway.url, { headers: { accept: "text/html", "accept-encoding": "br, gzip" } }, resolve).on("error", reject),
    );
    let compressed = 0;
    for await (const chunk of page) compressed += (chunk as Buffer).length;
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-encoding"]).toBe("br");
    expect(page.headers["cache-control"]).toMatch(/private/);
    // The page itself is about 9 MB; compressed it must be well under half of that.
    expect(compressed).toBeLessThan(4_000_000);
    const again = await fetch(stack.gateway.url, { headers: { accept: "text/html", "if-none-match": String(page.headers.etag) } });
    expect(again.status).toBe(304);
  });
});
