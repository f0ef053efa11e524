/**
 * Highlights mark a word when PostgreSQL's `english` configuration would index it as one of the
 * query's lexemes (lib/retrieval/highlights.ts). The statement runs each token through its
 * dictionary with ts_lexize, by token type, rather than to_tsvector per token (ten times the
 * cost): these tests hold that shortcut to the database's own configuration.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Prisma } from "../../generated/prisma/client.js";
import { highlightStatementSql, MAX_PASSAGE_SCAN, SIMPLE_TOKEN_TYPES, STEMMED_TOKEN_TYPES } from "../../lib/retrieval/highlights.js";
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
});
