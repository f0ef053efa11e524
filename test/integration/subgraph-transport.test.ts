/**
 * The gateway's subgraph HTTP transport (gateway/subgraph-transport.ts) leaves no abort listener
 * behind a request once its answer is in: executor-http links every request to one long-lived
 * signal per subgraph, and without our cleanup each request's listener stayed on it until a full
 * garbage collection (200 requests here left 200 listeners on it). The requests run in a child
 * process (test/support/subgraph-transport-listeners.ts) that keeps every signal reachable, so
 * collection cannot hide a listener the transport leaves.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "@jest/globals";

const run = promisify(execFile);
const ROOT = new URL("../..", import.meta.url).pathname;

describe("the gateway's subgraph transport", () => {
  it("removes each request's abort listener from the shared dispose signal when the answer is in, and keeps the connection alive", async () => {
    const { stdout } = await run(path.join(ROOT, "node_modules/.bin/tsx"), ["test/support/subgraph-transport-listeners.ts"], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: "", REQUESTS: "200" },
    });
    const outcome = JSON.parse(stdout.trim().split("\n").at(-1)!) as { answered: number; mostListenersAfterAnswer: number; connections: number; warnings: unknown[] };
    expect(outcome.answered).toBe(200);
    // One: the listener the caller's own linked signal (upstream timeout and client request) keeps on each of its sources.
    expect(outcome.mostListenersAfterAnswer).toBeLessThanOrEqual(1);
    // Aborting the answered request's signal must not cost the keep-alive connection.
    expect(outcome.connections).toBe(1);
    expect(outcome.warnings).toEqual([]);
  }, 120_000);
});
