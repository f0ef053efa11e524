/**
 * Graceful shutdown for the entry points: on SIGTERM or SIGINT run the cleanup (drain servers,
 * close the database, release the PGlite lock) and exit; if cleanup hangs, exit anyway after a
 * deadline; a second signal exits at once. Embedded Hive Gateway does not exit on its own.
 */
import type { Logger } from "./logger.js";

export function exitOnSignals(cleanup: () => Promise<void>, logger: Logger, deadlineMs = 8_000): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    logger.info(`${signal} received: draining`);
    const deadline = setTimeout(() => {
      logger.error(`shutdown took longer than ${deadlineMs} ms: exiting anyway`);
      process.exit(1);
    }, deadlineMs);
    deadline.unref();
    cleanup().then(
      () => {
        logger.info("stopped");
        process.exit(0);
      },
      (error: unknown) => {
        logger.error("shutdown failed", error);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

/** Failures that describe a setup problem the message already explains: printed without a stack. */
const SETUP_ERRORS = new Set(["ConfigError", "MigrationError", "DataDirectoryLockedError", "CompositionError", "SupergraphConfigError"]);

/** Runs a command-line entry point and exits 1 on failure. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    const text = error instanceof Error ? (SETUP_ERRORS.has(error.name) ? error.message : (error.stack ?? error.message)) : String(error);
    process.stderr.write(`\n${text}\n`);
    process.exit(1);
  });
}
