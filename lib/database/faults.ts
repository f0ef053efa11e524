/**
 * Which database failures mean "the database is not there right now" rather than "this
 * statement is wrong": a server that refuses connections, is restarting, was dropped or will
 * not accept connections to this database, a lost socket, a pool that found no connection in
 * time, a closed PGlite. Callers cannot fix those, and retrying later may succeed, so every
 * subgraph answers them with SERVICE_UNAVAILABLE and a retry hint instead of
 * INTERNAL_SERVER_ERROR, and search providers report them in words instead of a SQLSTATE.
 *
 * The same failure reaches us in several wrappings: the pg driver's error (SQLSTATE in `code`,
 * or a Node socket code), Prisma's known-request error around a driver-adapter error
 * (`meta.driverAdapterError.cause` with `originalCode` or a `kind`), Prisma's own connection
 * codes (P1001 ...), a GraphQL error's `originalError`, or plain messages from pg's pool and
 * PGlite. databaseFault() looks through all of them.
 */
/** How long a caller is told to wait before trying again after a database fault. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * SQLSTATEs of an unavailable database: class 08 (connection exception), 57P01-57P03
 * (admin_shutdown, crash_shutdown, cannot_connect_now), 53300 (too_many_connections), 3D000
 * (invalid_catalog_name: the database was dropped), 55000 (object_not_in_prerequisite_state,
 * which PostgreSQL sends for "database is not currently accepting connections" once
 * ALLOW_CONNECTIONS is false), 25006 (read_only_sql_transaction: a write reached a hot standby,
 * which is what a failover looks like from the moment the primary is gone until the standby is
 * promoted; docs/deployment.md). Our own read-only sessions (tenant reads) never write, so a
 * 25006 from one of them would be a bug reported as "try again": the tests that run every write
 * path would see it first.
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300|3D000|55000|25006)$/;

/** Node's socket failures (pg's own errors when it never reached the server or lost it). */
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "EPIPE", "EAI_AGAIN"]);

/** Prisma's connection errors: can't reach, timed out, database does not exist, connection pool timeout, server closed the connection. */
const PRISMA_CONNECTION_CODES = new Set(["P1001", "P1002", "P1003", "P1008", "P1017", "P2024"]);

/** What Prisma's pg adapter calls a driver failure when it knows it. */
const ADAPTER_KINDS = new Set(["DatabaseNotReachable", "DatabaseDoesNotExist", "ConnectionClosed", "SocketTimeout", "TooManyConnections"]);

/** Messages without a code: pg's pool and client, and PGlite. */
const UNAVAILABLE_MESSAGE = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end|Client was closed|PGlite is closed)/i;

export interface DatabaseFault {
  /** The SQLSTATE, socket code, Prisma code or adapter kind that decided it (for the log, never the client). */
  reason: string;
}

/** The database fault behind an error, if it is one (looking through Prisma, GraphQL and cause wrappings). */
export function databaseFault(error: unknown): DatabaseFault | null {
  return inErrorChain(error, (fields) => {
    for (const code of [fields.code, fields.originalCode]) {
      if (typeof code !== "string") continue;
      if (UNAVAILABLE_SQLSTATE.test(code) || SOCKET_CODES.has(code) || PRISMA_CONNECTION_CODES.has(code)) return { reason: code };
    }
    if (typeof fields.kind === "string" && ADAPTER_KINDS.has(fields.kind)) return { reason: fields.kind };
    if (typeof fields.message === "string" && UNAVAILABLE_MESSAGE.test(fields.message)) return { reason: fields.message.slice(0, 80) };
    return null;
  });
}

/**
 * A missing table, column, function or type: SQLSTATE 42P01 (undefined_table), 42703
 * (undefined_column), 42883 (undefined_function) or 42704 (undefined_object), as the pg driver
 * and Prisma report them (P2021, P2022, or its adapter's TableDoesNotExist and ColumnNotFound).
 * On a hot standby this is what a migration the standby has not replayed yet looks like: the
 * code was deployed for the primary's schema, and the standby is behind it (by its replication
 * lag, or by a configured apply delay). On the primary it is a bug, and is reported as one.
 */
export function schemaBehind(error: unknown): DatabaseFault | null {
  return inErrorChain(error, (fields) => {
    for (const code of [fields.code, fields.originalCode]) if (typeof code === "string" && SCHEMA_BEHIND_CODES.has(code)) return { reason: code };
    if (typeof fields.kind === "string" && SCHEMA_BEHIND_KINDS.has(fields.kind)) return { reason: fields.kind };
    return null;
  });
}

const SCHEMA_BEHIND_CODES = new Set(["42P01", "42703", "42883", "42704", "P2021", "P2022"]);
const SCHEMA_BEHIND_KINDS = new Set(["TableDoesNotExist", "ColumnNotFound"]);

interface ErrorFields {
  code?: unknown;
  originalCode?: unknown;
  kind?: unknown;
  message?: unknown;
  meta?: { driverAdapterError?: unknown };
  cause?: unknown;
  originalError?: unknown;
}

/** The first answer `match` gives for an error or one of its wrappings (Prisma's adapter error, `cause`, GraphQL's `originalError`). */
function inErrorChain<T>(error: unknown, match: (fields: ErrorFields) => T | null): T | null {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  // A few levels cover every wrapping we know; the bound keeps a cyclic or hostile chain cheap.
  for (let visited = 0; pending.length > 0 && visited < 16; visited += 1) {
    const current = pending.shift();
    if (typeof current !== "object" || current === null || seen.has(current)) continue;
    seen.add(current);
    const fields = current as ErrorFields;
    const found = match(fields);
    if (found !== null) return found;
    pending.push(fields.meta?.driverAdapterError, fields.cause, fields.originalError);
  }
  return null;
}

/** The SQLSTATE of a PostgreSQL error, as the pg driver, PGlite or Prisma's raw-query errors carry it. */
export function sqlStateOf(error: unknown): string | null {
  if (typeof error !== "object" || error === null) return null;
  const adapterCause = (error as { meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } } }).meta?.driverAdapterError?.cause;
  const candidates = [(error as { code?: unknown }).code, (error as { meta?: { code?: unknown } }).meta?.code, adapterCause?.originalCode, (error as { cause?: { code?: unknown } }).cause?.code];
  const message = error instanceof Error ? error.message : "";
  candidates.push(/\bCode: `([0-9A-Z]{5})`/.exec(message)?.[1]);
  for (const candidate of candidates) if (typeof candidate === "string" && /^[0-9A-Z]{5}$/.test(candidate) && !candidate.startsWith("P")) return candidate;
  return null;
}
