/**
 * No dependency may leave a built-in prototype slow (test/support/builtin-prototypes.mjs says
 * why): the server's modules are imported in a process of their own, as `npm start` and the
 * subgraph and gateway processes import them, and the modules they import lazily.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "@jest/globals";

/** What scripts/start*.ts import (they start servers when imported themselves), and what is imported later. */
const SERVER_MODULES = [
  "app/stack.ts",
  "app/demo-seed.ts",
  "gateway/server.ts",
  "gateway/web-app.ts",
  "subgraphs/index.ts",
  "lib/database/connect.ts",
  "lib/database/migrate.ts",
  "lib/graphql/subgraph-server.ts",
  "lib/workers/pool.ts",
  // Imported only when tracing is on (lib/observability/tracing.ts, gateway/tracing.ts).
  "@opentelemetry/sdk-trace-base",
  "@opentelemetry/exporter-trace-otlp-http",
  "@opentelemetry/context-async-hooks",
  "@graphql-hive/plugin-opentelemetry",
];

describe("built-in prototypes", () => {
  it("stay in V8's fast mode once every server module is loaded", () => {
    const probe = spawnSync(process.execPath, ["--allow-natives-syntax", "--import", "tsx", "test/support/builtin-prototypes.mjs", ...SERVER_MODULES], {
      encoding: "utf8",
      // Jest's NODE_OPTIONS (VM modules) are for Jest, not for this process.
      env: { ...process.env, NODE_OPTIONS: "" },
      timeout: 60_000,
    });
    expect(probe.status).toBe(0);
    expect(JSON.parse(probe.stdout.trim().split("\n").at(-1)!)).toEqual([]);
  }, 90_000);
});
