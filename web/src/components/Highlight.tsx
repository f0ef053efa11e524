/**
 * A passage with its matched words marked, wherever the app shows one (search hits, saved
 * searches' runs). The server gives plain text and UTF-16 ranges (`SearchHighlight.matches`);
 * highlight-pieces.ts cuts the text at them, the matched slices are wrapped in <mark>, and
 * everything is rendered as text: a "<b>" stays the characters "<b>". An ellipsis stands at a
 * cut edge with no space (the server never leaves a blank there). The server puts each block of
 * the passage (a paragraph, a heading, a list item, a table row) on a line of its own; on one
 * line of a result they are joined by " · ", or by a space after a sentence's end.
 */
import { highlightPieces, type TextRange } from "../highlight-pieces";

/** What a passage needs to be shown: both a search hit's and a saved search run's highlights have it. */
export interface HighlightPassage {
  text: string;
  matches: TextRange[];
  truncatedBefore: boolean;
  truncatedAfter: boolean;
}

/** A piece's line breaks as separators on one line (the text is cut at the ranges before, so they are not moved). */
function oneLine(text: string): string {
  return text.replace(/([.!?:;]?)\n+/g, (_, end: string) => (end ? `${end} ` : " · "));
}

export function Highlight({ highlight }: { highlight: HighlightPassage }) {
  return (
    <>
      {highlight.truncatedBefore ? "…" : null}
      {highlightPieces(highlight.text, highlight.matches).map((piece, index) => (piece.matched ? <mark key={index}>{piece.text}</mark> : <span key={index}>{oneLine(piece.text)}</span>))}
      {highlight.truncatedAfter ? "…" : null}
    </>
  );
}
