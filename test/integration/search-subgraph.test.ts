/**
 * The search subgraph against a real database (PGlite with pgvector, or PostgreSQL): BM25 over
 * the trigger-maintained postings, semantic search over pgvector through the indexer, fusion,
 * tenancy, and queries full of operators. The embedder is the feature-hashing one (instant,
 * deterministic); the real local model is tested in the embeddings suite.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { ConversationStore } from "../../subgraphs/conversations/conversation-store.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { searchSubgraph, type SearchSubgraph } from "../../subgraphs/search/index.js";
import { ConversationIndexer } from "../../subgraphs/conversations/search/conversation-indexer.js";
import { ConversationsKeywordProvider, scoreAllPostings, scorePostings } from "../../subgraphs/conversations/search/keyword-provider.js";
import { withTenantReads } from "../../lib/database/tenant-reads.js";
import { CommonTermFrequencies } from "../../lib/retrieval/bm25.js";
import { NoResultCache } from "../../lib/cache/result-cache.js";
import { createTestDatabase, usingPostgres, type TestDatabase } from "../support/database.js";

let db: TestDatabase;
let search: SearchSubgraph;
let store: ConversationStore;
const acme = { organizationId: "acme", userId: "ann", teamIds: [], role: "member" as const, userName: null, userEmail: null };
const globex = { organizationId: "globex", userId: "gus", teamIds: [], role: "member" as const, userName: null, userEmail: null };
const ids: Record<string, string> = {};

async function add(tenant: typeof acme, key: string, title: string, ...messages: string[]) {
  const conversation = await store.create(tenant, title, messages.map((content, i) => ({ role: i % 2 ? "assistant" : "user", content, tokenCount: 1 })));
  ids[key] = conversation.id;
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = new ConversationStore(db.database.prisma);
  const config = loadConfig({ SEARCH_INDEXER: "false" });
  search = await searchSubgraph({ database: db.database, config, logger: silentLogger, embedder: new FeatureHashingEmbedder(), cache: new NoResultCache() });
  await search.start!();
  await add(acme, "deadlock", "Fixing a deadlock in the order service", "Our PostgreSQL order service deadlocks under load", "Two transactions lock the rows in opposite order; lock in a consistent order");
  await add(acme, "lisbon", "Lisbon itinerary", "Plan four days in Lisbon", "Day one: Alfama, tram 28, pastéis de nata in Belém");
  await add(acme, "autoscaling", "Kubernetes autoscaling", "The HPA keeps flapping between 3 and 10 replicas", "Set a stabilization window on scale down");
  await add(acme, "postgres-index", "Slow PostgreSQL query", "The orders query does a sequential scan", "Add a composite index on (customer_id, created_at)");
  for (let i = 0; i < 20; i++) await add(acme, `filler${i}`, `Weekly notes ${i}`, `Meeting notes about budget item ${i} and hiring`);
  await add(globex, "globex-deadlock", "Globex deadlock postmortem", "PostgreSQL deadlock in the order service again");
  await search.indexer.drain();
});

afterAll(async () => {
  await search?.stop?.();
  await db?.dispose();
});

const run = (tenant: typeof acme, query: string, extra: Record<string, unknown> = {}) => search.service.search(tenant, { query, limit: 10, ...extra });

describe("conversations.keyword (BM25)", () => {
  it("ranks the conversation that matches a sentence-like query first, without requiring every word", async () => {
    const result = await run(acme, "why does my order service deadlock when two transactions run at once?", { alpha: 1 });
    expect(result.hits[0]!.ref.id).toBe(ids.deadlock);
    expect(result.providers.find((p) => p.name === "conversations.keyword")).toMatchObject({ status: "OK" });
    expect(result.providers.find((p) => p.name === "conversations.semantic")).toMatchObject({ status: "SKIPPED" });
  });

  it("prefers rarer terms (BM25's idf): 'lisbon' beats the common 'notes'", async () => {
    const result = await run(acme, "notes lisbon", { alpha: 1 });
    expect(result.hits[0]!.ref.id).toBe(ids.lisbon);
  });

  it("scores exactly BM25 (k1 1.2, b 0.75) as computed here from the postings and document lengths", async () => {
    const query = "PostgreSQL order service deadlock notes";
    const sql = <T,>(text: string, values: unknown[] = []) => db.database.withSession((s) => s.query<T>(text, values));
    const terms = (await sql<{ lexeme: string }>(`SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', $1))`, [query])).map((row) => row.lexeme);
    const postings = await sql<{ term: string; conversation_id: string; tf: number; document_length: number }>(
      `SELECT term, conversation_id::text, tf, document_length FROM keyword_postings WHERE organization_id = 'acme' AND term = ANY($1)`,
      [terms],
    );
    const documents = await sql<{ conversation_id: string; length: number }>(`SELECT conversation_id::text, length FROM keyword_documents WHERE organization_id = 'acme'`);
    const averageLength = documents.reduce((sum, row) => sum + row.length, 0) / documents.length;
    const lengths = new Map(documents.map((row) => [row.conversation_id, row.length]));
    const expected = new Map<string, number>();
    for (const term of terms) {
      const list = postings.filter((posting) => posting.term === term);
      const idf = Math.log(1 + (documents.length - list.length + 0.5) / (list.length + 0.5));
      for (const posting of list) {
        // The denormalized length must be the document's.
        expect(posting.document_length).toBe(lengths.get(posting.conversation_id));
        const score = (idf * posting.tf * 2.2) / (posting.tf + 1.2 * (0.25 + (0.75 * posting.document_length) / averageLength));
        expected.set(posting.conversation_id, (expected.get(posting.conversation_id) ?? 0) + score);
      }
    }
    const provider = new ConversationsKeywordProvider(db.database.prisma);
    const hits = await provider.search({ tenant: acme, query, window: 100, signal: new AbortController().signal });
    expect(hits).toHaveLength(expected.size);
    expect(expected.size).toBeGreaterThan(20);
    for (const hit of hits) expect(hit.nativeScore).toBeCloseTo(expected.get(hit.ref.id)!, 9);
    const scores = hits.map((hit) => hit.nativeScore);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it("takes the dfs it is given instead of counting them, and reports the common terms it counted", async () => {
    const query = "PostgreSQL order service deadlock notes";
    const [statistics] = await db.database.withSession((s) =>
      s.query<{ documents: number; average_length: number }>(`SELECT count(*)::float8 AS documents, avg(length)::float8 AS average_length FROM keyword_documents WHERE organization_id = 'acme'`),
    );
    const collection = { documents: Number(statistics!.documents), averageLength: Number(statistics!.average_length) };
    const read = <T,>(work: (reader: Parameters<Parameters<typeof withTenantReads>[2]>[0]) => Promise<T>) => withTenantReads(db.database.prisma, "acme", work);
    const exact = await read((reader) => scoreAllPostings(reader, "acme", query, 100, collection));
    // scorePostings' hits also carry their conversations' attributes (for facets); the ranking is what is compared.
    const ranking = ({ hits, counted, corrections }: { hits: { id: string; score: number }[]; counted: unknown[]; corrections: unknown[] }) => ({ hits: hits.map(({ id, score }) => ({ id, score })), counted, corrections });
    // Everything counted, everything reported: the true dfs.
    const counting = await read((reader) => scorePostings(reader, "acme", query, 100, collection, undefined, 1));
    expect(ranking(counting).hits).toEqual(exact);
    expect(counting.counted.length).toBeGreaterThanOrEqual(4);
    const trueDfs = { terms: counting.counted.map((row) => row.term), dfs: counting.counted.map((row) => row.df) };
    // Given the true dfs: the same answer, and nothing counted to report.
    const given = await read((reader) => scorePostings(reader, "acme", query, 100, collection, trueDfs, 1));
    expect(ranking(given).hits).toEqual(exact);
    expect(given.counted).toEqual([]);
    // The same through CommonTermFrequencies' array literals, with terms no lexeme could be (quotes, backslashes, commas).
    const kept = new CommonTermFrequencies({ ttlMs: 60_000, fromDf: 1, maxTerms: 100 });
    kept.remember("acme", [...counting.counted, { term: 'odd"term\\', df: 3 }, { term: "{a,b}", df: 2 }]);
    expect(kept.known("acme").literals).toBeDefined();
    const fromLiterals = await read((reader) => scorePostings(reader, "acme", query, 100, collection, kept.known("acme"), 1));
    expect(ranking(fromLiterals)).toEqual({ hits: exact, counted: [], corrections: [] });
    // Given a wrong df for one term, the statement uses it (it does not count that term again).
    const deadlock = trueDfs.terms.indexOf("deadlock");
    expect(deadlock).toBeGreaterThanOrEqual(0);
    const wrong = { terms: ["deadlock"], dfs: [collection.documents] };
    const skewed = await read((reader) => scorePostings(reader, "acme", query, 100, collection, wrong, 1));
    expect(skewed.counted.map((row) => row.term).sort()).toEqual(trueDfs.terms.filter((term) => term !== "deadlock").sort());
    expect(skewed.hits.map((hit) => hit.score)).not.toEqual(exact.map((hit) => hit.score));
    // Terms rarer than reportFromDf are counted but not reported.
    const rare = await read((reader) => scorePostings(reader, "acme", query, 100, collection, undefined, Number.MAX_SAFE_INTEGER));
    expect(ranking(rare)).toEqual({ hits: exact, counted: [], corrections: [] });
  });

  it("bounds its SQL by the provider timeout, so a search the service gave up on does not keep the database busy", async () => {
    db.database.statements.reset();
    const result = await run(acme, "deadlock order service", { alpha: 1 });
    expect(result.providers[0]!.status).toBe("OK");
    const log = db.database.statements.log;
    const scoring = log.findIndex((sql) => sql.includes("FROM keyword_postings"));
    expect(scoring).toBeGreaterThanOrEqual(0);
    // PGlite: the tenant scope sets the statement timeout (and the role and organization) in one
    // statement before it. PostgreSQL's tenant reads set it once per pooled session, so a search
    // in steady state sends none: test/integration/tenant-reads.test.ts checks the session's value.
    if (usingPostgres) return;
    const timeout = log.findIndex((sql) => sql.startsWith("SELECT set_config(setting.name"));
    expect(timeout).toBeGreaterThanOrEqual(0);
    expect(scoring).toBeGreaterThan(timeout);
  });

  it.each([
    ["tsquery operators", `a & | ! ( ) : * ' " \\ deadlock`],
    ["an SQL fragment", `'; DROP TABLE conversations; -- deadlock`],
    ["only operators", `&|!():*'"\\`],
    ["Unicode", "pastéis de nata 🥐 Zürich 東京"],
    ["a very long word", "x".repeat(999)],
  ])("survives %s and answers or returns nothing", async (_name, query) => {
    const result = await run(acme, query, { alpha: 1 });
    expect(result.providers[0]!.status).toBe("OK");
    if (query.includes("deadlock")) expect(result.hits[0]!.ref.id).toBe(ids.deadlock);
    if (query.includes("pastéis")) expect(result.hits[0]!.ref.id).toBe(ids.lisbon);
  });
});

describe("conversations.semantic (pgvector)", () => {
  it("indexes every conversation through the queue and answers by similarity", async () => {
    const status = await search.service.search(acme, { query: "Lisbon tram itinerary days", alpha: 0, limit: 3 });
    expect(status.providers.find((p) => p.name === "conversations.semantic")).toMatchObject({ status: "OK" });
    expect(status.hits[0]!.ref.id).toBe(ids.lisbon);
    const pending = await db.database.prisma.searchIndexJob.count();
    expect(pending).toBe(0);
  });

  it("re-indexes a conversation when messages are appended, and forgets it when deleted", async () => {
    await store.append(acme, ids.autoscaling!, [{ role: "user", content: "Also the vertical pod autoscaler recommends weird memory limits for zanzibar", tokenCount: 1 }]);
    expect(await db.database.prisma.searchIndexJob.count()).toBe(1);
    await search.indexer.drain();
    const found = await run(acme, "zanzibar", { alpha: 0, limit: 1 });
    expect(found.hits[0]!.ref.id).toBe(ids.autoscaling);

    await store.softDelete(acme, ids.autoscaling!);
    // Even before the indexer runs, a deleted conversation is not returned by either provider.
    for (const alpha of [0, 1]) {
      const result = await run(acme, "zanzibar autoscaler", { alpha });
      expect(result.hits.map((hit) => hit.ref.id)).not.toContain(ids.autoscaling);
    }
    await search.indexer.drain();
    const [row] = await db.database.withSession((s) => s.query<{ n: number }>(`SELECT count(*)::int AS n FROM embedding_chunks WHERE entity_id = $1`, [ids.autoscaling]));
    expect(row!.n).toBe(0);
  });

  it("never compares vectors of another model", async () => {
    await db.database.withSession((s) => s.query(`UPDATE embedding_chunks SET model = 'some-other-model' WHERE entity_id = $1`, [ids.lisbon]));
    const result = await run(acme, "Lisbon tram itinerary days", { alpha: 0 });
    expect(result.hits.map((hit) => hit.ref.id)).not.toContain(ids.lisbon);
    await db.database.withSession((s) => s.query(`UPDATE embedding_chunks SET model = $2 WHERE entity_id = $1`, [ids.lisbon, search.embedder.model]));
  });
});

describe("hybrid search", () => {
  it("fuses both providers and explains each hit", async () => {
    const result = await run(acme, "postgres deadlock order service", { alpha: 0.5 });
    expect(result.hits[0]!.ref.id).toBe(ids.deadlock);
    const top = result.hits[0]!;
    expect(top.explanation.map((c) => c.provider).sort()).toEqual(["conversations.keyword", "conversations.semantic"]);
    expect(top.score).toBeCloseTo(top.explanation.reduce((sum, c) => sum + c.contribution, 0), 12);
    // The default fusion (RELATIVE_SCORE): each provider adds its weight times a normalized score.
    for (const contribution of top.explanation) expect(contribution.contribution).toBeGreaterThan(0);
    for (const contribution of top.explanation) expect(contribution.contribution).toBeLessThanOrEqual(contribution.weight);
    // RRF, asked for: weight / (k + rank).
    const rrf = await run(acme, "postgres deadlock order service", { alpha: 0.5, fusion: "RRF" });
    for (const contribution of rrf.hits[0]!.explanation) expect(contribution.contribution).toBeCloseTo(0.5 / (60 + contribution.rank), 12);
  });

  it("keeps organizations apart in both providers", async () => {
    for (const alpha of [0, 0.5, 1]) {
      const mine = await run(acme, "deadlock postmortem globex", { alpha, limit: 50 });
      expect(mine.hits.map((hit) => hit.ref.id)).not.toContain(ids["globex-deadlock"]);
      const theirs = await run(globex, "deadlock order service", { alpha, limit: 50 });
      expect(theirs.hits.map((hit) => hit.ref.id)).toEqual([ids["globex-deadlock"]]);
    }
  });

  it("writes the query log in batches: five searches, one INSERT, after the responses", async () => {
    await search.queryLog.flush();
    db.database.statements.reset();
    for (let i = 0; i < 5; i++) await run(acme, `batched log ${i}`);
    const inserts = () => db.database.statements.log.filter((sql) => sql.includes(`INSERT INTO "public"."search_queries"`)).length;
    expect(inserts()).toBe(0);
    await search.queryLog.flush();
    expect(inserts()).toBe(1);
    expect(await db.database.prisma.searchQuery.count({ where: { query: { startsWith: "batched log" } } })).toBe(5);
  });

  it("logs every search without holding up the response", async () => {
    await run(acme, "query log check", { alpha: 0.5 });
    await search.queryLog.flush();
    const row = await db.database.prisma.searchQuery.findFirst({ where: { query: "query log check" } });
    expect(row).toMatchObject({ organizationId: "acme", userId: "ann", alpha: 0.5, cacheHit: false });
    // The external providers are not configured in this test: SKIPPED, the others OK.
    expect((row!.providers as { name: string; status: string }[]).map((p) => p.status)).toEqual(["OK", "OK", "OK", "OK", "OK", "SKIPPED", "SKIPPED", "SKIPPED", "SKIPPED"]);
  });
});

describe("maintenance of the search tables", () => {
  it("vacuums them once enough conversations were re-indexed (PGlite has no autovacuum), then waits for the next batch", async () => {
    const indexer = new ConversationIndexer(db.database, search.embedder, search.vectorStore, silentLogger, { vacuumAfterJobs: 3 });
    for (let i = 0; i < 3; i++) await add(acme, `vacuum${i}`, `Vacuum test ${i}`, "words for the keyword postings");
    expect(await indexer.vacuumIfDue()).toBe(false);
    expect(await indexer.drain()).toBe(3);
    expect(await indexer.vacuumIfDue()).toBe(true);
    // VACUUM sets the visibility map, which is what lets index-only scans skip the heap.
    const [row] = await db.database.withSession((s) => s.query<{ all_visible: number }>(`SELECT relallvisible AS all_visible FROM pg_class WHERE relname = 'keyword_postings'`));
    expect(row!.all_visible).toBeGreaterThan(0);
    expect(await indexer.vacuumIfDue()).toBe(false);
  });
});
