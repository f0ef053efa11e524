/**
 * A process whose libuv thread pool is busy for hours (as the Rust query planner is on a
 * fragment bomb) and whose cleanup itself is instant: what `exitOnSignals` must still end.
 * Used by test/e2e/graceful-drain.test.ts.
 */
import crypto from "node:crypto";
import { silentLogger } from "../../lib/logger.js";
import { exitOnSignals } from "../../lib/shutdown.js";

crypto.pbkdf2("password", "salt", 2_000_000_000, 64, "sha512", () => undefined);
exitOnSignals(async () => void process.stdout.write("cleaned up\n"), silentLogger, { drainTimeoutMs: 100 });
process.stdout.write("ready\n");
