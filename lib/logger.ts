/**
 * A small levelled logger writing one line per event to stderr. Deliberately tiny: the gateway
 * runtime brings its own logger, and these lines only need to be greppable in a terminal or a
 * container log. Lines are redacted (lib/secrets/redact.ts) before they are written.
 */
import { redactSecrets } from "./secrets/redact.js";

export type LogLevel = "debug" | "info" | "warn" | "error";

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string, error?: unknown): void;
  child(name: string): Logger;
}

export function createLogger(name: string, level: LogLevel = "info"): Logger {
  const write = (at: LogLevel, message: string) => {
    if (RANK[at] < RANK[level]) return;
    // Every line goes through redaction: tokens, keys and passwords never reach a log.
    process.stderr.write(`${new Date().toISOString()} ${at.toUpperCase().padEnd(5)} [${name}] ${redactSecrets(message)}\n`);
  };
  return {
    debug: (message) => write("debug", message),
    info: (message) => write("info", message),
    warn: (message) => write("warn", message),
    error: (message, error) => write("error", error instanceof Error ? `${message}: ${error.stack ?? error.message}` : message),
    child: (child) => createLogger(`${name}:${child}`, level),
  };
}

/** For tests and embedding: drops everything. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silentLogger,
};

/**
 * A warning for a condition that repeats while it lasts (a Redis or replica outage hit by every
 * request): logged at once, then at most once per `intervalMs`, so the outage is visible without
 * flooding the log. One per condition: each keeps its own clock.
 */
export function throttledWarning(logger: Logger, intervalMs = 30_000): (message: string) => void {
  let lastAt = Number.NEGATIVE_INFINITY;
  return (message) => {
    const now = Date.now();
    if (now - lastAt < intervalMs) return;
    lastAt = now;
    logger.warn(message);
  };
}
