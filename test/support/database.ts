/**
 * A fresh, migrated database for one test file: an in-memory PGlite by default, or, when
 * DATABASE_URL is set (CI's second pass), a new PostgreSQL database created next to the one
 * the URL names and dropped afterwards, so test files never see each other's rows.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { loadConfig } from "../../lib/config.js";
import { openDatabase, type Database } from "../../lib/database/connect.js";
import { migrate } from "../../lib/database/migrate.js";
import { silentLogger, type Logger } from "../../lib/logger.js";

export interface TestDatabase {
  database: Database;
  /** The PostgreSQL URL of the throwaway database, or null on PGlite. */
  url: string | null;
  dispose(): Promise<void>;
}

/** Any fixed key: it only has to be the same in every worker. */
const TEST_MIGRATION_LOCK_KEY = 72_110_018;

export const usingPostgres = Boolean(loadConfig().database.url);

export interface TestDatabaseOptions {
  migrate?: boolean;
  /** PostgreSQL only: the URL the database is opened at, from its own (a TcpProxy's urlFor, to cut the connection in a test). */
  connectAt?: (url: string) => string;
  /** PostgreSQL only: where the pools' connection warnings go (default: nowhere). */
  logger?: Logger;
}

export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const baseUrl = loadConfig().database.url;
  if (!baseUrl) {
    const database = await openDatabase({ url: null, pgliteDataDir: "", inMemory: true });
    if (options.migrate !== false) await migrate(database);
    return { database, url: null, dispose: () => database.close() };
  }
  const name = `test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = withDatabaseName(baseUrl, name);
  const database = await openDatabase({ url: options.connectAt?.(url) ?? url, pgliteDataDir: "", poolSize: 5, logger: options.logger ?? silentLogger });
  try {
    // Test files run in parallel workers, each migrating its own database; the migrations also
    // create a cluster-wide role (row-level security), which two first runs would race to create.
    // A lock in the base database, which every worker shares, runs one migration at a time.
    if (options.migrate !== false) {
      await admin.query("SELECT pg_advisory_lock($1)", [TEST_MIGRATION_LOCK_KEY]);
      try {
        await migrate(database);
      } finally {
        await admin.query("SELECT pg_advisory_unlock($1)", [TEST_MIGRATION_LOCK_KEY]);
      }
    }
  } finally {
    await admin.end();
  }
  return {
    database,
    url,
    async dispose() {
      // Dropped even when closing fails (a test that closed or cut the database itself), so no test database is left behind.
      try {
        await database.close();
      } finally {
        const cleanup = new pg.Client({ connectionString: baseUrl });
        await cleanup.connect();
        await cleanup.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await cleanup.end();
      }
    },
  };
}

function withDatabaseName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}
