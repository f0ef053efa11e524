/**
 * A passage with its matched words marked, wherever the app shows one (search hits, saved
 * searches' runs). The server gives plain text and UTF-16 ranges (`SearchHighlight.matches`);
 * highlight-pieces.ts cuts the text at them, the matched slices are wrapped in <mark>, and
 * everything is rendered as text: a "<b>" stays the characters "<b>". An ellipsis stands at a
 * cut edge with no space (the server never leaves a blank there).
 */
import { highlightPieces, type TextRange } from "../highlight-pieces";

/** What a passage needs to be shown: both a search hit's and a saved search run's highlights have it. */
export interface HighlightPassage {
  text: string;
  matches: TextRange[];
  truncatedBefore: boolean;
  truncatedAfter: boolean;
}

export function Highlight({ highlight }: { highlight: HighlightPassage }) {
  return (
    <>
      {highlight.truncatedBefore ? "…" : null}
      {highlightPieces(highlight.text, highlight.matches).map((piece, index) => (piece.matched ? <mark key={index}>{piece.text}</mark> : <span key={index}>{piece.text}</span>))}
      {highlight.truncatedAfter ? "…" : null}
    </>
  );
}
