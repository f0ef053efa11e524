/**
 * `node --import tsx bench/response-cache-redis.ts [redis-url]`: what a hit of the gateway's
 * response cache costs when its organizations' write generations live in Redis (several gateways,
 * REDIS_URL) against in process (one gateway), and what a shared answer store would add on top.
 *
 * The same warm subgraphs, the same hot searches (one connection: latency, not throughput), the
 * two gateway configurations measured in turn, twice each (ABAB), so drift on a shared machine
 * shows as disagreement between the two rounds. Every measured request is checked to be a hit
 * (no subgraph call during the run). The shared-store estimate times what such a store does on
 * every hit beyond the generation read: a GET of a real cached answer from Redis and its JSON
 * parse. The generation read alone (SharedGenerations.current, one script call) is timed the same
 * way, outside the gateway. Adds its run to bench/results/gateway-response-cache-redis.json.
 */
import fs from "node:fs";
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { SharedGenerations } from "../gateway/response-cache-generations.js";
import { silentLogger } from "../lib/logger.js";
import { FeatureHashingEmbedder } from "../lib/retrieval/embeddings/hashing-embedder.js";
import { loadCorpus } from "./corpus.js";
import { openBenchDatabase } from "./database.js";
import { graphqlBody, runLoad, stopLoadGenerator, warmUp, type LoadResult } from "./load.js";
import { LATENCY_SEARCH } from "./queries.js";
import { benchConfig, benchToken, startBenchGateway, startBenchSubgraphs } from "./stack.js";
import { round, summarizeLatencies } from "./stats.js";

const CONVERSATIONS = 2_000;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const HOT_QUERIES = 8;
const redisUrl = process.argv[2] ?? process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const log = (line: string) => console.log(line);
/** Every Redis key this run writes starts with this; they are removed at the end. */
const RUN_PREFIX = `bench-response-cache-${randomUUID()}`;

const bench = await openBenchDatabase("pglite", { conversations: CONVERSATIONS, postgresUrl: "", poolSize: 4 });
const rounds: { mode: string; round: number; result: LoadResult; subgraphCallsPerRequest: number }[] = [];
let generationRead: ReturnType<typeof summarizeLatencies> | null = null;
let sharedStore: { answerBytes: number; getAndParseMs: ReturnType<typeof summarizeLatencies>; setMs: ReturnType<typeof summarizeLatencies> } | null = null;
try {
  await loadCorpus(bench.database, CONVERSATIONS, new FeatureHashingEmbedder(), log);
  const subgraphs = await startBenchSubgraphs(bench.database, benchConfig({ cacheTtlSeconds: 600 }));
  try {
    const token = await benchToken(subgraphs.config);
    const titles = await bench.database.prisma.$queryRaw<{ title: string }[]>`SELECT title FROM conversations ORDER BY id LIMIT ${HOT_QUERIES}`;
    const bodies = titles.map(({ title }) => graphqlBody(LATENCY_SEARCH, { input: { query: title.split(" ").slice(0, 3).join(" "), alpha: 0.5, limit: 20 } }));
    const modes = { "in process": null, "generations in Redis": { url: redisUrl, keyPrefix: `${RUN_PREFIX}:` } };
    for (const round_ of [1, 2]) {
      for (const [mode, redis] of Object.entries(modes)) {
        const gateway = await startBenchGateway(subgraphs, { queryPlanner: "rust", deduplicateInflightRequests: true, responseCacheTtlSeconds: 600, responseCacheRedis: redis });
        try {
          const load = { url: gateway.url, token, bodies, connections: 1, durationSeconds: SECONDS };
          await warmUp(load, 2);
          const before = subgraphs.searchServer.operations.count + subgraphs.conversationsServer.operations.count;
          const result = await runLoad(load);
          const calls = subgraphs.searchServer.operations.count + subgraphs.conversationsServer.operations.count - before;
          rounds.push({ mode, round: round_, result, subgraphCallsPerRequest: round(calls / Math.max(1, result.completed), 4) });
          log(`${mode}, round ${round_}: p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, ${result.serverCpuMsPerRequest} ms CPU/request, ${result.requestsPerSecond} req/s, ${calls} subgraph calls, ${result.errors.total} errors`);
          if (!sharedStore && redis) {
            // One real cached answer, as a shared store would keep it.
            const response = await fetch(gateway.url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: bodies[0] });
            sharedStore = await measureSharedStore(JSON.stringify(await response.json()));
            generationRead = await measureGenerationRead();
            log(`generation read alone (one script call): p50 ${generationRead.p50} ms, p99 ${generationRead.p99} ms`);
            log(`shared store, per hit beyond the generation read: GET + JSON.parse of a ${sharedStore.answerBytes}-byte answer p50 ${sharedStore.getAndParseMs.p50} ms, p99 ${sharedStore.getAndParseMs.p99} ms; SET on a miss p50 ${sharedStore.setMs.p50} ms`);
          }
        } finally {
          await gateway.stop();
        }
      }
    }
  } finally {
    await subgraphs.stop();
  }
} finally {
  await stopLoadGenerator();
  await bench.dispose();
  const redis = new Redis(redisUrl);
  const keys = await redis.keys(`${RUN_PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
}

const p50 = (mode: string) => rounds.filter((entry) => entry.mode === mode).map((entry) => entry.result.latencyMs.p50);
const cpu = (mode: string) => rounds.filter((entry) => entry.mode === mode).map((entry) => entry.result.serverCpuMsPerRequest);
const report = {
  measuredAt: new Date().toISOString(),
  conditions: {
    corpus: `${CONVERSATIONS} generated conversations, PGlite in memory, feature-hashing embedder`,
    load: `autocannon, 1 connection, ${SECONDS} s per round, ${HOT_QUERIES} hot searches (limit 20, alpha 0.5, titles), every one a hit after warm-up`,
    redis: "local Redis on loopback",
    machine: "2 cores shared with other engineers' test runs (load average 6-10 while measuring)",
  },
  rounds: rounds.map(({ mode, round: r, result, subgraphCallsPerRequest }) => ({ mode, round: r, latencyMs: result.latencyMs, requestsPerSecond: result.requestsPerSecond, serverCpuMsPerRequest: result.serverCpuMsPerRequest, subgraphCallsPerRequest, errors: result.errors.total })),
  summary: {
    inProcessP50Ms: p50("in process"),
    redisGenerationsP50Ms: p50("generations in Redis"),
    inProcessCpuMsPerRequest: cpu("in process"),
    redisGenerationsCpuMsPerRequest: cpu("generations in Redis"),
  },
  generationReadMs: generationRead,
  sharedStoreEstimate: sharedStore,
};
// Each run is added to the earlier ones: on a shared machine one run says little.
const resultsFile = new URL("./results/gateway-response-cache-redis.json", import.meta.url);
const earlier = fs.existsSync(resultsFile) ? (JSON.parse(fs.readFileSync(resultsFile, "utf8")) as { runs: unknown[] }).runs : [];
fs.writeFileSync(resultsFile, `${JSON.stringify({ runs: [...earlier, report] }, null, 2)}\n`);
log(JSON.stringify(report.summary));

async function measureGenerationRead() {
  const generations = new SharedGenerations(redisUrl, `${RUN_PREFIX}-read:`, 600, silentLogger, () => {});
  try {
    await generations.ready();
    const reads: number[] = [];
    for (let i = 0; i < 2_000; i++) {
      const started = performance.now();
      if ((await generations.current("bench-org")) === null) throw new Error("generation read failed: Redis too slow or down");
      reads.push(performance.now() - started);
    }
    return summarizeLatencies(reads);
  } finally {
    await generations.close();
  }
}

async function measureSharedStore(answer: string) {
  const redis = new Redis(redisUrl);
  const key = `${RUN_PREFIX}-shared-store`;
  try {
    const gets: number[] = [];
    const sets: number[] = [];
    for (let i = 0; i < 2_000; i++) {
      let started = performance.now();
      await redis.set(key, answer, "EX", 60);
      sets.push(performance.now() - started);
      started = performance.now();
      JSON.parse((await redis.get(key))!);
      gets.push(performance.now() - started);
    }
    return { answerBytes: answer.length, getAndParseMs: summarizeLatencies(gets), setMs: summarizeLatencies(sets) };
  } finally {
    await redis.del(key);
    redis.disconnect();
  }
}
