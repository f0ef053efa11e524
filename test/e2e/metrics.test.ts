/**
 * `GET /metrics` on the gateway and the search subgraph: one search through the gateway moves the
 * gateway's request counter for its operation and its subgraph-call histogram, and the search
 * subgraph's request counter, the conversations.keyword provider's OK series and a cache miss
 * (then a hit for the same search). Scrapes are open to loopback and to valid tokens only, and
 * label values stay bounded. The indexing queues' depth and lag are read from the database at
 * scrape time: conversations created while no indexer runs wait as due jobs, an old job shows
 * as lag, indexing empties the queue; a failing database leaves /metrics answering.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { BoundedLabelValues, decideScrape, type MetricsAccess } from "../../lib/observability/metrics-endpoint.js";
import { SubgraphMetrics } from "../../lib/observability/subgraph-metrics.js";
import { createEmbedder } from "../../lib/retrieval/embeddings/index.js";
import type { ObservableQueue } from "../../lib/retrieval/queue-status.js";
import { PgVectorStore } from "../../lib/retrieval/vector-stores/pgvector.js";
import { ConversationIndexer } from "../../subgraphs/conversations/search/conversation-indexer.js";
import type { RunningStack } from "../../app/stack.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { startTestStack } from "../support/stack.js";
import { graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let stack: RunningStack;
let token: string;
let gatewayMetricsUrl: string;
let searchMetricsUrl: string;
let config: ReturnType<typeof loadConfig>;

const ORGANIZATION = "org-metrics-7f3a";
const USER = "metrics-user-91c2";

// createdAt: the search subgraph provides only titles, so asking for more sends the gateway to the
// conversations subgraph too, whose subgraph metrics this test counts.
const SEARCH = `query MetricsSearch($input: SearchInput!) {
  search(input: $input) { hits { item { __typename ... on Conversation { id title createdAt } } } providers { name status } cached }
}`;

beforeAll(async () => {
  // No indexer in the stack: the queue tests decide when jobs are indexed (searches here use the
  // keyword provider, whose postings a trigger keeps).
  ({ db, stack, config } = await startTestStack({ SEARCH_CACHE_TTL_SECONDS: "60", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0", SEARCH_INDEXER: "false" }));
  token = await tokenFor(ORGANIZATION, USER);
  gatewayMetricsUrl = stack.gateway.url.replace(/\/graphql$/, "/metrics");
  searchMetricsUrl = stack.subgraphs.find((subgraph) => subgraph.name === "search")!.url.replace(/\/graphql$/, "/metrics");
  for (let i = 0; i < 3; i++) await createConversation(`Grafana alert storm ${i}`, `the grafana alert for disk pressure fired ${i} times`);
});

async function createConversation(title: string, content: string): Promise<string> {
  const create = `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`;
  const response = await graphql(stack.gateway.url, create, { input: { title, messages: [{ role: "USER", content, tokenCount: 9 }] } }, { token });
  expect(response.errors).toBeUndefined();
  return response.data!.createConversation.id;
}

/** An indexer over the stack's database, run by the test (the stack runs none). */
function testIndexer(): ConversationIndexer {
  return new ConversationIndexer(db.database, createEmbedder(config.search, db.database), new PgVectorStore(db.database), silentLogger);
}

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

describe("indexing queue metrics", () => {
  const QUEUE_GAUGES = ["indexing_queue_waiting_jobs", "indexing_queue_failing_jobs", "indexing_queue_lag_seconds", "indexing_queue_in_flight_jobs"];

  it("name every queue the search subgraph's indexers work through, with its labels", async () => {
    const search = await samples(searchMetricsUrl);
    for (const name of QUEUE_GAUGES) expect(search.some((sample) => sample.name === name)).toBe(true);
    const waiting = search.filter((sample) => sample.name === "indexing_queue_waiting_jobs");
    expect(new Set(waiting.map((sample) => sample.labels.queue))).toEqual(new Set(["conversations", "documents", "vector_deletions"]));
    expect(new Set(waiting.map((sample) => sample.labels.when))).toEqual(new Set(["due", "later"]));
    expect(waiting.every((sample) => sample.labels.subgraph === "search")).toBe(true);
    expect(new Set(search.filter((sample) => sample.name === "indexing_queue_in_flight_jobs").map((sample) => sample.labels.queue))).toEqual(new Set(["conversations", "documents"]));
    // Nothing failed to read yet.
    expect(total(search, "indexing_queue_collect_errors_total")).toBe(0);
    expect(total(search, "indexing_queue_last_collect_success_timestamp_seconds", { queue: "conversations" })).toBeGreaterThan(0);
    // The stack's own indexer is off: it holds nothing.
    expect(total(search, "indexing_queue_in_flight_jobs", { queue: "conversations" })).toBe(0);
  });

  it("count conversations waiting while nothing indexes, show an old job as lag, and drop to 0 once indexed", async () => {
    // Whatever earlier tests queued is indexed first, so the counts below are this test's own.
    await testIndexer().drain();
    const empty = await samples(searchMetricsUrl);
    expect(total(empty, "indexing_queue_waiting_jobs", { queue: "conversations", when: "due" })).toBe(0);
    expect(total(empty, "indexing_queue_lag_seconds", { queue: "conversations" })).toBe(0);

    const ids = [await createConversation("Queue depth one", "the queue grows while the indexer is off"), await createConversation("Queue depth two", "and shrinks once it runs")];
    const queued = await samples(searchMetricsUrl);
    expect(total(queued, "indexing_queue_waiting_jobs", { queue: "conversations", when: "due" })).toBe(2);
    expect(total(queued, "indexing_queue_waiting_jobs", { queue: "conversations", when: "later" })).toBe(0);

    // A job enqueued an hour ago is an hour late.
    await db.database.prisma.$executeRaw`UPDATE search_index_jobs SET enqueued_at = clock_timestamp() - interval '1 hour' WHERE conversation_id = ${ids[0]}::uuid`;
    const late = await samples(searchMetricsUrl);
    expect(total(late, "indexing_queue_lag_seconds", { queue: "conversations" })).toBeGreaterThanOrEqual(3600);

    // A job in backoff after a failure is waiting later, and failing.
    await db.database.prisma.$executeRaw`UPDATE search_index_jobs SET attempts = 1, last_error = 'embedder unreachable', run_after = clock_timestamp() + interval '1 hour' WHERE conversation_id = ${ids[1]}::uuid`;
    const backingOff = await samples(searchMetricsUrl);
    expect(total(backingOff, "indexing_queue_waiting_jobs", { queue: "conversations", when: "due" })).toBe(1);
    expect(total(backingOff, "indexing_queue_waiting_jobs", { queue: "conversations", when: "later" })).toBe(1);
    expect(total(backingOff, "indexing_queue_failing_jobs", { queue: "conversations" })).toBe(1);

    await db.database.prisma.$executeRaw`UPDATE search_index_jobs SET run_after = clock_timestamp() WHERE conversation_id = ${ids[1]}::uuid`;
    expect(await testIndexer().drain()).toBe(2);
    const indexed = await samples(searchMetricsUrl);
    for (const when of ["due", "later"]) expect(total(indexed, "indexing_queue_waiting_jobs", { queue: "conversations", when })).toBe(0);
    expect(total(indexed, "indexing_queue_failing_jobs", { queue: "conversations" })).toBe(0);
    expect(total(indexed, "indexing_queue_lag_seconds", { queue: "conversations" })).toBe(0);
  });

  it("count the indexer's jobs by outcome, and read each queue once per scrape even when scrapes overlap", async () => {
    const indexer = testIndexer();
    const metrics = new SubgraphMetrics("search");
    let reads = 0;
    metrics.observeQueues(indexer.queues().map((queue) => ({ ...queue, status: () => (reads++, queue.status()) })));
    await createConversation("Counted once", "one job for the indexer's counter");
    expect(await indexer.drain()).toBe(1);
    const [first, second] = await Promise.all([metrics.registry.metrics(), metrics.registry.metrics()]);
    // Three gauges per scrape, two overlapping scrapes: one statement.
    expect(reads).toBe(1);
    expect(first).toBe(second);
    const after = parseExposition(first);
    expect(total(after, "indexing_jobs_total", { queue: "conversations", outcome: "indexed" })).toBe(1);
    expect(total(after, "indexing_jobs_total", { queue: "conversations", outcome: "failed" })).toBe(0);
    expect(total(after, "indexing_queue_in_flight_jobs", { queue: "conversations" })).toBe(0);
    await metrics.registry.metrics();
    expect(reads).toBe(2);
  });

  it("keep answering when the database fails, counting the failed reads and leaving the queue's gauges out", async () => {
    const broken = await createTestDatabase();
    const indexer = new ConversationIndexer(broken.database, createEmbedder(config.search, broken.database), new PgVectorStore(broken.database), silentLogger);
    await broken.dispose();
    const metrics = new SubgraphMetrics("search");
    const queues: ObservableQueue[] = indexer.queues();
    metrics.observeQueues(queues);
    const exposition = parseExposition(await metrics.registry.metrics());
    expect(total(exposition, "indexing_queue_collect_errors_total", { queue: "conversations" })).toBe(1);
    expect(exposition.filter((sample) => sample.name === "indexing_queue_waiting_jobs")).toEqual([]);
    expect(exposition.filter((sample) => sample.name === "indexing_queue_last_collect_success_timestamp_seconds")).toEqual([]);
    // The worker's own counts need no database.
    expect(total(exposition, "indexing_queue_in_flight_jobs", { queue: "conversations" })).toBe(0);
  });
});
