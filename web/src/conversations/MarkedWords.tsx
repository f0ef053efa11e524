/**
 * A text with the words of a query marked, for the conversation and document views' linked
 * message or chunk. A simple match on purpose: each query word, case-insensitive, at the start
 * of a word (so "deadlock" also marks "deadlocks"); the search page shows the search's own
 * highlights. The text stays text: it is cut into slices and the matching slices are wrapped in
 * <mark>, never parsed as markup.
 */
import { highlightPieces } from "../highlight-pieces";

/** The query's words (letters and digits), longest first so a longer word wins at one place. */
export function queryWords(query: string | null | undefined): string[] {
  if (!query) return [];
  const words = query.toLocaleLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].sort((a, b) => b.length - a.length).slice(0, 20);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The UTF-16 ranges of `text` that start with one of `words` at a word's start. */
export function wordRanges(text: string, words: readonly string[]): [number, number][] {
  if (words.length === 0) return [];
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(?:${words.map(escapeRegExp).join("|")})`, "giu");
  const ranges: [number, number][] = [];
  for (const match of text.matchAll(pattern)) ranges.push([match.index, match.index + match[0].length]);
  return ranges;
}

/** `text`, with the slices in `ranges` wrapped in <mark> (cut by highlight-pieces.ts, as search hits are). */
export function MarkedWords({ text, words }: { text: string; words: readonly string[] }) {
  const ranges = wordRanges(text, words);
  if (ranges.length === 0) return <>{text}</>;
  const pieces = highlightPieces(text, ranges.map(([start, end]) => ({ start, end })));
  return <>{pieces.map((piece, index) => (piece.matched ? <mark key={index}>{piece.text}</mark> : piece.text))}</>;
}
