/**
 * The multi-instance topology (deploy/local/topology.ts, `npm run topology`) on real engines:
 * HAProxy in front of two gateways and two instances of each subgraph, PgBouncer in session
 * mode, a PostgreSQL primary with a streaming hot standby, Redis. Run once per CI run by
 * `npm run test:topology` (left out of the default suite, which CI runs three times).
 *
 * It checks that a search and a keyed write work through HAProxy's gateway frontend (the write
 * made once however often and wherever it is sent), that every instance of every tier serves
 * requests (counted by each process's own /metrics), and, under 50 clients of bounded traffic,
 * that one instance can be restarted (SIGTERM, drain, start) with no request failing, and that a
 * SIGKILLed gateway, conversations and search instance are each taken out by HAProxy's health
 * check while traffic goes on: no read fails and no acknowledged write is lost; and that after
 * the primary is stopped and the standby promoted, writes succeed again through the same
 * processes and none acknowledged is lost (bench/scenarios/topology-faults.ts is the same drill
 * at full length, with the times). It counts, never times.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { randomUUID } from "node:crypto";
import { DEMO_ORGANIZATION } from "../../lib/demo-data/organization.js";
import { startTopology, SUBGRAPH_TIERS, TIERS, type Topology } from "../../deploy/local/topology.js";
import { DRILL_ENV, DrillTraffic, failOver, killEachTier, countsBetween } from "../../bench/scenarios/topology-faults.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

/** Ports 20100-20134 (the drill's full run uses 20200, `npm run topology` 20000). */
const BASE_PORT = 20_100;

let topology: Topology;

beforeAll(async () => {
  topology = await startTopology({ basePort: BASE_PORT, jwtSecret: TEST_AUTH.jwtSecret!, env: DRILL_ENV, demoConversations: 30 });
}, 300_000);

afterAll(async () => {
  await topology?.stop();
}, 120_000);

async function graphql(token: string, query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const response = await fetch(topology.gatewayUrl, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: (await response.json()) as { data?: Record<string, any>; errors?: { message: string; extensions?: { code?: string } }[] } };
}

/** The sum of a counter's samples in one process's Prometheus text (`/metrics`, open from loopback). */
async function counterTotal(url: string, metric: string): Promise<number> {
  const text = await (await fetch(new URL("/metrics", url))).text();
  let total = 0;
  for (const line of text.split("\n")) if (line.startsWith(`${metric}{`) || line.startsWith(`${metric} `)) total += Number(line.slice(line.lastIndexOf(" ") + 1));
  return total;
}

describe("the topology through HAProxy", () => {
  test("every HAProxy server is UP by its /readyz check, and the database listener sends sessions to the primary", async () => {
    const servers = await topology.servers();
    for (const tier of TIERS) {
      const backend = tier === "gateway" ? "gateways" : tier;
      expect(servers.filter((s) => s.backend === backend).map((s) => [s.server, s.status, s.checkStatus])).toEqual([
        [`${tier}-1`, "UP", "L7OK"],
        [`${tier}-2`, "UP", "L7OK"],
      ]);
    }
    // The primary serves; the standby is the backup (UP, given no session).
    const primary = servers.find((s) => s.backend === "postgres" && s.server === "primary")!;
    expect(primary.status).toBe("UP");
    expect(primary.sessions).toBeGreaterThan(0);
    expect(servers.find((s) => s.backend === "postgres" && s.server === "standby")!.sessions).toBe(0);
    // And the standby streams from the primary.
    expect(await topology.postgres.psql(topology.postgres.primary, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")).toBe("1");
  });

  test("a keyed write is made once wherever it lands, and a search through the gateway frontend finds it", async () => {
    const token = await tokenFor(DEMO_ORGANIZATION.id, "topology-writer");
    const word = `zephyrine${randomUUID().slice(0, 8)}`;
    const key = randomUUID();
    const create = `mutation Create($title: String!) { createConversation(input: { title: $title, messages: [{ role: USER, content: "about the zephyrine rollout" }] }) { id title } }`;
    // Four times with one key: HAProxy's round robin sends them to both gateways and both conversations instances.
    const answers = [];
    for (let i = 0; i < 4; i += 1) answers.push(await graphql(token, create, { title: `Rollout of ${word}` }, { "idempotency-key": key }));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body.errors).toBeUndefined();
    }
    const ids = new Set(answers.map((answer) => answer.body.data!.createConversation.id as string));
    expect(ids.size).toBe(1);
    const [id] = ids;
    expect(await topology.postgres.psql(topology.postgres.primary, `SELECT count(*) FROM conversations WHERE title = 'Rollout of ${word}'`, "context_search")).toBe("1");

    const search = await graphql(token, `query Find($q: String!) { search(input: { query: $q, limit: 5 }) { hits { item { ... on Conversation { id title } } } } }`, { q: word });
    expect(search.status).toBe(200);
    expect(search.body.errors).toBeUndefined();
    expect(search.body.data!.search.hits.map((hit: { item: { id?: string } }) => hit.item.id)).toContain(id);
  });

  test("both instances of every tier serve requests (each process's own count)", async () => {
    const token = await tokenFor(DEMO_ORGANIZATION.id, "topology-reader");
    const before = await Promise.all(topology.instances.map((i) => counterTotal(i.url, i.tier === "gateway" ? "graphql_envelop_request" : "subgraph_graphql_requests_total")));
    // One document per subgraph tier, each sent 8 times: round robin gives every instance some.
    const documents = [
      "{ conversations(first: 1) { totalCount } }",
      `{ search(input: { query: "deadlock", limit: 3 }) { hits { score } } }`,
      "{ documents(first: 1) { nodes { id } } }",
      "{ externalProviders { provider configured } }",
    ];
    for (let round = 0; round < 8; round += 1) {
      for (const document of documents) {
        const answer = await graphql(token, document);
        expect(answer.status).toBe(200);
        expect(answer.body.errors).toBeUndefined();
      }
    }
    const after = await Promise.all(topology.instances.map((i) => counterTotal(i.url, i.tier === "gateway" ? "graphql_envelop_request" : "subgraph_graphql_requests_total")));
    const served = Object.fromEntries(topology.instances.map((instance, i) => [instance.name, after[i]! - before[i]!]));
    for (const instance of topology.instances) expect([instance.name, served[instance.name]! > 0]).toEqual([instance.name, true]);
    // Every request reached a gateway: the two served the 32 between them.
    expect(served["gateway-1"]! + served["gateway-2"]!).toBeGreaterThanOrEqual(32);
    expect(SUBGRAPH_TIERS.length * 2 + 2).toBe(topology.instances.length);
  });
});

describe("under 50 clients of traffic", () => {
  let traffic: DrillTraffic;

  beforeAll(async () => {
    traffic = await DrillTraffic.create(topology);
    traffic.start();
    // Every client's first write done (its user known to the database), so what follows is steady traffic.
    await traffic.awaitWrites(100, { forget: true });
  }, 180_000);

  afterAll(async () => {
    await traffic?.stop();
  }, 60_000);

  test("an instance restarted (SIGTERM, drain, exit, start) costs no request", async () => {
    const before = traffic.snapshot();
    const instance = topology.instance("conversations", 2);
    const exit = await instance.kill("SIGTERM");
    expect(exit).toEqual({ code: 0, signal: null });
    await instance.start();
    const phase = countsBetween(before, traffic.snapshot());
    expect(phase.reads).toBeGreaterThan(0);
    expect(phase.acknowledgedWrites).toBeGreaterThan(0);
    expect({ failedReads: phase.failedReads, retryableWriteFailures: phase.retryableWriteFailures, abandonedWrites: phase.abandonedWrites, nonRetryable: phase.nonRetryableWriteFailures, samples: traffic.samples }).toEqual({
      failedReads: 0,
      retryableWriteFailures: 0,
      abandonedWrites: 0,
      nonRetryable: 0,
      samples: [],
    });
  }, 180_000);

  test("a SIGKILLed gateway, conversations and search instance are taken out by the health check; no read fails, no acknowledged write is lost", async () => {
    const phases = await killEachTier(topology, traffic, { tiers: ["gateway", "conversations", "search"], restart: false, holdMs: 1_500 });
    const servers = await topology.servers();
    for (const name of ["gateway-1", "conversations-1", "search-1"]) expect([name, servers.find((s) => s.server === name)!.status]).toEqual([name, "DOWN"]);
    // Traffic went on through the other instances: reads were answered while each was gone, and writes are acknowledged after.
    for (const phase of phases) expect([phase.action, phase.reads > 0]).toEqual([phase.action, true]);
    await traffic.awaitWrites(25);
    const total = await traffic.stop();
    const sum = (key: "failedReads" | "abandonedWrites" | "nonRetryableWriteFailures") => phases.reduce((n, phase) => n + phase[key], 0);
    expect({ failedReads: sum("failedReads"), abandonedWrites: sum("abandonedWrites"), nonRetryable: sum("nonRetryableWriteFailures"), samples: traffic.samples }).toEqual({
      failedReads: 0,
      abandonedWrites: 0,
      nonRetryable: 0,
      samples: expect.any(Array),
    });
    expect(total.acknowledgedWrites).toBeGreaterThan(0);
    const lost = await traffic.lostWrites(topology.databaseUrl);
    expect(lost.checked).toBe(traffic.acknowledged.conversations.length + traffic.acknowledged.messages.length);
    expect({ conversations: lost.conversations, messages: lost.messages }).toEqual({ conversations: 0, messages: 0 });
  }, 180_000);
});

describe("a database failover", () => {
  test("with the primary stopped and the standby promoted, writes succeed again with no process restarted, and no acknowledged write is lost", async () => {
    const traffic = await DrillTraffic.create(topology);
    traffic.start();
    try {
      await traffic.awaitWrites(25, { forget: true });
      const pids = topology.instances.filter((i) => i.running()).map((i) => [i.name, i.pid()]);
      // Returns once a probe write through the gateway has succeeded on the promoted standby.
      const phase = await failOver(topology, traffic);
      expect(phase.writesBackMs).toBeGreaterThan(0);
      await traffic.awaitWrites(25);
      await traffic.stop();
      // The old primary is fenced out of HAProxy's PostgreSQL listener; the new one is the standby.
      const servers = await topology.servers();
      expect(servers.find((s) => s.backend === "postgres" && s.server === "primary")!.status).toBe("MAINT");
      expect(await topology.postgres.psql(topology.postgres.standby, "SELECT pg_is_in_recovery()")).toBe("f");
      // The same processes throughout; one that exited says why in the failure.
      const gone = topology.instances.filter((i) => pids.some(([name]) => name === i.name) && !i.running());
      if (gone.length > 0) console.error(gone.map((i) => `${i.name} exited during the failover:\n${i.output().slice(-6000)}`).join("\n\n"));
      expect(topology.instances.filter((i) => i.running()).map((i) => [i.name, i.pid()])).toEqual(pids);
      const total = traffic.snapshot();
      expect({ abandoned: total.abandonedWrites, nonRetryable: total.nonRetryableWriteFailures }).toEqual({ abandoned: 0, nonRetryable: 0 });
      const lost = await traffic.lostWrites(topology.databaseUrl);
      expect(lost.checked).toBeGreaterThanOrEqual(50);
      expect({ conversations: lost.conversations, messages: lost.messages }).toEqual({ conversations: 0, messages: 0 });
    } finally {
      await traffic.stop();
    }
  }, 180_000);
});
