/**
 * Time budgets for work on a worker thread that measure the work, not the machine.
 *
 * A budget protects everyone else from one task (a hostile PDF must not hold a parser thread
 * for minutes). Measured as wall-clock time from the moment the task was handed to the pool,
 * it also counted things that are not the task's fault: the cold start of the thread (loading
 * its modules took 20-33 s on a 2-core machine at load 7-12, issue 38) and the CPU that other
 * processes took from it. A 941-byte Markdown file then hit the 8 s parse budget and the first
 * `npm start` crashed. So here:
 *
 * - the budget starts when the task's handler begins on its thread (modules loaded): the
 *   worker side ({@link budgetedWorker}) says so over a MessagePort sent with the task;
 * - it counts the thread's own CPU time where the system tells it (Linux: the worker reads its
 *   thread id and CPU time from /proc/thread-self/stat, and this side reads
 *   /proc/self/task/<tid>/stat while the task runs, because a CPU-bound task blocks its own
 *   thread's event loop and could not report by itself). `process.threadCpuUsage()` would do
 *   on Node >= 23.9 only, and only for the calling thread, so /proc it is; elsewhere the budget
 *   is the wall-clock time since the handler began;
 * - a wall-clock backstop, much larger than the budget and counted from submission, still ends
 *   a thread that never starts, or hangs where it uses no CPU (a syscall, a lock), with its own
 *   reason, so nothing waits forever.
 *
 * A task that finished but whose meter reads past its budget is refused like one that was
 * stopped: the answer does not depend on whether the poll or the result came first.
 */
import fs from "node:fs";
import { MessageChannel, receiveMessageOnPort, type MessagePort } from "node:worker_threads";
import type { WorkerPool } from "./pool.js";

/** What the pool's thread receives: the caller's task and where to say it has begun. */
export interface BudgetedTask<Task> {
  task: Task;
  started: MessagePort;
}

/** What the worker says when its handler begins. */
interface Started {
  /** The thread's Linux thread id, or null where /proc/thread-self is not readable. */
  tid: number | null;
  /** The thread's CPU time so far, in ms (its cold start), or null with `tid`. */
  cpuMs: number | null;
}

/** Measures one task's work since it began, in ms. */
export interface WorkMeter {
  read(): number;
}

/**
 * Where a budget's time comes from. The default reads the thread's CPU time; tests pass a clock
 * they control, so an over-budget task is a fact of the test, not of the machine's speed.
 */
export interface WorkClock {
  /** "cpu" (the thread's CPU time) or "wall" (time since the task began): messages say which. */
  readonly measures: "cpu" | "wall";
  start(thread: Started): WorkMeter;
}

// USER_HZ: /proc reports CPU time in ticks of 1/100 s on every Linux architecture Node runs on.
const MS_PER_TICK = 10;

function threadCpuMs(statPath: string): number | null {
  try {
    const stat = fs.readFileSync(statPath, "utf8");
    // Fields after the command name (which may hold spaces), from field 3 (state): utime is field 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * MS_PER_TICK : null;
  } catch {
    return null;
  }
}

function threadId(): number | null {
  try {
    const tid = Number.parseInt(fs.readFileSync("/proc/thread-self/stat", "utf8"), 10);
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

/** Wall-clock time since the task began (its thread's modules loaded). */
export const wallClockSinceStart: WorkClock = {
  measures: "wall",
  start() {
    const began = performance.now();
    return { read: () => performance.now() - began };
  },
};

/** The thread's own CPU time since the task began; wall-clock time where the system does not say. */
export const threadCpuClock: WorkClock = {
  measures: "cpu",
  start(thread) {
    if (thread.tid === null || thread.cpuMs === null) return wallClockSinceStart.start(thread);
    const path = `/proc/self/task/${thread.tid}/stat`;
    const began = thread.cpuMs;
    let last = 0;
    return {
      read: () => {
        // A thread that is gone (terminated, replaced) keeps its last reading.
        const now = threadCpuMs(path);
        if (now !== null) last = Math.max(last, now - began);
        return last;
      },
    };
  },
};

/** Whether `threadCpuClock` measures CPU time here (Linux with /proc), for messages. */
export function measuresCpu(clock: WorkClock = threadCpuClock): boolean {
  return clock.measures === "cpu" && fs.existsSync("/proc/thread-self/stat");
}

/**
 * Wraps a worker module's handler (its default export): says "begun" with the thread's id and
 * CPU time, then runs the task.
 */
export function budgetedWorker<Task, Result>(handler: (task: Task) => Promise<Result> | Result): (input: BudgetedTask<Task>) => Promise<Result> {
  return async ({ task, started }) => {
    const tid = threadId();
    const message: Started = { tid, cpuMs: tid === null ? null : threadCpuMs("/proc/thread-self/stat") };
    started.postMessage(message);
    return handler(task);
  };
}

export interface BudgetOptions {
  /** Work the task may do, in ms of the clock's time, from when it began on its thread. */
  budgetMs: number;
  /** Wall-clock time from submission after which the task is stopped whatever it did. */
  backstopMs: number;
  /** Default {@link threadCpuClock}. */
  clock?: WorkClock;
}

/** Why a budgeted task was stopped: its own work (`budget`) or the wall-clock `backstop`. */
export class TaskBudgetExceeded extends Error {
  constructor(
    readonly limit: "budget" | "backstop",
    readonly measures: "cpu" | "wall",
  ) {
    super(limit === "budget" ? `the task used more than its ${measures === "cpu" ? "CPU-time" : "time"} budget` : "the task did not finish before the wall-clock backstop");
    this.name = "TaskBudgetExceeded";
  }
}

/**
 * Runs `task` on `pool` (whose worker is wrapped in {@link budgetedWorker}) within `budgetMs` of
 * work and `backstopMs` of wall-clock time. Rejects with {@link TaskBudgetExceeded} past either
 * (the thread is terminated), and with the pool's or worker's own error otherwise.
 */
export async function runWithinBudget<Task, Result>(pool: WorkerPool<BudgetedTask<Task>, Result>, task: Task, options: BudgetOptions): Promise<Result> {
  const clock = options.clock ?? threadCpuClock;
  const stop = new AbortController();
  const state: { exceeded: TaskBudgetExceeded | null } = { exceeded: null };
  const give = (limit: "budget" | "backstop") => {
    if (state.exceeded) return;
    state.exceeded = new TaskBudgetExceeded(limit, clock.measures);
    stop.abort(state.exceeded);
  };
  const { port1, port2 } = new MessageChannel();
  let meter: WorkMeter | null = null;
  let poll: NodeJS.Timeout | undefined;
  const check = () => {
    if (meter && meter.read() > options.budgetMs) give("budget");
  };
  const begin = (message: Started) => {
    if (meter) return;
    meter = clock.start(message);
    check();
    // Often enough that a runaway task overshoots by little, rarely enough to cost nothing.
    poll = setInterval(check, Math.max(10, Math.min(250, Math.floor(options.budgetMs / 8))));
    poll.unref();
  };
  port1.on("message", begin);
  port1.unref();
  const backstop = setTimeout(() => give("backstop"), options.backstopMs);
  backstop.unref();
  try {
    const result = await pool.run({ task, started: port2 }, { signal: stop.signal, transferList: [port2] });
    // The "begun" message and the result travel on different ports: read it now if it is still
    // queued, and measure once more, so a task over budget is refused whichever arrived first.
    const pending = receiveMessageOnPort(port1);
    if (pending) begin(pending.message as Started);
    check();
    if (state.exceeded) throw state.exceeded;
    return result;
  } catch (error) {
    throw state.exceeded ?? error;
  } finally {
    clearTimeout(backstop);
    clearInterval(poll);
    port1.close();
  }
}
