/**
 * A saved search's hit passage with its matched words marked: the search page's rendering
 * (search/Highlight.tsx, over highlight-pieces.ts), with the spaced ellipses of this list.
 */
import { highlightPieces } from "../highlight-pieces";
import type { HitHighlight } from "./operations";

export function Highlight({ highlight }: { highlight: HitHighlight }) {
  return (
    <>
      {highlight.truncatedBefore ? "… " : null}
      {highlightPieces(highlight.text, highlight.matches).map((piece, index) => (piece.matched ? <mark key={index}>{piece.text}</mark> : piece.text))}
      {highlight.truncatedAfter ? " …" : null}
    </>
  );
}
