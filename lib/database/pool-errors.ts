/**
 * Connection errors of pooled PostgreSQL clients, handled for the client's whole life.
 *
 * A connection the server ends (a failover, pg_terminate_backend, PgBouncer losing its server)
 * emits 'error' on its `pg` Client. pg.Pool listens only while a client is idle in the pool;
 * while it is checked out (inside a transaction between two statements, a tenant read between
 * its statements) nothing listens, and Node turns an unhandled 'error' event into the exit of
 * the whole process. The topology's failover drill saw exactly that: both search processes
 * exited on 57P01 ("terminating connection due to administrator command") and PgBouncer's
 * 08P01. With a listener on every client from its first connect, the error is logged instead;
 * the client is no longer queryable, so its next statement fails (a database fault the caller
 * already maps to a retryable error) and pg.Pool drops it when it is released.
 */
import type pg from "pg";
import type { Logger } from "../logger.js";

export function handleClientErrors(pool: pg.Pool, logger: Logger, label: string): void {
  // The client's own listener below logs it; the pool's event needs a listener all the same,
  // or pg.Pool's re-emission of an idle client's error would be the unhandled one.
  pool.on("error", () => undefined);
  pool.on("connect", (client) => {
    client.on("error", (error) => logger.warn(`${label} connection failed: ${error.message}`));
  });
}
