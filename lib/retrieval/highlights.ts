/**
 * Highlights: the passages of a hit's text that matched the query, with the matched words as
 * UTF-16 ranges (what JavaScript slices by). Every domain builds its own candidate passages from
 * its own tables; this module holds what they share, so each word is matched exactly as the
 * keyword providers match it and each passage is cut the same way.
 *
 * Why PostgreSQL decides which words match and JavaScript finds the offsets: the keyword
 * providers index with to_tsvector('english', …), so a word matches when PostgreSQL's parser and
 * English Snowball stemmer give it one of the query's lexemes ("deadlocks" matches
 * "deadlocked"). ts_headline would use the right analyzer but answers with markup spliced into
 * the text: offsets would have to be recovered by parsing our own markers back out, which text
 * that already holds those markers (or "<b>") breaks. So a domain's one statement per page
 * either asks PostgreSQL which of the passages' own tokens (ts_parse, the parser the index uses)
 * stem to a query lexeme (highlightStatementSql: documents, knowledge base passages, web
 * results), or, where each passage's tsvector is kept (conversations' messages), returns the
 * query's lexemes and their counts in each passage, and english-analyzer.ts finds those words in
 * JavaScript, checked against the counts, with the database's parse (databaseTokens) for a
 * passage it reads differently. Either way JavaScript then finds the tokens in the passage,
 * where offsets are UTF-16 by construction.
 */
import { Prisma } from "../../generated/prisma/client.js";
import type { TenantReader } from "../database/tenant-reads.js";
import { jsonToPlainText, looksLikeJson } from "./json-plain-text.js";
import { markdownToPlainText } from "./markdown-plain-text.js";
import { plainRanges } from "./plain-text-map.js";

/** Most passages a hit may ask for (`SearchHit.highlights(limit:)`). */
export const MAX_HIGHLIGHTS_PER_HIT = 10;
/**
 * Longest passage text returned, in UTF-16 code units: a longer passage is cut to a window of
 * this length around its matches.
 */
export const MAX_HIGHLIGHT_LENGTH = 300;
/**
 * Characters of one passage the statement reads and parses (a message, a chunk, a snippet):
 * matches past it are not found. Together with each domain's bound on passages per hit this
 * bounds the text read per hit.
 */
export const MAX_PASSAGE_SCAN = 4_000;
/** Matches located per passage: the window needs only those near each other. */
const MAX_RANGES_SCANNED = 200;
/** Context kept before the first match of the window, so the passage does not open on the match. */
const LEAD_IN = 40;

/** Where a matched word is in a passage's text: `text.slice(start, end)` is the word. */
export interface MatchRange {
  start: number;
  end: number;
}

/** One passage of a hit's text, ready for a client. */
export interface HighlightPassage {
  text: string;
  /** The words that matched the query, in order; empty for a passage picked without a keyword match. */
  ranges: MatchRange[];
  /** Text was cut before / after the returned window. */
  truncatedBefore: boolean;
  truncatedAfter: boolean;
  /** Conversations: the message the passage is from, and who wrote it. */
  messageId?: string;
  role?: string;
}

export interface HighlightOptions {
  /** Passages per hit at most (1 to MAX_HIGHLIGHTS_PER_HIT). */
  limit: number;
  /**
   * Longest passage returned, in UTF-16 code units (default MAX_HIGHLIGHT_LENGTH, at most
   * MAX_PASSAGE_SCAN): grounded answers ask for a longer window than a results list shows, so a
   * passage holds whole sentences to quote and cite.
   */
  windowLength?: number;
}

/**
 * A candidate passage as a domain's statement returns it: `key` names the hit (`Typename:id`),
 * `ord` orders passages of one hit when none matched (lower first), `tokens` are the passage's
 * own tokens that stem to a query lexeme.
 */
export interface CandidatePassage {
  key: string;
  ord: number;
  text: string;
  tokens: string[];
  messageId?: string | null;
  role?: string | null;
  /** Where the matched words are, when the domain located them itself (english-analyzer.ts); else `tokens` are located here. */
  ranges?: MatchRange[];
}

/**
 * How the `english` text search configuration maps the default parser's token types to
 * dictionaries (pg_ts_config_map): word tokens to the Snowball stemmer, numbers, hosts, e-mail
 * addresses and paths to `simple`; everything else (blanks, tags, protocols, entities) is not
 * indexed. Whole hyphenated compounds and URLs are left out although indexed: the parser also
 * returns their parts as tokens of their own ("deadlock-free" highlights "deadlock"), and a
 * passage is marked by words, not by compounds. test/integration/highlights-analyzer.test.ts
 * checks this against the database's own mapping.
 */
export const STEMMED_TOKEN_TYPES = [1, 2, 10, 11] as const;
export const SIMPLE_TOKEN_TYPES = [3, 4, 6, 7, 8, 9, 18, 19, 20, 21, 22] as const;

/**
 * The statement around a domain's candidate passages. `passages` is a SELECT of
 * (key text, ord int, text text, message_id text, role text), with text already bounded (left(…,
 * MAX_PASSAGE_SCAN)); it may read `query_terms.lexemes` (the query's lexemes) to choose its
 * passages, e.g. with `queryLexemesInVectorSql`. Tokens are parsed once per passage and each
 * distinct token of the page is run through its dictionary once, with ts_lexize: the dictionary
 * to_tsvector('english', …) would pick for that token type, at a tenth of to_tsvector's cost
 * per call (measured on PostgreSQL 15: 31 ms against 389 ms for 5,700 distinct tokens).
 */
export function highlightStatementSql(query: string, passages: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    WITH ${queryTermsSql(query)},
    passages AS MATERIALIZED (${passages}),
    -- Stemming keeps a word's first letter (lowercased), so only tokens that start like a
    -- query lexeme can match: most of a page's tokens are dropped as they are parsed, before
    -- they are kept, grouped or sent to a dictionary.
    tokens AS MATERIALIZED (
      SELECT p.key, p.ord, t.tokid, t.token
      FROM passages p, ts_parse('default', p.text) t, query_terms q
      WHERE t.tokid = ANY(${Prisma.raw(`'{${[...STEMMED_TOKEN_TYPES, ...SIMPLE_TOKEN_TYPES].join(",")}}'::int[]`)})
        AND left(lower(t.token), 1) = ANY(q.initials)
    ),
    matching AS MATERIALIZED (
      SELECT d.tokid, d.token
      FROM (SELECT DISTINCT tokid, token FROM tokens) d, query_terms q
      WHERE CASE WHEN d.tokid = ANY(${Prisma.raw(`'{${STEMMED_TOKEN_TYPES.join(",")}}'::int[]`)})
                 THEN ts_lexize('english_stem'::regdictionary, d.token)
                 ELSE ts_lexize('simple'::regdictionary, d.token) END && q.lexemes
    ),
    matched AS (
      SELECT t.key, t.ord, array_agg(DISTINCT t.token) AS tokens
      FROM tokens t JOIN matching m ON m.tokid = t.tokid AND m.token = t.token
      GROUP BY t.key, t.ord
    )
    SELECT p.key, p.ord, p.text, p.message_id, p.role, coalesce(matched.tokens, '{}'::text[]) AS tokens
    FROM passages p LEFT JOIN matched ON matched.key = p.key AND matched.ord = p.ord`;
}

/**
 * The `query_terms` CTE: the query's lexemes as to_tsvector('english', …) gives them (what the
 * keyword providers search for), and their first letters.
 */
export function queryTermsSql(query: string): Prisma.Sql {
  return Prisma.sql`query_terms AS MATERIALIZED (
      SELECT coalesce(array_agg(DISTINCT lexeme), '{}'::text[]) AS lexemes,
             coalesce(array_agg(DISTINCT left(lexeme, 1)), '{}'::text[]) AS initials
      FROM unnest(to_tsvector('english'::regconfig, ${query}))
    )`;
}

/** A passage whose words only the database can read (english-analyzer.ts), by its place in a domain's candidates. */
export interface UndecidedPassage {
  key: string;
  ord: number;
  text: string;
}

/**
 * The tokens of each passage that stem to a query lexeme, from PostgreSQL's parser
 * (highlightStatementSql over the given texts, which the caller already read under its own
 * tenant rules): for the passages whose JavaScript reading disagreed with PostgreSQL's counts.
 * Keyed `key\u0000ord`.
 */
export async function databaseTokens(reader: TenantReader, query: string, passages: readonly UndecidedPassage[]): Promise<Map<string, string[]>> {
  const statement = highlightStatementSql(
    query,
    Prisma.sql`SELECT u.key, u.ord, u.text, NULL::text AS message_id, NULL::text AS role
      FROM unnest(${passages.map((passage) => passage.key)}::text[], ${passages.map((passage) => passage.ord)}::int[], ${passages.map((passage) => passage.text)}::text[]) AS u(key, ord, text)`,
  );
  const rows = await reader.$queryRaw<{ key: string; ord: number; tokens: string[] }[]>(statement);
  return new Map(rows.map((row) => [`${row.key}\u0000${Number(row.ord)}`, row.tokens]));
}

/**
 * The part of a passage's tsvector that holds the query's lexemes, with their positions: for a
 * domain to rank its candidate passages inside the statement without parsing them (conversations
 * keep each message's vector: messages.passage_vector), and to say how often each lexeme occurs
 * (unnest the result: a row per query lexeme present, its positions). Needs `query_terms` in
 * scope as `q`.
 *
 * Why setweight and ts_filter: both run in C over the vector (setweight marks the listed lexemes
 * by binary search, ts_filter keeps the marked ones), where unnesting every candidate's whole
 * vector made a row with two arrays per lexeme of every message: at 10,000 conversations that
 * was about three quarters of the highlights statement's time (search-features bench pages).
 * Two assumptions, both held by vectors from to_tsvector: no lexeme already carries weight A
 * (to_tsvector writes weight D), and every lexeme has positions (ts_filter drops lexemes
 * without, as a stripped vector would have).
 */
export function queryLexemesInVectorSql(vector: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`ts_filter(setweight(${vector}, 'A', q.lexemes), '{a}')`;
}

/**
 * How many positions a cut vector (queryLexemesInVectorSql) holds in all: what ranks a passage
 * by its matches, in C over the vector's text form, where positions are separated by commas
 * ("'deadlock':3A,17A 'servic':5A" holds 3). Unnesting the vector in a lateral subquery for
 * every read message cost about a quarter of the conversations' highlights statement. A comma
 * inside a lexeme (none of the english configuration's words, at most a URL path among the
 * query's terms) counts one more: it can only reorder that passage among its hit's passages.
 */
export function vectorPositionsSql(cut: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`CASE WHEN length(${cut}) = 0 THEN 0 ELSE length(${cut}) + length(${cut}::text) - length(replace(${cut}::text, ',', '')) END`;
}

/**
 * Lexeme → number of positions, from a tsvector's text form as PostgreSQL prints it (each
 * lexeme quoted, a quote or backslash in it doubled, then `:` and its positions, with weights,
 * separated by commas; no positions counts as one): read in JavaScript for the few passages a
 * page returns instead of unnested in the statement. Anything else is refused, not guessed.
 */
export function vectorPositionCounts(vectorText: string): Map<string, number> {
  const counts = new Map<string, number>();
  const malformed = () => new Error(`not a tsvector as PostgreSQL prints one: ${JSON.stringify(vectorText.slice(0, 80))}`);
  let at = 0;
  while (at < vectorText.length) {
    if (vectorText[at] === " ") {
      at++;
      continue;
    }
    if (vectorText[at] !== "'") throw malformed();
    at++;
    let lexeme = "";
    for (;;) {
      const character = vectorText[at];
      if (character === undefined) throw malformed();
      if (character === "'" && vectorText[at + 1] === "'") {
        lexeme += "'";
        at += 2;
      } else if (character === "'") {
        at++;
        break;
      } else if (character === "\\") {
        if (at + 1 >= vectorText.length) throw malformed();
        lexeme += vectorText[at + 1];
        at += 2;
      } else {
        lexeme += character;
        at++;
      }
    }
    let positions = 1;
    if (vectorText[at] === ":") {
      at++;
      if (!/[0-9]/.test(vectorText[at] ?? "")) throw malformed();
      for (; at < vectorText.length && vectorText[at] !== " "; at++) if (vectorText[at] === ",") positions++;
    } else if (at < vectorText.length && vectorText[at] !== " ") {
      throw malformed();
    }
    counts.set(lexeme, positions);
  }
  return counts;
}

/**
 * The passages of each hit, best first: those with matches (most matches first, then `ord`),
 * at most `limit`; a hit none of whose passages matched gets its first non-empty passage without
 * ranges (what the domain offers as nearest the query). Each passage is returned as plain text
 * (markdown-plain-text.ts: one block a line, no markup; json-plain-text.ts for a tool's JSON),
 * its ranges carried over to it.
 *
 * Why passages are chosen before they are converted: a page offers about eight candidate
 * passages per hit and shows at most three, and converting every candidate to plain text was 17×
 * the cost of locating and cutting them (4.1 against 0.24 ms for a page of 20 conversations),
 * paid on every keystroke's search. A passage's matches in its stored text bound its matches in
 * the plain text from above (a word inside markup, such as a link's destination, is dropped,
 * never added), so candidates are converted in order of that bound and the choice stops as soon
 * as no passage left unconverted could rank above the ones kept: the same passages in the same
 * order as converting them all, with a threshold as in Fagin's algorithm.
 */
export function highlightsByHit(candidates: readonly CandidatePassage[], limit: number, windowLength = MAX_HIGHLIGHT_LENGTH): Map<string, HighlightPassage[]> {
  const maxLength = Math.max(1, Math.min(Math.floor(windowLength), MAX_PASSAGE_SCAN));
  const byKey = new Map<string, { source: CandidatePassage; sourceRanges: MatchRange[] }[]>();
  for (const source of candidates) {
    // Words are found in the stored Markdown, where the database's parse says they are, then
    // carried over to the plain text a client is given.
    const list = byKey.get(source.key) ?? [];
    list.push({ source, sourceRanges: source.ranges ?? locateTokens(source.text, source.tokens) });
    byKey.set(source.key, list);
  }
  const result = new Map<string, HighlightPassage[]>();
  for (const [key, list] of byKey) {
    const chosen = choosePassages(list, limit);
    result.set(
      key,
      chosen.map(({ source, text, ranges }) => ({
        ...cutWindow(text, ranges, maxLength),
        ...(source.messageId ? { messageId: source.messageId } : {}),
        ...(source.role ? { role: source.role } : {}),
      })),
    );
  }
  return result;
}

interface ConvertedPassage {
  source: CandidatePassage;
  /** The plain text a client is given, and the matched words carried over to it. */
  text: string;
  ranges: MatchRange[];
}

/** Ranks passages of one hit by plain-text matches, then `ord`: negative when `a` comes first. */
function byMatchesThenOrd(a: { count: number; ord: number }, b: { count: number; ord: number }): number {
  return b.count - a.count || a.ord - b.ord;
}

/** One hit's passages to show (see highlightsByHit), converting as few as the ranking needs. */
function choosePassages(list: readonly { source: CandidatePassage; sourceRanges: MatchRange[] }[], limit: number): ConvertedPassage[] {
  const convert = ({ source, sourceRanges }: { source: CandidatePassage; sourceRanges: MatchRange[] }): ConvertedPassage => {
    const plain = looksLikeJson(source.text) ? jsonToPlainText(source.text) : markdownToPlainText(source.text);
    return { source, text: plain.text, ranges: plainRanges(plain, sourceRanges) };
  };
  const rankOf = (passage: ConvertedPassage) => ({ count: passage.ranges.length, ord: passage.source.ord });
  // Best possible rank first: most matches in the stored text, then ord.
  const byBound = list
    .filter((entry) => entry.sourceRanges.length > 0)
    .sort((a, b) => byMatchesThenOrd({ count: a.sourceRanges.length, ord: a.source.ord }, { count: b.sourceRanges.length, ord: b.source.ord }));
  const matched: ConvertedPassage[] = [];
  for (const entry of byBound) {
    if (limit > 0 && matched.length >= limit) {
      // The kept passages, best first: the last of them is the one a new passage must beat.
      const threshold = rankOf(matched[limit - 1]!);
      if (byMatchesThenOrd(threshold, { count: entry.sourceRanges.length, ord: entry.source.ord }) < 0) break;
    }
    const converted = convert(entry);
    if (converted.ranges.length === 0) continue;
    matched.push(converted);
    matched.sort((a, b) => byMatchesThenOrd(rankOf(a), rankOf(b)));
  }
  if (matched.length > 0) return matched.slice(0, limit);
  // No passage matched: the first one (by ord) with any text once its markup is gone.
  for (const entry of [...list].sort((a, b) => a.source.ord - b.source.ord)) {
    const converted = convert(entry);
    if (converted.text.trim().length > 0) return [{ ...converted, ranges: [] }];
  }
  return [];
}

const WORD_CHARACTER = /[\p{L}\p{N}\p{M}]/u;

/**
 * Every occurrence of these tokens in `text` that stands as a word of its own (no letter, digit
 * or combining mark directly before or after), as UTF-16 ranges in order, overlaps dropped.
 * Tokens come from PostgreSQL's parse of this same text, so each occurs in it as written.
 */
export function locateTokens(text: string, tokens: readonly string[]): MatchRange[] {
  const distinct = [...new Set(tokens.filter((token) => token.length > 0))];
  if (distinct.length === 0) return [];
  // indexOf and one precompiled class rather than a regular expression built per passage: the
  // search-features benchmark found compiling Unicode-property patterns per passage to cost more
  // CPU than the rest of a page.
  const found: MatchRange[] = [];
  for (const token of distinct) {
    for (let at = text.indexOf(token); at !== -1 && found.length < MAX_RANGES_SCANNED * 4; at = text.indexOf(token, at + 1)) {
      const end = at + token.length;
      if (at > 0 && WORD_CHARACTER.test(characterBefore(text, at))) continue;
      if (end < text.length && WORD_CHARACTER.test(String.fromCodePoint(text.codePointAt(end)!))) continue;
      found.push({ start: at, end });
    }
  }
  // In order; where two overlap the earlier (then the longer) wins, so "deadlocked" beats a shorter token at the same place.
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const ranges: MatchRange[] = [];
  for (const range of found) {
    if (ranges.length > 0 && range.start < ranges.at(-1)!.end) continue;
    ranges.push(range);
    if (ranges.length >= MAX_RANGES_SCANNED) break;
  }
  return ranges;
}

/**
 * The passage cut to at most MAX_HIGHLIGHT_LENGTH code units: the window that holds the most
 * matches (starting a little before the first of them), its edges moved off the middle of a
 * word, a surrogate pair or a combining sequence, and onto the edge of a block (a line of the
 * plain text) where one is near; ranges made relative to the window.
 */
export function cutWindow(text: string, ranges: readonly MatchRange[], maxLength = MAX_HIGHLIGHT_LENGTH): Omit<HighlightPassage, "messageId" | "role"> {
  if (text.length <= maxLength) return { text, ranges: [...ranges], truncatedBefore: false, truncatedAfter: false };
  let start = 0;
  // A short window keeps most of its length for the matches.
  const leadIn = Math.min(LEAD_IN, Math.floor(maxLength / 4));
  if (ranges.length > 0) {
    // The first match of the densest window of maxLength - leadIn units.
    let best = 0;
    let bestLast = 0;
    let bestCount = 0;
    for (let first = 0, last = 0; first < ranges.length; first++) {
      if (last < first) last = first;
      while (last + 1 < ranges.length && ranges[last + 1]!.end - ranges[first]!.start <= maxLength - leadIn) last++;
      if (last - first + 1 > bestCount) {
        bestCount = last - first + 1;
        best = first;
        bestLast = last;
      }
    }
    const firstMatch = ranges[best]!.start;
    start = Math.max(0, Math.min(firstMatch - leadIn, text.length - maxLength));
    // A block that starts between the cut and the first match: open on it, not on the end of the
    // block before. Else a block that starts a little before the cut, when the matches still fit.
    const blockInside = text.lastIndexOf("\n", firstMatch - 1);
    const blockBefore = text.lastIndexOf("\n", start - 1);
    if (blockInside >= start) start = blockInside + 1;
    else if (blockBefore >= 0 && start - (blockBefore + 1) <= leadIn && ranges[bestLast]!.end - (blockBefore + 1) <= maxLength) start = blockBefore + 1;
    else start = wordStartAtOrAfter(text, start, firstMatch);
  }
  let end = Math.min(text.length, start + maxLength);
  if (end < text.length) {
    // The window ends with a whole block where one ends in its second half, after the matches it keeps.
    const lastKeptEnd = ranges.findLast((range) => range.start >= start && range.end <= end)?.end ?? start;
    const blockEnd = text.lastIndexOf("\n", end);
    end = blockEnd >= Math.max(lastKeptEnd, start + Math.floor(maxLength / 2)) ? blockEnd : wordEndAtOrBefore(text, end, start);
  }
  // A cut edge lands on the blank between two words: drop it, so a client that shows "…" at a
  // cut edge does not show "… latency" (never past a match kept in the window).
  const firstKept = ranges.find((range) => range.start >= start && range.end <= end)?.start ?? end;
  const lastKept = ranges.findLast((range) => range.start >= start && range.end <= end)?.end ?? start;
  if (start > 0) while (start < firstKept && /[\s·]/.test(text.charAt(start))) start++;
  if (end < text.length) while (end > Math.max(start, lastKept) && /[\s·]/.test(text.charAt(end - 1))) end--;
  const window = text.slice(start, end);
  return {
    text: window,
    ranges: ranges.filter((range) => range.start >= start && range.end <= end).map((range) => ({ start: range.start - start, end: range.end - start })),
    truncatedBefore: start > 0,
    truncatedAfter: end < text.length,
  };
}

/** A cut at `position` that does not split a word, a surrogate pair or a combining sequence: moved forward, but never past `limit`. */
function wordStartAtOrAfter(text: string, position: number, limit: number): number {
  let at = position;
  while (at > 0 && at < limit && isInsideWord(text, at)) at++;
  return isInsideCharacter(text, at) ? at + 1 : at;
}

/** Likewise for the end of a window: moved back, but never before `limit`. */
function wordEndAtOrBefore(text: string, position: number, limit: number): number {
  let at = position;
  while (at > limit + 1 && at < text.length && isInsideWord(text, at)) at--;
  if (at <= limit + 1) at = position;
  // Never end between the halves of a surrogate pair, or before a combining mark of the last character.
  while (at > limit + 1 && (isInsideCharacter(text, at) || /\p{M}/u.test(String.fromCodePoint(text.codePointAt(at) ?? 32)))) at--;
  return at;
}

function isInsideCharacter(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return code >= 0xdc00 && code <= 0xdfff && at > 0 && isHighSurrogate(text.charCodeAt(at - 1));
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Whether the characters on both sides of `at` belong to one word (or one character). */
function isInsideWord(text: string, at: number): boolean {
  if (isInsideCharacter(text, at)) return true;
  const before = characterBefore(text, at);
  const after = String.fromCodePoint(text.codePointAt(at) ?? 32);
  return WORD_CHARACTER.test(before) && WORD_CHARACTER.test(after);
}

function characterBefore(text: string, at: number): string {
  const low = text.charCodeAt(at - 1);
  if (low >= 0xdc00 && low <= 0xdfff && at >= 2 && isHighSurrogate(text.charCodeAt(at - 2))) return text.slice(at - 2, at);
  return text.charAt(at - 1);
}
