/**
 * `GET /metrics` on the gateway and the search subgraph: one search through the gateway moves the
 * gateway's request counter for its operation and its subgraph-call histogram, and the search
 * subgraph's request counter, the conversations.keyword provider's OK series and a cache miss
 * (then a hit for the same search). Scrapes are open to loopback and to valid tokens only, and
 * label values stay bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { BoundedLabelValues, decideScrape, type MetricsAccess } from "../../lib/observability/metrics-endpoint.js";
import { startStack, type RunningStack } from "../../app/stack.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let stack: RunningStack;
let token: string;
let gatewayMetricsUrl: string;
let searchMetricsUrl: string;

const ORGANIZATION = "org-metrics-7f3a";
const USER = "metrics-user-91c2";

const SEARCH = `query MetricsSearch($input: SearchInput!) {
  search(input: $input) { hits { item { __typename ... on Conversation { id title } } } providers { name status } cached }
}`;

beforeAll(async () => {
  db = await createTestDatabase();
  const config = loadConfig({ GATEWAY_PORT: "0", CONVERSATIONS_PORT: "0", SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0", EMBEDDER: "hashing", SEARCH_CACHE_TTL_SECONDS: "60", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" });
  stack = await startStack({ config: { ...config, auth: { ...TEST_AUTH, usingDevSecret: false } }, database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false } });
  token = await tokenFor(ORGANIZATION, USER);
  gatewayMetricsUrl = stack.gateway.url.replace(/\/graphql$/, "/metrics");
  searchMetricsUrl = stack.subgraphs.find((subgraph) => subgraph.name === "search")!.url.replace(/\/graphql$/, "/metrics");
  const create = `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`;
  for (let i = 0; i < 3; i++) {
    const response = await graphql(stack.gateway.url, create, { input: { title: `Grafana alert storm ${i}`, messages: [{ role: "USER", content: `the grafana alert for disk pressure fired ${i} times`, tokenCount: 9 }] } }, { token });
    expect(response.errors).toBeUndefined();
  }
});

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
});

/** One sample of the text exposition format: `name{label="value",...} number`. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!.replace(/\\(.)/g, "$1");
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

async function scrape(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; contentType: string | null }> {
  const response = await fetch(url, { headers });
  return { status: response.status, text: await response.text(), contentType: response.headers.get("content-type") };
}

async function samples(url: string): Promise<Sample[]> {
  const { status, text } = await scrape(url);
  expect(status).toBe(200);
  return parseExposition(text);
}

/** Sum of every sample with this name whose labels include all of `labels` (0 when none does). */
function total(all: Sample[], name: string, labels: Record<string, string> = {}): number {
  return all.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value)).reduce((sum, sample) => sum + sample.value, 0);
}

describe("metrics", () => {
  it("count one search through the gateway, its subgraph call, its providers and its cache miss, then a cache hit", async () => {
    const [gatewayBefore, searchBefore] = await Promise.all([samples(gatewayMetricsUrl), samples(searchMetricsUrl)]);
    const input = { query: "grafana alert disk pressure", limit: 5 };
    const first = await graphql(stack.gateway.url, SEARCH, { input }, { token });
    expect(first.errors).toBeUndefined();
    expect(first.data!.search.cached).toBe(false);
    const [gatewayAfter, searchAfter] = await Promise.all([samples(gatewayMetricsUrl), samples(searchMetricsUrl)]);

    const moved = (before: Sample[], after: Sample[], name: string, labels: Record<string, string> = {}) => total(after, name, labels) - total(before, name, labels);
    expect(moved(gatewayBefore, gatewayAfter, "graphql_envelop_request", { operationName: "MetricsSearch", operationType: "query" })).toBe(1);
    expect(moved(gatewayBefore, gatewayAfter, "graphql_envelop_request_duration_count", { operationName: "MetricsSearch" })).toBe(1);
    expect(moved(gatewayBefore, gatewayAfter, "graphql_gateway_subgraph_execute_duration_count", { subgraphName: "search" })).toBe(1);
    expect(moved(gatewayBefore, gatewayAfter, "graphql_gateway_subgraph_execute_duration_count", { subgraphName: "conversations" })).toBe(1);
    expect(total(gatewayAfter, "graphql_gateway_fetch_duration_count")).toBeGreaterThanOrEqual(2);

    expect(moved(searchBefore, searchAfter, "subgraph_graphql_requests_total", { subgraph: "search", outcome: "ok" })).toBe(1);
    expect(moved(searchBefore, searchAfter, "subgraph_graphql_request_duration_seconds_count", { subgraph: "search" })).toBe(1);
    expect(moved(searchBefore, searchAfter, "search_provider_duration_seconds_count", { provider: "conversations.keyword", status: "OK" })).toBe(1);
    // Unconfigured external providers report SKIPPED: a status series of their own.
    expect(moved(searchBefore, searchAfter, "search_provider_duration_seconds_count", { provider: "web.serper", status: "SKIPPED" })).toBe(1);
    expect(moved(searchBefore, searchAfter, "search_result_cache_lookups_total", { result: "miss" })).toBe(1);
    expect(moved(searchBefore, searchAfter, "search_result_cache_lookups_total", { result: "hit" })).toBe(0);

    const second = await graphql(stack.gateway.url, SEARCH, { input }, { token });
    expect(second.data!.search.cached).toBe(true);
    const searchCached = await samples(searchMetricsUrl);
    expect(moved(searchAfter, searchCached, "search_result_cache_lookups_total", { result: "hit" })).toBe(1);
    // A cached answer asks no provider.
    expect(moved(searchAfter, searchCached, "search_provider_duration_seconds_count", { provider: "conversations.keyword" })).toBe(0);
  });

  it("count errors by code, and never label by organization or user", async () => {
    const before = await samples(gatewayMetricsUrl);
    const bad = await graphql(stack.gateway.url, SEARCH, { input: { query: "grafana", alpha: 2 } }, { token });
    expect(bad.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    const after = await samples(gatewayMetricsUrl);
    expect(total(after, "graphql_envelop_error_result", { operationName: "MetricsSearch", code: "BAD_USER_INPUT" }) - total(before, "graphql_envelop_error_result", { operationName: "MetricsSearch", code: "BAD_USER_INPUT" })).toBe(1);
    const searchText = (await scrape(searchMetricsUrl)).text;
    for (const text of [(await scrape(gatewayMetricsUrl)).text, searchText]) {
      expect(text).not.toContain(ORGANIZATION);
      expect(text).not.toContain(USER);
    }
  });

  it("cut operation names to 64 characters", async () => {
    const name = `Q${"x".repeat(99)}`;
    const response = await graphql(stack.gateway.url, `query ${name} { __typename }`, {}, { token });
    expect(response.errors).toBeUndefined();
    const after = await samples(gatewayMetricsUrl);
    expect(total(after, "graphql_envelop_request", { operationName: name.slice(0, 64) })).toBe(1);
    expect(after.some((sample) => sample.labels.operationName === name)).toBe(false);
  });

  it("report the PostgreSQL pool on scrape, and nothing for PGlite's single connection", async () => {
    const search = await samples(searchMetricsUrl);
    const pool = search.filter((sample) => sample.name === "database_pool_connections");
    if (db.database.kind === "postgres") {
      expect(pool.map((sample) => sample.labels.state).sort()).toEqual(["idle", "total", "waiting"]);
      expect(total(search, "database_pool_connections", { state: "total" })).toBeGreaterThanOrEqual(1);
    } else {
      expect(pool).toEqual([]);
    }
  });

  it("serve loopback and valid tokens, refuse a token that does not verify", async () => {
    for (const url of [gatewayMetricsUrl, searchMetricsUrl]) {
      const open = await scrape(url);
      expect(open.status).toBe(200);
      expect(open.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
      expect((await scrape(url, { authorization: `Bearer ${token}` })).status).toBe(200);
      const forged = await scrape(url, { authorization: "Bearer not-a-token" });
      expect(forged.status).toBe(401);
      expect(JSON.parse(forged.text).errors[0].extensions.code).toBe("UNAUTHENTICATED");
    }
  });

  it("refuse a scrape from another host without a token, unless metrics are public", async () => {
    const closed: MetricsAccess = { public: false, auth: TEST_AUTH };
    expect(await decideScrape("192.0.2.7", undefined, closed)).toMatchObject({ allowed: false, status: 403, code: "FORBIDDEN" });
    expect(await decideScrape("fd00::7", undefined, closed)).toMatchObject({ allowed: false, status: 403 });
    expect(await decideScrape("192.0.2.7", `Bearer ${token}`, closed)).toEqual({ allowed: true });
    expect(await decideScrape("192.0.2.7", "Bearer forged", closed)).toMatchObject({ allowed: false, status: 401 });
    expect(await decideScrape("192.0.2.7", undefined, { ...closed, public: true })).toEqual({ allowed: true });
    for (const loopback of ["127.0.0.1", "::1", "::ffff:127.0.0.1"]) expect(await decideScrape(loopback, undefined, closed)).toEqual({ allowed: true });
  });

  it("read METRICS_PUBLIC as a boolean, refusing anything else with the variable's name", () => {
    expect(loadConfig({}).metrics.public).toBe(false);
    expect(loadConfig({ METRICS_PUBLIC: "true" }).metrics.public).toBe(true);
    expect(() => loadConfig({ METRICS_PUBLIC: "sometimes" })).toThrow(ConfigError);
    expect(() => loadConfig({ METRICS_PUBLIC: "sometimes" })).toThrow(/METRICS_PUBLIC/);
  });

  it("keep at most 200 distinct operation names, then say other", () => {
    const names = new BoundedLabelValues();
    for (let i = 0; i < 200; i++) expect(names.label(`Operation${i}`)).toBe(`Operation${i}`);
    expect(names.label("Operation200")).toBe("other");
    expect(names.label("Operation7")).toBe("Operation7");
    expect(names.label(undefined)).toBe("Anonymous");
  });
});
