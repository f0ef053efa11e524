/**
 * The aggregates `searchSuggestions` reads past queries from (migration
 * 20261203130000_search_suggestions): filled from the query log that existed before the
 * migration, then kept by the trigger on every batched INSERT into search_queries. A user's
 * query counts once per user however often it is asked; spellings that differ only in case
 * and whitespace are one query; a query over 200 characters is not kept.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { migrate, readMigrations } from "../../lib/database/migrate.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

// One database for the file (the first test migrates it in two steps, the second uses another organization).
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
}, 120_000);
afterAll(async () => db?.dispose());

const sql = <T,>(text: string, values: unknown[] = []) => db.database.withSession((s) => s.query<T>(text, values));

/** One multi-row INSERT, as the query log writes its batches. */
async function logQueries(rows: [organization: string, user: string, query: string, at: string][]): Promise<void> {
  const values = rows.map((_, index) => `($${index * 4 + 1}, $${index * 4 + 2}, $${index * 4 + 3}, 1, '[]', 0, NULL, false, 1, $${index * 4 + 4}::timestamptz)`).join(", ");
  await sql(`INSERT INTO search_queries (organization_id, user_id, query, alpha, providers, results, top_score, cache_hit, took_ms, created_at) VALUES ${values}`, rows.flat());
}

const users = (organizations: string[]) =>
  sql<{ organization_id: string; user_id: string; key: string; query: string; times: number }>(`SELECT organization_id, user_id, key, query, times FROM search_query_users WHERE organization_id = ANY($1) ORDER BY organization_id, user_id, key`, [organizations]);
const totals = (organizations: string[]) =>
  sql<{ organization_id: string; key: string; users: number; times: number }>(`SELECT organization_id, key, users, times FROM search_query_totals WHERE organization_id = ANY($1) ORDER BY organization_id, key`, [organizations]);

describe("past-query aggregates", () => {
  it("are backfilled from the query log that existed before the migration", async () => {
    const migrations = readMigrations();
    const at = migrations.findIndex((m) => m.name.endsWith("_search_suggestions"));
    expect(at).toBeGreaterThan(0);
    await migrate(db.database, migrations.slice(0, at));
    await logQueries([
      ["acme", "ann", "Deadlock  detection", "2026-12-01T10:00:00Z"],
      ["acme", "ann", "deadlock detection ", "2026-12-01T11:00:00Z"],
      ["acme", "bob", "DEADLOCK detection", "2026-12-01T09:00:00Z"],
      ["acme", "cat", "deadlock\tdetection", "2026-12-01T09:30:00Z"],
      ["acme", "cat", "x".repeat(201), "2026-12-01T09:30:00Z"],
      ["globex", "gus", "deadlock detection", "2026-12-01T08:00:00Z"],
    ]);
    await migrate(db.database, migrations);
    expect(await users(["acme", "globex"])).toEqual([
      { organization_id: "acme", user_id: "ann", key: "deadlock detection", query: "deadlock detection", times: 2 },
      { organization_id: "acme", user_id: "bob", key: "deadlock detection", query: "DEADLOCK detection", times: 1 },
      { organization_id: "acme", user_id: "cat", key: "deadlock detection", query: "deadlock detection", times: 1 },
      { organization_id: "globex", user_id: "gus", key: "deadlock detection", query: "deadlock detection", times: 1 },
    ]);
    expect(await totals(["acme", "globex"])).toEqual([
      { organization_id: "acme", key: "deadlock detection", users: 3, times: 4 },
      { organization_id: "globex", key: "deadlock detection", users: 1, times: 1 },
    ]);
  });

  it("are kept by the trigger on each batch: distinct users counted once, the latest spelling kept", async () => {
    await migrate(db.database); // already done by the first test, unless this one runs alone
    await logQueries([
      ["initech", "ann", "Kafka lag", "2026-12-02T10:00:00Z"],
      ["initech", "ann", "kafka LAG", "2026-12-02T10:00:01Z"],
      ["initech", "bob", "kafka lag", "2026-12-02T10:00:02Z"],
    ]);
    expect(await totals(["initech"])).toEqual([{ organization_id: "initech", key: "kafka lag", users: 2, times: 3 }]);
    // A later batch: ann again (no new user), cat (the third), and an older spelling of ann's arriving late.
    await logQueries([
      ["initech", "ann", "KAFKA lag", "2026-12-02T09:00:00Z"],
      ["initech", "cat", "kafka   lag", "2026-12-02T10:05:00Z"],
    ]);
    expect(await totals(["initech"])).toEqual([{ organization_id: "initech", key: "kafka lag", users: 3, times: 5 }]);
    expect((await users(["initech"])).map((row) => [row.user_id, row.query, row.times])).toEqual([
      ["ann", "kafka LAG", 3],
      ["bob", "kafka lag", 1],
      ["cat", "kafka lag", 1],
    ]);
  });
});
