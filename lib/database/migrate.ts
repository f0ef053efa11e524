/**
 * Applies the committed SQL migrations in prisma/migrations, in name order, keeping Prisma
 * Migrate's `_prisma_migrations` bookkeeping (same table, same sha256 checksums), so that this
 * runner and `prisma migrate deploy` agree on any database. We need our own runner because
 * `prisma migrate` requires a native schema engine that cannot be installed offline.
 */
import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { besideModule } from "../project-files.js";
import type { Database, SqlSession } from "./connect.js";

export const MIGRATIONS_DIR = fileURLToPath(besideModule("../../prisma/migrations", import.meta.url));

/** Prisma Migrate's own advisory lock key: our runner and Prisma's never migrate at the same time. */
const PRISMA_MIGRATE_LOCK_KEY = 72707369;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationResult {
  applied: string[];
  alreadyApplied: number;
}

export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MigrationError";
  }
}

export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(dir, entry.name, "migration.sql")))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

export async function migrate(database: Database, migrations: Migration[] = readMigrations()): Promise<MigrationResult> {
  return database.withSession(async (session) => {
    const usesAdvisoryLock = database.kind === "postgres";
    if (usesAdvisoryLock) await session.query("SELECT pg_advisory_lock($1)", [PRISMA_MIGRATE_LOCK_KEY]);
    try {
      return await applyPending(session, migrations);
    } finally {
      if (usesAdvisoryLock) await session.query("SELECT pg_advisory_unlock($1)", [PRISMA_MIGRATE_LOCK_KEY]);
    }
  });
}

async function applyPending(session: SqlSession, migrations: Migration[]): Promise<MigrationResult> {
  // The exact DDL Prisma Migrate creates, so `prisma migrate status` reads our history.
  await session.exec(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id" VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum" VARCHAR(64) NOT NULL,
    "finished_at" TIMESTAMPTZ,
    "migration_name" VARCHAR(255) NOT NULL,
    "logs" TEXT,
    "rolled_back_at" TIMESTAMPTZ,
    "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count" INTEGER NOT NULL DEFAULT 0
  )`);

  const rows = await session.query<{ migration_name: string; checksum: string; finished_at: Date | null; rolled_back_at: Date | null }>(
    `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"`,
  );
  const history = new Map(rows.filter((row) => row.rolled_back_at === null).map((row) => [row.migration_name, row]));

  const applied: string[] = [];
  let alreadyApplied = 0;
  for (const migration of migrations) {
    const previous = history.get(migration.name);
    if (previous) {
      if (previous.finished_at === null) {
        throw new MigrationError(
          `Migration ${migration.name} started earlier and did not finish. Inspect the database, then mark it ` +
            `rolled back (UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE migration_name = '${migration.name}') to retry it.`,
        );
      }
      if (previous.checksum !== migration.checksum) {
        throw new MigrationError(
          `Migration ${migration.name} was changed after it was applied (checksum differs). ` +
            `Never edit an applied migration: revert the file and add a new migration instead.`,
        );
      }
      alreadyApplied += 1;
      continue;
    }
    // Postgres DDL is transactional: the migration and its history row commit together or not at all,
    // so a failed migration leaves nothing behind and the next start simply retries it.
    await session.exec("BEGIN");
    try {
      await session.exec(migration.sql);
      await session.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
         VALUES ($1, $2, $3, now(), now(), 1)`,
        [randomUUID(), migration.checksum, migration.name],
      );
      await session.exec("COMMIT");
    } catch (error) {
      await session.exec("ROLLBACK");
      throw new MigrationError(`Migration ${migration.name} failed and was rolled back: ${(error as Error).message}`);
    }
    applied.push(migration.name);
  }
  return { applied, alreadyApplied };
}
