/**
 * The product's pieces as the benchmarks run them: both subgraphs on their own ports (port 0:
 * the OS picks free ones) and, in front, as many gateways as a scenario needs, one after the
 * other, over the same running subgraphs. app/stack.ts starts subgraphs and gateway together;
 * here the subgraphs stay up while the gateway's planner and in-flight merging change, so every
 * configuration is measured against the same warm subgraphs, and the search subgraph's service
 * object stays reachable for in-process latency measurements.
 */
import { fileURLToPath } from "node:url";
import { composeFromConfig } from "../lib/composition/compose.js";
import { readSupergraphConfig } from "../lib/composition/supergraph-config.js";
import { loadConfig, type Config, type QueryPlanner } from "../lib/config.js";
import type { Database } from "../lib/database/connect.js";
import { startSubgraph, type RunningSubgraph } from "../lib/graphql/subgraph-server.js";
import type { RateLimitSettings } from "../lib/graphql/rate-limit.js";
import { silentLogger, type Logger } from "../lib/logger.js";
import { signToken } from "../lib/tenancy/token.js";
import { startGateway, type RunningGateway } from "../gateway/server.js";
import { conversationsSubgraph } from "../subgraphs/conversations/index.js";
import { searchSubgraph, type SearchSubgraph } from "../subgraphs/search/index.js";
import { BENCH_TENANT } from "./corpus.js";
import { round } from "./stats.js";

const SUPERGRAPH_CONFIG = fileURLToPath(new URL("../supergraph.yaml", import.meta.url));
const BENCH_JWT_SECRET = "benchmark-secret-long-enough-for-hs256-0123456789";

export interface BenchSettings {
  /** Search result cache TTL; 0 turns the cache off so every search does real work. */
  cacheTtlSeconds: number;
  embedder?: "hashing" | "local";
  queryPlanner?: QueryPlanner;
  /** Each provider's time budget (the product's default is 2,000 ms). */
  providerTimeoutMs?: number;
  /** The gateway's budget for one subgraph call (the product's default is 10,000 ms). */
  upstreamTimeoutMs?: number;
}

/**
 * The configuration every benchmark runs with, built from explicit values rather than the
 * caller's environment: a stray REDIS_URL or WEAVIATE_URL must not change what is measured.
 * The background indexer is off: the corpus is indexed before measuring and nothing writes
 * during a run, so its polling would only add noise.
 */
export function benchConfig(settings: BenchSettings): Config {
  return loadConfig({
    HOST: "127.0.0.1",
    GATEWAY_PORT: "0",
    CONVERSATIONS_PORT: "0",
    SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0",
    JWT_SECRET: BENCH_JWT_SECRET,
    SUPERGRAPH_CONFIG,
    EMBEDDER: settings.embedder ?? "hashing",
    SEARCH_CACHE_TTL_SECONDS: String(settings.cacheTtlSeconds),
    SEARCH_INDEXER: "false",
    ...(settings.providerTimeoutMs ? { SEARCH_PROVIDER_TIMEOUT_MS: String(settings.providerTimeoutMs) } : {}),
    ...(settings.upstreamTimeoutMs ? { UPSTREAM_TIMEOUT_MS: String(settings.upstreamTimeoutMs) } : {}),
    QUERY_PLANNER: settings.queryPlanner ?? "rust",
    DEMO_SEED: "false",
    LOG_LEVEL: "error",
  });
}

export interface BenchSubgraphs {
  config: Config;
  search: SearchSubgraph;
  searchServer: RunningSubgraph;
  conversationsServer: RunningSubgraph;
  supergraphSdl: string;
  /** What the subgraphs logged as warnings or errors while running. */
  warnings: ServerWarnings;
  stop(): Promise<void>;
}

/**
 * The conversations and search subgraphs in this process. `rateLimit` charges calls that reach
 * them without the gateway (as app/stack.ts does with the configured budgets); the scenarios that
 * only measure the gateway's path leave it out.
 */
export async function startBenchSubgraphs(database: Database, config: Config, rateLimit: RateLimitSettings | null = null): Promise<BenchSubgraphs> {
  const warnings: ServerWarnings = { count: 0, samples: [] };
  const logger = collectingLogger(warnings);
  const serverOptions = { host: config.host, port: 0, auth: config.auth, production: false, logger, rateLimit };
  const search = await searchSubgraph({ database, config, logger: logger.child("search") });
  const conversationsServer = await startSubgraph(conversationsSubgraph(database), serverOptions);
  let searchServer: RunningSubgraph;
  try {
    searchServer = await startSubgraph(search, serverOptions);
  } catch (error) {
    await conversationsServer.stop();
    throw error;
  }
  try {
    // The same composition app/stack.ts runs, with the addresses the subgraphs actually got.
    const supergraphSdl = await composeFromConfig(
      readSupergraphConfig(config.gateway.supergraphConfigPath, { CONVERSATIONS_URL: conversationsServer.url, SEARCH_URL: searchServer.url }),
    );
    return {
      config,
      search,
      searchServer,
      conversationsServer,
      supergraphSdl,
      warnings,
      async stop() {
        await Promise.all([searchServer.stop(), conversationsServer.stop()]);
      },
    };
  } catch (error) {
    await Promise.all([searchServer.stop(), conversationsServer.stop()]);
    throw error;
  }
}

export interface GatewaySettings {
  queryPlanner: QueryPlanner;
  /** Hive merges identical in-flight subgraph requests unless this is false. */
  deduplicateInflightRequests: boolean;
  /** The gateway's own response cache for `search` (off unless set; see gateway/response-cache.ts). */
  responseCacheTtlSeconds?: number;
  /** Its organizations' write generations in this Redis, as with REDIS_URL (absent: in process). */
  responseCacheRedis?: { url: string; keyPrefix: string } | null;
}

export function startBenchGateway(subgraphs: BenchSubgraphs, settings: GatewaySettings): Promise<RunningGateway> {
  const { config } = subgraphs;
  return startGateway({
    supergraphSdl: subgraphs.supergraphSdl,
    host: config.host,
    port: 0,
    queryPlanner: settings.queryPlanner,
    corsOrigins: config.gateway.corsOrigins,
    production: false,
    upstreamTimeoutMs: config.gateway.upstreamTimeoutMs,
    logger: silentLogger,
    runtimeLogLevel: false,
    deduplicateInflightRequests: settings.deduplicateInflightRequests,
    auth: config.auth,
    responseCache: settings.responseCacheTtlSeconds ? { ttlSeconds: settings.responseCacheTtlSeconds, redis: settings.responseCacheRedis ?? null } : null,
  });
}

/** A token for the benchmark tenant, signed with the benchmark configuration's secret. */
export function benchToken(config: Config): Promise<string> {
  return signToken({ organizationId: BENCH_TENANT.organizationId, userId: BENCH_TENANT.userId, teamIds: BENCH_TENANT.teamIds, name: "Benchmark" }, config.auth, "2h");
}

/**
 * Waits until the servers and the database are idle again, and says how long that took. A
 * duration-bound load run stops with requests still in flight, and work the clients gave up on
 * may still be running: follow-up calls (an `_entities` fetch after a search returns), query-log
 * writes, and SQL whose provider already timed out (nothing cancels it). Left alone, that
 * backlog would land in the next measurement.
 */
export async function settle(subgraphs: BenchSubgraphs, database: Database, quietMs = 300, maxMs = 120_000): Promise<number> {
  const started = performance.now();
  const total = () => subgraphs.searchServer.operations.count + subgraphs.conversationsServer.operations.count;
  let last = total();
  let quietSince = performance.now();
  while (performance.now() - started < maxMs) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = total();
    if (now !== last) {
      last = now;
      quietSince = performance.now();
    } else if (performance.now() - quietSince >= quietMs) {
      break;
    }
  }
  await subgraphs.search.queryLog.flush();
  await quiesceDatabase(database, Math.max(0, maxMs - (performance.now() - started)));
  return round((performance.now() - started) / 1000, 2);
}

/**
 * Returns once the database has no statement of ours running: on PostgreSQL, when
 * pg_stat_activity shows none active in this database; on PGlite, whose one connection runs
 * statements in turn, when a trivial query gets its turn.
 */
export async function quiesceDatabase(database: Database, maxMs: number): Promise<void> {
  if (database.kind === "pglite") {
    await database.prisma.$queryRaw`SELECT 1`;
    return;
  }
  const deadline = performance.now() + maxMs;
  while (performance.now() < deadline) {
    const [row] = await database.withSession((session) =>
      session.query<{ active: number }>(
        `SELECT count(*)::int AS active FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()`,
      ),
    );
    if ((row?.active ?? 0) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Warnings and errors the servers logged (a failed query-log write, an unexpected error): counted, not printed. */
export interface ServerWarnings {
  count: number;
  /** The first few messages. */
  samples: string[];
}

function collectingLogger(warnings: ServerWarnings, name = "bench"): Logger {
  const note = (message: string) => {
    warnings.count += 1;
    if (warnings.samples.length < 5) warnings.samples.push(`[${name}] ${message.slice(0, 500)}`);
  };
  return {
    debug() {},
    info() {},
    warn: note,
    error: (message, error) => note(error instanceof Error ? `${message}: ${error.message}` : message),
    child: (child) => collectingLogger(warnings, `${name}:${child}`),
  };
}
