/**
 * Two gateway instances over the same subgraphs and the same Redis (issue 22): what one of them
 * learns, the other must know. A write through gateway A retires the organization's cached
 * search answers in gateway B; a request budget is one budget however requests are spread over
 * the gateways (and over two instances of a subgraph called directly); a persisted query
 * registered through A is found through B. And a Redis that is down or stalled never fails a
 * search: the response cache is then off, not stale.
 *
 * Real Redis (REDIS_URL; CI runs one on 127.0.0.1:6379), each run under a key prefix of its own.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Redis } from "ioredis";
import { loadConfig } from "../../lib/config.js";
import { startSubgraph, type RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import type { RateLimitSettings } from "../../lib/graphql/rate-limit.js";
import { silentLogger } from "../../lib/logger.js";
import { gatewayOptionsFrom, startGateway, type GatewayOptions, type RunningGateway } from "../../gateway/server.js";
import { sha256Hex } from "../../gateway/persisted-query-manifest.js";
import { SUBGRAPHS } from "../../subgraphs/index.js";
import { errorCodes, graphql, type GraphQLResponse } from "../support/graphql.js";
import { recordingLogger } from "../support/recording-logger.js";
import { startTestStack, type TestStack } from "../support/stack.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { tokenFor } from "../support/tenants.js";

const redisUrl = loadConfig().search.redisUrl;
// CI always has Redis (.ci/run starts it and exports REDIS_URL): there, a missing one is a failure, not a skip.
const describeWithRedis = redisUrl || process.env.CI ? describe : describe.skip;

let test: TestStack;
let gatewayA: RunningGateway;
let gatewayB: RunningGateway;
const started: { stop(): Promise<void> }[] = [];
const proxies: TcpProxy[] = [];
let ann: string;
let gus: string;
let conversationId: string;

const SEARCH = `query Search($input: SearchInput!) {
  search(input: $input) { hits { item { __typename ... on Conversation { id title } } } }
}`;
const input = { input: { query: "kafka consumer lag", limit: 5, alpha: 1 } };

const search = (gateway: RunningGateway, token: string) => graphql(gateway.url, SEARCH, input, { token });
const hit = (response: GraphQLResponse) => (response.extensions?.responseCache as { hit?: boolean } | undefined)?.hit ?? false;
const titles = (response: GraphQLResponse) => (response.data?.search.hits ?? []).map((h: { item: { title: string } }) => h.item.title);
/** A document's first request goes through uncached while a gateway learns it is a search; the second fills the cache. */
const warm = async (gateway: RunningGateway, token: string) => {
  await search(gateway, token);
  await search(gateway, token);
};

/** Another gateway over the stack's subgraphs, configured as the stack's gateway is unless told otherwise. */
async function anotherGateway(overrides: Partial<GatewayOptions> = {}): Promise<RunningGateway> {
  const gateway = await startGateway({
    ...gatewayOptionsFrom(test.config),
    port: 0,
    supergraphSdl: test.stack.supergraphSdl,
    mcp: null,
    logger: silentLogger,
    runtimeLogLevel: false,
    ...overrides,
  });
  started.push(gateway);
  return gateway;
}

/** Every Redis key this file writes starts with this. */
const RUN_PREFIX = `test-gateways-${randomUUID()}`;
const budget = (points: number): RateLimitSettings => ({ windowSeconds: 600, organizationPoints: 0, userPoints: points, anonymousPoints: 0, redisUrl, redisKeyPrefix: `${RUN_PREFIX}-budget-${randomUUID()}:` });

beforeAll(async () => {
  if (!redisUrl) throw new Error("REDIS_URL is not set: this file tests what gateways share through Redis (CI runs one at redis://127.0.0.1:6379)");
  test = await startTestStack({
    SEARCH_INDEXER: "false",
    GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "60",
    // The search subgraph's own cache is off: this file is about what the gateways cache.
    SEARCH_CACHE_TTL_SECONDS: "0",
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `${RUN_PREFIX}:`,
  });
  gatewayA = test.stack.gateway;
  gatewayB = await anotherGateway();
  ann = await tokenFor("acme-shared", "ann");
  gus = await tokenFor("globex-shared", "gus");
  const create = `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`;
  const acme = await graphql(gatewayA.url, create, { input: { title: "Kafka consumer lag alert", messages: [{ role: "USER", content: "consumer lag keeps growing", tokenCount: 4 }] } }, { token: ann });
  expect(acme.errors).toBeUndefined();
  conversationId = acme.data!.createConversation.id;
  const globex = await graphql(gatewayA.url, create, { input: { title: "Globex kafka consumer lag" } }, { token: gus });
  expect(globex.errors).toBeUndefined();
});

afterAll(async () => {
  await Promise.allSettled(started.map((server) => server.stop()));
  await Promise.allSettled(proxies.map((proxy) => proxy.close()));
  await test?.stop();
  if (redisUrl) {
    const redis = new Redis(redisUrl);
    try {
      const keys = await redis.keys(`${RUN_PREFIX}*`);
      if (keys.length > 0) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
  }
});

describeWithRedis("two gateways sharing Redis", () => {
  it("a rename through gateway A retires the answers gateway B cached: B answers with the new title at once", async () => {
    await warm(gatewayA, ann);
    await warm(gatewayB, ann);
    await warm(gatewayB, gus);
    const cachedOnB = await search(gatewayB, ann);
    expect(hit(cachedOnB)).toBe(true);
    expect(titles(cachedOnB)).toEqual(["Kafka consumer lag alert"]);

    const renamed = await graphql(gatewayA.url, `mutation($id: ID!) { renameConversation(id: $id, title: "Kafka consumer lag resolved") { id } }`, { id: conversationId }, { token: ann });
    expect(renamed.errors).toBeUndefined();

    const onB = await search(gatewayB, ann);
    expect(hit(onB)).toBe(false);
    expect(titles(onB)).toEqual(["Kafka consumer lag resolved"]);
    const onA = await search(gatewayA, ann);
    expect(hit(onA)).toBe(false);
    expect(titles(onA)).toEqual(["Kafka consumer lag resolved"]);
    // The new answer is cached again, and another organization's answers on B were not touched.
    expect(hit(await search(gatewayB, ann))).toBe(true);
    const globexOnB = await search(gatewayB, gus);
    expect(hit(globexOnB)).toBe(true);
    expect(titles(globexOnB)).toEqual(["Globex kafka consumer lag"]);
  });

  it("never hands one user's cached answer to another user of the same organization", async () => {
    await warm(gatewayB, ann);
    expect(hit(await search(gatewayB, ann))).toBe(true);
    const ada = await tokenFor("acme-shared", "ada");
    const first = await search(gatewayB, ada);
    expect(first.errors).toBeUndefined();
    expect(hit(first)).toBe(false);
  });

  it("a persisted query registered through gateway A is found through gateway B", async () => {
    const query = `query TitlesShared { conversations(first: 5) { nodes { title } } }`;
    const hash = sha256Hex(query);
    const send = (gateway: RunningGateway, withQuery: boolean) =>
      fetch(gateway.url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ann}` },
        body: JSON.stringify({ ...(withQuery ? { query } : {}), extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }),
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as GraphQLResponse }));
    const unknown = await send(gatewayB, false);
    expect(unknown.status).toBe(200);
    expect(errorCodes({ ...unknown.body, status: 200, headers: new Headers() })).toEqual(["PERSISTED_QUERY_NOT_FOUND"]);
    expect((await send(gatewayA, true)).status).toBe(200);
    const found = await send(gatewayB, false);
    expect(found.status).toBe(200);
    expect(found.body.data!.conversations.nodes).toEqual([{ title: "Kafka consumer lag resolved" }]);
  });

  it("a user budget of 10 spread over both gateways admits exactly 10 of 16 concurrent requests", async () => {
    const settings = budget(10);
    const [first, second] = [await anotherGateway({ rateLimit: settings }), await anotherGateway({ rateLimit: settings })];
    const token = await tokenFor("acme-shared", `budget-${randomUUID()}`);
    // `{ __typename }` costs one point: the request itself, no body or operation cost beyond it.
    const statuses = await Promise.all(Array.from({ length: 16 }, (_, i) => graphql(i % 2 ? first.url : second.url, `{ __typename }`, {}, { token }).then((response) => response.status)));
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(6);
  });

  it("a budget of 6 for direct (unsigned) calls spread over two conversations subgraph instances admits exactly 6 of 10", async () => {
    const settings = budget(6);
    const instances: RunningSubgraph[] = [];
    for (let i = 0; i < 2; i++) {
      const subgraph = await startSubgraph(await SUBGRAPHS.conversations({ database: test.db.database, config: test.config, logger: silentLogger }), {
        host: "127.0.0.1",
        port: 0,
        auth: test.config.auth,
        production: false,
        logger: silentLogger,
        rateLimit: settings,
      });
      started.push(subgraph);
      instances.push(subgraph);
    }
    const token = await tokenFor("acme-shared", `direct-${randomUUID()}`);
    const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => graphql(instances[i % 2]!.url, `{ __typename }`, {}, { token }).then((response) => response.status)));
    expect(statuses.filter((status) => status === 200)).toHaveLength(6);
    expect(statuses.filter((status) => status === 429)).toHaveLength(4);
  });
});

describeWithRedis("a gateway whose Redis is stalled or down", () => {
  it("keeps answering searches, uncached and never stale, and caches again once Redis is back", async () => {
    const proxy = await TcpProxy.start(redisUrl ?? "redis://127.0.0.1:6379");
    proxies.push(proxy);
    const logger = recordingLogger();
    const config = { ...test.config, search: { ...test.config.search, redisUrl: proxy.urlFor(redisUrl!) } };
    const gatewayC = await anotherGateway({ ...gatewayOptionsFrom(config), logger });
    await warm(gatewayC, ann);
    expect(hit(await search(gatewayC, ann))).toBe(true);

    // Stalled: every generation read waits for its timeout, then the search runs uncached.
    await proxy.set("stalled");
    for (let i = 0; i < 3; i++) {
      const response = await search(gatewayC, ann);
      expect(response.errors).toBeUndefined();
      expect(hit(response)).toBe(false);
      expect(titles(response)).toEqual(["Kafka consumer lag resolved"]);
    }

    // Down, while the organization writes through gateway A: C cannot hear of it...
    await proxy.set("cut");
    const renamed = await graphql(gatewayA.url, `mutation($id: ID!) { renameConversation(id: $id, title: "Kafka consumer lag explained") { id } }`, { id: conversationId }, { token: ann });
    expect(renamed.errors).toBeUndefined();
    for (let i = 0; i < 3; i++) {
      const response = await search(gatewayC, ann);
      expect(response.errors).toBeUndefined();
      expect(hit(response)).toBe(false);
      expect(titles(response)).toEqual(["Kafka consumer lag explained"]);
    }
    // Said once, not once a request.
    expect(logger.lines.filter((line) => line.startsWith("warn") && line.includes("response cache is off"))).toHaveLength(1);

    // ...so once Redis is back it serves nothing it held from before the outage, and caches again.
    await proxy.set("open");
    let answer: GraphQLResponse | null = null;
    for (let attempt = 0; attempt < 100 && !(answer && hit(answer)); attempt++) {
      answer = await search(gatewayC, ann);
      expect(titles(answer)).toEqual(["Kafka consumer lag explained"]);
      if (!hit(answer)) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(hit(answer!)).toBe(true);
  });
});
