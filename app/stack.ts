/**
 * The whole product in one process, as `npm start` runs it: every subgraph on its own port,
 * the supergraph composed from supergraph.yaml with their real addresses, and the gateway in
 * front. Production runs the same pieces as separate processes (start:subgraph, start:gateway).
 * It lives in app/, above lib/, subgraphs/ and gateway/, because it is the one place that
 * needs all of them.
 */
import { composeFromConfig } from "../lib/composition/compose.js";
import { readSupergraphConfig } from "../lib/composition/supergraph-config.js";
import type { Config } from "../lib/config.js";
import type { Database } from "../lib/database/connect.js";
import { startSubgraph, type RunningSubgraph } from "../lib/graphql/subgraph-server.js";
import type { Logger } from "../lib/logger.js";
import { createEmbedder } from "../lib/retrieval/embeddings/index.js";
import { gatewayOptionsFrom, startGateway, type GatewayOptions, type RunningGateway } from "../gateway/server.js";
import { SUBGRAPHS } from "../subgraphs/index.js";
import type { AnswerModel } from "../lib/language-models/language-model.js";

export interface RunningStack {
  gateway: RunningGateway;
  subgraphs: RunningSubgraph[];
  supergraphSdl: string;
  stop(): Promise<void>;
}

export interface StackOptions {
  config: Config;
  database: Database;
  logger: Logger;
  gateway?: Partial<Pick<GatewayOptions, "graphiqlHeaders" | "graphiqlQuery" | "deduplicateInflightRequests" | "runtimeLogLevel" | "mcp" | "webApp">>;
  /** The language model behind `answer` (tests pass a double of the AnswerModel interface); extractive answers without one. */
  answerModel?: AnswerModel;
}

export async function startStack({ config, database, logger, gateway: gatewayExtras, answerModel }: StackOptions): Promise<RunningStack> {
  const subgraphs: RunningSubgraph[] = [];
  // One embedder for the subgraphs that embed (search, knowledge-base): one model in memory.
  const embedder = createEmbedder(config.search, database);
  try {
    for (const [name, define] of Object.entries(SUBGRAPHS)) {
      const endpoint = config.subgraphs[name as keyof Config["subgraphs"]];
      subgraphs.push(
        await startSubgraph(await define({ database, config, logger: logger.child(name), embedder, ...(answerModel ? { answerModel } : {}) }), {
          host: config.host,
          port: endpoint.port,
          auth: config.auth,
          production: config.production,
          drainTimeoutMs: config.shutdown.drainTimeoutMs,
          metricsPublic: config.metrics.public,
          tracing: config.tracing,
          operationLimits: config.operationLimits,
          idempotencyKeyTtlSeconds: config.idempotency.keyTtlSeconds,
          readiness: config.readiness,
          rateLimit: config.rateLimit,
          logger: logger.child(name),
        }),
      );
    }
    // Compose with the addresses the subgraphs actually got (a port of 0 picks a free one).
    const env = Object.fromEntries(subgraphs.map((subgraph) => [`${subgraph.name.toUpperCase().replace(/-/g, "_")}_URL`, subgraph.url.replace("localhost", "127.0.0.1")]));
    const supergraphSdl = await composeFromConfig(readSupergraphConfig(config.gateway.supergraphConfigPath, env));
    const gateway = await startGateway({
      ...gatewayOptionsFrom(config),
      supergraphSdl,
      logger: logger.child("gateway"),
      // e.g. `gateway: { mcp: null }` turns the MCP server off.
      ...gatewayExtras,
    });
    return {
      gateway,
      subgraphs,
      supergraphSdl,
      /**
       * The gateway drains first: its in-flight requests are still calling the subgraphs, which
       * keep serving until it is done. Then the subgraphs drain and stop their background work;
       * the caller closes the database last.
       */
      async stop() {
        await gateway.stop();
        await Promise.all(subgraphs.map((subgraph) => subgraph.stop()));
      },
    };
  } catch (error) {
    await Promise.allSettled(subgraphs.map((subgraph) => subgraph.stop()));
    throw error;
  }
}
