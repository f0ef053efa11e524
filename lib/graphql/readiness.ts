/**
 * A server's readiness as its probes see it: one dependency check (a subgraph's database), bounded
 * by a short timeout so a database that stopped answering turns the probe 503 in about that
 * time instead of leaving it waiting, and its outcome kept briefly so that a flood of probes
 * (load balancers, the gateway's /readyz, an attacker) costs one check, not one each.
 */

export interface ReadinessSettings {
  /** How long the check may take before the server counts as not ready. */
  timeoutMs: number;
  /** How long an outcome is served to later probes before the check runs again. */
  cacheMs: number;
}

export const DEFAULT_READINESS: ReadinessSettings = { timeoutMs: 1_000, cacheMs: 250 };

export type Readiness = { ready: true } | { ready: false; reason: string };

/**
 * An answer that many callers share: while one is being worked out, every caller waits for that
 * one; once known, it is served for `keepMs` before the next caller starts another. What makes a
 * flood of probes cost one check (a subgraph's database check, the gateway's probe of its
 * subgraphs).
 */
export class SharedAnswer<T> {
  private last: { answer: T; at: number } | null = null;
  private running: Promise<T> | null = null;

  constructor(
    private readonly work: () => Promise<T>,
    private readonly keepMs: number,
  ) {}

  current(): Promise<T> {
    if (this.last && performance.now() - this.last.at < this.keepMs) return Promise.resolve(this.last.answer);
    this.running ??= this.work()
      .then((answer) => {
        this.last = { answer, at: performance.now() };
        return answer;
      })
      .finally(() => (this.running = null));
    return this.running;
  }
}

export class ReadinessCheck {
  private readonly answer: SharedAnswer<Readiness>;

  constructor(
    private readonly check: () => Promise<void>,
    private readonly settings: ReadinessSettings = DEFAULT_READINESS,
  ) {
    this.answer = new SharedAnswer(() => this.run(), settings.cacheMs);
  }

  /** The latest outcome if it is fresh; otherwise the check's, shared with every probe waiting meanwhile. */
  current(): Promise<Readiness> {
    return this.answer.current();
  }

  // Private: the check against its deadline. A check that passes the deadline is left to finish
  // on its own (a statement cannot be taken back); the next probe after the cache starts another.
  private async run(): Promise<Readiness> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.settings.timeoutMs} ms`)), this.settings.timeoutMs);
    });
    try {
      await Promise.race([this.check(), deadline]);
      return { ready: true };
    } catch (error) {
      return { ready: false, reason: error instanceof Error ? error.message : String(error) };
    } finally {
      clearTimeout(timer);
    }
  }
}
