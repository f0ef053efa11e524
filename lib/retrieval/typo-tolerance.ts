/**
 * Typo tolerance for the keyword providers (conversations.keyword, documents.keyword): the
 * query's term set as an SQL fragment that each provider's BM25 statement reads instead of the
 * query's lexemes alone, and the "did you mean" suggestion built from what the providers found.
 *
 * A query word is expanded only when nothing the caller may read holds it (its lexeme is in no
 * conversation of the organization and in none of the documents they may see). Then its nearest
 * words of the organization's vocabulary (search_vocabulary, the words of its conversations and
 * documents, kept by triggers: see the migration 20261203120000_search_vocabulary) by trigram
 * distance are read from the organization's part of a GiST index (KNN), those the caller may
 * read and within MAX_EDITS edits (Levenshtein) are kept, best first, and their lexemes join the
 * term set with a boost below 1, so a document that matches a word as typed always outweighs one
 * that matches a correction of an equally rare word.
 *
 * Why the caller's reading and not the vocabulary alone decides (issue 41): the vocabulary holds
 * every member's words, private documents' included. Had it decided whether a word is known, or
 * which three corrections a word gets, a member could learn that a word is in a colleague's
 * private document from a "did you mean" that appears, or one that goes missing. What remains:
 * the 24 nearest entries are read before the caller's check, so two dozen private words closer
 * to a typo than any readable one can hide a readable correction, never reveal one.
 *
 * A query whose words the caller may all read gets exactly the terms it had without typo
 * tolerance, with boost 1: the same scores to the bit.
 *
 * Inside the providers' statements rather than one lookup before them: no statement and no
 * round trip is added to a search, and the corrections' document frequencies are counted in
 * the caller's own access scope by the statement that scores them, which is what a suggestion
 * must rest on (a colleague's private document may hold a word; it must not be suggested to
 * someone who cannot see it).
 *
 * Bounds, whatever the query (at most 1,000 characters by then): its first
 * MAX_WORDS_CHECKED distinct words of 4 to 32 letters are looked up in the vocabulary's
 * primary key, the first MAX_WORDS_EXPANDED of those not found are expanded, each reads
 * NEAREST_WORDS index entries and keeps at most CORRECTIONS_PER_WORD corrections. Words of 3
 * letters or fewer are never expanded (one edit of a short word is usually another word).
 */
import { Prisma } from "../../generated/prisma/client.js";

/** Query words looked up in the vocabulary, at most (in query order, distinct). */
export const MAX_WORDS_CHECKED = 16;
/** Words not found in the vocabulary that are expanded, at most (the first ones in the query). */
export const MAX_WORDS_EXPANDED = 3;
/** Vocabulary words read from the trigram index per expanded word (nearest first). */
export const NEAREST_WORDS = 24;
/** Corrections kept per expanded word (fewest edits first, then nearest by trigrams). */
export const CORRECTIONS_PER_WORD = 3;
/** Shortest and longest word looked at: the vocabulary keeps only these (vocabulary_words). */
export const MIN_WORD_LENGTH = 4;
export const MAX_WORD_LENGTH = 32;
/**
 * A correction's boost is FUZZY_FACTOR · (1 − edits / (length + 1)): below 1 however close,
 * lower the more edits relative to the word's length (one edit of "deadlcok": 0.8; a swap,
 * two Levenshtein edits, of a 5-letter word: 0.6).
 */
export const FUZZY_FACTOR = 0.9;

/** One correction a keyword provider's statement used and found in documents the caller can see. */
export interface WordCorrection {
  /** The query's word as typed (lowercase). */
  typed: string;
  /** The vocabulary word it was corrected to (lowercase, a real word as written in the text). */
  word: string;
  /** That word's lexeme, the term scored. */
  term: string;
  /** Its boost (below 1): higher for fewer edits. */
  boost: number;
  /** In how many of the provider's documents visible to the caller the term occurs (at least 1). */
  documents: number;
}

/** Whose reading decides which words are known and which corrections may be offered. */
export interface VocabularyReader {
  organizationId: string;
  userId: string;
  teamIds: readonly string[];
}

/**
 * Whether `term` (a lexeme) occurs in something `caller` may read: a conversation of their
 * organization (conversations are the organization's), or a document they own or that is shared
 * with one of their teams (the rule documents.keyword scores by). Two probes of the postings'
 * primary keys, (organization_id, term, …).
 */
function readableTermSql(caller: VocabularyReader, term: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`(
    EXISTS (SELECT FROM keyword_postings p WHERE p.organization_id = ${caller.organizationId} AND p.term = ${term})
    OR EXISTS (
      SELECT FROM document_keyword_postings p
      WHERE p.organization_id = ${caller.organizationId} AND p.term = ${term}
        AND (p.owner_id = ${caller.userId} OR p.team_id = ANY(${[...caller.teamIds]}::text[]))
    )
  )`;
}

/**
 * The query's term set as a subquery with columns (term, boost, typed, word): every lexeme of
 * the query as typed with boost 1 and typed/word NULL, and, when `enabled`, the corrections of
 * its words nothing the caller may read holds, with their boosts (a lexeme that is both keeps
 * boost 1). Runs under the caller's tenant scope: the vocabulary's row-level security admits
 * only their organization's words, and the statement also names the organization, which the
 * index needs.
 *
 * The statement's text is the same whatever the query and whether typo tolerance is on, so a
 * prepared statement stays one plan per connection.
 */
export function queryTermsSql(caller: VocabularyReader, query: string, enabled: boolean): Prisma.Sql {
  const { organizationId } = caller;
  const maxEdits = Prisma.sql`CASE WHEN length(u.typed) <= ${MIN_WORD_LENGTH} THEN 1 ELSE 2 END`;
  return Prisma.sql`
    SELECT term, max(boost) AS boost,
           (array_agg(typed ORDER BY boost DESC, word))[1] AS typed,
           (array_agg(word ORDER BY boost DESC, word))[1] AS word
    FROM (
      SELECT lexeme AS term, 1::float8 AS boost, NULL::text AS typed, NULL::text AS word
      FROM unnest(to_tsvector('english'::regconfig, ${query}))
      UNION ALL
      SELECT e.term, e.boost, e.typed, e.word FROM (
        SELECT u.typed, c.word, c.term,
               ${FUZZY_FACTOR}::float8 * (1 - c.edits::float8 / (length(u.typed) + 1)) AS boost,
               row_number() OVER (PARTITION BY u.typed ORDER BY c.edits, c.distance, c.word) AS nearest,
               bool_or(c.term = u.term) OVER (PARTITION BY u.typed) AS stem_known
        FROM (
          SELECT w.typed, w.term FROM (
            SELECT w.typed, w.position,
                   (SELECT lexeme FROM unnest(to_tsvector('english'::regconfig, w.typed)) LIMIT 1) AS term
            FROM (
              SELECT typed, min(position) AS position
              FROM regexp_split_to_table(lower(${query}), '[^[:alpha:]]+') WITH ORDINALITY AS s(typed, position)
              WHERE ${enabled}::boolean AND length(typed) BETWEEN ${MIN_WORD_LENGTH} AND ${MAX_WORD_LENGTH}
              GROUP BY typed
              ORDER BY position
              LIMIT ${MAX_WORDS_CHECKED}
            ) w
          ) w
          WHERE w.term IS NOT NULL
            AND NOT ${readableTermSql(caller, Prisma.raw("w.term"))}
          ORDER BY w.position
          LIMIT ${MAX_WORDS_EXPANDED}
        ) u
        CROSS JOIN LATERAL (
          SELECT k.word, k.distance,
                 levenshtein_less_equal(u.typed, k.word, ${maxEdits}) AS edits,
                 (SELECT lexeme FROM unnest(to_tsvector('english'::regconfig, k.word)) LIMIT 1) AS term
          FROM (
            SELECT v.word, v.word <-> u.typed AS distance FROM search_vocabulary v
            WHERE v.organization_id = ${organizationId}
            ORDER BY v.word <-> u.typed
            LIMIT ${NEAREST_WORDS}
          ) k
        ) c
        WHERE c.term IS NOT NULL AND c.edits <= ${maxEdits} AND ${readableTermSql(caller, Prisma.raw("c.term"))}
      ) e
      WHERE e.nearest <= ${CORRECTIONS_PER_WORD} AND NOT e.stem_known
    ) candidates
    GROUP BY term`;
}

/**
 * What typo tolerance did to a query, for a client to show: each misspelled word (as it first
 * appears in the query, its capitalization kept) with the organization's words that were searched
 * for it as well, best first (fewest edits, then found in more documents, then alphabetical).
 * Only corrections the providers found in documents the caller can see are listed.
 */
export interface QueryCorrection {
  word: string;
  searchedAs: string[];
}

/** A word of a query as the suggestion reads and rewrites it: a run of letters. */
const QUERY_WORD = /\p{L}+/gu;

/** True when `a` is a better correction of the same typed word than `b`. */
const betterCorrection = (a: WordCorrection, b: WordCorrection): boolean =>
  a.boost > b.boost || (a.boost === b.boost && (a.documents > b.documents || (a.documents === b.documents && a.word < b.word)));

/**
 * The providers' corrections (one list per provider, the same word from two providers) as the
 * query's corrections: in query order, each typed word once, its corrections deduplicated and
 * ranked. A typed word the query does not hold as a word of letters (it always does: the
 * statement splits the same query) is left out rather than named in a form the user never typed.
 */
export function queryCorrections(query: string, corrections: readonly WordCorrection[]): QueryCorrection[] {
  const byTyped = new Map<string, Map<string, WordCorrection>>();
  for (const correction of corrections) {
    const words = byTyped.get(correction.typed) ?? new Map<string, WordCorrection>();
    const current = words.get(correction.word);
    if (!current || betterCorrection(correction, current)) words.set(correction.word, correction);
    byTyped.set(correction.typed, words);
  }
  const result: QueryCorrection[] = [];
  for (const token of query.match(QUERY_WORD) ?? []) {
    const words = byTyped.get(token.toLowerCase());
    if (!words) continue;
    byTyped.delete(token.toLowerCase());
    const ranked = [...words.values()].sort((a, b) => (betterCorrection(a, b) ? -1 : betterCorrection(b, a) ? 1 : 0));
    result.push({ word: token, searchedAs: ranked.map((correction) => correction.word) });
  }
  return result;
}

/**
 * "Did you mean": the query with each misspelled word replaced by its best correction (the first
 * of queryCorrections), or null when there is none. Such a correction finds documents the word as
 * typed cannot: the typed word is in no document of the organization (else it would not have been
 * expanded). Letters keep the typed word's capitalization (first letter or all).
 */
export function suggestQuery(query: string, corrections: readonly QueryCorrection[]): string | null {
  const best = new Map(corrections.map((correction) => [correction.word.toLowerCase(), correction.searchedAs[0]!]));
  if (best.size === 0) return null;
  let changed = false;
  const suggestion = query.replace(QUERY_WORD, (token) => {
    const word = best.get(token.toLowerCase());
    if (!word) return token;
    changed = true;
    if (token.length > 1 && token === token.toUpperCase()) return word.toUpperCase();
    if (token[0] !== token[0]!.toLowerCase()) return word[0]!.toUpperCase() + word.slice(1);
    return word;
  });
  return changed ? suggestion : null;
}
