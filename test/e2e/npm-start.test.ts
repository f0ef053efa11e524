/**
 * `npm start` as a user runs it: a real child process on a fresh data folder. It must migrate,
 * seed, print a URL, a dev token and a query that works; refuse a second process on the same
 * embedded database; drain and exit on SIGTERM; and keep its data across restarts. It runs
 * compiled JavaScript: no thread of it loads a TypeScript module or the tsx loader.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { graphql } from "../support/graphql.js";
import { documentFound, exitOf, spawnStart, start as startProcess, type StartOptions } from "../support/npm-start.js";

const MODULE_OBSERVER = new URL("../support/module-observer.mjs", import.meta.url).pathname;
let dataRoot: string;
let postgres: TestDatabase | null = null;

/** `observer`: a file where test/support/module-observer.mjs records every module each thread loads. */
function options(observer?: string): StartOptions {
  return {
    dataDir: path.join(dataRoot, "pglite"),
    databaseUrl: postgres?.url ?? null,
    conversations: 40,
    ...(observer ? { env: { NODE_OPTIONS: `--import=${MODULE_OBSERVER}`, MODULE_OBSERVER_FILE: observer } } : {}),
  };
}

// A bound on a hung start, not a timing assertion: at load 20 on 2 cores a first start took over 90 s.
const start = (observer?: string) => startProcess({ ...options(observer), upWithinMs: 300_000 });

beforeAll(async () => {
  dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), "npm-start-"));
  if (process.env.DATABASE_URL) postgres = await createTestDatabase({ migrate: false });
});

afterAll(async () => {
  await postgres?.dispose();
  fs.rmSync(dataRoot, { recursive: true, force: true });
});

describe("npm start", () => {
  it("comes up on a fresh database, serves the printed example, and drains on SIGTERM", async () => {
    const observed = path.join(dataRoot, "modules.jsonl");
    const first = await start(observed);
    try {
      expect(first.output).toMatch(/seeded Demo Organization: 40 conversations, \d+ messages, \d+ documents/);
      expect(first.token).toBeTruthy();
      // The printed curl command's body, sent as printed.
      const body = JSON.parse(/-d '([^']+)'/.exec(first.output)![1]!) as { query: string };
      const response = await graphql(first.url, body.query, {}, { token: first.token });
      expect(response.errors).toBeUndefined();
      expect(response.data!.conversations.totalCount).toBe(40);
      expect(response.data!.conversations.nodes).toHaveLength(5);
      expect(response.data!.conversations.nodes[0].title.length).toBeGreaterThan(2);
      // A first search on a demo topic finds the demo documents beside the conversations.
      expect(await documentFound(first.url, first.token, "deadlock detected in the order service", "postgres-deadlocks-runbook.md")).toContain("postgres-deadlocks-runbook.md");

      // Compiled code everywhere: the demo documents were parsed on worker threads (they are
      // searchable), and neither the main thread nor any worker loaded TypeScript or tsx.
      const lines = fs.readFileSync(observed, "utf8").trim().split("\n").map((line) => JSON.parse(line) as { thread: number; execArgv?: string[]; url?: string });
      const threads = lines.filter((line) => line.execArgv);
      const urls = lines.flatMap((line) => (line.url ? [line.url] : []));
      expect(threads.some((line) => line.thread !== 0)).toBe(true);
      expect(urls).toContainEqual(expect.stringMatching(/\/dist\/scripts\/start\.js$/));
      expect(urls).toContainEqual(expect.stringMatching(/\/dist\/lib\/documents\/extract-text-worker\.js$/));
      expect(urls.filter((url) => /\.[cm]?ts$/.test(url) || /\/node_modules\/tsx\//.test(url))).toEqual([]);
      expect(threads.flatMap((line) => line.execArgv!).filter((arg) => /tsx/.test(arg))).toEqual([]);

      if (!postgres) {
        // A second process on the same embedded database must fail loudly, not corrupt it.
        const second = spawnStart(options());
        let secondOutput = "";
        second.stderr!.on("data", (chunk: Buffer) => (secondOutput += chunk.toString()));
        const { code } = await exitOf(second);
        expect(code).toBe(1);
        expect(secondOutput).toMatch(/already open in another process/);
        expect(secondOutput).not.toMatch(/^\s+at /m);
      }
    } finally {
      const exited = exitOf(first.child);
      first.child.kill("SIGTERM");
      // 0 means our drain finished: past its deadline the process exits with 1 instead.
      expect((await exited).code).toBe(0);
    }

    // Data survives a restart, and the demo organization is not seeded twice.
    const again = await start();
    try {
      expect(again.output).not.toMatch(/seeded Demo Organization/);
      const response = await graphql(again.url, `{ conversations(first: 1) { totalCount } }`, {}, { token: again.token });
      expect(response.data!.conversations.totalCount).toBe(40);
    } finally {
      const exited = exitOf(again.child);
      again.child.kill("SIGINT");
      expect((await exited).code).toBe(0);
    }
  }, 900_000);
});
