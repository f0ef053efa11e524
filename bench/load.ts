/**
 * Drives HTTP load with autocannon, in a child process (bench/load-generator.mjs) so the load
 * generator neither shares the servers' event loop nor counts in their memory. Every request
 * is a GraphQL POST to 127.0.0.1; bodies rotate round-robin across connections.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { round, summarizeLatencies, type LatencySummary } from "./stats.js";

const GENERATOR = fileURLToPath(new URL("./load-generator.mjs", import.meta.url));

export interface LoadOptions {
  url: string;
  token: string;
  /** JSON request bodies ({ query, variables }), used in turn. */
  bodies: string[];
  connections: number;
  /** Seconds of load; ignored when `amount` is set. */
  durationSeconds: number;
  /** Exactly this many requests instead of a duration (every response is then counted). */
  amount?: number;
  timeoutSeconds?: number;
}

export interface LoadErrors {
  /** Connection errors, timeouts included. */
  connection: number;
  timeouts: number;
  non2xx: number;
  /** Responses with a top-level GraphQL `errors`. */
  graphql: number;
  /** Searches where a provider failed or timed out. */
  degraded: number;
  total: number;
  first: string | null;
}

export interface LoadResult {
  connections: number;
  durationSeconds: number;
  completed: number;
  requestsPerSecond: number;
  latencyMs: LatencySummary;
  errors: LoadErrors;
  /**
   * CPU time this process (the servers under test; with PGlite, the database too) spent per
   * completed request: unlike latency, it hardly changes when other work on the machine
   * takes the CPU away, so it compares configurations on a busy machine.
   */
  serverCpuMsPerRequest: number;
  /** Search hits per completed request (0 for documents without search). */
  hitsPerResponse: number;
  /** Completed requests whose response held at least one search hit. */
  responsesWithHits: number;
}

interface GeneratorResult {
  durationSeconds: number;
  completed: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  graphqlErrors: number;
  degraded: number;
  hits: number;
  withHits: number;
  firstError: string | null;
  latencies: number[];
}

interface GeneratorReply {
  id: number;
  ok: boolean;
  result?: GeneratorResult;
  error?: string;
}

/** The load generator process, started on first use and kept for the following runs. */
let generator: { child: ChildProcess; pending: Map<number, { resolve(result: GeneratorResult): void; reject(error: Error): void }> } | null = null;
let nextRunId = 1;

function loadGenerator(): NonNullable<typeof generator> {
  if (generator) return generator;
  // Bare node: no TypeScript loader, no Jest flags, no inspector port of the parent.
  const child = fork(GENERATOR, [], { execArgv: [], serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const pending = new Map<number, { resolve(result: GeneratorResult): void; reject(error: Error): void }>();
  const current = { child, pending };
  child.on("message", (reply: GeneratorReply) => {
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id);
    if (reply.ok && reply.result) waiter.resolve(reply.result);
    else waiter.reject(new Error(`load generator failed: ${reply.error}`));
    // An idle generator must not keep the benchmark process alive.
    if (pending.size === 0) child.channel?.unref();
  });
  child.once("exit", (code) => {
    if (generator === current) generator = null;
    for (const waiter of pending.values()) waiter.reject(new Error(`load generator exited with code ${code} before reporting`));
    pending.clear();
  });
  generator = current;
  return current;
}

/** Stops the load generator process (the end of a benchmark run). */
export async function stopLoadGenerator(): Promise<void> {
  const current = generator;
  if (!current) return;
  generator = null;
  const exited = new Promise<void>((resolve) => current.child.once("exit", () => resolve()));
  current.child.disconnect();
  await exited;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(options.url)) throw new Error(`load goes to 127.0.0.1 only, got ${options.url}`);
  const { child, pending } = loadGenerator();
  const id = nextRunId++;
  const cpuBefore = process.cpuUsage();
  const raw = await new Promise<GeneratorResult>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    child.channel?.ref();
    child.send({
      id,
      options: {
        url: options.url,
        headers: { authorization: `Bearer ${options.token}` },
        bodies: options.bodies,
        connections: options.connections,
        duration: options.durationSeconds,
        amount: options.amount,
        timeoutSeconds: options.timeoutSeconds ?? 10,
      },
    });
  });
  const cpu = process.cpuUsage(cpuBefore);
  const total = raw.errors + raw.non2xx + raw.graphqlErrors + raw.degraded;
  return {
    connections: options.connections,
    durationSeconds: round(raw.durationSeconds, 2),
    completed: raw.completed,
    requestsPerSecond: round(raw.completed / Math.max(raw.durationSeconds, 0.001), 1),
    latencyMs: summarizeLatencies(raw.latencies),
    errors: { connection: raw.errors, timeouts: raw.timeouts, non2xx: raw.non2xx, graphql: raw.graphqlErrors, degraded: raw.degraded, total, first: raw.firstError },
    serverCpuMsPerRequest: round((cpu.user + cpu.system) / 1000 / Math.max(raw.completed, 1), 3),
    hitsPerResponse: round(raw.hits / Math.max(raw.completed, 1), 2),
    responsesWithHits: raw.withHits,
  };
}

/**
 * A short run whose numbers are thrown away: JIT, connection pools and caches settle first. A
 * timed run stops with its requests in flight, so on a busy machine a cold first request (query
 * planning, pool connects) can outlast a short warm-up and land in the measured run instead, which
 * then completes nothing: the warm-up goes on until every connection has had one answer.
 */
export async function warmUp(options: LoadOptions, seconds: number): Promise<void> {
  if (seconds <= 0) return;
  const timed = await runLoad({ ...options, durationSeconds: seconds, amount: undefined });
  if (timed.completed < options.connections) await runLoad({ ...options, amount: options.connections });
}

/**
 * Short rounds of one mode pooled into one result (scenarios alternate modes in rounds so drift
 * on a shared machine hits every mode alike): latencies and per-request figures weighted by
 * requests, throughput over the total time, errors summed.
 */
export function poolRounds(results: readonly LoadResult[]): LoadResult {
  const completed = results.reduce((total, result) => total + result.completed, 0);
  const seconds = results.reduce((total, result) => total + result.durationSeconds, 0);
  const weighted = (pick: (result: LoadResult) => number) => (completed > 0 ? results.reduce((total, result) => total + pick(result) * result.completed, 0) / completed : 0);
  const first = results[0]!;
  const errors = { ...first.errors, first: results.map((result) => result.errors.first).find((message) => message !== null) ?? null };
  for (const result of results.slice(1)) {
    for (const key of ["connection", "timeouts", "non2xx", "graphql", "degraded", "total"] as const) errors[key] += result.errors[key];
  }
  return {
    ...first,
    durationSeconds: seconds,
    completed,
    requestsPerSecond: seconds > 0 ? completed / seconds : 0,
    latencyMs: { ...first.latencyMs, p50: weighted((result) => result.latencyMs.p50), p99: weighted((result) => result.latencyMs.p99), mean: weighted((result) => result.latencyMs.mean) },
    errors,
    serverCpuMsPerRequest: weighted((result) => result.serverCpuMsPerRequest),
    hitsPerResponse: weighted((result) => result.hitsPerResponse),
  };
}

export function graphqlBody(query: string, variables: Record<string, unknown> = {}): string {
  return JSON.stringify({ query, variables });
}
