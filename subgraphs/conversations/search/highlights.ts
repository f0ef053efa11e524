/**
 * Highlights of conversation hits: each conversation's messages that best match the query (most
 * occurrences of its lexemes), with the message's id and role, in one statement for the page
 * (lib/retrieval/highlights.ts says how words are matched and passages cut). A conversation none
 * of whose read messages matches (a semantic-only hit, or one whose title alone matched) gets its
 * opening message: the question that usually states what it is about.
 *
 * Messages are ranked by the lexemes each keeps from when it was written (messages.passage_vector,
 * the lexemes of the same first MAX_PASSAGE_SCAN characters), and the same vector, cut to the
 * query's lexemes and returned as text, says how often each occurs in each returned message:
 * JavaScript finds those words
 * (lib/retrieval/english-analyzer.ts) and uses them when it counts them alike; a message it reads
 * differently (an address, a path or a number among the query's terms) is parsed by PostgreSQL
 * in a second statement, which parses only such messages, all of the page's at once. So the
 * database parses no text on most pages, and never more than two statements are sent per page.
 *
 * Bounded per hit: a conversation's messages are read in order, each up to MAX_PASSAGE_SCAN
 * characters, until MAX_CONVERSATION_SCAN characters or MAX_MESSAGES_SCANNED messages were read;
 * later messages are not highlighted. The positions come from the (conversation_id, position)
 * unique index, so the statement never reads past them.
 */
import { isUuid } from "../../../lib/graphql/pagination.js";
import { Prisma, type PrismaClient } from "../../../generated/prisma/client.js";
import { queryPrepared, withTenantReads } from "../../../lib/database/tenant-reads.js";
import { checkedMatchingRuns, queryLexemes } from "../../../lib/retrieval/english-analyzer.js";
import { databaseTokens, highlightsByHit, MAX_PASSAGE_SCAN, queryLexemesInVectorSql, queryTermsSql, vectorPositionCounts, vectorPositionsSql, type CandidatePassage, type HighlightOptions, type HighlightPassage, type UndecidedPassage } from "../../../lib/retrieval/highlights.js";
import type { EntityRef } from "../../../lib/retrieval/search-provider.js";

/** Messages of one conversation read for its highlights at most. */
export const MAX_MESSAGES_SCANNED = 64;
/** Characters of one conversation's messages read for its highlights at most (about 32 KB of text). */
export const MAX_CONVERSATION_SCAN = 32_768;


export async function conversationHighlights(prisma: PrismaClient, organizationId: string, refs: readonly EntityRef[], query: string, options: HighlightOptions): Promise<Map<string, HighlightPassage[]>> {
  const ids = [...new Set(refs.filter((ref) => ref.typename === "Conversation" && isUuid(ref.id)).map((ref) => ref.id.toLowerCase()))];
  if (ids.length === 0) return new Map();
  // Each row carries the query's lexemes and how often each occurs in the message (from its
  // stored vector): JavaScript finds those words (english-analyzer.ts) and checks its count.
  const statement = Prisma.sql`
    WITH ${queryTermsSql(query)}
    SELECT 'Conversation:' || r.conversation_id::text AS key, r.position AS ord, left(t.content, ${MAX_PASSAGE_SCAN}::int) AS text, r.id::text AS message_id, r.role::text AS role,
           q.lexemes AS query_lexemes, r.found::text AS found
    FROM (
      SELECT s.*, row_number() OVER (PARTITION BY s.conversation_id ORDER BY s.occurrences DESC, s.position) AS n
      FROM (
        -- How often the query's lexemes occur in the message: what ranks it.
        SELECT w.conversation_id, w.id, w.role, w.position, w.found, ${vectorPositionsSql(Prisma.sql`w.found`)} AS occurrences
        FROM (
          SELECT m.conversation_id, m.id, m.role, m.position,
                 -- The message's vector (kept at write time for this text: the
                 -- message_passage_vectors migration) cut to the query's lexemes.
                 ${queryLexemesInVectorSql(Prisma.sql`coalesce(m.passage_vector, to_tsvector('english'::regconfig, left(m.content, ${MAX_PASSAGE_SCAN}::int)))`)} AS found,
                 sum(least(octet_length(m.content), ${MAX_PASSAGE_SCAN}::int)) OVER (PARTITION BY m.conversation_id ORDER BY m.position)
                   - least(octet_length(m.content), ${MAX_PASSAGE_SCAN}::int) AS read_before
          FROM messages m
          -- The ids on both sides: the planner then reads the page's conversations by primary key
          -- rather than hashing every conversation of the organization.
          JOIN conversations c ON c.organization_id = m.organization_id AND c.id = m.conversation_id AND c.id = ANY(${ids}::uuid[]) AND c.organization_id = ${organizationId} AND c.deleted_at IS NULL
          CROSS JOIN query_terms q
          WHERE m.conversation_id = ANY(${ids}::uuid[]) AND m.organization_id = ${organizationId} AND m.position < ${MAX_MESSAGES_SCANNED}::int
        ) w
        WHERE w.read_before < ${MAX_CONVERSATION_SCAN}::int
      ) s
    ) r
    -- The text of the chosen messages only, by primary key: carried through the ranking's sorts
    -- for every message read, it cost about a fifth of the statement's time.
    JOIN messages t ON t.id = r.id AND t.organization_id = ${organizationId}
    CROSS JOIN query_terms q
    WHERE r.n <= ${options.limit}::int AND (r.occurrences > 0 OR r.n = 1)`;
  return withTenantReads(prisma, organizationId, async (tx) => {
    // A named statement on PostgreSQL (queryPrepared): its text never varies, only its values.
    const rows = await queryPrepared<Row>(tx, "conversation_highlights", statement);
    const terms = queryLexemes(rows[0]?.query_lexemes ?? []);
    const undecided: UndecidedPassage[] = [];
    const candidates: CandidatePassage[] = rows.map((row) => {
      const ord = Number(row.ord);
      const counts = vectorPositionCounts(row.found);
      // Where the message's vector holds none of the query's lexemes, no word of it matches.
      const runs = counts.size === 0 ? [] : checkedMatchingRuns(row.text, terms, counts);
      if (runs === null) undecided.push({ key: row.key, ord, text: row.text });
      const candidate: CandidatePassage = { key: row.key, ord, text: row.text, tokens: [], messageId: row.message_id, role: row.role.toUpperCase() };
      if (runs !== null) candidate.ranges = runs.map(({ start, end }) => ({ start, end }));
      return candidate;
    });
    // Rare: a passage whose words JavaScript reads differently from PostgreSQL (a host, an
    // address, a path or a number among the query's terms); the database's reading wins.
    if (undecided.length > 0) {
      const fromDatabase = await databaseTokens(tx, query, undecided);
      for (const candidate of candidates) candidate.tokens = fromDatabase.get(`${candidate.key}\u0000${candidate.ord}`) ?? candidate.tokens;
    }
    return highlightsByHit(candidates, options.limit, options.windowLength);
  });
}

interface Row {
  key: string;
  ord: number;
  text: string;
  message_id: string;
  role: string;
  query_lexemes: string[];
  /** The message's vector cut to the query's lexemes, as text (vectorPositionCounts reads it). */
  found: string;
}
