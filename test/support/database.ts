/**
 * A fresh, migrated database for one test file: an in-memory PGlite by default, or, when
 * DATABASE_URL is set (CI's second pass), a new PostgreSQL database created next to the one
 * the URL names and dropped afterwards, so test files never see each other's rows.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
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

/**
 * What a migrated database holds before a file's tests begin, the same for every file that names
 * it (the demo organization, for the browser tests). On PGlite it is prepared once per run and
 * copied; on PostgreSQL each file's database is prepared anew.
 */
export interface StartingPoint {
  /** Names the image file: one name, one preparation. */
  name: string;
  prepare(database: Database): Promise<void>;
}

export interface TestDatabaseOptions {
  migrate?: boolean;
  /** Prepared after the migrations (needs them). */
  startingPoint?: StartingPoint;
  /** PostgreSQL only: the URL the database is opened at, from its own (a TcpProxy's urlFor, to cut the connection in a test). */
  connectAt?: (url: string) => string;
  /** PostgreSQL only: where the pools' connection warnings go (default: nowhere). */
  logger?: Logger;
}

export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const baseUrl = loadConfig().database.url;
  if (!baseUrl) {
    if (options.migrate === false) {
      const database = await openDatabase({ url: null, pgliteDataDir: "", inMemory: true });
      return { database, url: null, dispose: () => database.close() };
    }
    const image = await pgliteImage(options.startingPoint ?? null);
    const database = await openDatabase({ url: null, pgliteDataDir: "", inMemory: true, ...(image ? { pgliteImage: image } : {}) });
    try {
      if (!image) {
        await migrate(database);
        await options.startingPoint?.prepare(database);
      }
    } catch (error) {
      await database.close();
      throw error;
    }
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
  const created: TestDatabase = {
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
  if (options.startingPoint && options.migrate !== false) {
    try {
      await options.startingPoint.prepare(database);
    } catch (error) {
      await created.dispose();
      throw error;
    }
  }
  return created;
}

/**
 * A fresh in-memory PGlite starts from the empty cluster's image (lib/database/pglite-cluster-image.ts)
 * and runs the migrations: 1-2 s of CPU on CI's machine, paid by every test file that opens one;
 * the browser tests then seed the demo organization, another 10-20 s. What that leaves is the same for every file, so the first file
 * of a run to need it builds it once and saves the data directory as a tarball (an image); every
 * file then opens its own in-memory copy (no two files share a database), in about a second.
 * Images live in a folder made for the Jest run (test/support/global-setup.mjs) and removed after
 * it, so no image outlives the code that built it.
 */
async function pgliteImage(startingPoint: StartingPoint | null): Promise<Blob | null> {
  const folder = process.env.TEST_DATABASE_IMAGES;
  if (!folder) return null;
  const build = async (): Promise<Blob> => {
    const base = startingPoint ? await pgliteImage(null) : null;
    const database = await openDatabase({ url: null, pgliteDataDir: "", inMemory: true, ...(base ? { pgliteImage: base } : {}) });
    try {
      if (!base) await migrate(database);
      await startingPoint?.prepare(database);
      return await database.dumpDataDirectory!();
    } finally {
      await database.close();
    }
  };
  const file = path.join(folder, `${startingPoint?.name ?? "migrated"}.tar`);
  const lock = `${file}.lock`;
  const deadline = Date.now() + IMAGE_WAIT_MS;
  // One file builds, the others wait for it: the lock is created exclusively, and the image is
  // written under another name and renamed into place, so nobody reads half of one.
  for (;;) {
    if (fs.existsSync(file)) return new Blob([fs.readFileSync(file)]);
    let descriptor: number;
    try {
      descriptor = fs.openSync(lock, "wx");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (Date.now() > deadline) throw new Error(`${lock} is still held after ${IMAGE_WAIT_MS / 1000} s: a test process that was building ${path.basename(file)} died; remove the lock`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    try {
      const image = await build();
      const temporary = `${file}.${process.pid}`;
      fs.writeFileSync(temporary, Buffer.from(await image.arrayBuffer()));
      fs.renameSync(temporary, file);
      return image;
    } finally {
      fs.closeSync(descriptor);
      fs.rmSync(lock, { force: true });
    }
  }
}

/** Seeding the demo organization takes up to a minute on a machine running two test files at once. */
const IMAGE_WAIT_MS = 180_000;

function withDatabaseName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}
