/**
 * The migration runner against a real database: it applies the committed migrations once,
 * keeps Prisma Migrate's bookkeeping (so `prisma migrate status` agrees), refuses edited
 * migrations, and leaves nothing behind when one fails.
 */
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { migrate, MigrationError, readMigrations } from "../../lib/database/migrate.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

let db: TestDatabase;
beforeEach(async () => {
  db = await createTestDatabase({ migrate: false });
});
afterEach(async () => db.dispose());

describe("migrate", () => {
  it("applies every committed migration once, recording Prisma's checksums", async () => {
    const migrations = readMigrations();
    expect(migrations.length).toBeGreaterThan(0);
    expect(await migrate(db.database)).toEqual({ applied: migrations.map((m) => m.name), alreadyApplied: 0 });
    expect(await migrate(db.database)).toEqual({ applied: [], alreadyApplied: migrations.length });
    const rows = await db.database.withSession((s) => s.query<{ migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number }>(`SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name`));
    expect(rows.map((row) => row.migration_name)).toEqual(migrations.map((m) => m.name));
    for (const [index, row] of rows.entries()) {
      expect(row.checksum).toBe(createHash("sha256").update(migrations[index]!.sql).digest("hex"));
      expect(row.finished_at).not.toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }
  });

  it("refuses a migration edited after it was applied", async () => {
    const migrations = readMigrations();
    await migrate(db.database, migrations);
    const edited = migrations.map((m, i) => (i === 0 ? { ...m, sql: `${m.sql}\n-- edit`, checksum: "0".repeat(64) } : m));
    await expect(migrate(db.database, edited)).rejects.toThrow(/was changed after it was applied/);
  });

  it("rolls back a failing migration completely so the next start retries it", async () => {
    const broken = { name: "20990101000000_broken", sql: "CREATE TABLE half_done (id int); SELECT * FROM no_such_table;", checksum: "b".repeat(64) };
    const error = await migrate(db.database, [...readMigrations(), broken]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationError);
    expect((error as Error).message).toMatch(/20990101000000_broken failed and was rolled back: .*no_such_table/);
    const leftovers = await db.database.withSession((s) => s.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'`));
    expect(leftovers).toEqual([]);
    const history = await db.database.withSession((s) => s.query(`SELECT 1 FROM "_prisma_migrations" WHERE migration_name = $1`, [broken.name]));
    expect(history).toEqual([]);
  });
});
