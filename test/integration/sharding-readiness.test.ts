/**
 * The schema is ready to be sharded by organization (issue 22, item 5). Distributed PostgreSQL
 * (Citus) spreads a tenant table's rows over shards by a distribution column, ours
 * `organization_id`, and then requires that every primary key and unique constraint include
 * it (uniqueness is checked within one shard), and that foreign keys between distributed
 * tables include it on both sides (a reference is checked within one shard, which is also what
 * makes the join co-located). Nothing here lists the tenant tables: the catalog is asked, so a
 * table a later migration adds is held to the same rules the day it is added.
 *
 * A failure prints every violation with the constraint's definition: that is the next thing
 * to fix, in a new migration that keys it by (organization_id, …) as
 * prisma/migrations/*_sharding_ready_keys did for the rest.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { migrate, readMigrations } from "../../lib/database/migrate.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { REFERENCE_TABLES } from "../support/sharding.js";

/**
 * The only tables that may have no organization_id, and why. A new table belongs here only
 * when it is truly not any one tenant's data.
 */
const TABLES_WITHOUT_ORGANIZATION: Record<string, string> = {
  // The tenant table itself: distributed by its own id (co-located with every organization_id)
  // or kept as a reference table copied to every node.
  organizations: "the tenant table",
  // Vectors by (model, sha256 of the text): one text's vector serves every organization, so it
  // is global on purpose (a reference or coordinator-local table).
  embedding_cache: "global, content-addressed",
  // Prisma Migrate's bookkeeping: lives on the coordinator.
  _prisma_migrations: "the migrator's history",
};

const referenceTables = Object.keys(REFERENCE_TABLES);

type Sql = <Row>(text: string, values?: unknown[]) => Promise<Row[]>;

/** Every ordinary or partitioned table of the public schema, and whether it has organization_id. */
async function tables(sql: Sql): Promise<Array<{ name: string; tenant: boolean }>> {
  return sql(
    `SELECT c.relname AS name,
            EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id' AND NOT a.attisdropped) AS tenant
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
     ORDER BY c.relname`,
  );
}

/** Tenant tables whose primary key is missing or lacks organization_id. */
async function primaryKeyViolations(sql: Sql): Promise<string[]> {
  const rows = await sql<{ table: string; definition: string | null }>(
    `SELECT c.relname AS table, pg_get_constraintdef(pk.oid) AS definition
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_attribute org ON org.attrelid = c.oid AND org.attname = 'organization_id' AND NOT org.attisdropped
     LEFT JOIN pg_constraint pk ON pk.conrelid = c.oid AND pk.contype = 'p'
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> ALL ($1::text[])
       AND (pk.oid IS NULL OR NOT org.attnum = ANY (pk.conkey))
     ORDER BY 1`,
    [referenceTables],
  );
  return rows.map((row) => `${row.table}: ${row.definition ?? "no primary key"}`);
}

/**
 * Unique indexes of tenant tables (primary keys and unique constraints are backed by one, and
 * a bare CREATE UNIQUE INDEX is one) whose key columns lack organization_id. INCLUDE columns
 * do not count: they take no part in uniqueness.
 */
async function uniqueIndexViolations(sql: Sql): Promise<string[]> {
  const rows = await sql<{ table: string; definition: string }>(
    `SELECT c.relname AS table, pg_get_indexdef(x.indexrelid) AS definition
     FROM pg_index x
     JOIN pg_class c ON c.oid = x.indrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_attribute org ON org.attrelid = c.oid AND org.attname = 'organization_id' AND NOT org.attisdropped
     WHERE n.nspname = 'public' AND x.indisunique AND c.relname <> ALL ($1::text[])
       AND NOT EXISTS (SELECT 1 FROM generate_series(0, x.indnkeyatts - 1) k WHERE x.indkey[k] = org.attnum)
     ORDER BY 1, 2`,
    [referenceTables],
  );
  return rows.map((row) => `${row.table}: ${row.definition}`);
}

/**
 * Foreign keys between two tenant tables (the parent not a reference table) that do not pair the child's organization_id with the
 * parent's, and ON DELETE SET NULL / SET DEFAULT keys that would null organization_id itself
 * (PostgreSQL 15's column list, `SET NULL (knowledge_base_id)`, keeps it).
 */
async function foreignKeyViolations(sql: Sql): Promise<string[]> {
  const rows = await sql<{ table: string; name: string; definition: string; problem: string }>(
    `SELECT c.relname AS table, f.conname AS name, pg_get_constraintdef(f.oid) AS definition,
            CASE WHEN NOT EXISTS (SELECT 1 FROM generate_subscripts(f.conkey, 1) k WHERE f.conkey[k] = co.attnum AND f.confkey[k] = po.attnum)
                 THEN 'does not pair organization_id with the parent''s'
                 ELSE 'ON DELETE would set organization_id itself' END AS problem
     FROM pg_constraint f
     JOIN pg_class c ON c.oid = f.conrelid
     JOIN pg_class p ON p.oid = f.confrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_attribute co ON co.attrelid = f.conrelid AND co.attname = 'organization_id' AND NOT co.attisdropped
     JOIN pg_attribute po ON po.attrelid = f.confrelid AND po.attname = 'organization_id' AND NOT po.attisdropped
     WHERE n.nspname = 'public' AND f.contype = 'f' AND p.relname <> ALL ($1::text[])
       AND (NOT EXISTS (SELECT 1 FROM generate_subscripts(f.conkey, 1) k WHERE f.conkey[k] = co.attnum AND f.confkey[k] = po.attnum)
            OR (f.confdeltype IN ('n', 'd') AND (f.confdelsetcols IS NULL OR co.attnum = ANY (f.confdelsetcols))))
     ORDER BY 1, 2`,
    [referenceTables],
  );
  return rows.map((row) => `${row.table}.${row.name} ${row.problem}: ${row.definition}`);
}

describe("sharding readiness: every tenant key includes organization_id", () => {
  let db: TestDatabase;
  let sql: Sql;
  beforeAll(async () => {
    db = await createTestDatabase();
    sql = (text, values = []) => db.database.withSession((session) => session.query(text, values));
  });
  afterAll(async () => db?.dispose());

  it("the tables without organization_id are exactly the commented allow-list", async () => {
    const found = await tables(sql);
    // Guards the catalog queries below: an empty public schema would make every check pass.
    expect(found.filter((table) => table.tenant).length).toBeGreaterThan(20);
    expect(found.filter((table) => !table.tenant).map((table) => table.name)).toEqual(Object.keys(TABLES_WITHOUT_ORGANIZATION).sort());
    // A reference table that was dropped or renamed must leave the list, or it would exempt a new table of that name.
    expect(referenceTables.filter((name) => !found.some((table) => table.name === name && table.tenant))).toEqual([]);
  });

  it("every tenant table's primary key includes organization_id", async () => {
    expect(await primaryKeyViolations(sql)).toEqual([]);
  });

  it("every unique constraint and unique index of a tenant table includes organization_id", async () => {
    expect(await uniqueIndexViolations(sql)).toEqual([]);
  });

  it("every foreign key between tenant tables includes organization_id on both sides", async () => {
    expect(await foreignKeyViolations(sql)).toEqual([]);
  });
});

describe("the sharding-ready keys migration", () => {
  let db: TestDatabase;
  let sql: Sql;
  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    sql = (text, values = []) => db.database.withSession((session) => session.query(text, values));
  });
  afterAll(async () => db?.dispose());

  it("re-keys a database that already holds data, keeping every row, and the new keys hold tenancy", async () => {
    const migrations = readMigrations();
    const at = migrations.findIndex((m) => m.name.endsWith("_sharding_ready_keys"));
    expect(at).toBeGreaterThan(0);
    await migrate(db.database, migrations.slice(0, at));
    // A row in every table the migration re-keys, written as the application writes them
    // (triggers fill postings, jobs and vocabulary).
    await sql(`INSERT INTO organizations (id) VALUES ('acme'), ('globex')`);
    await sql(`INSERT INTO users (organization_id, id) VALUES ('acme', 'ann'), ('globex', 'gus')`);
    const [conversation] = await sql<{ id: string }>(`INSERT INTO conversations (id, organization_id, user_id, title) VALUES (gen_random_uuid(), 'acme', 'ann', 'Deadlock in the order service') RETURNING id::text`);
    await sql(
      `INSERT INTO messages (id, conversation_id, organization_id, position, role, content, token_count)
       VALUES (gen_random_uuid(), $1, 'acme', 0, 'user', 'Why does the order service deadlock?', 7), (gen_random_uuid(), $1, 'acme', 1, 'assistant', 'Two locks taken in opposite orders.', 7)`,
      [conversation!.id],
    );
    const [knowledgeBase] = await sql<{ id: string }>(`INSERT INTO knowledge_bases (id, organization_id, name, scope, backend) VALUES (gen_random_uuid(), 'acme', 'Runbooks', 'COMPANY', 'LOCAL') RETURNING id::text`);
    await sql(`INSERT INTO knowledge_base_credentials (knowledge_base_id, organization_id, sealed_secret) VALUES ($1, 'acme', 'sealed')`, [knowledgeBase!.id]);
    await sql(`INSERT INTO knowledge_base_capabilities (id, organization_id, capability, knowledge_base_id) VALUES (gen_random_uuid(), 'acme', 'runbooks', $1)`, [knowledgeBase!.id]);
    await sql(`INSERT INTO knowledge_base_passages (id, organization_id, knowledge_base_id, text) VALUES (md5('p'), 'acme', $1, 'Restart the service.')`, [knowledgeBase!.id]);
    const hash = "a".repeat(64);
    await sql(`INSERT INTO document_contents (organization_id, content_hash, text) VALUES ('acme', $1, 'Locks')`, [hash]);
    const [document] = await sql<{ id: string }>(
      `INSERT INTO documents (id, organization_id, owner_id, knowledge_base_id, file_name, media_type, format, size_bytes, content_hash)
       VALUES (gen_random_uuid(), 'acme', 'ann', $1, 'locks.md', 'text/markdown', 'markdown', 5, $2) RETURNING id::text`,
      [knowledgeBase!.id, hash],
    );
    const [chunk] = await sql<{ id: string }>(
      `INSERT INTO document_chunks (id, organization_id, document_id, chunk_index, text, start_offset, end_offset, token_count, content_hash)
       VALUES (gen_random_uuid(), 'acme', $1, 0, 'Lock ordering prevents deadlock', 0, 31, 4, $2) RETURNING id::text`,
      [document!.id, hash],
    );
    await sql(`INSERT INTO embedding_chunks (organization_id, entity_type, entity_id, chunk_index, model, content_hash, embedding) VALUES ('acme', 'document_chunk', $1, 0, 'm', 'h', '[1,0,0]')`, [chunk!.id]);
    await sql(`INSERT INTO vector_deletion_jobs (organization_id, entity_type, entity_id) VALUES ('acme', 'document_chunk', gen_random_uuid())`);
    const [call] = await sql<{ id: string }>(`INSERT INTO external_calls (organization_id, user_id, provider, operation, query) VALUES ('acme', 'ann', 'SERPER', 'search', 'deadlock') RETURNING id::text`);
    await sql(`INSERT INTO credit_ledger (organization_id, call_id, provider, credits) VALUES ('acme', $1, 'SERPER', 1)`, [call!.id]);
    await sql(`INSERT INTO external_results (id, organization_id, kind, provider) VALUES (md5('r'), 'acme', 'WEB', 'SERPER')`);
    await sql(`INSERT INTO search_queries (organization_id, user_id, query, alpha, providers, results, cache_hit, took_ms) VALUES ('acme', 'ann', 'deadlock', 0.5, '[]', 1, false, 3)`);
    await sql(`INSERT INTO knowledge_queries (organization_id, user_id, query, results, provider, latency_ms) VALUES ('acme', 'ann', 'deadlock', 1, 'local', 3)`);
    await sql(`INSERT INTO saved_searches (organization_id, user_id, name, query, providers) VALUES ('acme', 'ann', 'Deadlocks', 'deadlock', NULL)`);

    const countRows = async () => {
      const names = (await tables(sql)).map((table) => table.name).filter((name) => name !== "_prisma_migrations");
      const counts: Record<string, number> = {};
      for (const name of names) counts[name] = Number((await sql<{ n: number }>(`SELECT count(*)::int AS n FROM "${name}"`))[0]!.n);
      return counts;
    };
    const before = await countRows();
    const filled = ["messages", "keyword_documents", "keyword_postings", "search_index_jobs", "document_chunks", "document_index_jobs", "document_keyword_postings", "credit_ledger"];
    expect(filled.filter((table) => !(before[table]! > 0))).toEqual([]);

    expect((await migrate(db.database, migrations)).applied).toEqual(migrations.slice(at).map((m) => m.name));
    // Every table that was there keeps its rows; tables later migrations add (search_clicks) start empty.
    const after = await countRows();
    expect(Object.fromEntries(Object.keys(before).map((name) => [name, after[name]]))).toEqual(before);
    expect(Object.entries(after).filter(([name, rows]) => !(name in before) && rows !== 0)).toEqual([]);
    expect(await primaryKeyViolations(sql)).toEqual([]);
    expect(await uniqueIndexViolations(sql)).toEqual([]);
    expect(await foreignKeyViolations(sql)).toEqual([]);

    // The triggers that enqueue with ON CONFLICT still find their (new) arbiter keys.
    await sql(`UPDATE conversations SET title = 'Deadlock in the payment service' WHERE id = $1`, [conversation!.id]);
    await sql(`UPDATE documents SET status = 'PENDING' WHERE id = $1`, [document!.id]);
    expect(await sql(`SELECT organization_id FROM search_index_jobs WHERE conversation_id = $1`, [conversation!.id])).toEqual([{ organization_id: "acme" }]);

    // A reference now names its organization: another organization's row cannot point at acme's.
    await expect(
      sql(`INSERT INTO messages (id, conversation_id, organization_id, position, role, content, token_count) VALUES (gen_random_uuid(), $1, 'globex', 2, 'user', 'x', 1)`, [conversation!.id]),
    ).rejects.toThrow(/foreign key/);

    // ON DELETE SET NULL (knowledge_base_id) only: the document leaves the deleted knowledge
    // base and stays acme's.
    await sql(`DELETE FROM knowledge_bases WHERE id = $1`, [knowledgeBase!.id]);
    expect(await sql(`SELECT organization_id, knowledge_base_id FROM documents WHERE id = $1`, [document!.id])).toEqual([{ organization_id: "acme", knowledge_base_id: null }]);
    // ON DELETE CASCADE still reaches the children through the composite keys.
    await sql(`DELETE FROM conversations WHERE id = $1`, [conversation!.id]);
    expect(await sql(`SELECT count(*)::int AS n FROM messages`)).toEqual([{ n: 0 }]);
  });
});
