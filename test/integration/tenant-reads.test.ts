/**
 * Tenant reads (lib/database/tenant-reads.ts): on PostgreSQL a search sends its statements
 * alone on session-scoped connections, re-pointed only when the organization changes; on
 * PGlite the same calls run in tenant-scope transactions. Counted at the client (the database
 * handle's statement counter, which both Prisma's query events and the tenant-read pool feed).
 * Isolation is checked per statement through the same path: the organization and role the
 * statement itself reads, not only what row-level security lets it see.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Prisma } from "../../generated/prisma/client.js";
import { loadConfig } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { NoResultCache } from "../../lib/cache/result-cache.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { queryPrepared, SESSION_SET_STATEMENT, tenantReadPoolOf, withTenantReads, withTransactionTenantReadsForBenchmark } from "../../lib/database/tenant-reads.js";
import { TENANT_ROLE } from "../../lib/database/tenant-scope.js";
import { ConversationStore } from "../../subgraphs/conversations/conversation-store.js";
import { searchSubgraph, type SearchSubgraph } from "../../subgraphs/search/index.js";
import { createTestDatabase, usingPostgres, type TestDatabase } from "../support/database.js";
import { recordingLogger } from "../support/recording-logger.js";

let db: TestDatabase;
/** The pools' warnings (a statement name taken twice is one). */
const warnings = recordingLogger();
let search: SearchSubgraph;
const tenant = (organizationId: string, userId: string) => ({ organizationId, userId, teamIds: [], role: "member" as const, userName: null, userEmail: null });
const acme = tenant("acme", "ann");
const globex = tenant("globex", "gus");
const ids: Record<string, string> = {};

beforeAll(async () => {
  db = await createTestDatabase({ logger: warnings });
  const store = new ConversationStore(db.database.prisma);
  search = await searchSubgraph({ database: db.database, config: loadConfig({ SEARCH_INDEXER: "false" }), logger: silentLogger, embedder: new FeatureHashingEmbedder(), cache: new NoResultCache() });
  await search.start!();
  for (const [who, key, title, text] of [
    [acme, "deadlock", "Order service deadlock", "PostgreSQL deadlock in the order service under load"],
    [acme, "lisbon", "Lisbon itinerary", "Four days in Lisbon with tram 28"],
    [acme, "doomed", "Deadlock notes to delete", "another order service deadlock"],
    [globex, "globex", "Globex deadlock postmortem", "PostgreSQL deadlock in the order service again"],
  ] as const) {
    ids[key] = (await store.create(who, title, [{ role: "user", content: text, tokenCount: 3 }])).id;
  }
  await search.indexer.drain();
});

afterAll(async () => {
  await search?.stop?.();
  await db?.dispose();
});

const CONVERSATIONS = ["conversations.keyword", "conversations.semantic"];
const hybrid = (who: typeof acme, query: string) => search.service.search(who, { query, limit: 10, alpha: 0.5, providers: CONVERSATIONS });

describe("tenant reads", () => {
  it("sends one statement per provider read in steady state on PostgreSQL (three per hybrid search), and scope transactions on PGlite", async () => {
    // Warm: the connections get acme's settings. The two providers' reads take whichever idle
    // connection the pool hands out first, so a connection that has only served keyword reads
    // would set the hnsw knobs once when it first serves a vector read (seen under parallel test
    // files). Vector reads in parallel first give every pooled connection the knobs (each
    // connection the pool opens is opened for one of them), then a hybrid search settles the rest.
    await Promise.all(Array.from({ length: 8 }, () => search.service.search(acme, { query: "deadlock under load", limit: 10, alpha: 0, providers: ["conversations.semantic"] })));
    await hybrid(acme, "deadlock under load");
    db.database.statements.reset();
    const result = await hybrid(acme, "deadlock under load");
    expect(result.providers.filter((provider) => provider.status === "OK").map((provider) => provider.name).sort()).toEqual(["conversations.keyword", "conversations.semantic"]);
    // Keyword: collection statistics + BM25 (a small organization reads its statistics live);
    // semantic: the nearest-neighbour statement with the liveness join folded in.
    // Reads only: the subgraph's background writers (query log, queues) may flush meanwhile.
    const isWrite = (statement: string) => ["INSERT", "UPDATE", "DELETE"].includes(statement.trimStart().slice(0, 6).toUpperCase());
    const writes = db.database.statements.log.filter(isWrite).length;
    expect(db.database.statements.count - writes).toBe(3);
    // PostgreSQL: nothing else (no BEGIN/COMMIT, no set_config: the connections already carry
    // acme). PGlite: each provider's reads in a scope transaction, set_config and COMMIT per
    // provider (Prisma's PGlite adapter logs no BEGIN).
    if (usingPostgres) {
      expect(db.database.statements.log.filter((statement) => statement.startsWith("SELECT set_config")).length).toBe(0);
      // A background writer (the indexer's claim, the batched query log) may commit its own
      // transaction meanwhile (seen in CI: BEGIN and COMMIT around one write); without one, none.
      if (writes === 0) expect(db.database.statements.overhead).toBe(0);
    } else {
      expect(db.database.statements.overhead).toBe(4);
    }
  });

  it("answers exactly as the transaction path does", async () => {
    for (const query of ["order service deadlock", "lisbon tram", "postgresql"]) {
      const now = await hybrid(acme, query);
      const before = await withTransactionTenantReadsForBenchmark(() => hybrid(acme, query));
      expect(now.hits.map((hit) => [hit.ref.id, hit.score])).toEqual(before.hits.map((hit) => [hit.ref.id, hit.score]));
    }
  });

  it("drops a conversation deleted before its vectors are, inside the vector statement", async () => {
    const before = await hybrid(acme, "order service deadlock");
    expect(before.hits.map((hit) => hit.ref.id)).toContain(ids.doomed);
    // Mark it deleted behind the indexer's back: its vectors and postings stay for now.
    await db.database.withSession((session) => session.query(`UPDATE conversations SET deleted_at = now() WHERE id = $1`, [ids.doomed]));
    const semantic = await search.service.search(acme, { query: "order service deadlock", limit: 10, alpha: 0, providers: CONVERSATIONS });
    expect(semantic.hits.map((hit) => hit.ref.id)).not.toContain(ids.doomed);
    expect(semantic.hits.map((hit) => hit.ref.id)).toContain(ids.deadlock);
  });

  it("re-points a connection only when the organization changes, and every statement reads its own organization", async () => {
    const whoAmI = (organizationId: string) =>
      withTenantReads(db.database.prisma, organizationId, (reader) =>
        reader.$queryRaw<{ organization: string; role: string; visible: string[] }[]>`
          SELECT current_setting('app.organization_id') AS organization, current_user::text AS role,
                 (SELECT array_agg(DISTINCT organization_id ORDER BY organization_id) FROM conversations) AS visible`,
      );
    const [first] = await whoAmI("acme");
    expect(first).toEqual({ organization: "acme", role: TENANT_ROLE, visible: ["acme"] });
    // Alternating organizations, concurrently, on the same few pooled connections.
    const organizations = Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? "globex" : i % 3 === 1 ? "acme" : "nobody"));
    db.database.statements.reset();
    const answers = await Promise.all(organizations.map((organization) => whoAmI(organization)));
    answers.forEach(([row], i) => {
      expect(row!.organization).toBe(organizations[i]);
      expect(row!.role).toBe(TENANT_ROLE);
      expect(row!.visible).toEqual(organizations[i] === "nobody" ? null : [organizations[i]]);
    });
    // Counted from the log: background work of the subgraph (its batched writers) may run meanwhile.
    const sent = (needle: string) => db.database.statements.log.filter((statement) => statement.includes(needle)).length;
    expect(sent("current_setting('app.organization_id') AS organization")).toBe(40);
    if (usingPostgres) {
      // At most one set statement per call; fewer when a connection already carried the organization.
      expect(sent(SESSION_SET_STATEMENT)).toBeGreaterThan(0);
      expect(sent(SESSION_SET_STATEMENT)).toBeLessThanOrEqual(40);
      db.database.statements.reset();
      for (let i = 0; i < 5; i++) await whoAmI("acme");
      // One at a time, the pool hands back an idle connection: it is set once at most, then reused.
      expect(sent(SESSION_SET_STATEMENT)).toBeLessThanOrEqual(1);
    }
  });

  it("leaves no connection behind with stale settings after a statement times out or fails", async () => {
    const pool = tenantReadPoolOf(db.database.prisma);
    expect(Boolean(pool)).toBe(usingPostgres);
    const discardedBefore = pool?.discarded ?? 0;
    // PGlite has no timer to cancel a statement with: the timeout is PostgreSQL's alone.
    if (usingPostgres) {
      await expect(
        withTenantReads(db.database.prisma, "acme", (reader) => reader.$queryRaw`SELECT pg_sleep(5)::text`, { statementTimeoutMs: 100 }),
      ).rejects.toThrow(/statement timeout/);
    }
    await expect(withTenantReads(db.database.prisma, "acme", (reader) => reader.$queryRaw`SELECT 1/0`)).rejects.toThrow(/division by zero/);
    // A write on the search pool is refused (read-only sessions), on PostgreSQL.
    if (usingPostgres) {
      await expect(withTenantReads(db.database.prisma, "acme", (reader) => reader.$queryRaw`UPDATE conversations SET title = 'x' RETURNING id`)).rejects.toThrow(/read-only/);
    }
    if (pool) expect(pool.discarded - discardedBefore).toBe(3);
    // Every connection the next calls get carries the caller's organization and no leftover
    // timeout from the failed calls. A vector search's hnsw knobs may stay on its connection
    // (every vector read sets its own; see VECTOR_INDEX_KNOBS): only their values are checked.
    const rows = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        withTenantReads(db.database.prisma, i % 2 ? "globex" : "acme", (reader) =>
          reader.$queryRaw<{ organization: string; timeout: string; ef: string | null }[]>`
            SELECT current_setting('app.organization_id') AS organization, current_setting('statement_timeout') AS timeout,
                   current_setting('hnsw.ef_search', true) AS ef`,
        ),
      ),
    );
    rows.forEach(([row], i) => {
      expect(row!.organization).toBe(i % 2 ? "globex" : "acme");
      // The search subgraph's provider timeout (2 s) is every unnamed read's, never the failed call's 100 ms.
      expect(row!.timeout).toBe(usingPostgres ? "2s" : "0");
      expect(row!.ef === null || /^[0-9]+$/.test(row!.ef)).toBe(true);
    });
  });

  it("keeps a vector read's hnsw knobs for the next read that names none, so a hybrid search pays no switch", async () => {
    if (!usingPostgres) return; // PGlite: each read is its own transaction with its own settings.
    const ef = (organizationId: string, settings?: Record<string, string>) =>
      withTenantReads(db.database.prisma, organizationId, (reader) => reader.$queryRaw<{ ef: string | null; organization: string }[]>`
        SELECT current_setting('hnsw.ef_search', true) AS ef, current_setting('app.organization_id') AS organization`, settings ? { settings } : {});
    const sets = () => db.database.statements.log.filter((statement) => statement === SESSION_SET_STATEMENT).length;
    // One at a time, the pool hands back the same idle connection.
    await ef("acme", { "hnsw.ef_search": "80" });
    db.database.statements.reset();
    expect((await ef("acme"))[0]).toEqual({ ef: "80", organization: "acme" });
    expect(sets()).toBe(0);
    expect((await ef("acme", { "hnsw.ef_search": "80" }))[0]!.ef).toBe("80");
    expect(sets()).toBe(0);
    expect((await ef("acme", { "hnsw.ef_search": "120" }))[0]!.ef).toBe("120");
    expect(sets()).toBe(1);
    // Another organization still re-points the connection; the knob is the only thing that stays.
    expect((await ef("globex"))[0]).toEqual({ ef: "120", organization: "globex" });
    expect(sets()).toBe(2);
  });

  it("runs each read under the statement timeout it asks for, and under the search subgraph's provider timeout when it asks for none", async () => {
    const timeoutOf = (statementTimeoutMs?: number) =>
      withTenantReads(db.database.prisma, "acme", (reader) => reader.$queryRaw<{ timeout: string }[]>`SELECT current_setting('statement_timeout') AS timeout`, statementTimeoutMs ? { statementTimeoutMs } : {});
    const asked = [2500, undefined, 2500, 700, undefined, 700.2];
    const seen = await Promise.all(asked.map(async (ms) => (await timeoutOf(ms))[0]!.timeout));
    // PGlite: scope transactions set only what a call names (statement_timeout stays PostgreSQL's "none").
    const none = usingPostgres ? "2s" : "0";
    expect(seen).toEqual(["2500ms", none, "2500ms", "700ms", none, "701ms"]);
  });

  it("pays no set statement when reads that name the provider timeout and reads that name none alternate", async () => {
    if (!usingPostgres) return; // PGlite: each read is its own transaction with its own settings.
    const timeoutOf = (statementTimeoutMs?: number) =>
      withTenantReads(db.database.prisma, "acme", (reader) => reader.$queryRaw<{ timeout: string }[]>`SELECT current_setting('statement_timeout') AS timeout`, statementTimeoutMs ? { statementTimeoutMs } : {});
    const sets = () => db.database.statements.log.filter((statement) => statement === SESSION_SET_STATEMENT).length;
    await Promise.all([timeoutOf(2_000), timeoutOf(2_000), timeoutOf(2_000)]); // every connection the test may get carries acme
    db.database.statements.reset();
    // Concurrent, so that connections are handed around: a keyword read names the provider
    // timeout, a vector or title read names none; both must find what they want already set.
    const seen = await Promise.all([2_000, undefined, 2_000, undefined, undefined, 2_000].map(async (ms) => (await timeoutOf(ms))[0]!.timeout));
    expect(seen).toEqual(Array(6).fill("2s"));
    expect(sets()).toBe(0);
    // Without the subgraph's default the two differ again, and connections switch.
    const pool = tenantReadPoolOf(db.database.prisma)!;
    pool.defaultStatementTimeoutMs = 0;
    try {
      db.database.statements.reset();
      await timeoutOf(2_000);
      await timeoutOf();
      expect(sets()).toBe(1);
    } finally {
      pool.defaultStatementTimeoutMs = 2_000;
    }
  });

  it("types results as Prisma's $queryRaw does", async () => {
    const statement = Prisma.sql`
      SELECT ${ids.deadlock}::uuid AS id, 9007199254740993::int8 AS big, 12.50::numeric AS amount, 3::int4 AS small,
             0.25::float4 AS single, 0.125::float8 AS double, true AS flag, ${["a", "b"]}::text[] AS list,
             '2026-12-01T10:00:00Z'::timestamptz AS at, '[1,2.5]'::vector AS embedding, NULL::text AS nothing`;
    const [fast] = await withTenantReads(db.database.prisma, "acme", (reader) => reader.$queryRaw<Record<string, unknown>[]>(statement));
    const [prisma] = await db.database.prisma.$queryRaw<Record<string, unknown>[]>(statement);
    expect(fast).toEqual(prisma);
    expect(typeof fast!.big).toBe("bigint");
    expect(fast!.amount).toBeInstanceOf(Prisma.Decimal);
    expect(fast!.at).toBeInstanceOf(Date);
  });

  it("sends a prepared read by name on PostgreSQL, and its kept plan still reads only the caller's organization", async () => {
    const titles = Prisma.sql`SELECT title FROM conversations WHERE title ILIKE ${"%deadlock%"} ORDER BY title`;
    const prepared = (organizationId: string) =>
      withTenantReads(db.database.prisma, organizationId, async (reader) => ({
        rows: (await queryPrepared<{ title: string }>(reader, "test_titles", titles)).map((row) => row.title),
        named: (await reader.$queryRaw<{ name: string }[]>`SELECT name FROM pg_prepared_statements WHERE name = 'test_titles'`).map((row) => row.name),
      }));
    // Past plan_cache_mode auto's five custom plans, alternating organizations on the same connections.
    for (let round = 0; round < 8; round++) {
      const acmeRead = await prepared("acme");
      const globexRead = await prepared("globex");
      expect(acmeRead.rows).toEqual(["Deadlock notes to delete", "Order service deadlock"]);
      expect(globexRead.rows).toEqual(["Globex deadlock postmortem"]);
      // PGlite: an ordinary $queryRaw in the scope transaction, nothing prepared.
      expect(acmeRead.named).toEqual(usingPostgres ? ["test_titles"] : []);
    }
    expect(await withTenantReads(db.database.prisma, "nobody", (reader) => queryPrepared(reader, "test_titles", titles))).toEqual([]);
  });

  it("sends a second statement under a name already taken unnamed, with its own answer", async () => {
    const first = Prisma.sql`SELECT 1 AS n`;
    const second = Prisma.sql`SELECT 2 AS n`;
    const read = (sql: Prisma.Sql) => withTenantReads(db.database.prisma, "acme", (reader) => queryPrepared<{ n: number }>(reader, "test_taken", sql));
    expect(await read(first)).toEqual([{ n: 1 }]);
    expect(await read(second)).toEqual([{ n: 2 }]);
    expect(await read(second)).toEqual([{ n: 2 }]);
    expect(await read(first)).toEqual([{ n: 1 }]);
    expect(warnings.lines.filter((message) => message.includes('"test_taken"'))).toHaveLength(usingPostgres ? 1 : 0);
  });
  it("lives through the server ending a connection it holds between two statements (a failover), and the next read gets a fresh one", async () => {
    if (!usingPostgres) return; // PGlite has no server to end a connection.
    const terminate = (pid: number) => db.database.withSession((session) => session.query("SELECT pg_terminate_backend($1::int)", [pid]));
    // The error arrives on the socket while nobody awaits a statement: only a listener on the
    // checked-out client stands between it and the process's exit (lib/database/pool-errors.ts).
    const arrived = async (before: number) => {
      for (let tries = 0; tries < 100 && warnings.lines.filter((line) => line.includes("connection failed: terminating connection")).length === before; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
      return warnings.lines.filter((line) => line.includes("connection failed: terminating connection")).length;
    };
    const seen = warnings.lines.filter((line) => line.includes("connection failed: terminating connection")).length;
    // A tenant read (its own pool), ended between its statements.
    await expect(
      withTenantReads(db.database.prisma, "acme", async (reader) => {
        const [held] = await reader.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
        await terminate(held!.pid);
        expect(await arrived(seen)).toBe(seen + 1);
        return reader.$queryRaw`SELECT 1`;
      }),
    ).rejects.toThrow();
    // A transaction on the main pool (Prisma's), ended between its statements.
    await expect(
      db.database.prisma.$transaction(async (tx) => {
        const [held] = await tx.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
        await terminate(held!.pid);
        expect(await arrived(seen + 1)).toBe(seen + 2);
        return tx.$queryRaw`SELECT 1`;
      }),
    ).rejects.toThrow();
    // Both pools answer on fresh connections.
    expect((await hybrid(acme, "deadlock")).hits.length).toBeGreaterThan(0);
    expect(await db.database.prisma.conversation.count({ where: { organizationId: "acme" } })).toBeGreaterThan(0);
  });
});

describe("turns by organization", () => {
  it("gives another organization's read the next free connection, not the place behind one organization's flood", async () => {
    const prisma = db.database.prisma;
    // As many reads at once as the database serves them: the pool's connections, or PGlite's one.
    const atOnce = tenantReadPoolOf(prisma)?.turns.options.maxRunning ?? 1;
    const started: string[] = [];
    const read = (organizationId: string, label: string) =>
      withTenantReads(prisma, organizationId, async (reader) => {
        started.push(label);
        return reader.$queryRaw<{ one: number }[]>`SELECT 1 AS one`;
      });
    // 30 reads of one organization sent before the other's one read, all without waiting.
    const flood = Array.from({ length: 30 }, (_, i) => read("acme", `acme ${i}`));
    const victim = read("globex", "globex");
    await Promise.all([...flood, victim]);
    expect(started).toHaveLength(31);
    // First come, first served it would start 31st; by turns, after the reads already running and
    // the one whose turn came first (with room for a connection's setup against a whole read).
    expect(started.indexOf("globex")).toBeLessThanOrEqual(2 * atOnce + 1);
    expect(started.indexOf("globex")).toBeLessThan(30);
  });

  it("leaves one organization alone to use every connection", async () => {
    const turns = tenantReadPoolOf(db.database.prisma)?.turns;
    if (!turns) return; // PGlite: one connection, one read at a time.
    let running = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 3 * turns.options.maxRunning }, () =>
        withTenantReads(db.database.prisma, "acme", async (reader) => {
          running += 1;
          most = Math.max(most, running);
          await reader.$queryRaw`SELECT pg_sleep(0.02)`;
          running -= 1;
        }),
      ),
    );
    expect(most).toBe(turns.options.maxRunning);
  });
});
