/**
 * Pruned exact BM25 (keyword_search_conversations, bench/sql/keyword-search-pruning.sql: the
 * experiment the keyword-pruning benchmark measures, not shipped; installed here into the test
 * database) against the provider's exhaustive statement, on a real database: a generated corpus with skewed term
 * frequencies (a few terms in most conversations, a long tail in few), many query shapes, after
 * inserts, renames, soft and hard deletes and another organization's writes; the dfs a caller
 * passes in (its cache) are used as given; a tenant reaches only its own postings.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { PRUNING_SQL } from "../../bench/scenarios/keyword-pruning.js";
import type { SqlSession } from "../../lib/database/connect.js";
import { readerOverConnection } from "../../lib/database/tenant-reads.js";
import { withTenantScope } from "../../lib/database/tenant-scope.js";
import { scoreAllPostings } from "../../subgraphs/conversations/search/keyword-provider.js";
import { createTestDatabase, usingPostgres, type TestDatabase } from "../support/database.js";

let db: TestDatabase;
const WINDOW = 20;

/** Deterministic pseudo-random numbers (mulberry32), so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Words the English analyzer keeps as they are (no stemming, no stop words).
const word = (i: number) => `w${i}x`;
const VOCABULARY = 400;
const rand = random(12);

/** Zipf-like: word 0 in nearly every title, word 1 in most, then a long tail of rare words. */
function title(): string {
  const words: string[] = [];
  if (rand() < 0.9) words.push(word(0));
  if (rand() < 0.7) words.push(word(1), ...(rand() < 0.3 ? [word(1)] : []));
  const length = 2 + Math.floor(rand() * 25);
  for (let i = 0; i < length; i++) words.push(word(Math.min(VOCABULARY - 1, Math.floor(2 + 1 / (0.004 + rand() * 0.996) ** 1.3))));
  return words.join(" ");
}

function queries(): string[] {
  const q = random(99);
  const pick = () => word(Math.min(VOCABULARY - 1, Math.floor(2 + 1 / (0.004 + q() * 0.996) ** 1.3)));
  const list = [
    word(0), `${word(0)} ${word(1)}`, `${word(0)} ${word(1)} ${word(2)}`, "nosuchterm", `nosuchterm ${word(0)}`,
    `${word(5)} ${word(5)} ${word(5)}`, `'; DROP TABLE conversations; -- ${word(3)} & | !`, "", `${word(VOCABULARY - 1)}`,
  ];
  for (let i = 0; i < 25; i++) list.push([pick(), pick()].join(" "));
  for (let i = 0; i < 25; i++) list.push([word(0), word(1), ...Array.from({ length: 10 }, pick)].join(" "));
  for (let i = 0; i < 15; i++) list.push([pick(), pick(), word(0), pick(), pick(), "unknownzz", pick()].join(" "));
  return list;
}

async function sql<T>(text: string, values: unknown[] = []): Promise<T[]> {
  return db.database.withSession((s) => s.query<T>(text, values));
}

async function insertTitles(organizationId: string, userId: string, titles: string[]): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    `INSERT INTO conversations (id, organization_id, user_id, title) SELECT gen_random_uuid(), $1, $2, t FROM unnest($3::text[]) t RETURNING id::text`,
    [organizationId, userId, titles],
  );
  return rows.map((row) => row.id);
}

async function expectSameTopWindow(): Promise<number> {
  const [collection] = await sql<{ documents: number; average_length: number }>(
    `SELECT count(*)::float8 AS documents, greatest(coalesce(avg(length), 1), 1)::float8 AS average_length FROM keyword_documents WHERE organization_id = 'acme'`,
  );
  // Always pruning (threshold 0), and the function's default threshold (more postings than this
  // corpus has, so its unpruned path), under the tenant scope as a provider would call it.
  const search = (query: string, pruneFrom: number | null) =>
    withTenantScope(db.database.prisma, "acme", (tx) =>
      pruneFrom === null
        ? tx.$queryRaw<{ id: string; score: number }[]>`
            SELECT id::text, score FROM keyword_search_conversations('acme', ${query}, ${collection!.documents}::float8, ${collection!.average_length}::float8, ${WINDOW}) WHERE id IS NOT NULL`
        : tx.$queryRaw<{ id: string; score: number }[]>`
            SELECT id::text, score FROM keyword_search_conversations('acme', ${query}, ${collection!.documents}::float8, ${collection!.average_length}::float8, ${WINDOW}, ${pruneFrom}::int) WHERE id IS NOT NULL`,
    ).then((rows) => rows.map((row) => ({ ref: { id: row.id }, nativeScore: Number(row.score) })));
  let nonEmpty = 0;
  let identicalQueries = 0;
  for (const [which, pruneFrom] of [0, null].entries()) for (const query of queries()) {
    if (which === 1 && query.split(" ").length < 10) continue;
    const pruned = await search(query, pruneFrom);
    // The exhaustive statement, with room past the window to see ties across its edge.
    const reference = await scoreAllPostings(db.database.prisma, "acme", query, WINDOW + 10, { documents: collection!.documents, averageLength: collection!.average_length });
    const exact = reference.slice(0, WINDOW);
    expect({ query, length: pruned.length }).toEqual({ query, length: exact.length });
    const identical = pruned.every((hit, i) => hit.ref.id === exact[i]!.id);
    if (identical) identicalQueries += 1;
    else {
      // The two sum a conversation's term contributions in different orders, so two scores
      // that differ only in the last bits may swap, or trade places at the window's edge.
      // Anything else is a real difference.
      for (const [i, hit] of pruned.entries()) {
        const twin = reference.find((row) => row.id === hit.ref.id);
        expect({ query, position: i, id: hit.ref.id, near: twin !== undefined && Math.abs(twin.score - exact[i]!.score) <= 1e-12 * exact[i]!.score }).toEqual({ query, position: i, id: hit.ref.id, near: true });
      }
    }
    for (const [i, hit] of pruned.entries()) expect(Math.abs(hit.nativeScore - exact[i]!.score)).toBeLessThanOrEqual(1e-12 * exact[i]!.score);
    if (exact.length > 0) nonEmpty += 1;
  }
  // Near-ties are rare: nearly every query must match id for id.
  expect(identicalQueries).toBeGreaterThanOrEqual(queries().length - 3);
  expect(nonEmpty).toBeGreaterThan(queries().length);
  return nonEmpty;
}

beforeAll(async () => {
  db = await createTestDatabase();
  await db.database.withSession((session) => session.exec(fs.readFileSync(PRUNING_SQL, "utf8")));
  await sql(`INSERT INTO organizations (id, name) VALUES ('acme', 'Acme'), ('globex', 'Globex')`);
  await sql(`INSERT INTO users (organization_id, id) VALUES ('acme', 'ann'), ('globex', 'gus')`);
  await insertTitles("acme", "ann", Array.from({ length: 700 }, title));
  // Globex uses the same words, far more often: if its postings leaked into acme's statistics,
  // acme's df (and so every idf and score) would be wrong.
  await insertTitles("globex", "gus", Array.from({ length: 300 }, () => `${word(2)} ${word(3)} ${word(3)} ${title()}`));
}, 120_000);
afterAll(async () => db?.dispose());

describe("pruned BM25", () => {
  it("returns exactly the exhaustive statement's top 20 (ids, order, scores) on a skewed corpus", async () => {
    expect(await expectSameTopWindow()).toBeGreaterThan(60);
  });

  it("prunes: a query with near-stop-words sums fewer postings than the exhaustive statement", async () => {
    // The statements the function runs are not visible from outside; the postings' primary-key
    // entries it reads are (pg_stat_user_indexes). The exhaustive statement reads every range
    // twice (count, then sum); the pruned one counts them once and only probes the common terms.
    // On one session: a backend reports its counts lazily, so force the flush where it ran.
    const reads = async (work: (session: SqlSession) => Promise<unknown>) =>
      db.database.withSession(async (session) => {
        const total = async () => {
          await session.query(`SELECT pg_stat_force_next_flush()`);
          await session.query(`SELECT pg_stat_clear_snapshot()`);
          const [row] = await session.query<{ reads: string }>(`SELECT coalesce(sum(idx_tup_read), 0)::text AS reads FROM pg_stat_user_indexes WHERE indexrelname = 'keyword_postings_pkey'`);
          return Number(row!.reads);
        };
        const before = await total();
        await work(session);
        return (await total()) - before;
      });
    const [collection] = await sql<{ documents: number; average_length: number }>(
      `SELECT count(*)::float8 AS documents, greatest(coalesce(avg(length), 1), 1)::float8 AS average_length FROM keyword_documents WHERE organization_id = 'acme'`,
    );
    // Plans from real statistics, as autovacuum keeps them in production: on a never-analyzed
    // table the planner guesses one row per range and may scan the organization's whole range.
    await sql(`ANALYZE keyword_postings`);
    const [rare] = await sql<{ term: string }>(
      `SELECT term FROM keyword_postings WHERE organization_id = 'acme' GROUP BY term HAVING count(*) BETWEEN 20 AND 40 ORDER BY term LIMIT 1`,
    );
    const query = `${word(0)} ${word(1)} ${rare!.term}`;
    const [common] = await sql<{ postings: number }>(`SELECT count(*)::int AS postings FROM keyword_postings WHERE organization_id = 'acme' AND term IN ($1, $2)`, [word(0), word(1)]);
    const pruned = await reads((session) =>
      session.query(`SELECT * FROM keyword_search_conversations('acme', $1, $2::float8, $3::float8, ${WINDOW}, 0)`, [query, collection!.documents, collection!.average_length]),
    );
    const exhaustive = await reads((session) => {
      const reader = readerOverConnection((text, values) => session.query(text, values));
      return scoreAllPostings(reader, "acme", query, WINDOW, { documents: collection!.documents, averageLength: collection!.average_length });
    });
    expect(common!.postings).toBeGreaterThan(500);
    expect(exhaustive).toBeGreaterThanOrEqual(2 * common!.postings);
    // Counted once, plus the rare range and probes: well under a second full pass.
    expect(pruned).toBeLessThan(1.5 * common!.postings);
  });

  it("uses the dfs the caller passes (its cache) instead of counting, and returns the ones it counted", async () => {
    const [collection] = await sql<{ documents: number; average_length: number }>(
      `SELECT count(*)::float8 AS documents, greatest(coalesce(avg(length), 1), 1)::float8 AS average_length FROM keyword_documents WHERE organization_id = 'acme'`,
    );
    const query = `${word(0)} ${word(1)} ${word(9)} nosuchterm`;
    const run = (knownTerms: string[], knownDfs: number[]) =>
      sql<{ id: string | null; score: number | null; term: string | null; df: number | null }>(
        `SELECT id::text, score, term, df FROM keyword_search_conversations('acme', $1, $2::float8, $3::float8, ${WINDOW}, 0, $4::text[], $5::float8[])`,
        [query, collection!.documents, collection!.average_length, knownTerms, knownDfs],
      );
    const live = await run([], []);
    const counted = Object.fromEntries(live.filter((row) => row.id === null).map((row) => [row.term, Number(row.df)]));
    const truth = await sql<{ term: string; df: number }>(
      `SELECT term, count(*)::int AS df FROM keyword_postings WHERE organization_id = 'acme' AND term = ANY($1::text[]) GROUP BY term`,
      [[word(0), word(1), word(9)]],
    );
    expect(counted).toEqual({ ...Object.fromEntries(truth.map((row) => [row.term, row.df])), nosuchterm: 0 });
    // Every df given: none counted, and the hits are the same.
    const terms = Object.keys(counted);
    const cached = await run(terms, terms.map((term) => counted[term]!));
    expect(cached.filter((row) => row.id === null)).toEqual([]);
    expect(cached.map((row) => row.id)).toEqual(live.filter((row) => row.id !== null).map((row) => row.id));
    // A given df is really used: a different df for word 9 changes its idf, so the scores.
    const skewed = await run([word(9)], [counted[word(9)]! * 3]);
    expect(skewed.filter((row) => row.id === null).map((row) => row.term).sort()).toEqual(["nosuchterm", word(0), word(1)]);
    const liveScores = new Map(live.filter((row) => row.id !== null).map((row) => [row.id, row.score]));
    expect(skewed.filter((row) => row.id !== null).some((row) => liveScores.has(row.id) && liveScores.get(row.id) !== row.score)).toBe(true);
  });

  it("reaches only the caller's organization: under a tenant scope another organization's postings are invisible", async () => {
    const call = (organizationId: string) =>
      withTenantScope(db.database.prisma, "acme", (tx) =>
        tx.$queryRaw<{ id: string | null; term: string | null; df: number | null }[]>`
          SELECT id::text, term, df FROM keyword_search_conversations(${organizationId}, ${`${word(2)} ${word(3)}`}, 1000::float8, 10::float8, 20, 0)`);
    const own = await call("acme");
    expect(own.filter((row) => row.id !== null).length).toBe(WINDOW);
    // Globex has these words in every conversation: acme's scope sees none of them.
    const other = await call("globex");
    expect(other.filter((row) => row.id !== null)).toEqual([]);
    expect(other.filter((row) => row.id === null).map((row) => Number(row.df))).toEqual([0, 0]);
  });

  it("stays exact after inserts, renames, soft deletes, restores and hard deletes, and another organization's writes do not change acme's results", async () => {
    const ids = await insertTitles("acme", "ann", Array.from({ length: 150 }, title));
    const sample = (await sql<{ id: string }>(`SELECT id::text FROM conversations WHERE organization_id = 'acme' ORDER BY id LIMIT 120`)).map((row) => row.id);
    // Renames: some keep most words (only tf and length change), some change everything.
    for (const id of sample.slice(0, 40)) await sql(`UPDATE conversations SET title = $2 WHERE id = $1`, [id, title()]);
    for (const id of sample.slice(40, 50)) await sql(`UPDATE conversations SET title = title || ' ' || split_part(title, ' ', 1) WHERE id = $1`, [id]);
    await sql(`UPDATE conversations SET deleted_at = now() WHERE id = ANY($1::uuid[])`, [sample.slice(50, 80)]);
    await sql(`UPDATE conversations SET deleted_at = NULL WHERE id = ANY($1::uuid[])`, [sample.slice(50, 60)]);
    await sql(`DELETE FROM conversations WHERE id = ANY($1::uuid[])`, [[...sample.slice(80, 100), ...ids.slice(0, 10)]]);
    expect(await expectSameTopWindow()).toBeGreaterThan(60);
    const acmeResults = async () => {
      const [collection] = await sql<{ documents: number; average_length: number }>(
        `SELECT count(*)::float8 AS documents, greatest(coalesce(avg(length), 1), 1)::float8 AS average_length FROM keyword_documents WHERE organization_id = 'acme'`,
      );
      return Promise.all(queries().map((query) =>
        sql(`SELECT id::text, score FROM keyword_search_conversations('acme', $1, $2::float8, $3::float8, ${WINDOW}, 0)`, [query, collection!.documents, collection!.average_length])));
    };
    const acmeBefore = await acmeResults();
    const globexIds = await insertTitles("globex", "gus", Array.from({ length: 100 }, () => `${word(0)} ${word(0)} ${word(1)} ${title()}`));
    await sql(`DELETE FROM conversations WHERE id = ANY($1::uuid[])`, [globexIds.slice(0, 30)]);
    const acmeAfter = await acmeResults();
    expect(acmeAfter).toEqual(acmeBefore);
  });
});
