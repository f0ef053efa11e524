/**
 * `npm start` as a user runs it, for e2e tests: exactly the command package.json's
 * `scripts.start` names (read at run time, so a change of how the product starts, e.g. to
 * compiled code, is what the tests run too), as one child process without npm in between, so
 * signals reach the product's own handler. Ports are all 0; the data folder and the database are
 * the test's.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { graphql } from "./graphql.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** package.json's `scripts.start`, split into the executable and its arguments (`node` is this Node). */
export function startCommand(): [string, string[]] {
  const script = (JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } }).scripts.start;
  // Plain words only: a start script that needs a shell (quotes, &&, variables) must be run by one, which this is not.
  if (/["'`$&|;<>]/.test(script)) throw new Error(`scripts.start is not a plain command this helper can split: ${script}`);
  const [program, ...args] = script.trim().split(/\s+/);
  return [program === "node" ? process.execPath : program!, args];
}

export interface StartOptions {
  /** PGLITE_DATA_DIR (used when `databaseUrl` is null). */
  dataDir: string;
  /** DATABASE_URL, or null for the embedded PGlite. */
  databaseUrl?: string | null;
  /** DEMO_CONVERSATIONS (default 40). */
  conversations?: number;
  /** More variables (they win). */
  env?: NodeJS.ProcessEnv;
}

export interface Started {
  child: ChildProcess;
  /** What it printed (stdout and stderr) until it was up. */
  output: string;
  url: string;
  token: string | null;
  /** What the process has printed until now. */
  current(): string;
}

export function startEnv(options: StartOptions): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_OPTIONS: "",
    GATEWAY_PORT: "0",
    CONVERSATIONS_PORT: "0",
    SEARCH_PORT: "0",
    KNOWLEDGE_BASE_PORT: "0",
    EXTERNAL_SEARCH_PORT: "0",
    PGLITE_DATA_DIR: options.dataDir,
    DEMO_CONVERSATIONS: String(options.conversations ?? 40),
    DATABASE_URL: options.databaseUrl ?? "",
    ...options.env,
  };
}

/** Spawns the start command without waiting for anything. */
export function spawnStart(options: StartOptions): ChildProcess {
  const [program, args] = startCommand();
  return spawn(program, args, { cwd: ROOT, env: startEnv(options), stdio: ["ignore", "pipe", "pipe"] });
}

/**
 * Starts and resolves once the banner (and, with a dev token, the printed curl command) is out;
 * rejects if the process exits first, or after `upWithinMs` (default 90 s) with what it printed.
 */
export function start(options: StartOptions & { upWithinMs?: number }): Promise<Started> {
  const child = spawnStart(options);
  let output = "";
  const upWithinMs = options.upWithinMs ?? 90_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not come up in ${upWithinMs / 1000} s:\n${output}`)), upWithinMs);
    let resolved = false;
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (resolved) return;
      const url = /GraphQL endpoint \+ GraphiQL: (\S+)/.exec(output)?.[1];
      const done = url && (/Dev token/.test(output) ? /Try it:[\s\S]*-d '/.test(output) : true);
      if (url && done) {
        resolved = true;
        clearTimeout(timer);
        const token = /Dev token[^\n]*\n\s+(\S+)/.exec(output)?.[1] ?? null;
        resolve({ child, output, url, token, current: () => output });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      if (!resolved) reject(new Error(`npm start exited with ${code}:\n${output}`));
    });
  });
}

export function exitOf(child: ChildProcess): Promise<{ code: number | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve({ code: child.exitCode });
    else child.once("exit", (code) => resolve({ code }));
  });
}

/**
 * Searches a demo topic until one of the hits is a chunk of `fileName`: the background indexer
 * writes the demo documents' chunks after start. Bounded by `tries` a second apart, each with a
 * different limit so that neither the gateway's nor the search subgraph's result cache answers
 * with a page from before the document was indexed.
 */
export async function documentFound(url: string, token: string | null, query: string, fileName: string, tries = 80): Promise<string[]> {
  let seen: string[] = [];
  for (let attempt = 0; attempt < tries; attempt++) {
    const response = await graphql(url, `query ($query: String!, $limit: Int!) { search(input: { query: $query, limit: $limit }) {
      hits { item { __typename ... on DocumentChunk { document { fileName } } } }
    } }`, { query, limit: 20 + attempt }, { token });
    seen = (response.data?.search?.hits ?? []).flatMap((hit: { item: { __typename: string; document?: { fileName: string } } }) => (hit.item.document ? [hit.item.document.fileName] : []));
    if (seen.includes(fileName)) return seen;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return seen;
}
