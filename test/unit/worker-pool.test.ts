/**
 * The worker-thread pools (lib/workers/pool.ts): a TypeScript worker runs under Jest, a full
 * queue refuses the next task with OVERLOADED at once, closing waits for queued work, and a
 * thread that fails with no task running is replaced without taking the process down.
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { GraphQLError } from "graphql";
import { SubgraphMetrics } from "../../lib/observability/subgraph-metrics.js";
import { closeWorkerPools, createWorkerPool, workerModule } from "../../lib/workers/pool.js";
import { recordingLogger } from "../support/recording-logger.js";

type HeldTask = { release: SharedArrayBuffer; label: string };

const heldTaskWorker = workerModule(import.meta.url, "../support/held-task-worker");
const lateFailureWorker = workerModule(import.meta.url, "../support/late-failure-worker");

afterAll(async () => {
  await closeWorkerPools();
});

describe("createWorkerPool", () => {
  it("refuses a task with OVERLOADED once its queue is full, and runs the queued ones", async () => {
    const pool = createWorkerPool<HeldTask, string>({ name: "held tasks", worker: heldTaskWorker, maxThreads: 1, maxQueue: 1 });
    const release = new SharedArrayBuffer(4);
    const flag = new Int32Array(release);
    // Start the thread first, so that "running" and "queued" below are exact.
    Atomics.store(flag, 0, 1);
    expect(await pool.run({ release, label: "warm" })).toBe("warm");
    Atomics.store(flag, 0, 0);

    const running = pool.run({ release, label: "running" });
    const queued = pool.run({ release, label: "queued" });
    const refused = await pool.run({ release, label: "refused" }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(GraphQLError);
    expect((refused as GraphQLError).extensions.code).toBe("OVERLOADED");
    expect((refused as GraphQLError).message).toMatch(/busy with held tasks .*retry/);

    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    expect(await Promise.all([running, queued])).toEqual(["running", "queued"]);
    expect(pool.tasksSubmitted).toBe(4);
    await pool.close();
    expect(pool.closed).toBe(true);
    await expect(pool.run({ release, label: "after close" })).rejects.toThrow(/closed/);
  });

  // Piscina emits a thread's error on the pool when no task is left to fail, and an emitter
  // without an 'error' listener throws: the process (a whole server) went down. Seen in CI when a
  // hostile DOCX's parser thread ran out of memory as it was being stopped for its timeout.
  it("survives a thread that fails with no task running, and runs the next task on a new thread", async () => {
    const logger = recordingLogger();
    const pool = createWorkerPool<{ label: string; failAfterMs: number }, string>({ name: "late failures", worker: lateFailureWorker, logger });
    expect(await pool.run({ label: "first", failAfterMs: 20 })).toBe("first");
    const deadline = Date.now() + 30_000;
    while (pool.threadFailuresWithoutTask === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(pool.threadFailuresWithoutTask).toBe(1);
    // Said once, naming the pool and the thread's own error.
    expect(logger.lines).toEqual([expect.stringMatching(/^warn the late failures pool replaced a thread that failed with no task running \(1 so far\): .+/)]);
    expect(await pool.run({ label: "second", failAfterMs: -1 })).toBe("second");
    await pool.close();
  });

  // After the two tests above: their pools are closed, and their totals are the process's.
  it("reports the process's pools through one subgraph server's metrics: totals since start, and load now", async () => {
    const sample = (exposition: string, name: string, pool: string): number | null => {
      const line = exposition.split("\n").find((candidate) => candidate.startsWith(`${name}{`) && candidate.includes(`pool="${pool}"`));
      return line === undefined ? null : Number(line.slice(line.lastIndexOf(" ") + 1));
    };
    const first = new SubgraphMetrics("conversations");
    const second = new SubgraphMetrics("search");
    const firstReport = first.reportWorkerPools();
    expect(firstReport.reporting).toBe(true);
    // One per process, so that summing over subgraphs never counts a pool twice.
    expect(second.reportWorkerPools().reporting).toBe(false);
    const scraped = await first.registry.metrics();
    // Every task handed over counts: the refused one and the one after close too.
    expect(sample(scraped, "worker_pool_tasks_total", "held tasks")).toBe(5);
    expect(sample(scraped, "worker_pool_tasks_total", "late failures")).toBe(2);
    expect(sample(scraped, "worker_pool_thread_failures_without_task_total", "late failures")).toBe(1);
    expect(sample(scraped, "worker_pool_thread_failures_without_task_total", "held tasks")).toBe(0);
    expect(sample(scraped, "worker_pool_threads", "late failures")).toBe(0);
    expect(await second.registry.metrics()).not.toContain("worker_pool_");

    // A pool made again under the same name goes on counting; its load is its own.
    const again = createWorkerPool<{ label: string; failAfterMs: number }, string>({ name: "late failures", worker: lateFailureWorker });
    expect(await again.run({ label: "third", failAfterMs: -1 })).toBe("third");
    const later = await first.registry.metrics();
    expect(sample(later, "worker_pool_tasks_total", "late failures")).toBe(3);
    expect(sample(later, "worker_pool_threads", "late failures")).toBe(1);
    expect(sample(later, "worker_pool_queued_tasks", "late failures")).toBe(0);

    // Once the reporting server stops, another takes over, and the first reports none.
    firstReport.release();
    expect(second.reportWorkerPools().reporting).toBe(true);
    expect(sample(await second.registry.metrics(), "worker_pool_tasks_total", "late failures")).toBe(3);
    expect(await first.registry.metrics()).not.toContain("worker_pool_tasks_total{");
    await again.close();
  });

  it("checks its limits", () => {
    expect(() => createWorkerPool({ name: "bad", worker: heldTaskWorker, maxThreads: 0 })).toThrow(/maxThreads must be a positive integer/);
    expect(() => createWorkerPool({ name: "bad", worker: heldTaskWorker, maxQueue: -1 })).toThrow(/maxQueue must be a non-negative integer/);
  });
});
