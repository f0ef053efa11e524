/**
 * Budgets of worker-thread tasks (lib/workers/task-budget.ts), on real threads: the budget
 * counts the task's own work from when it began, never the thread's cold start; a task that
 * uses the CPU past its budget is stopped; a thread that never starts ends at the wall-clock
 * backstop; and the CPU clock reads the thread's CPU time. No assertion depends on how fast
 * the machine is: the budgets are either met by a task that does no work, or missed by one
 * that never stops.
 */
import fs from "node:fs";
import { afterAll, describe, expect, it } from "@jest/globals";
import { closeWorkerPools, createWorkerPool, workerModule } from "../../lib/workers/pool.js";
import { measuresCpu, runWithinBudget, TaskBudgetExceeded, threadCpuClock, type BudgetedTask } from "../../lib/workers/task-budget.js";

afterAll(async () => {
  await closeWorkerPools();
});

type Task = { kind: "echo" | "spin"; label: string };
const pool = () => createWorkerPool<BudgetedTask<Task>, string>({ name: "budget test", worker: workerModule(import.meta.url, "../support/budgeted-test-worker"), maxThreads: 1 });
/** The pool of the first test, warm once it has run: later tests that need any thread reuse it instead of paying another cold start. */
let shared: ReturnType<typeof pool> | null = null;
const sharedPool = () => (shared ??= pool());

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}

describe("task budgets", () => {
  it("does not count the thread's cold start: a task that does nothing passes a budget its thread's loading alone exceeds", async () => {
    // Loading the worker does hundreds of milliseconds of CPU work before the task begins.
    const cold = sharedPool();
    expect(await runWithinBudget(cold, { kind: "echo", label: "first" }, { budgetMs: 50, backstopMs: 600_000 })).toBe("first");
    expect(await runWithinBudget(cold, { kind: "echo", label: "second" }, { budgetMs: 50, backstopMs: 600_000 })).toBe("second");
  }, 120_000);

  it("stops a task past its budget of work, and the pool keeps serving", async () => {
    const spinning = pool();
    const error = await failure(runWithinBudget(spinning, { kind: "spin", label: "runaway" }, { budgetMs: 100, backstopMs: 600_000 }));
    expect(error).toBeInstanceOf(TaskBudgetExceeded);
    expect({ limit: (error as TaskBudgetExceeded).limit, measures: (error as TaskBudgetExceeded).measures }).toEqual({ limit: "budget", measures: "cpu" });
    expect(await runWithinBudget(spinning, { kind: "echo", label: "after" }, { budgetMs: 50, backstopMs: 600_000 })).toBe("after");
  }, 120_000);

  it("stops a task whose thread never starts at the wall-clock backstop", async () => {
    const stuck = createWorkerPool<BudgetedTask<string>, string>({ name: "never loading", worker: workerModule(import.meta.url, "../support/never-loading-worker") });
    const error = await failure(runWithinBudget(stuck, "never", { budgetMs: 50, backstopMs: 1_000 }));
    expect(error).toBeInstanceOf(TaskBudgetExceeded);
    expect((error as TaskBudgetExceeded).limit).toBe("backstop");
  }, 120_000);

  it("refuses a task that finished with its meter past the budget, whichever of the result and the poll came first", async () => {
    const overBudget = { measures: "cpu" as const, start: () => ({ read: () => 1_001 }) };
    const error = await failure(runWithinBudget(sharedPool(), { kind: "echo", label: "late" }, { budgetMs: 1_000, backstopMs: 600_000, clock: overBudget }));
    expect(error).toBeInstanceOf(TaskBudgetExceeded);
    expect((error as TaskBudgetExceeded).limit).toBe("budget");
  }, 120_000);

  it("reads a thread's CPU time on Linux", () => {
    if (process.platform !== "linux") return;
    expect(measuresCpu()).toBe(true);
    // This (main) thread as the "worker": its meter grows with work it does, by ticks of 10 ms.
    const tid = Number.parseInt(fs.readFileSync("/proc/thread-self/stat", "utf8"), 10);
    const meter = threadCpuClock.start({ tid, cpuMs: 0 });
    expect(meter.read()).toBeGreaterThan(0);
  });
});
