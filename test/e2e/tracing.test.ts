/**
 * OpenTelemetry traces end to end: a local OTLP/HTTP receiver of ours (a real node:http server
 * decoding the JSON the OTLP/HTTP exporter POSTs to /v1/traces, as the OTLP specification
 * defines it) stands in for a tracing backend (Jaeger, Tempo, an OTel Collector). With the
 * endpoint set, one search through the gateway gives one trace that runs gateway → search
 * subgraph → provider → tenant-scope transaction → SQL statement, each span a child of the one
 * before, and no span attribute carries the search text. With no endpoint nothing is exported.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { trace } from "@opentelemetry/api";
import { loadConfig, type Config } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { activeTracer, startServiceTracing } from "../../lib/observability/tracing.js";
import { startStack } from "../../app/stack.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

const ORGANIZATION = "org-tracing-5d1e";
const USER = "tracing-user-27ab";
/** A word only the search sends: it must not show up in any exported attribute. */
const SECRET_WORD = "zanzibarquokka";
const MAX_EXPORT_BYTES = 8 * 1024 * 1024;

const SEARCH = `query TracedSearch($input: SearchInput!) {
  search(input: $input) { hits { item { __typename ... on Conversation { id title } } } providers { name status } cached }
}`;

/** OTLP/JSON AnyValue: one of these keys is set (int64 as a string or a number). */
interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
  status?: { code?: number };
}
interface ExportRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

/** One received span, flattened with its resource's service name. */
interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  attributes: Record<string, string | number | boolean>;
}

function flatten(attributes: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes ?? []) {
    const scalar = value.stringValue ?? value.boolValue ?? value.doubleValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined);
    if (scalar !== undefined) out[key] = scalar;
  }
  return out;
}

/** A real OTLP/HTTP receiver: accepts POST /v1/traces with a JSON ExportTraceServiceRequest. */
class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  requests = 0;
  rawBodies: string[] = [];
  private readonly server = http.createServer((request, response) => void this.handle(request, response));

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse) {
    this.requests += 1;
    if (request.method !== "POST" || request.url !== "/v1/traces") {
      response.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request) {
      size += (chunk as Buffer).length;
      // Bounded before parsing, like any input.
      if (size > MAX_EXPORT_BYTES) {
        response.writeHead(413).end();
        return;
      }
      chunks.push(chunk as Buffer);
    }
    if (!(request.headers["content-type"] ?? "").startsWith("application/json")) {
      response.writeHead(415).end();
      return;
    }
    const body = Buffer.concat(chunks).toString("utf8");
    this.rawBodies.push(body);
    const payload = JSON.parse(body) as ExportRequest;
    for (const resourceSpans of payload.resourceSpans ?? []) {
      const service = String(flatten(resourceSpans.resource?.attributes)["service.name"] ?? "");
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({ service, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId || null, name: span.name, attributes: flatten(span.attributes) });
        }
      }
    }
    response.writeHead(200, { "content-type": "application/json" }).end("{}");
  }
}

let db: TestDatabase;
let receiver: OtlpReceiver;
let endpoint: string;
let token: string;

function stackConfig(extra: Record<string, string>): Config {
  const config = loadConfig({
    GATEWAY_PORT: "0",
    CONVERSATIONS_PORT: "0",
    SEARCH_PORT: "0",
    KNOWLEDGE_BASE_PORT: "0",
    EXTERNAL_SEARCH_PORT: "0",
    EMBEDDER: "hashing",
    SEARCH_CACHE_TTL_SECONDS: "0",
    GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0",
    SEARCH_INDEXER: "false",
    ...extra,
  });
  return { ...config, auth: { ...TEST_AUTH, usingDevSecret: false } };
}

/** Starts a stack, runs one search through the gateway, and stops it (which flushes the exporters). */
async function searchOnce(config: Config): Promise<void> {
  const stack = await startStack({ config, database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false, mcp: null } });
  try {
    const response = await graphql(stack.gateway.url, SEARCH, { input: { query: `grafana disk pressure ${SECRET_WORD}`, limit: 5 } }, { token });
    expect(response.errors).toBeUndefined();
    expect(response.data!.search.providers).toEqual(expect.arrayContaining([{ name: "conversations.keyword", status: "OK" }]));
  } finally {
    await stack.stop();
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  receiver = new OtlpReceiver();
  endpoint = await receiver.start();
  token = await tokenFor(ORGANIZATION, USER);
  // Conversations to find, written straight through the conversations subgraph's gateway path.
  const stack = await startStack({ config: stackConfig({}), database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false, mcp: null } });
  try {
    const create = `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`;
    for (let i = 0; i < 2; i++) {
      const response = await graphql(stack.gateway.url, create, { input: { title: `Grafana disk pressure ${i}`, messages: [{ role: "USER", content: `the grafana alert for disk pressure fired ${i} times`, tokenCount: 9 }] } }, { token });
      expect(response.errors).toBeUndefined();
    }
  } finally {
    await stack.stop();
  }
});

afterAll(async () => {
  await receiver?.stop();
  await db?.dispose();
});

describe("tracing", () => {
  it("is off with no endpoint: no tracer is set up and nothing is exported", async () => {
    const config = stackConfig({});
    expect(config.tracing.endpoint).toBeNull();
    expect(await startServiceTracing(config.tracing, "gateway")).toBeNull();
    await searchOnce(config);
    expect(receiver.requests).toBe(0);
    // Nothing registered globally either: the API still hands out its no-op tracer.
    expect(trace.getTracer("probe").startSpan("probe").isRecording()).toBe(false);
    expect(activeTracer()).toBeUndefined();
  });

  it("follows one search from the gateway through the search subgraph and a provider down to SQL, in one trace", async () => {
    await searchOnce(stackConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: "tracing-test" }));
    expect(receiver.requests).toBeGreaterThan(0);
    const spans = receiver.spans;
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const parentOf = (span: ReceivedSpan) => (span.parentSpanId ? byId.get(span.parentSpanId) : undefined);

    // The search subgraph's incoming request, continuing a gateway span (the upstream fetch).
    const searchServer = spans.find((span) => span.service === "tracing-test-search" && span.name === "POST /graphql");
    expect(searchServer).toBeDefined();
    const gatewayParent = parentOf(searchServer!);
    expect(gatewayParent?.service).toBe("tracing-test-gateway");
    expect(gatewayParent!.traceId).toBe(searchServer!.traceId);
    const traceId = searchServer!.traceId;

    // Up the gateway's side to its root: the HTTP request span, which the client started (no parent).
    let root = gatewayParent!;
    const gatewayChain = [root.name];
    while (parentOf(root)) {
      root = parentOf(root)!;
      gatewayChain.push(root.name);
      expect(root.service).toBe("tracing-test-gateway");
    }
    expect(root.parentSpanId).toBeNull();
    expect(gatewayChain.some((name) => name.startsWith("query TracedSearch") || name.includes("TracedSearch"))).toBe(true);
    expect(gatewayChain.some((name) => name.startsWith("subgraph.execute"))).toBe(true);

    // One span per provider call, a child of the search subgraph's request span.
    const keyword = spans.find((span) => span.name === "search.provider conversations.keyword");
    expect(keyword).toBeDefined();
    expect(keyword!.traceId).toBe(traceId);
    expect(keyword!.service).toBe("tracing-test-search");
    let ancestor = parentOf(keyword!);
    while (ancestor && ancestor !== searchServer) ancestor = parentOf(ancestor);
    expect(ancestor).toBe(searchServer);
    expect(keyword!.attributes).toMatchObject({ "search.provider.name": "conversations.keyword", "search.provider.kind": "KEYWORD", "search.provider.status": "OK" });
    expect(keyword!.attributes["search.provider.hits"]).toBeGreaterThan(0);
    // The unconfigured web provider reports why it skipped, as its own span.
    const serper = spans.find((span) => span.name === "search.provider web.serper" && span.traceId === traceId);
    expect(serper?.attributes["search.provider.status"]).toBe("SKIPPED");

    // The provider's tenant scope (a transaction on PGlite, a session-scoped read on PostgreSQL,
    // see tenant-reads.ts), and its SQL statements inside it.
    const scope = spans.find((span) => (span.name === "db.transaction tenant_scope" || span.name === "db.session tenant_reads") && span.parentSpanId === keyword!.spanId);
    expect(scope).toBeDefined();
    const statements = spans.filter((span) => span.parentSpanId === scope!.spanId);
    expect(statements.length).toBeGreaterThan(0);
    const select = statements.find((span) => span.name === "SELECT" && String(span.attributes["db.query.text"]).includes("FROM"));
    expect(select).toBeDefined();
    expect(select!.traceId).toBe(traceId);
    expect(select!.attributes["db.system.name"]).toBe("postgresql");

    // The search text travelled in variables and SQL parameters, neither of which is exported;
    // nor is the GraphQL document, where a client could have written it inline.
    expect(receiver.rawBodies.some((body) => body.includes(SECRET_WORD))).toBe(false);
    expect(spans.filter((span) => "graphql.document" in span.attributes)).toEqual([]);
    expect(gatewayChain.length).toBeGreaterThan(2);
  });
});
