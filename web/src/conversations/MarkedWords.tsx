/**
 * A text with the words of a query marked, for the conversation and document views' linked
 * message or chunk. Words are matched by the analyzer the search's own highlights use
 * (lib/retrieval/english-analyzer.ts: PostgreSQL's `english` configuration in JavaScript, stop
 * words dropped and Snowball stemming), so the view marks what the keyword search matched:
 * "deadlocked" marks "deadlocks", whole, and "ran" marks nothing in "transaction". The search
 * page's hits get the same words from the server; here the query from the link (`?q=`) is
 * analyzed in the browser, which reads a plain query's words as to_tsvector does (versions,
 * paths and hosts, which only PostgreSQL's parser reads, go unmarked). The text stays text: it
 * is cut into slices and the matching slices are wrapped in <mark>, never parsed as markup.
 */
import { matchingRuns, queryLexemes, runLexeme, type QueryLexemes } from "../../../lib/retrieval/english-analyzer";
import { highlightPieces } from "../highlight-pieces";

/** Characters of `?q=` read at most: the search itself refuses a longer query. */
const MAX_QUERY_LENGTH = 1_000;

/** The query's lexemes as the keyword search reads them, or null when none is left (empty, only stop words). */
export function queryTerms(query: string | null | undefined): QueryLexemes | null {
  if (!query) return null;
  const words = query.slice(0, MAX_QUERY_LENGTH).match(/[\p{L}\p{N}]+/gu) ?? [];
  const lexemes = [...new Set(words.map(runLexeme).filter((lexeme): lexeme is string => lexeme !== null))];
  return lexemes.length > 0 ? queryLexemes(lexemes) : null;
}

/** `text`, with its words that match `terms` wrapped in <mark> (cut by highlight-pieces.ts, as search hits are). */
export function MarkedWords({ text, terms }: { text: string; terms: QueryLexemes | null }) {
  const runs = terms ? matchingRuns(text, terms).runs : [];
  if (runs.length === 0) return <>{text}</>;
  const pieces = highlightPieces(text, runs.map(({ start, end }) => ({ start, end })));
  return <>{pieces.map((piece, index) => (piece.matched ? <mark key={index}>{piece.text}</mark> : piece.text))}</>;
}
