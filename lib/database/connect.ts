/**
 * Opens the database the configuration names: PostgreSQL through `pg` when DATABASE_URL is set,
 * otherwise the embedded PGlite (WASM PostgreSQL) in a local folder, so a first `npm start`
 * needs no server. Both run the same SQL and the same migrations.
 */
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite/vector";
import { btree_gist } from "@electric-sql/pglite/contrib/btree_gist";
import { fuzzystrmatch } from "@electric-sql/pglite/contrib/fuzzystrmatch";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "../../generated/prisma/client.js";
import { redactUrl } from "../config.js";
import { createLogger, type Logger } from "../logger.js";
import { clusterImage, isNewDataDirectory } from "./pglite-cluster-image.js";
import { lockDataDirectory, type DataDirectoryLock } from "./pglite-lock.js";
import { withEventLoopTurns } from "./pglite-turns.js";
import { recordFinishedSpan, sqlSpanName } from "../observability/tracing.js";
import { handleClientErrors } from "./pool-errors.js";
import { registerTenantReadPool, registerTenantReadTurns, tenantReadTurns, TenantReadPool } from "./tenant-reads.js";
import { registerReplica, ReplicaReads } from "./replica-reads.js";
import { RedisWritePositions } from "./write-positions.js";
import type { ReplicaConfig } from "../config.js";

/** One connection for work that must stay on a single session (migrations, advisory locks). */
export interface SqlSession {
  /** Runs one or more statements with no parameters (simple query protocol). */
  exec(sql: string): Promise<void>;
  /**
   * With `name`, PostgreSQL prepares the statement under that name on this connection once and
   * reuses it (benchmarks compare it with the unnamed form); PGlite ignores the name.
   */
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[], name?: string): Promise<Row[]>;
}

export interface Database {
  kind: "postgres" | "pglite";
  prisma: PrismaClient;
  /** Human-readable location for logs, with any password hidden. */
  location: string;
  withSession<T>(work: (session: SqlSession) => Promise<T>): Promise<T>;
  /** Counts SQL statements Prisma sends, for tests and benchmarks that prove batching. */
  statements: StatementCounter;
  /** Open, idle and awaited connections of the `pg` pool (metrics read it on scrape); absent for PGlite, which has one connection. */
  poolUse?(): { total: number; idle: number; waiting: number };
  /** The hot standby search reads and entity loads may go to (DATABASE_READ_URL; replica-reads.ts); absent: none. */
  replica?: ReplicaReads;
  /** PGlite only: an uncompressed tarball of the data directory, which `pgliteImage` opens a copy of. */
  dumpDataDirectory?(): Promise<Blob>;
  close(): Promise<void>;
}

export interface StatementCounter {
  /** Statements that read or write data: what batching tests and benchmarks count. */
  count: number;
  /**
   * Transaction control and tenant-scope setup (BEGIN/COMMIT, the scope's set_config): the
   * price of row-level security per transaction, counted apart so it stays visible.
   */
  overhead: number;
  log: string[];
  reset(): void;
}

export interface DatabaseOptions {
  url: string | null;
  pgliteDataDir: string;
  /** Use an in-memory PGlite (tests); ignores pgliteDataDir and takes no lock. */
  inMemory?: boolean;
  /**
   * In-memory PGlite only: start from this data directory (a `dumpDataDirectory` tarball)
   * instead of the empty cluster's image (pglite-cluster-image.ts): tests open a copy of one
   * migrated image, which skips the migrations too (test/support/database.ts).
   */
  pgliteImage?: Blob;
  poolSize?: number;
  /** How long a PostgreSQL pool waits for a connection before the statement fails (default 10 s; unbounded, a request would hang on a database that is gone). */
  connectTimeoutMs?: number;
  /** Where connection failures of idle pooled clients go (default: a logger named "database"). */
  logger?: Logger;
  /** PostgreSQL only: a hot standby of `url` for search reads and entity loads (replica-reads.ts). */
  replica?: ReplicaConfig | null;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.url ? openPostgres(options.url, options) : openPGlite(options);
}

async function openPostgres(url: string, options: DatabaseOptions): Promise<Database> {
  const poolSize = options.poolSize ?? 10;
  const connectionTimeoutMillis = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const logger = options.logger ?? createLogger("database");
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis });
  handleClientErrors(pool, logger, "PostgreSQL");
  const statements = createStatementCounter();
  const prisma = withStatementCounting(new PrismaClient({ adapter: new PrismaPg(pool), log: [{ emit: "event", level: "query" }] }), statements);
  // Hot search reads run on their own session-scoped connections (tenant-reads.ts), never
  // mixed with owner work: half the main pool's size, at least two.
  const tenantReads = new TenantReadPool({ connectionString: url, max: Math.max(2, Math.ceil(poolSize / 2)), connectionTimeoutMillis, statements, logger });
  registerTenantReadPool(prisma, tenantReads);
  const replica = options.replica ? openReplica(options.replica, pool, { poolSize, connectionTimeoutMillis, logger }) : undefined;
  if (replica) registerReplica(prisma, replica);
  return {
    kind: "postgres",
    prisma,
    ...(replica ? { replica } : {}),
    location: replica ? `${redactUrl(url)} (reads: ${replica.location})` : redactUrl(url),
    statements,
    poolUse: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async withSession(work) {
      const client = await pool.connect();
      try {
        return await work({
          exec: async (sql) => void (await client.query(sql)),
          query: async (sql, params, name) => (await client.query(name ? { name, text: sql, values: params ?? [] } : { text: sql, values: params ?? [] })).rows,
        });
      } finally {
        client.release();
      }
    },
    async close() {
      await replica?.close();
      await prisma.$disconnect();
      await tenantReads.close();
      await pool.end();
    },
  };
}

/**
 * The replica's side: a Prisma client and a tenant-read pool of the same sizes as the primary's
 * (reads are what moves there), a one-connection pool for the replay probe, and the write
 * positions in Redis when configured. Its statements are counted apart from the primary's.
 */
function openReplica(config: ReplicaConfig, primaryPool: pg.Pool, sizes: { poolSize: number; connectionTimeoutMillis: number; logger: Logger }): ReplicaReads {
  const { poolSize, connectionTimeoutMillis, logger } = sizes;
  const statements = createStatementCounter();
  const pool = new pg.Pool({ connectionString: config.url, max: poolSize, connectionTimeoutMillis });
  handleClientErrors(pool, logger, "replica");
  const prisma = withStatementCounting(new PrismaClient({ adapter: new PrismaPg(pool), log: [{ emit: "event", level: "query" }] }), statements);
  const tenantReads = new TenantReadPool({ connectionString: config.url, max: Math.max(2, Math.ceil(poolSize / 2)), connectionTimeoutMillis, statements, logger });
  // A probe that cannot answer within a second says "down": reads then go to the primary.
  const probePool = new pg.Pool({ connectionString: config.url, max: 1, connectionTimeoutMillis: Math.min(1_000, connectionTimeoutMillis), query_timeout: 1_000 });
  handleClientErrors(probePool, logger, "replica probe");
  const maxLagMs = config.maxLagSeconds * 1000;
  return new ReplicaReads({
    tenantReads,
    prisma,
    probePool,
    primaryPosition: async () => (await primaryPool.query<{ position: string }>("SELECT pg_current_wal_lsn()::text AS position")).rows[0]!.position,
    sharedPositions: config.redisUrl ? new RedisWritePositions(config.redisUrl, config.redisKeyPrefix, maxLagMs, logger) : null,
    maxLagMs,
    statements,
    location: redactUrl(config.url),
    logger,
  });
}

/**
 * pgvector ships inside PGlite 0.4.x (0.5.x has none yet: keep 0.4.6 until it does). The three
 * contrib extensions serve typo tolerance (the search_vocabulary migration).
 */
export const PGLITE_EXTENSIONS = { vector, pg_trgm, btree_gist, fuzzystrmatch };

async function openPGlite(options: DatabaseOptions): Promise<Database> {
  let lock: DataDirectoryLock | null = null;
  if (!options.inMemory) lock = lockDataDirectory(options.pgliteDataDir);
  let client: PGlite;
  try {
    let location: { dataDir?: string; loadDataDir?: Blob };
    // A new database starts from the prebuilt empty cluster instead of running initdb (pglite-cluster-image.ts).
    if (options.inMemory) location = { loadDataDir: options.pgliteImage ?? (await clusterImage(PGLITE_EXTENSIONS)) };
    else if (isNewDataDirectory(options.pgliteDataDir)) location = { dataDir: options.pgliteDataDir, loadDataDir: await clusterImage(PGLITE_EXTENSIONS) };
    else location = { dataDir: options.pgliteDataDir };
    client = new PGlite({ ...location, extensions: PGLITE_EXTENSIONS });
    await client.waitReady;
  } catch (error) {
    lock?.release();
    throw error;
  }
  const statements = createStatementCounter();
  // A turn of the event loop before each statement: PGlite's run on this thread (pglite-turns.ts).
  const prisma = withStatementCounting(new PrismaClient({ adapter: new PrismaPGlite(withEventLoopTurns(client)), log: [{ emit: "event", level: "query" }] }), statements);
  // Its scope transactions take turns by organization (tenant-reads.ts), one at a time as PGlite runs them.
  registerTenantReadTurns(prisma, tenantReadTurns(1, 60_000));
  // PGlite has a single connection: the session is the client itself.
  const session: SqlSession = {
    exec: async (sql) => void (await client.exec(sql)),
    query: async <Row>(sql: string, params?: unknown[]) => (await client.query<Row>(sql, params)).rows,
  };
  return {
    kind: "pglite",
    prisma,
    location: options.inMemory ? "PGlite (in memory)" : `PGlite at ${options.pgliteDataDir}`,
    statements,
    withSession: (work) => work(session),
    dumpDataDirectory: async () => await client.dumpDataDir("none"),
    async close() {
      try {
        await prisma.$disconnect();
        await client.close();
      } finally {
        lock?.release();
      }
    },
  };
}

function createStatementCounter(): StatementCounter {
  return {
    count: 0,
    overhead: 0,
    log: [],
    reset() {
      this.count = 0;
      this.overhead = 0;
      this.log = [];
    },
  };
}

/** Prisma's log lines for transaction control, and the statement that opens a tenant scope. */
const OVERHEAD_STATEMENT = /^(-- Implicit "(BEGIN|COMMIT|ROLLBACK)"|BEGIN|COMMIT|ROLLBACK|SELECT set_config\(setting\.name)/;

function withStatementCounting(prisma: PrismaClient<"query">, counter: StatementCounter): PrismaClient {
  prisma.$on("query", (event) => {
    if (OVERHEAD_STATEMENT.test(event.query)) counter.overhead += 1;
    else counter.count += 1;
    if (counter.log.length < 1000) counter.log.push(event.query);
    // A span per statement when the request is traced: the text is our SQL, its parameters are not recorded.
    recordFinishedSpan(sqlSpanName(event.query), { "db.system.name": "postgresql", "db.query.text": event.query }, event.timestamp, event.duration);
  });
  return prisma as unknown as PrismaClient;
}
