import type { Logger } from "../../lib/logger.js";

/**
 * A logger that keeps every warning and error (with the error's stack), so a test can say
 * "nothing was logged" or show what was. Children write to the same lines.
 */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const logger: Logger & { lines: string[] } = {
    lines,
    debug() {},
    info() {},
    warn: (message) => void lines.push(`warn ${message}`),
    error: (message, error) => void lines.push(`error ${message} ${error instanceof Error ? (error.stack ?? error.message) : ""}`.slice(0, 2_000)),
    child: () => logger,
  };
  return logger;
}
