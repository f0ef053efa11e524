/**
 * A fresh, migrated database for one test file: an in-memory PGlite by default, or, when
 * DATABASE_URL is set (CI's second pass), a new PostgreSQL database created next to the one
 * the URL names and dropped afterwards, so test files never see each other's rows.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { loadConfig } from "../../lib/config.js";
import { openDatabase, type Database } from "../../lib/database/connect.js";
import { migrate, MIGRATIONS_DIR, readMigrations } from "../../lib/database/migrate.js";
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
    const database =
      options.migrate === false ? await openDatabase({ url: null, pgliteDataDir: "", inMemory: true }) : await openDatabase({ url: null, pgliteDataDir: "", inMemory: true, pgliteImage: await migratedPGliteImage() });
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

const REPOSITORY_ROOT = path.resolve(MIGRATIONS_DIR, "../..");
const IMAGE_FOLDER = path.join(REPOSITORY_ROOT, "node_modules/.cache/context-search-tests");

/**
 * A fresh in-memory PGlite runs initdb in WASM before the migrations: 4-5 s of CPU on CI's
 * machine, paid by every test file that opens one. The migrated data directory is the same for
 * every file, so the first file to need it builds it once and saves it as a tarball; every file
 * then opens its own in-memory copy of it (no two files share a database), which takes about a
 * second. The name holds a hash of the migrations and PGlite's version, so a changed migration
 * or a PGlite upgrade builds a new image instead of opening a stale one. Files racing to build
 * the first image each write their own temporary file and rename it into place, which is atomic.
 */
async function migratedPGliteImage(): Promise<Blob> {
  const pgliteVersion = JSON.parse(fs.readFileSync(path.join(REPOSITORY_ROOT, "node_modules/@electric-sql/pglite/package.json"), "utf8")).version as string;
  const migrations = readMigrations();
  const key = createHash("sha256")
    .update(JSON.stringify([pgliteVersion, migrations.map((migration) => [migration.name, migration.checksum])]))
    .digest("hex")
    .slice(0, 16);
  const file = path.join(IMAGE_FOLDER, `pglite-migrated-${key}.tar`);
  if (fs.existsSync(file)) return new Blob([fs.readFileSync(file)]);

  const database = await openDatabase({ url: null, pgliteDataDir: "", inMemory: true });
  let image: Blob;
  try {
    await migrate(database, migrations);
    image = await database.dumpDataDirectory!();
  } finally {
    await database.close();
  }
  fs.mkdirSync(IMAGE_FOLDER, { recursive: true });
  // Images of older migrations are never opened again.
  for (const stale of fs.readdirSync(IMAGE_FOLDER)) {
    if (stale.startsWith("pglite-migrated-") && stale.endsWith(".tar") && stale !== path.basename(file)) fs.rmSync(path.join(IMAGE_FOLDER, stale), { force: true });
  }
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  fs.writeFileSync(temporary, Buffer.from(await image.arrayBuffer()));
  fs.renameSync(temporary, file);
  return image;
}

function withDatabaseName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}
