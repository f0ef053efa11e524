/**
 * Graceful shutdown for the entry points: on SIGTERM or SIGINT run the cleanup (drain servers,
 * stop background work, close the database, release the PGlite lock) and exit; if cleanup hangs,
 * exit anyway after a last-resort deadline longer than the drains it waits for; a second signal
 * exits at once. Embedded Hive Gateway does not exit on its own.
 *
 * The process has one shutdown sequence, this one: handlers that libraries registered for these
 * signals are removed when it takes over. Hive Gateway's runtime is the one that matters: it
 * creates its Yoga server with `disposeOnProcessTerminate: true` (hard-coded, no option), so
 * `@whatwg-node/server` adds a `process.once("SIGTERM" | "SIGINT")` that disposes the runtime at
 * the signal, and every operation still waiting on a subgraph fails within a fraction of a second
 * with "operation has been aborted because the server is shutting down" (0 of 200 completed in a
 * separate gateway process), while our drain was waiting for them. We dispose the runtime
 * ourselves, after the drain.
 */
import { spawn } from "node:child_process";
import type { Logger } from "./logger.js";

export interface ShutdownTiming {
  /** Each server's drain deadline (SHUTDOWN_DRAIN_TIMEOUT_MS). */
  drainTimeoutMs: number;
  /** Drains that run one after the other: 2 in `npm start` (the gateway, then the subgraphs). */
  sequentialDrains?: number;
}

/** Time past the drains for disposing the runtime, flushing the query log and closing pools. */
const CLEANUP_MARGIN_MS = 5_000;
/** How long an exit may take once cleanup is done before the watchdog kills the process. */
const EXIT_WATCHDOG_MS = 3_000;

/** The last-resort deadline: every drain may use its whole timeout, and cleanup still gets its margin. */
export function lastResortDeadlineMs({ drainTimeoutMs, sequentialDrains = 1 }: ShutdownTiming): number {
  return drainTimeoutMs * sequentialDrains + CLEANUP_MARGIN_MS;
}

export function exitOnSignals(cleanup: () => Promise<void>, logger: Logger, timing: ShutdownTiming): void {
  const deadlineMs = lastResortDeadlineMs(timing);
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn(`${signal} again: exiting now`);
      exitProcess(1);
    }
    stopping = true;
    logger.info(`${signal} received: draining (up to ${timing.drainTimeoutMs} ms for in-flight requests)`);
    const deadline = setTimeout(() => {
      logger.error(`shutdown took longer than ${deadlineMs} ms: exiting anyway`);
      exitProcess(1);
    }, deadlineMs);
    deadline.unref();
    cleanup().then(
      () => {
        logger.info("stopped");
        exitProcess(0);
      },
      (error: unknown) => {
        logger.error("shutdown failed", error);
        exitProcess(1);
      },
    );
  };
  for (const signal of TERMINATION_SIGNALS) {
    for (const listener of process.listeners(signal)) {
      process.removeListener(signal, listener);
      logger.debug(`${signal}: removed the handler ${listener.name || "(anonymous)"} another library registered; shutdown is ours`);
    }
    process.on(signal, stop);
  }
}

const TERMINATION_SIGNALS = ["SIGTERM", "SIGINT"] as const;

/**
 * Exits explicitly (a timer or socket someone forgot must not keep a stopped process alive),
 * under a watchdog: `process.exit()` first waits for the tasks running on libuv's thread pool
 * (Node joins those threads on exit), and a native task that never ends, such as the Rust query
 * planner on a fragment bomb, would keep a process that has already cleaned up alive forever.
 * The watchdog is a detached process, because Node stops worker threads before it exits.
 */
function exitProcess(code: number): never {
  try {
    spawn(process.execPath, ["-e", EXIT_WATCHDOG, String(process.pid), String(EXIT_WATCHDOG_MS)], { detached: true, stdio: "ignore", env: {} }).unref();
  } catch {
    // No watchdog (e.g. no process slots left): exit without one.
  }
  process.exit(code);
}

/** Kills the process `argv[1]` if it is still alive `argv[2]` ms from now; ends as soon as it is gone. */
const EXIT_WATCHDOG = `
const [pid, ms] = process.argv.slice(1).map(Number);
const killAt = Date.now() + ms;
setInterval(() => {
  try { process.kill(pid, 0); } catch { process.exit(0); }
  if (Date.now() >= killAt) { try { process.kill(pid, "SIGKILL"); } catch {} process.exit(0); }
}, 100);
`;

/** Failures that describe a setup problem the message already explains: printed without a stack. */
const SETUP_ERRORS = new Set(["ConfigError", "MigrationError", "DataDirectoryLockedError", "CompositionError", "SupergraphConfigError", "ToolDefinitionError", "DatasetFetchError", "BeirFormatError", "PortInUseError"]);

/** Runs a command-line entry point and exits 1 on failure. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    const text = error instanceof Error ? (SETUP_ERRORS.has(error.name) ? error.message : (error.stack ?? error.message)) : String(error);
    process.stderr.write(`\n${text}\n`);
    process.exit(1);
  });
}
