/**
 * Admission by fair share in front of a small worker pool: at most `maxRunning` jobs at once,
 * at most `maxRunningPerKey` of them for one key (an organization), and the jobs waiting for a
 * slot started round-robin across keys. So one organization's slow or hostile jobs queue behind
 * each other, never in front of another organization's: with two threads and one job per
 * organization, a thread is always free for everyone else while one organization's upload runs.
 *
 *     const parsing = new FairShareQueue({ name: "document parsing", maxRunning: 2, maxRunningPerKey: 1, ... });
 *     const text = await parsing.run(tenant.organizationId, () => pool.run(task));
 *
 * Waiting is bounded three ways, each refused at once with `OVERLOADED` rather than left to
 * pile up bytes in memory: per key (`maxQueuedPerKey`), overall (`maxQueued`), and in time (a job
 * that has not started within `maxWaitMs` is given up and its caller told to retry).
 */
import { overloaded } from "../graphql/errors.js";

export interface FairShareOptions {
  /** Names the work in errors, e.g. "document parsing". */
  name: string;
  /** Jobs running at once, over all keys (the pool's thread count). */
  maxRunning: number;
  /** Jobs running at once for one key. */
  maxRunningPerKey: number;
  /** Jobs waiting for one key; one more is refused. */
  maxQueuedPerKey: number;
  /** Jobs waiting over all keys; one more is refused. */
  maxQueued: number;
  /** Longest a job waits to start before it is refused. */
  maxWaitMs: number;
}

interface Waiter {
  start(): void;
  timer: NodeJS.Timeout;
}

export class FairShareQueue {
  private running = 0;
  private readonly runningByKey = new Map<string, number>();
  // Keys in turn order: a key moves to the back when one of its jobs starts (round-robin).
  private readonly waitingByKey = new Map<string, Waiter[]>();
  private waiting = 0;

  constructor(readonly options: FairShareOptions) {
    for (const name of ["maxRunning", "maxRunningPerKey", "maxWaitMs"] as const) {
      if (!Number.isInteger(options[name]) || options[name] < 1) throw new RangeError(`${options.name}: ${name} must be a positive integer, got ${options[name]}`);
    }
    for (const name of ["maxQueuedPerKey", "maxQueued"] as const) {
      if (!Number.isInteger(options[name]) || options[name] < 0) throw new RangeError(`${options.name}: ${name} must be a non-negative integer, got ${options[name]}`);
    }
  }

  /** Jobs running now, for `key` or over all keys. */
  runningCount(key?: string): number {
    return key === undefined ? this.running : (this.runningByKey.get(key) ?? 0);
  }

  /** Jobs waiting now, for `key` or over all keys. */
  waitingCount(key?: string): number {
    return key === undefined ? this.waiting : (this.waitingByKey.get(key)?.length ?? 0);
  }

  /** Runs `job` when `key` has its turn; rejects with OVERLOADED when it cannot wait. */
  run<T>(key: string, job: () => Promise<T>): Promise<T> {
    if (this.waiting === 0 && this.canStart(key)) return this.started(key, job);
    const { name, maxQueuedPerKey, maxQueued, maxWaitMs } = this.options;
    const queue = this.waitingByKey.get(key) ?? [];
    if (queue.length >= maxQueuedPerKey) {
      return Promise.reject(overloaded(`Your organization already has ${this.runningCount(key)} ${name} job(s) running and ${queue.length} waiting: retry when they finish.`));
    }
    if (this.waiting >= maxQueued) return Promise.reject(overloaded(`The server is busy with ${name} (${this.waiting} jobs waiting): retry in a few seconds.`));
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => void this.started(key, job).then(resolve, reject),
        timer: setTimeout(() => {
          this.remove(key, waiter);
          reject(overloaded(`No ${name} slot was free within ${maxWaitMs / 1000} s: retry in a few seconds.`));
        }, maxWaitMs),
      };
      waiter.timer.unref();
      queue.push(waiter);
      this.waitingByKey.set(key, queue);
      this.waiting += 1;
      this.dispatch();
    });
  }

  private canStart(key: string): boolean {
    return this.running < this.options.maxRunning && (this.runningByKey.get(key) ?? 0) < this.options.maxRunningPerKey;
  }

  private async started<T>(key: string, job: () => Promise<T>): Promise<T> {
    this.running += 1;
    this.runningByKey.set(key, (this.runningByKey.get(key) ?? 0) + 1);
    try {
      return await job();
    } finally {
      this.running -= 1;
      const left = this.runningByKey.get(key)! - 1;
      if (left === 0) this.runningByKey.delete(key);
      else this.runningByKey.set(key, left);
      this.dispatch();
    }
  }

  /** Starts waiting jobs while there is room, taking keys in turn. */
  private dispatch(): void {
    let progressed = true;
    while (progressed && this.running < this.options.maxRunning) {
      progressed = false;
      for (const [key, queue] of this.waitingByKey) {
        if (!this.canStart(key)) continue;
        const waiter = queue.shift()!;
        this.waiting -= 1;
        // To the back of the turn order (or out of it, with nothing left to wait for).
        this.waitingByKey.delete(key);
        if (queue.length > 0) this.waitingByKey.set(key, queue);
        clearTimeout(waiter.timer);
        waiter.start();
        progressed = true;
        break;
      }
    }
  }

  private remove(key: string, waiter: Waiter): void {
    const queue = this.waitingByKey.get(key);
    const index = queue?.indexOf(waiter) ?? -1;
    if (!queue || index < 0) return;
    queue.splice(index, 1);
    this.waiting -= 1;
    if (queue.length === 0) this.waitingByKey.delete(key);
  }
}
