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

  it("upgrades keyword postings: each gets its conversation's length, renames made before are repaired, and later renames re-index", async () => {
    const migrations = readMigrations();
    const at = migrations.findIndex((m) => m.name.endsWith("_keyword_search_at_scale"));
    expect(at).toBeGreaterThan(0);
    await migrate(db.database, migrations.slice(0, at));
    const sql = <T,>(text: string, values: unknown[] = []) => db.database.withSession((s) => s.query<T>(text, values));
    await sql(`INSERT INTO organizations (id, name) VALUES ('acme', 'Acme')`);
    await sql(`INSERT INTO users (organization_id, id) VALUES ('acme', 'ann')`);
    const [before] = await sql<{ id: string }>(
      `INSERT INTO conversations (id, organization_id, user_id, title) VALUES (gen_random_uuid(), 'acme', 'ann', 'Deadlock in the order service') RETURNING id::text`,
    );
    // Before the fix, a rename did not reach the postings. The new title: deadlock ×2, order,
    // servic ("again", "in", "the" are stop words) = 4.
    await sql(`UPDATE conversations SET title = 'Deadlock deadlock in the order service again' WHERE id = $1`, [before!.id]);
    await migrate(db.database, migrations);
    const lengths = async () =>
      sql<{ posting: number; document: number }>(
        `SELECT DISTINCT p.document_length AS posting, d.length AS document FROM keyword_postings p JOIN keyword_documents d USING (conversation_id) WHERE conversation_id = $1`,
        [before!.id],
      );
    expect(await lengths()).toEqual([{ posting: 4, document: 4 }]);
    const terms = async () => (await sql<{ term: string }>(`SELECT term FROM keyword_postings WHERE conversation_id = $1 ORDER BY term`, [before!.id])).map((row) => row.term);
    expect(await terms()).toEqual(["deadlock", "order", "servic"]);
    await sql(`UPDATE conversations SET title = 'Deadlock' WHERE id = $1`, [before!.id]);
    expect(await lengths()).toEqual([{ posting: 1, document: 1 }]);
    expect(await terms()).toEqual(["deadlock"]);
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
