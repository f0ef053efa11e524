/**
 * `npm start` as a user runs it: a real child process on a fresh data folder. It must migrate,
 * seed, print a URL, a dev token and a query that works; refuse a second process on the same
 * embedded database; drain and exit on SIGTERM; and keep its data across restarts.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { graphql } from "../support/graphql.js";
import { documentFound, exitOf, spawnStart, start as startProcess, type StartOptions } from "../support/npm-start.js";

let dataRoot: string;
let postgres: TestDatabase | null = null;

function options(): StartOptions {
  return { dataDir: path.join(dataRoot, "pglite"), databaseUrl: postgres?.url ?? null, conversations: 40 };
}

const start = () => startProcess(options());

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
    const first = await start();
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
  }, 240_000);
});
