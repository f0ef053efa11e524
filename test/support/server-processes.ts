/**
 * The gateway and the subgraphs as separate processes, started the way production starts them
 * (`scripts/start-gateway.ts`, `scripts/start-subgraph.ts`, compiled, as `npm run start:gateway` runs them), for tests whose subject is the
 * process itself: its signal handling, its drain, its exit. Subgraphs run on a PGlite folder of
 * their own, with a database the test can hold (held-database.mjs), or on a PostgreSQL database
 * (test/support/database.ts's `url`), which several processes can share: two instances of one
 * subgraph, as a deployment behind a load balancer runs them (issue 22). The gateway serves a
 * copy of the committed supergraph that points at them.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { productScriptArguments } from "../../lib/project-files.js";
import { TEST_AUTH } from "./tenants.js";

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  port: number;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface SubgraphProcess extends ServerProcess {
  name: string;
  /** From now on every statement waits at the database until `releaseDatabase()`. */
  holdDatabase(): void;
  releaseDatabase(): void;
  /** Statements waiting since `holdDatabase()`. */
  held(): number;
  /** POST requests the process received since the hold began (held-database.mjs). */
  received(): number;
}

/** What every process gets: the test secrets, the instant embedder, no background indexing, budgets no test reaches. */
function baseEnv(nodeEnv: "production" | "development", extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_OPTIONS: "",
    NODE_ENV: nodeEnv,
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    JWT_SECRET: TEST_AUTH.jwtSecret!,
    SUBGRAPH_SIGNING_SECRET: TEST_AUTH.subgraphSigningSecret,
    EMBEDDER: "hashing",
    SEARCH_INDEXER: "false",
    RATE_LIMIT_ORGANIZATION_POINTS: "100000000",
    RATE_LIMIT_USER_POINTS: "100000000",
    RATE_LIMIT_ANONYMOUS_POINTS: "100000000",
    DATABASE_URL: "",
    REDIS_URL: "",
    ...extra,
  };
}

/** Runs `script` with `args` as package.json's scripts run it (compiled), after Node's own `flags`. */
function launch(flags: string[], script: string, scriptArgs: string[], env: NodeJS.ProcessEnv, listening: RegExp, ipc: boolean): Promise<ServerProcess> {
  const args = [script, ...scriptArgs];
  const child = spawn(process.execPath, [...flags, ...productScriptArguments(script, ...scriptArgs)], { env, stdio: ["ignore", "pipe", "pipe", ...(ipc ? ["ipc" as const] : [])] });
  let output = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${args.join(" ")} did not start in 120 s:\n${output}`));
    }, 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = listening.exec(output);
      if (match) {
        clearTimeout(timer);
        const url = match[1]!;
        resolve({ child, url, port: Number(new URL(url).port), output: () => output, exited });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      if (!listening.test(output)) reject(new Error(`${args.join(" ")} exited with ${code} before listening:\n${output}`));
    });
  });
}

/**
 * Where a subgraph process keeps its data: a PGlite folder of its own (`dataDir`), or a PostgreSQL
 * database several processes may share (`databaseUrl`). Holding the database (holdDatabase) works
 * on PGlite only: on PostgreSQL a test holds rows or tables with locks of its own.
 */
export type SubgraphData = { dataDir: string; databaseUrl?: never } | { databaseUrl: string; dataDir?: never };

export async function startSubgraphProcess(name: string, options: SubgraphData & { nodeEnv: "production" | "development"; env?: Record<string, string> }): Promise<SubgraphProcess> {
  const portVariable = `${name.toUpperCase().replace("-", "_")}_PORT`;
  const data: Record<string, string> = options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : { PGLITE_DATA_DIR: options.dataDir! };
  const env = baseEnv(options.nodeEnv, { [portVariable]: "0", ...data, ...options.env });
  const server = await launch(["--import", "./test/support/held-database.mjs"], "scripts/start-subgraph.ts", [name], env, new RegExp(`${name} subgraph listening on (\\S+)`), true);
  let held = 0;
  let received = 0;
  server.child.on("message", (message: { held?: number; received?: number }) => {
    if (typeof message.held === "number") held = message.held;
    if (typeof message.received === "number") received = message.received;
  });
  return {
    ...server,
    name,
    holdDatabase() {
      held = 0;
      received = 0;
      server.child.send({ hold: true });
    },
    releaseDatabase() {
      if (server.child.connected) server.child.send({ hold: false });
    },
    held: () => held,
    received: () => received,
  };
}

/** Writes a copy of the committed supergraph whose subgraphs live at `urls` (by subgraph name), and returns its path. */
export function supergraphAt(urls: Record<string, string>, directory: string): string {
  const committed = fs.readFileSync(path.resolve("supergraph.graphql"), "utf8");
  const rewritten = committed.replace(/@join__graph\(name: "([^"]+)", url: "[^"]+"\)/g, (whole, name: string) => {
    const url = urls[name];
    if (!url) throw new Error(`no URL given for subgraph ${name}`);
    return `@join__graph(name: "${name}", url: "${url}")`;
  });
  const file = path.join(directory, "supergraph.graphql");
  fs.writeFileSync(file, rewritten);
  return file;
}

export function startGatewayProcess(options: { supergraphPath: string; nodeEnv: "production" | "development"; env?: Record<string, string> }): Promise<ServerProcess> {
  const env = baseEnv(options.nodeEnv, { GATEWAY_PORT: "0", ...options.env });
  return launch([], "scripts/start-gateway.ts", ["--supergraph", options.supergraphPath], env, /gateway listening on (\S+)/, false);
}

/** The drain's own account of itself, from the process's log (lib/http-drain.ts logDrainOutcome). */
export function drainReport(output: string): { inFlightAtStart: number; finished: number; refused: number; cut: number } | null {
  const match = /drained: (\d+) requests in flight at the signal, (\d+) answered during the drain \((\d+) of them SHUTTING_DOWN\), (\d+) cut/.exec(output);
  if (!match) return null;
  const [inFlightAtStart, finished, refused, cut] = match.slice(1).map(Number) as [number, number, number, number];
  return { inFlightAtStart, finished, refused, cut };
}

/** A process's own count of one indexing queue's jobs by outcome, from its /metrics (`indexing_jobs_total`). */
export async function indexingJobCounts(server: ServerProcess, queue: "conversations" | "documents" = "conversations"): Promise<{ indexed: number; failed: number; lease_lost: number }> {
  const text = await (await fetch(server.url.replace(/\/graphql$/, "/metrics"))).text();
  const count = (outcome: string) => {
    const match = new RegExp(`^indexing_jobs_total\\{[^}]*queue="${queue}"[^}]*outcome="${outcome}"[^}]*\\} (\\d+)`, "m").exec(text)
      ?? new RegExp(`^indexing_jobs_total\\{[^}]*outcome="${outcome}"[^}]*queue="${queue}"[^}]*\\} (\\d+)`, "m").exec(text);
    return match ? Number(match[1]) : 0;
  };
  return { indexed: count("indexed"), failed: count("failed"), lease_lost: count("lease_lost") };
}

/** Waits for `condition` (what another process does), bounded only so that a stuck process fails the test instead of the suite. */
export async function until(what: string, condition: () => Promise<boolean>, boundMs = 120_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Stops every process still running: SIGTERM, so each drains as in production, then SIGKILL for
 * one still running after `graceMs` (a test left it blocked). Suites' afterAll.
 */
export async function stopServerProcesses(servers: readonly ServerProcess[], graceMs = 20_000): Promise<void> {
  await Promise.all(servers.map(async (server) => {
    if (server.child.exitCode !== null || server.child.signalCode !== null) return;
    server.child.kill("SIGTERM");
    const timer = setTimeout(() => server.child.kill("SIGKILL"), graceMs);
    await server.exited;
    clearTimeout(timer);
  }));
}
