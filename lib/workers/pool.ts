/**
 * Worker-thread pools for CPU-heavy work (tokenizing, model calls; next, document parsing), so
 * that no request waits behind it on the event loop that the gateway and every subgraph share.
 * Each pool is a `piscina` pool with few threads (this code runs on 2-core machines next to the
 * database) and a bounded queue: when the queue is full the caller gets an `OVERLOADED` error at
 * once instead of waiting behind minutes of queued work.
 *
 * A worker module is a file whose default export handles one task. It is written in TypeScript
 * like everything else and found beside the module that uses it, with that module's own file
 * extension (see {@link workerModule}): `.js` in the compiled tree that `npm start` and every
 * product script run (dist/, scripts/build.mjs), `.ts` when running from source (Jest under
 * ts-jest, developer tools under tsx). Worker threads do not run through Jest's transformer, so a
 * `.ts` worker needs the tsx loader in the thread itself: a process started with `--import tsx`
 * passes it already (threads inherit it); under Jest the process has no such flag, so the pool
 * adds `--import tsx` to the thread's execArgv. Compiled `.js` workers need no loader at all.
 * (A plain `.mjs` worker would need no loader either, but it could not share typed code with
 * the rest of the tree.)
 */
import { fileURLToPath } from "node:url";
import path from "node:path";
import type { GraphQLError } from "graphql";
import type { MessagePort } from "node:worker_threads";
import { Piscina } from "piscina";
import { overloaded } from "../graphql/errors.js";
import { createLogger, throttledWarning, type Logger } from "../logger.js";

export interface WorkerPoolOptions {
  /** Names the pool in errors, e.g. "token counting". */
  name: string;
  /** The worker module (see {@link workerModule}). */
  worker: URL;
  /** Threads at most (default 1); a thread starts on the first task and stays while the pool is open. */
  maxThreads?: number;
  /** Tasks that may wait for a thread (default 64); one more is refused with `OVERLOADED`. */
  maxQueue?: number;
  /** Heap limits per thread (a thread over them dies, failing its task, and is replaced). Default: none. */
  resourceLimits?: { maxOldGenerationSizeMb?: number; maxYoungGenerationSizeMb?: number };
  /** Where a thread's failure with no task running is reported (default: a "workers" logger on stderr). */
  logger?: Logger;
}

/** A worker module beside `callerUrl` (pass `import.meta.url`), with the caller's own extension. */
export function workerModule(callerUrl: string, baseName: string): URL {
  return new URL(`${baseName}${path.extname(fileURLToPath(callerUrl))}`, callerUrl);
}

/** What a pool has done since the process started: kept by name, across a pool's close and re-creation. */
interface PoolTotals {
  tasks: number;
  threadFailuresWithoutTask: number;
}

const totalsByName = new Map<string, PoolTotals>();

export class WorkerPool<Task, Result> {
  private readonly piscina: Piscina<Task, Result>;
  private readonly totals: PoolTotals;
  private submitted = 0;
  private isClosed = false;
  private strayFailures = 0;

  constructor(readonly options: Required<Omit<WorkerPoolOptions, "logger">> & Pick<WorkerPoolOptions, "logger">) {
    let totals = totalsByName.get(options.name);
    if (!totals) totalsByName.set(options.name, (totals = { tasks: 0, threadFailuresWithoutTask: 0 }));
    this.totals = totals;
    const file = fileURLToPath(options.worker);
    const needsLoader = file.endsWith(".ts") && !process.execArgv.some((arg) => arg === "tsx" || arg.includes("tsx/"));
    this.piscina = new Piscina<Task, Result>({
      filename: file,
      name: "default",
      minThreads: 0,
      maxThreads: options.maxThreads,
      maxQueue: options.maxQueue,
      // Threads hold what they loaded (tokenizer tables, model weights): keep them while the pool
      // lives. Idle threads are unref'd by piscina, so they never keep a process from exiting.
      idleTimeout: Infinity,
      // Tasks may be asynchronous (a model call awaits its backend): never block a thread on
      // Atomics.wait between tasks.
      atomics: "disabled",
      ...(needsLoader ? { execArgv: ["--import", "tsx"] } : {}),
      resourceLimits: options.resourceLimits,
    });
    // A thread that fails while running a task fails that task. One that fails with no task
    // left (it ran out of memory as it was being stopped for its task's timeout, or threw after
    // answering) is replaced, and piscina emits its error on the pool: an emitter without an
    // 'error' listener throws, which took the whole process down (a hostile DOCX did, in CI).
    // Its task's caller already has an answer, so nobody is waiting for this error; an operator
    // is: it is logged, at most once a minute per pool, since uploads can cause it on purpose.
    const warn = throttledWarning(options.logger ?? createLogger("workers"), 60_000);
    this.piscina.on("error", (error: unknown) => {
      this.strayFailures += 1;
      this.totals.threadFailuresWithoutTask += 1;
      warn(`the ${options.name} pool replaced a thread that failed with no task running (${this.strayFailures} so far): ${error instanceof Error ? error.message : String(error)}`);
    });
  }

  /** Threads that failed with no task running (replaced, nobody waiting): lets tests see one happened. */
  get threadFailuresWithoutTask(): number {
    return this.strayFailures;
  }

  /** Tasks handed to this pool so far, including refused ones: lets tests prove work was (not) done. */
  get tasksSubmitted(): number {
    return this.submitted;
  }

  /**
   * Runs one task on a thread. Rejects with a GraphQL `OVERLOADED` error when the queue is full,
   * and with the worker's own error when the task fails.
   */
  async run(task: Task, options: { signal?: AbortSignal; transferList?: MessagePort[] } = {}): Promise<Result> {
    this.submitted += 1;
    this.totals.tasks += 1;
    if (this.isClosed) throw new Error(`The ${this.options.name} pool is closed: the server is shutting down.`);
    try {
      // An aborted task that is running has its thread terminated (piscina starts a new one).
      // A transferList moves what the task carries (a MessagePort: lib/workers/task-budget.ts).
      return await this.piscina.run(task, { ...(options.signal ? { signal: options.signal } : {}), ...(options.transferList ? { transferList: options.transferList } : {}) });
    } catch (error) {
      // piscina says so only in its message ("Task queue is at limit").
      if (error instanceof Error && /queue is at limit/i.test(error.message)) throw queueFull(this.options);
      throw error;
    }
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Tasks waiting for a thread, and threads running now. */
  get load(): { queued: number; threads: number } {
    return { queued: this.piscina.queueSize, threads: this.piscina.threads.length };
  }

  /** Waits for running and queued tasks, then stops the threads. */
  async close(): Promise<void> {
    this.isClosed = true;
    openPools.delete(this as WorkerPool<unknown, unknown>);
    await this.piscina.close();
  }
}

const openPools = new Set<WorkerPool<unknown, unknown>>();

export function createWorkerPool<Task, Result>(options: WorkerPoolOptions): WorkerPool<Task, Result> {
  const maxThreads = options.maxThreads ?? 1;
  const maxQueue = options.maxQueue ?? 64;
  if (!Number.isInteger(maxThreads) || maxThreads < 1) throw new RangeError(`${options.name}: maxThreads must be a positive integer, got ${maxThreads}`);
  if (!Number.isInteger(maxQueue) || maxQueue < 0) throw new RangeError(`${options.name}: maxQueue must be a non-negative integer, got ${maxQueue}`);
  const pool = new WorkerPool<Task, Result>({ ...options, maxThreads, maxQueue, resourceLimits: options.resourceLimits ?? {} });
  openPools.add(pool as WorkerPool<unknown, unknown>);
  return pool;
}

/** One pool's figures for metrics: totals since the process started, and its load now (0 once closed). */
export interface WorkerPoolStats {
  pool: string;
  tasks: number;
  threadFailuresWithoutTask: number;
  queued: number;
  threads: number;
}

/** Every pool this process has made, by name. */
export function workerPoolStats(): WorkerPoolStats[] {
  // Summed: a pool being replaced (reconfigured) is still open, finishing its tasks, beside its successor.
  const load = new Map<string, { queued: number; threads: number }>();
  for (const pool of openPools) {
    const sum = load.get(pool.options.name) ?? { queued: 0, threads: 0 };
    const { queued, threads } = pool.load;
    load.set(pool.options.name, { queued: sum.queued + queued, threads: sum.threads + threads });
  }
  return [...totalsByName].map(([pool, totals]) => ({ pool, ...totals, ...(load.get(pool) ?? { queued: 0, threads: 0 }) }));
}

/** Closes every pool still open (at shutdown, after the servers have drained). */
export async function closeWorkerPools(): Promise<void> {
  await Promise.all([...openPools].map((pool) => pool.close()));
}

function queueFull(options: Pick<WorkerPoolOptions, "name" | "maxQueue">): GraphQLError {
  return overloaded(`The server is busy with ${options.name} (${options.maxQueue} tasks already waiting): retry in a few seconds.`);
}
