/**
 * `npm run start:gateway -- [--supergraph supergraph.graphql] [--port 4000]`: the gateway
 * alone, serving a composed supergraph file (from `npm run compose` or any other composer).
 * Flags win over SUPERGRAPH_PATH and GATEWAY_PORT.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { gatewayOptionsFrom, startGateway } from "../gateway/server.js";
import { WEB_APP_DIRECTORY } from "../gateway/web-app.js";
import { ConfigError, loadConfig } from "../lib/config.js";
import { createLogger } from "../lib/logger.js";
import { exitOnSignals, runMain } from "../lib/shutdown.js";

runMain(async () => {
  const { values } = parseArgs({
    options: { supergraph: { type: "string" }, port: { type: "string" }, planner: { type: "string" } },
  });
  const config = loadConfig({
    ...process.env,
    ...(values.port !== undefined ? { GATEWAY_PORT: values.port } : {}),
    ...(values.planner !== undefined ? { QUERY_PLANNER: values.planner } : {}),
  });
  const supergraphPath = values.supergraph ? path.resolve(values.supergraph) : config.gateway.supergraphPath;
  if (!fs.existsSync(supergraphPath)) {
    throw new ConfigError("--supergraph / SUPERGRAPH_PATH", `points to ${supergraphPath}, which does not exist (run npm run compose first)`);
  }
  const logger = createLogger("gateway", config.logLevel);
  const gateway = await startGateway({ ...gatewayOptionsFrom(config), supergraphSdl: fs.readFileSync(supergraphPath, "utf8"), logger, webApp: { directory: WEB_APP_DIRECTORY } });
  exitOnSignals(() => gateway.stop(), logger, { drainTimeoutMs: config.shutdown.drainTimeoutMs });
});
