/**
 * `npm run start:subgraph -- <name>`: one subgraph alone in its own process, as production
 * runs it (usually against PostgreSQL through DATABASE_URL). Migrations run first; they take
 * Prisma's advisory lock, so several processes starting at once apply them exactly once.
 */
import { ConfigError, loadConfig } from "../lib/config.js";
import { openDatabase } from "../lib/database/connect.js";
import { migrate } from "../lib/database/migrate.js";
import { startSubgraph } from "../lib/graphql/subgraph-server.js";
import { createLogger } from "../lib/logger.js";
import { exitOnSignals, runMain } from "../lib/shutdown.js";
import { closeWorkerPools } from "../lib/workers/pool.js";
import { isSubgraphName, SUBGRAPHS } from "../subgraphs/index.js";

runMain(async () => {
  const name = process.argv[2];
  if (!name || !isSubgraphName(name)) {
    throw new ConfigError("subgraph name", `must be one of: ${Object.keys(SUBGRAPHS).join(", ")} (usage: npm run start:subgraph -- <name>); got ${name ? `"${name}"` : "nothing"}`);
  }
  const config = loadConfig();
  const logger = createLogger(name, config.logLevel);
  const database = await openDatabase({ ...config.database, logger: logger.child("database") });
  logger.info(`database: ${database.location}`);
  await migrate(database);
  const subgraph = await startSubgraph(await SUBGRAPHS[name]({ database, config, logger }), {
    host: config.host,
    port: config.subgraphs[name].port,
    auth: config.auth,
    production: config.production,
    drainTimeoutMs: config.shutdown.drainTimeoutMs,
    metricsPublic: config.metrics.public,
    tracing: config.tracing,
    operationLimits: config.operationLimits,
    idempotencyKeyTtlSeconds: config.idempotency.keyTtlSeconds,
    readiness: config.readiness,
    rateLimit: config.rateLimit,
    logger,
  });
  exitOnSignals(
    async () => {
      await subgraph.stop();
      await closeWorkerPools();
      await database.close();
    },
    logger,
    { drainTimeoutMs: config.shutdown.drainTimeoutMs },
  );
});
