/**
 * Row-level security as the second wall: inside a tenant scope, a statement that forgets its
 * organization filter sees (and changes) only the caller's organization's rows, and writing
 * another organization's row is refused; the policies cover every tenant table, including the
 * ones a later migration adds.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { TENANT_ROLE, withTenantScope } from "../../lib/database/tenant-scope.js";
import { ConversationStore } from "../../subgraphs/conversations/conversation-store.js";
import { createTestDatabase, usingPostgres, type TestDatabase } from "../support/database.js";

let db: TestDatabase;

const tenant = (organizationId: string, userId: string) => ({ organizationId, userId, teamIds: [], role: "member" as const, userName: null, userEmail: null });
const acme = tenant("acme", "ann");
const globex = tenant("globex", "gus");

beforeAll(async () => {
  db = await createTestDatabase();
  const store = new ConversationStore(db.database.prisma);
  for (const [who, title] of [
    [acme, "Acme roadmap"],
    [acme, "Acme hiring"],
    [globex, "Globex secret merger"],
  ] as const) {
    await store.create(who, title, [{ role: "user", content: `${title}: details`, tokenCount: 3 }]);
  }
});

afterAll(async () => {
  await db?.dispose();
});

const count = async (organizationId: string, table: string) =>
  withTenantScope(db.database.prisma, organizationId, async (tx) => {
    // No WHERE clause on purpose: the policies are the only filter here.
    const [row] = await tx.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${table}`);
    return row!.n;
  });

describe("row-level security", () => {
  it("shows a statement without an organization filter only the caller's rows, in every tenant table", async () => {
    expect(await count("acme", "conversations")).toBe(2);
    expect(await count("globex", "conversations")).toBe(1);
    expect(await count("acme", "messages")).toBe(2);
    expect(await count("globex", "keyword_postings")).toBeGreaterThan(0);
    const acmeTerms = await withTenantScope(db.database.prisma, "acme", (tx) => tx.$queryRaw<{ term: string }[]>`SELECT DISTINCT term FROM keyword_postings`);
    expect(acmeTerms.map((row) => row.term)).not.toContain("merger");
    expect(await count("acme", "search_index_jobs")).toBe(2);
    expect(await count("acme", "organizations")).toBe(1);
    expect(await count("nobody", "conversations")).toBe(0);
  });

  it("changes only the caller's rows, and refuses to write another organization's", async () => {
    const renamed = await withTenantScope(db.database.prisma, "acme", (tx) => tx.$executeRaw`UPDATE conversations SET title = title || ' (reviewed)'`);
    expect(renamed).toBe(2);
    const [globexTitle] = await db.database.prisma.$queryRaw<{ title: string }[]>`SELECT title FROM conversations WHERE organization_id = 'globex'`;
    expect(globexTitle!.title).toBe("Globex secret merger");

    await expect(
      withTenantScope(db.database.prisma, "acme", (tx) => tx.$executeRaw`INSERT INTO organizations (id) VALUES ('globex-2')`),
    ).rejects.toThrow(/row-level security/);
    await expect(
      withTenantScope(db.database.prisma, "acme", (tx) => tx.$executeRaw`DELETE FROM conversations WHERE organization_id = 'globex'`),
    ).resolves.toBe(0);
    expect(await count("globex", "conversations")).toBe(1);
  });

  it("ends with its transaction: the connection goes back to the owner with no organization set", async () => {
    await withTenantScope(db.database.prisma, "acme", async () => undefined);
    const [row] = await db.database.prisma.$queryRaw<{ role: string; organization: string | null }[]>`
      SELECT current_user::text AS role, nullif(current_setting('app.organization_id', true), '') AS organization`;
    expect(row!.role).not.toBe(TENANT_ROLE);
    expect(row!.organization).toBeNull();
  });

  (usingPostgres ? it : it.skip)("cancels a statement of the scope that outlives its statement timeout (PostgreSQL; PGlite has no timer to cancel with)", async () => {
    await expect(withTenantScope(db.database.prisma, "acme", (tx) => tx.$queryRaw`SELECT pg_sleep(5)`, { statementTimeoutMs: 100 })).rejects.toThrow(/statement timeout/);
  });

  it("covers every table that has an organization_id column (a new domain's migration must add its policy)", async () => {
    const tables = await db.database.prisma.$queryRaw<{ table_name: string; secured: boolean; policies: number }[]>`
      SELECT c.relname AS table_name, c.relrowsecurity AS secured,
             (SELECT count(*)::int FROM pg_policy p WHERE p.polrelid = c.oid) AS policies
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
      WHERE c.relkind = 'r'
        AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id' AND NOT a.attisdropped)`;
    expect(tables.length).toBeGreaterThanOrEqual(10);
    for (const table of tables) expect({ table: table.table_name, secured: table.secured, hasPolicy: table.policies > 0 }).toEqual({ table: table.table_name, secured: true, hasPolicy: true });
  });
});
