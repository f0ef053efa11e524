/**
 * A passage with its matched words marked. The server gives plain text and UTF-16 ranges
 * (`SearchHighlight.matches`); highlight-pieces.ts cuts the text at them, the matched slices
 * are wrapped in <mark>, and everything is rendered as text: a "<b>" stays the characters "<b>".
 */
import { highlightPieces } from "../highlight-pieces";
import type { SearchHighlight } from "./operations";

export function Highlight({ highlight }: { highlight: SearchHighlight }) {
  return (
    <>
      {highlight.truncatedBefore ? "…" : null}
      {highlightPieces(highlight.text, highlight.matches).map((piece, index) => (piece.matched ? <mark key={index}>{piece.text}</mark> : <span key={index}>{piece.text}</span>))}
      {highlight.truncatedAfter ? "…" : null}
    </>
  );
}
