/**
 * Writes and background work stay correct with two instances of a subgraph on one PostgreSQL
 * database (issue 22, item 2): each instance a separate process started as production starts
 * it (scripts/start-subgraph.ts), with its own Prisma client and pool. Counted, not timed:
 *
 * - indexing: two search processes index 400 conversations and 40 documents, each exactly once
 *   (the sum of their own `indexing_jobs_total{outcome="indexed"}` counters); a vector write that outlives
 *   its lease is not taken over by the other process; one process SIGKILLed mid-job loses none
 *   of its jobs, which the other finishes once their lease runs out;
 * - credits: 40 concurrent paid web searches spread over two external-search processes with a
 *   budget for 10 → exactly 10 sent and charged, 30 SKIPPED for the budget, the ledger's sum the
 *   budget;
 * - saved searches: concurrent saves of one name to both instances → one saved, the rest
 *   BAD_USER_INPUT; concurrent saves past the per-user limit → never more than the limit;
 * - idempotency keys: one saveSearch sent with one Idempotency-Key to both instances at once →
 *   one row, every answer the same id.
 *
 * PostgreSQL only: PGlite is one process's database, so there is no second instance to run.
 */
import { createHash, randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import pg from "pg";
import { loadConfig } from "../../lib/config.js";
import { CreditLedger } from "../../subgraphs/external-search/credit-ledger.js";
import { MAX_SAVED_SEARCHES_PER_USER } from "../../subgraphs/search/saved-search-store.js";
import { createTestDatabase, usingPostgres, type TestDatabase } from "../support/database.js";
import { SerperStandIn } from "../support/external/serper-stand-in.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { indexingJobCounts as jobCounts, startSubgraphProcess, stopServerProcesses, until, type SubgraphProcess } from "../support/server-processes.js";
import { tokenFor } from "../support/tenants.js";

const ORGANIZATION = "org-two-instances";
const USER = "ines";
/** Short, so a killed process's jobs come back within the test; set through config, as an operator would. */
const LEASE_SECONDS = 2;
const CONVERSATIONS = 400;
const KILLED_PHASE_CONVERSATIONS = 120;
const DOCUMENTS = 40;
/** CI runs Redis in every pass (.ci/run); the shared-cache test needs it. */
const redisUrl = loadConfig().search.redisUrl;
/** This file's keys in a Redis other tests share, removed afterwards. */
const REDIS_KEY_PREFIX = `two-instances-${randomBytes(4).toString("hex")}:`;

let db: TestDatabase;
let sql: pg.Client;
let searchA: SubgraphProcess;
let searchB: SubgraphProcess;
let externalA: SubgraphProcess;
let externalB: SubgraphProcess;
let serper: SerperStandIn;
let token: string;

const started: SubgraphProcess[] = [];

async function start(name: string, env: Record<string, string>): Promise<SubgraphProcess> {
  const server = await startSubgraphProcess(name, { databaseUrl: db.url!, nodeEnv: "production", env });
  started.push(server);
  return server;
}

async function one<T extends Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T> {
  return (await sql.query(text, values)).rows[0] as T;
}

async function insertConversations(count: number, label: string): Promise<string[]> {
  // One transaction: every job becomes visible to both indexers at the same moment.
  const { rows } = await sql.query<{ id: string }>(
    `WITH created AS (
       INSERT INTO conversations (id, organization_id, user_id, title)
       SELECT gen_random_uuid(), $1, $2, $3 || ' ' || n FROM generate_series(1, $4::int) n
       RETURNING id, title)
     INSERT INTO messages (id, conversation_id, organization_id, position, role, content, token_count)
     SELECT gen_random_uuid(), id, $1, 0, 'user', 'How do two indexers share the queue? ' || title, 8 FROM created
     RETURNING conversation_id::text AS id`,
    [ORGANIZATION, USER, label, count],
  );
  return rows.map((row) => row.id);
}

const queueDepth = async () => Number((await one<{ n: number }>(`SELECT count(*)::int AS n FROM search_index_jobs`)).n);
const indexedConversations = async () =>
  Number((await one<{ n: number }>(`SELECT count(DISTINCT entity_id)::int AS n FROM embedding_chunks WHERE entity_type = 'conversation' AND organization_id = $1`, [ORGANIZATION])).n);
/** Backends of the test database waiting for a lock: indexers blocked mid-write. */
const waitingOnLocks = async () =>
  Number((await one<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).n);

const describeOnPostgres = usingPostgres ? describe : describe.skip;
const skipped = usingPostgres ? "" : " (skipped on PGlite: one process owns a PGlite database, so two instances cannot share one; CI's PostgreSQL pass runs it)";

beforeAll(async () => {
  if (!usingPostgres) return;
  db = await createTestDatabase();
  sql = new pg.Client({ connectionString: db.url! });
  await sql.connect();
  await sql.query(`INSERT INTO organizations (id, name) VALUES ($1, 'Two instances')`, [ORGANIZATION]);
  await sql.query(`INSERT INTO users (organization_id, id) VALUES ($1, $2)`, [ORGANIZATION, USER]);
  token = await tokenFor(ORGANIZATION, USER);
  serper = await SerperStandIn.start();
  const indexing = { SEARCH_INDEXER: "true", SEARCH_INDEXER_LEASE_SECONDS: String(LEASE_SECONDS) };
  const external = {
    SERPER_API_KEY: serper.apiKey, SERPER_BASE_URL: serper.baseUrl,
    // Paid answers are cached in Redis, shared by both instances (the budget test asks distinct queries, which miss it).
    REDIS_URL: redisUrl ?? "", REDIS_KEY_PREFIX,
    // Every call reaches the budget check: no per-process bulkhead refusing first.
    EXTERNAL_MAX_CONCURRENT_CALLS: "100", EXTERNAL_MAX_CALLS_PER_ORGANIZATION: "100", EXTERNAL_MAX_QUEUED_CALLS: "100",
    EXTERNAL_ATTEMPT_TIMEOUT_MS: "20000", EXTERNAL_CALL_TIMEOUT_MS: "40000",
  };
  // One after the other: each runs the (already applied) migrations under Prisma's advisory lock.
  searchA = await start("search", indexing);
  searchB = await start("search", indexing);
  externalA = await start("external-search", external);
  externalB = await start("external-search", external);
}, 600_000);

afterAll(async () => {
  // SIGTERM drains; one still running after the drain's default 10 s (a test left it blocked) is killed.
  await stopServerProcesses(started);
  await sql?.end();
  await serper?.close();
  if (redisUrl && usingPostgres) {
    const redis = new Redis(redisUrl);
    const keys = await redis.keys(`${REDIS_KEY_PREFIX}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
  await db?.dispose();
}, 120_000);

describeOnPostgres(`two indexer processes on one queue${skipped}`, () => {
  it(`index ${CONVERSATIONS} conversations, each exactly once`, async () => {
    await insertConversations(CONVERSATIONS, "shared queue");
    await until("the queue to empty", async () => (await queueDepth()) === 0);
    const [a, b] = await Promise.all([jobCounts(searchA), jobCounts(searchB)]);
    console.log(`indexing split: process A ${a.indexed}, process B ${b.indexed} of ${CONVERSATIONS}`);
    expect(a.indexed + b.indexed).toBe(CONVERSATIONS);
    expect([a.failed, b.failed, a.lease_lost, b.lease_lost]).toEqual([0, 0, 0, 0]);
    expect(await indexedConversations()).toBe(CONVERSATIONS);
    // One chunk per (short) conversation, written once: no second attempt's rows beside the first's.
    expect(Number((await one<{ n: number }>(`SELECT count(*)::int AS n FROM embedding_chunks WHERE organization_id = $1 AND entity_type = 'conversation'`, [ORGANIZATION])).n)).toBe(CONVERSATIONS);
  }, 180_000);

  it(`index ${DOCUMENTS} documents, each exactly once and READY`, async () => {
    const text = Array.from({ length: 6 }, (_, section) => `## Section ${section}\n\n${`Shared queues need leases that expire and tokens that fence. `.repeat(60)}`).join("\n\n");
    const hash = createHash("sha256").update(text).digest("hex");
    await sql.query(`INSERT INTO document_contents (organization_id, content_hash, text) VALUES ($1, $2, $3)`, [ORGANIZATION, hash, text]);
    // One statement: every job becomes visible to both indexers at the same moment.
    await sql.query(
      `INSERT INTO documents (id, organization_id, owner_id, file_name, media_type, format, size_bytes, content_hash)
       SELECT gen_random_uuid(), $1, $2, 'queue-' || n || '.md', 'text/markdown', 'markdown', $3, $4 FROM generate_series(1, $5::int) n`,
      [ORGANIZATION, USER, Buffer.byteLength(text), hash, DOCUMENTS],
    );
    await until("the document queue to empty", async () => Number((await one<{ n: number }>(`SELECT count(*)::int AS n FROM document_index_jobs`)).n) === 0);
    const [a, b] = await Promise.all([jobCounts(searchA, "documents"), jobCounts(searchB, "documents")]);
    console.log(`document indexing split: process A ${a.indexed}, process B ${b.indexed} of ${DOCUMENTS}`);
    expect(a.indexed + b.indexed).toBe(DOCUMENTS);
    expect([a.failed, b.failed, a.lease_lost, b.lease_lost]).toEqual([0, 0, 0, 0]);
    const statuses = await sql.query<{ status: string; documents: number }>(`SELECT status::text AS status, count(*)::int AS documents FROM documents WHERE organization_id = $1 GROUP BY 1`, [ORGANIZATION]);
    expect(statuses.rows).toEqual([{ status: "READY", documents: DOCUMENTS }]);
    // Every document has the same text: the same chunks, each chunk's vector written once.
    const chunks = await sql.query<{ chunks: number }>(`SELECT count(*)::int AS chunks FROM document_chunks WHERE organization_id = $1 GROUP BY document_id`, [ORGANIZATION]);
    const perDocument = chunks.rows[0]!.chunks;
    expect(perDocument).toBeGreaterThan(1);
    expect(chunks.rows.every((row) => row.chunks === perDocument)).toBe(true);
    const vectors = await one<{ n: number }>(`SELECT count(*)::int AS n FROM embedding_chunks WHERE organization_id = $1 AND entity_type = 'document_chunk'`, [ORGANIZATION]);
    expect(Number(vectors.n)).toBe(DOCUMENTS * perDocument);
  }, 180_000);

  it("do not take over a job whose vector write outlives its lease", async () => {
    const before = await Promise.all([jobCounts(searchA), jobCounts(searchB)]);
    const [slow, other] = (await sql.query<{ id: string }>(`SELECT id::text AS id FROM conversations WHERE organization_id = $1 ORDER BY id LIMIT 2`, [ORGANIZATION])).rows.map((row) => row.id);
    // The test holds the slow conversation's vector rows: whichever process claims it blocks in its write.
    const holder = new pg.Client({ connectionString: db.url! });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM embedding_chunks WHERE entity_id = $1 FOR UPDATE`, [slow]);
      await sql.query(`UPDATE conversations SET title = title || ' (renamed)' WHERE id = $1`, [slow]);
      await until("an indexer to block writing the held conversation", async () => (await waitingOnLocks()) >= 1);
      await until("its lease to run out", async () => Boolean((await one<{ expired: boolean }>(`SELECT run_after < clock_timestamp() AS expired FROM search_index_jobs WHERE conversation_id = $1`, [slow])).expired));
      // A job enqueued after the lease ran out, and done: the other process has claimed since, and skipped the held job.
      await sql.query(`UPDATE conversations SET title = title || ' (renamed)' WHERE id = $1`, [other]);
      await until("the other process to index a later job", async () => Number((await one<{ n: number }>(`SELECT count(*)::int AS n FROM search_index_jobs WHERE conversation_id = $1`, [other])).n) === 0);
      expect(Number((await one<{ attempts: number }>(`SELECT attempts FROM search_index_jobs WHERE conversation_id = $1`, [slow])).attempts)).toBe(1);
    } finally {
      await holder.query("COMMIT").catch(() => undefined);
      await holder.end();
    }
    await until("the queue to empty", async () => (await queueDepth()) === 0);
    const after = await Promise.all([jobCounts(searchA), jobCounts(searchB)]);
    const delta = (outcome: "indexed" | "failed" | "lease_lost") => after[0][outcome] + after[1][outcome] - before[0][outcome] - before[1][outcome];
    expect({ indexed: delta("indexed"), failed: delta("failed"), lease_lost: delta("lease_lost") }).toEqual({ indexed: 2, failed: 0, lease_lost: 0 });
    expect(Number((await one<{ n: number }>(`SELECT count(*)::int AS n FROM embedding_chunks WHERE entity_id = $1`, [slow])).n)).toBe(1);
  }, 180_000);

  it("lose no job when one process is SIGKILLed mid-job: the other finishes its jobs after their lease", async () => {
    const before = await Promise.all([jobCounts(searchA), jobCounts(searchB)]);
    const holder = new pg.Client({ connectionString: db.url! });
    await holder.connect();
    let killedCount: number;
    try {
      // Every vector write waits: both processes stop mid-job, their batches claimed and embedded.
      await holder.query("BEGIN");
      await holder.query("LOCK TABLE embedding_chunks IN SHARE MODE");
      await insertConversations(KILLED_PHASE_CONVERSATIONS, "killed mid-job");
      await until("both indexers to block in their vector writes", async () => (await waitingOnLocks()) >= 2);
      // Blocked, A's own count is final: read it, then kill it.
      killedCount = (await jobCounts(searchA)).indexed - before[0].indexed;
      searchA.child.kill("SIGKILL");
      expect((await searchA.exited).signal).toBe("SIGKILL");
      const leased = Number((await one<{ n: number }>(`SELECT count(*)::int AS n FROM search_index_jobs WHERE run_after > clock_timestamp()`)).n);
      expect(leased).toBeGreaterThan(0);
    } finally {
      await holder.query("COMMIT").catch(() => undefined);
      await holder.end();
    }
    await until("the queue to empty", async () => (await queueDepth()) === 0);
    const survivor = await jobCounts(searchB);
    console.log(`after the kill: A had indexed ${killedCount} of this phase, B ${survivor.indexed - before[1].indexed}`);
    expect(killedCount + survivor.indexed - before[1].indexed).toBe(KILLED_PHASE_CONVERSATIONS);
    expect(survivor.failed - before[1].failed).toBe(0);
    expect(await indexedConversations()).toBe(CONVERSATIONS + KILLED_PHASE_CONVERSATIONS);
    expect(Number((await one<{ n: number }>(`SELECT count(*)::int AS n FROM embedding_chunks WHERE organization_id = $1 AND entity_type = 'conversation'`, [ORGANIZATION])).n)).toBe(CONVERSATIONS + KILLED_PHASE_CONVERSATIONS);
  }, 240_000);
});

describeOnPostgres(`credits across two external-search processes${skipped}`, () => {
  it("40 concurrent paid searches with a budget for 10 → exactly 10 sent and charged, 30 refused for the budget", async () => {
    const SERPER_CREDITS = 3;
    await new CreditLedger(db.database.prisma, null).setBudget(ORGANIZATION, 10 * SERPER_CREDITS);
    const sentBefore = serper.requests.length;
    const WEB_SEARCH = `query($query: String!) { webSearch(query: $query, providers: [SERPER]) { calls { provider status reason credits } } }`;
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, index) => graphql((index % 2 === 0 ? externalA : externalB).url, WEB_SEARCH, { query: `budget race ${index}` }, { token })),
    );
    for (const answer of answers) expect(answer.errors).toBeUndefined();
    const calls = answers.map((answer) => answer.data!.webSearch.calls[0] as { status: string; reason: string | null; credits: number });
    expect(calls.filter((call) => call.status === "OK")).toHaveLength(10);
    const refused = calls.filter((call) => call.status === "SKIPPED");
    expect(refused).toHaveLength(30);
    for (const call of refused) expect(call.reason).toMatch(/credit budget spent/);
    expect(serper.requests.length - sentBefore).toBe(10);
    const ledger = await one<{ entries: number; credits: string }>(`SELECT count(*)::int AS entries, coalesce(sum(credits), 0)::text AS credits FROM credit_ledger WHERE organization_id = $1`, [ORGANIZATION]);
    expect({ entries: Number(ledger.entries), credits: Number(ledger.credits) }).toEqual({ entries: 10, credits: 10 * SERPER_CREDITS });
    const paidCalls = await one<{ n: number }>(`SELECT count(*)::int AS n FROM external_calls WHERE organization_id = $1 AND status = 'OK' AND credits > 0`, [ORGANIZATION]);
    expect(Number(paidCalls.n)).toBe(10);
  }, 120_000);

  (redisUrl ? it : it.skip)("a paid answer one instance got is served free by the other (the cache is in Redis)", async () => {
    await new CreditLedger(db.database.prisma, null).setBudget(ORGANIZATION, null);
    const WEB_SEARCH = `query($query: String!) { webSearch(query: $query, providers: [SERPER]) { calls { status credits } } }`;
    const sentBefore = serper.requests.length;
    const first = await graphql(externalA.url, WEB_SEARCH, { query: "shared answer" }, { token });
    expect(first.data!.webSearch.calls).toEqual([{ status: "OK", credits: 3 }]);
    const second = await graphql(externalB.url, WEB_SEARCH, { query: "shared answer" }, { token });
    expect(second.data!.webSearch.calls).toEqual([{ status: "CACHED", credits: 0 }]);
    expect(serper.requests.length - sentBefore).toBe(1);
  });
});

describeOnPostgres(`saved searches and idempotency keys across two search processes${skipped}`, () => {
  const SAVE = `mutation($input: SaveSearchInput!) { saveSearch(input: $input) { id name } }`;
  const at = (index: number) => (index % 2 === 0 ? searchB : searchA);

  it("20 concurrent saves of one name → one saved, 19 refused", async () => {
    const live = searchA.child.exitCode === null && searchA.child.signalCode === null ? [searchA, searchB] : [searchB];
    // The indexing test killed A: start a fresh one in its place.
    if (live.length === 1) searchA = await start("search", {});
    const answers = await Promise.all(Array.from({ length: 20 }, (_, index) => graphql(at(index).url, SAVE, { input: { name: "one name", query: `race ${index}` } }, { token })));
    expect(answers.filter((answer) => !answer.errors)).toHaveLength(1);
    expect(answers.flatMap(errorCodes)).toEqual(Array(19).fill("BAD_USER_INPUT"));
    expect(Number((await one<{ n: number }>(`SELECT count(*)::int AS n FROM saved_searches WHERE organization_id = $1 AND name = 'one name'`, [ORGANIZATION])).n)).toBe(1);
  }, 240_000);

  it(`concurrent saves past the limit of ${MAX_SAVED_SEARCHES_PER_USER} → never more than the limit`, async () => {
    const have = Number((await one<{ n: number }>(`SELECT count(*)::int AS n FROM saved_searches WHERE organization_id = $1 AND user_id = $2`, [ORGANIZATION, USER])).n);
    await sql.query(
      `INSERT INTO saved_searches (organization_id, user_id, name, query) SELECT $1, $2, 'filler ' || n, 'filler' FROM generate_series(1, $3::int) n`,
      [ORGANIZATION, USER, MAX_SAVED_SEARCHES_PER_USER - 5 - have],
    );
    const answers = await Promise.all(Array.from({ length: 20 }, (_, index) => graphql(at(index).url, SAVE, { input: { name: `past the limit ${index}`, query: "limit" } }, { token })));
    expect(answers.filter((answer) => !answer.errors)).toHaveLength(5);
    expect(answers.flatMap(errorCodes)).toEqual(Array(15).fill("BAD_USER_INPUT"));
    expect(Number((await one<{ n: number }>(`SELECT count(*)::int AS n FROM saved_searches WHERE organization_id = $1 AND user_id = $2`, [ORGANIZATION, USER])).n)).toBe(MAX_SAVED_SEARCHES_PER_USER);
  });

  it("one Idempotency-Key sent to both instances at once → one write, one answer", async () => {
    const colleague = await tokenFor(ORGANIZATION, "ivo");
    await sql.query(`INSERT INTO users (organization_id, id) VALUES ($1, 'ivo') ON CONFLICT DO NOTHING`, [ORGANIZATION]);
    const headers = { "idempotency-key": "two-instances-retry-1" };
    const answers = await Promise.all(Array.from({ length: 10 }, (_, index) => graphql(at(index).url, SAVE, { input: { name: "retried", query: "retried save" } }, { token: colleague, headers })));
    for (const answer of answers) expect(answer.errors).toBeUndefined();
    expect(new Set(answers.map((answer) => answer.data!.saveSearch.id)).size).toBe(1);
    expect(Number((await one<{ n: number }>(`SELECT count(*)::int AS n FROM saved_searches WHERE organization_id = $1 AND user_id = 'ivo'`, [ORGANIZATION])).n)).toBe(1);
  });
});
