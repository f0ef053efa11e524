/**
 * `npm start` as a user runs it: a real child process on a fresh data folder. It must migrate,
 * seed, print a URL, a dev token and a query that works; refuse a second process on the same
 * embedded database; drain and exit on SIGTERM; and keep its data across restarts. It runs
 * compiled JavaScript: no thread of it loads a TypeScript module or the tsx loader.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { graphql } from "../support/graphql.js";

/**
 * What `npm start` runs, read from package.json so that this test cannot drift from it: one Node
 * process (no wrapper), so signals reach our handler directly.
 */
const START = ((): readonly [string, string[]] => {
  const script = (JSON.parse(fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> }).scripts.start!;
  const [program, ...args] = script.split(/\s+/);
  if (program !== "node") throw new Error(`scripts.start runs ${program}, not node: this test spawns node itself`);
  return [process.execPath, args];
})();
const MODULE_OBSERVER = new URL("../support/module-observer.mjs", import.meta.url).pathname;
let dataRoot: string;
let postgres: TestDatabase | null = null;

interface Started {
  child: ChildProcess;
  output: string;
  url: string;
  token: string | null;
}

function env(observer?: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_OPTIONS: observer ? `--import=${MODULE_OBSERVER}` : "",
    ...(observer ? { MODULE_OBSERVER_FILE: observer } : {}),
    GATEWAY_PORT: "0",
    CONVERSATIONS_PORT: "0",
    SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0",
    PGLITE_DATA_DIR: path.join(dataRoot, "pglite"),
    DEMO_CONVERSATIONS: "40",
    ...(postgres?.url ? { DATABASE_URL: postgres.url } : { DATABASE_URL: "" }),
  };
}

function start(observer?: string): Promise<Started> {
  const child = spawn(START[0], [...START[1]], { env: env(observer), stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((resolve, reject) => {
    // A bound on a hung start, not a timing assertion: at load 20 on 2 cores a first start took over 90 s.
    const timer = setTimeout(() => reject(new Error(`npm start did not come up in 300 s:\n${output}`)), 300_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /GraphQL endpoint \+ GraphiQL: (\S+)/.exec(output)?.[1];
      const done = url && (/Dev token/.test(output) ? /Try it:[\s\S]*-d '/.test(output) : true);
      if (url && done) {
        clearTimeout(timer);
        const token = /Dev token[^\n]*\n\s+(\S+)/.exec(output)?.[1] ?? null;
        resolve({ child, output, url, token });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited with ${code}:\n${output}`));
    });
  });
}

/**
 * Searches a demo topic until one of the hits is a chunk of `fileName`: the background indexer
 * writes the demo documents' chunks seconds after start. Bounded: 80 tries a second apart, each
 * with a different limit so that neither the gateway's nor the search subgraph's result cache
 * answers with a page from before the document was indexed.
 */
async function documentFound(url: string, token: string | null, query: string, fileName: string): Promise<string[]> {
  let seen: string[] = [];
  for (let attempt = 0; attempt < 80; attempt++) {
    const response = await graphql(url, `query ($query: String!, $limit: Int!) { search(input: { query: $query, limit: $limit }) {
      hits { item { __typename ... on DocumentChunk { document { fileName } } } }
    } }`, { query, limit: 20 + attempt }, { token });
    seen = (response.data?.search?.hits ?? []).flatMap((hit: { item: { __typename: string; document?: { fileName: string } } }) => (hit.item.document ? [hit.item.document.fileName] : []));
    if (seen.includes(fileName)) return seen;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return seen;
}

function exitOf(child: ChildProcess): Promise<{ code: number | null }> {
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code })));
}

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
        const second = spawn(START[0], [...START[1]], { env: env(), stdio: ["ignore", "pipe", "pipe"] });
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
