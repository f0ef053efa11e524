/**
 * Highlights mark a word when PostgreSQL's `english` configuration would index it as one of the
 * query's lexemes (lib/retrieval/highlights.ts). The statement runs each token through its
 * dictionary with ts_lexize, by token type, rather than to_tsvector per token (ten times the
 * cost): these tests hold that shortcut to the database's own configuration.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import fs from "node:fs";
import path from "node:path";
import { Prisma } from "../../generated/prisma/client.js";
import { checkedMatchingRuns, ENGLISH_STOP_WORDS, matchingRuns, queryLexemes, runLexeme } from "../../lib/retrieval/english-analyzer.js";
import { databaseTokens, highlightStatementSql, MAX_PASSAGE_SCAN, SIMPLE_TOKEN_TYPES, STEMMED_TOKEN_TYPES, vectorPositionCounts, vectorPositionsSql } from "../../lib/retrieval/highlights.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.dispose();
});

describe("the highlights analyzer", () => {
  it("uses the dictionaries the english configuration maps each token type to", async () => {
    const rows = await db.database.prisma.$queryRaw<{ tokid: number; dictionary: string }[]>`
      SELECT m.maptokentype AS tokid, d.dictname AS dictionary
      FROM pg_ts_config_map m JOIN pg_ts_config c ON c.oid = m.mapcfg JOIN pg_ts_dict d ON d.oid = m.mapdict
      WHERE c.cfgname = 'english' ORDER BY m.maptokentype, m.mapseqno`;
    const mapped = (dictionary: string) => rows.filter((row) => row.dictionary === dictionary).map((row) => Number(row.tokid));
    // Compounds (asciihword 16, hword 17, numhword 15) and URLs (5) are marked by their parts.
    expect(mapped("english_stem").filter((tokid) => tokid !== 16 && tokid !== 17)).toEqual([...STEMMED_TOKEN_TYPES]);
    expect(mapped("simple").filter((tokid) => tokid !== 5 && tokid !== 15)).toEqual([...SIMPLE_TOKEN_TYPES]);
    expect(rows.every((row) => row.dictionary === "english_stem" || row.dictionary === "simple")).toBe(true);
  });

  it("marks exactly the tokens whose to_tsvector lexemes meet the query's", async () => {
    const text = "Deadlocked at 10.5.2 on db-01.example.com: the deadlocks' cause, running deadlock-free? Mail ops@example.com, see /var/log/deadlock.log; 42 retries, v2 café DEADLOCKING";
    const queries = ["deadlock", "running", "retries 42", "ops@example.com", "café", "the of and", "db-01.example.com", "10.5.2", "deadlock-free"];
    for (const query of queries) {
      const passages = Prisma.sql`SELECT 'k' AS key, 0 AS ord, ${text}::text AS text, NULL::text AS message_id, NULL::text AS role`;
      const [row] = await db.database.prisma.$queryRaw<{ tokens: string[] }[]>(highlightStatementSql(query, passages));
      // What to_tsvector says, token by token, for the same token types.
      const expected = await db.database.prisma.$queryRaw<{ token: string }[]>`
        SELECT DISTINCT t.token FROM ts_parse('default', ${text}) t
        WHERE t.tokid = ANY(${[...STEMMED_TOKEN_TYPES, ...SIMPLE_TOKEN_TYPES]}::int[])
          AND tsvector_to_array(to_tsvector('english', t.token)) && tsvector_to_array(to_tsvector('english', ${query}))`;
      expect({ query, tokens: [...row!.tokens].sort() }).toEqual({ query, tokens: expected.map((token) => token.token).sort() });
      if (query === "deadlock") expect([...row!.tokens].sort()).toEqual(["DEADLOCKING", "Deadlocked", "deadlock", "deadlocks"]);
      if (query === "the of and") expect(row!.tokens).toEqual([]);
    }
  });

  it("reads a vector's text form as the database counts its positions", async () => {
    const texts = [
      "Deadlocked again: deadlocks, deadlock-free retries; see /var/log/deadlock.log",
      "O'Reilly's \\ backslash \\\\ and 'quoted' words, it's",
      `${"deadlock ".repeat(300)}once`,
      "",
    ];
    for (const text of texts) {
      for (const configuration of ["english", "simple"]) {
        const [row] = await db.database.prisma.$queryRawUnsafe<{ printed: string; counts: { lexeme: string; positions: number }[] }[]>(
          `SELECT v::text AS printed, coalesce((SELECT json_agg(json_build_object('lexeme', u.lexeme, 'positions', coalesce(array_length(u.positions, 1), 1))) FROM unnest(v) u), '[]') AS counts
           FROM to_tsvector($1::regconfig, $2) v`, configuration, text);
        expect(Object.fromEntries(vectorPositionCounts(row!.printed))).toEqual(Object.fromEntries(row!.counts.map(({ lexeme, positions }) => [lexeme, positions])));
      }
    }
    // Lexemes no parser gives (quotes, backslashes, blanks), written as a vector: printed escaped, read back as they were.
    const [crafted] = await db.database.prisma.$queryRaw<{ printed: string }[]>`SELECT ${"'it''s':1,2 'a\\\\b':3A 'x y':4 stripped"}::tsvector::text AS printed`;
    expect(Object.fromEntries(vectorPositionCounts(crafted!.printed))).toEqual({ "it's": 2, "a\\b": 1, "x y": 1, stripped: 1 });
    // And the ranking's count of positions in the statement (vectorPositionsSql) agrees.
    const [sum] = await db.database.prisma.$queryRaw<{ sql: number; unnested: number }[]>`
      SELECT ${vectorPositionsSql(Prisma.sql`v`)} AS sql, (SELECT sum(coalesce(array_length(u.positions, 1), 1)) FROM unnest(v) u)::int AS unnested
      FROM to_tsvector('english', ${texts[0]!}) v`;
    expect(Number(sum!.sql)).toBe(sum!.unnested);
  });

  it("keeps each message's passage vector as to_tsvector of the text highlights read, on insert and on edit", async () => {
    const prisma = db.database.prisma;
    await prisma.$executeRawUnsafe(`INSERT INTO organizations (id, name) VALUES ('passages', 'Passages')`);
    await prisma.$executeRawUnsafe(`INSERT INTO users (organization_id, id) VALUES ('passages', 'pat')`);
    const conversation = await prisma.conversation.create({ data: { organizationId: "passages", userId: "pat", title: "Vectors" } });
    // Past the scan bound, so a vector of the whole content would differ.
    const long = `${"deadlocks happen ".repeat(300)}tail-only-word`;
    await prisma.message.createMany({
      data: [
        { conversationId: conversation.id, organizationId: "passages", position: 0, role: "user", content: long, tokenCount: 1 },
        { conversationId: conversation.id, organizationId: "passages", position: 1, role: "assistant", content: "Retry the transaction.", tokenCount: 1 },
      ],
    });
    const mismatched = () =>
      prisma.$queryRaw<{ position: number }[]>`
        SELECT position FROM messages WHERE organization_id = 'passages'
          AND passage_vector IS DISTINCT FROM to_tsvector('english'::regconfig, left(content, ${MAX_PASSAGE_SCAN}::int))`;
    expect(await mismatched()).toEqual([]);
    const [before] = await prisma.$queryRaw<{ tail: boolean }[]>`SELECT passage_vector @@ to_tsquery('english', 'tail') AS tail FROM messages WHERE organization_id = 'passages' AND position = 0`;
    expect(before!.tail).toBe(false);
    await prisma.$executeRaw`UPDATE messages SET content = 'Deadlocked again.' WHERE organization_id = 'passages' AND position = 1`;
    expect(await mismatched()).toEqual([]);
    const [edited] = await prisma.$queryRaw<{ matches: boolean }[]>`SELECT passage_vector @@ to_tsquery('english', 'deadlock') AS matches FROM messages WHERE organization_id = 'passages' AND position = 1`;
    expect(edited!.matches).toBe(true);
  });

  describe("the JavaScript analyzer on SciFact", () => {
    // The corpus ships in shared/ beside the clone (CI) or the work tree.
    const folder = [path.resolve("../shared/datasets/scifact"), "/work/shared/datasets/scifact"].find((candidate) => fs.existsSync(path.join(candidate, "corpus.jsonl")));
    const read = (file: string) => fs.readFileSync(path.join(folder!, file), "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, string>);
    // A third of the corpus: every kind of text it holds, within a test's time on PGlite.
    const documents = () => read("corpus.jsonl").slice(0, 1_700).map((document) => `${document.title}\n${document.text}`.slice(0, MAX_PASSAGE_SCAN));

    it("finds SciFact", () => {
      expect(folder).toBeDefined();
    });

    it("stems every word as english_stem does and drops the same stop words", async () => {
      const texts = documents();
      const rows = await db.database.prisma.$queryRaw<{ word: string; lexemes: string[] | null }[]>`
        SELECT DISTINCT t.token AS word, ts_lexize('english_stem', t.token) AS lexemes
        FROM unnest(${texts}::text[]) d(text), ts_parse('default', d.text) t WHERE t.tokid = ANY(${[...STEMMED_TOKEN_TYPES]}::int[])`;
      expect(rows.length).toBeGreaterThan(20_000);
      const disagreeing = rows.filter((row) => (runLexeme(row.word) ?? null) !== (row.lexemes!.length === 0 ? null : row.lexemes![0]));
      expect(disagreeing).toEqual([]);
      const stops = await db.database.prisma.$queryRaw<{ word: string }[]>`SELECT w AS word FROM unnest(${[...ENGLISH_STOP_WORDS]}::text[]) w WHERE ts_lexize('english_stem', w) <> '{}'::text[]`;
      expect(stops).toEqual([]);
    });

    it("reads passages as to_tsvector does (the agreement rate), and marks exactly what the database marks once checked", async () => {
      const texts = documents();
      const queries = read("queries.jsonl").slice(0, 40).map((query) => query.text!);
      // Agreement, lexeme by lexeme: how often JavaScript counts a lexeme of the passage's
      // to_tsvector as often as the vector's positions do. Lexemes no run can give (decimals,
      // signed numbers, paths, hosts; compounds are marked by their parts) are PostgreSQL's alone.
      const vectors = await db.database.prisma.$queryRaw<{ ord: number; lexemes: string[]; counts: number[] }[]>`
        SELECT d.ord::int AS ord, array_agg(u.lexeme) AS lexemes, array_agg(coalesce(array_length(u.positions, 1), 1)) AS counts
        FROM unnest(${texts}::text[]) WITH ORDINALITY d(text, ord), unnest(to_tsvector('english', d.text)) u GROUP BY d.ord`;
      const databaseCounts = new Map(vectors.map((row) => [Number(row.ord) - 1, new Map(row.lexemes.map((lexeme, index) => [lexeme, Number(row.counts[index])]))]));
      const tally = { words: 0, wordsAlike: 0, runs: 0, runsAlike: 0, others: 0 };
      for (const [index, counts] of databaseCounts) {
        const all = queryLexemes([...counts.keys()]);
        const found = matchingRuns(texts[index]!, all).counts;
        for (const [lexeme, count] of counts) {
          if (!/^[\p{L}\p{N}]+$/u.test(lexeme)) {
            tally.others++;
            continue;
          }
          const alike = (found.get(lexeme) ?? 0) === count;
          tally.runs++;
          if (alike) tally.runsAlike++;
          if (/^\p{L}+$/u.test(lexeme)) {
            tally.words++;
            if (alike) tally.wordsAlike++;
          }
        }
      }
      const percent = (part: number, whole: number) => `${((part / whole) * 100).toFixed(2)}%`;
      // Measured on PGlite and PostgreSQL 15: words 99.92% alike (140,741 of 140,856), runs with digits included 99.85%.
      console.log(
        `english analyzer on ${texts.length} SciFact passages: word lexemes counted alike ${tally.wordsAlike} of ${tally.words} (${percent(tally.wordsAlike, tally.words)}), ` +
          `all run lexemes ${tally.runsAlike} of ${tally.runs} (${percent(tally.runsAlike, tally.runs)}); ${tally.others} (passage, lexeme) pairs no run gives`,
      );
      expect(tally.wordsAlike / tally.words).toBeGreaterThan(0.998);
      expect(tally.runsAlike / tally.runs).toBeGreaterThan(0.995);

      // Per query: the checked JavaScript reading, with the database's where it fails, equals the database's parse.
      const sample = texts.slice(0, 300);
      let fallbacks = 0;
      let passages = 0;
      for (const query of queries) {
        const [terms] = await db.database.prisma.$queryRaw<{ lexemes: string[] }[]>`SELECT coalesce(array_agg(lexeme), '{}') AS lexemes FROM unnest(to_tsvector('english', ${query}))`;
        const lexemes = queryLexemes(terms!.lexemes);
        const expected = await db.database.prisma.$queryRaw<{ ord: number; tokens: string[] }[]>(
          highlightStatementSql(query, Prisma.sql`SELECT 'd' AS key, (d.ord - 1)::int AS ord, d.text, NULL::text AS message_id, NULL::text AS role FROM unnest(${sample}::text[]) WITH ORDINALITY d(text, ord)`),
        );
        const undecided: { key: string; ord: number; text: string }[] = [];
        const checked = sample.map((text, ord) => {
          const counts = new Map([...(databaseCounts.get(ord) ?? new Map<string, number>())].filter(([lexeme]) => lexemes.lexemes.has(lexeme)));
          const runs = checkedMatchingRuns(text, lexemes, counts);
          if (runs === null) undecided.push({ key: "d", ord, text });
          return runs === null ? null : [...new Set(runs.map((run) => run.token))];
        });
        const fromDatabase = undecided.length > 0 ? await databaseTokens(db.database.prisma, query, undecided) : new Map<string, string[]>();
        fallbacks += undecided.length;
        passages += sample.length;
        for (const row of expected) {
          const ord = Number(row.ord);
          const actual = checked[ord] ?? fromDatabase.get(`d\u0000${ord}`)!;
          expect({ query, ord, tokens: [...actual].sort() }).toEqual({ query, ord, tokens: [...row.tokens].sort() });
        }
      }
      console.log(`english analyzer: ${fallbacks} of ${passages} (query, passage) pairs over ${queries.length} SciFact queries needed the database's parse`);
    }, 300_000);
  });
});
