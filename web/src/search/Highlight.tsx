/**
 * A passage with its matched words marked. The server gives plain text and UTF-16 ranges
 * (`SearchHighlight.matches`); the text is sliced by those offsets, the matched slices wrapped
 * in <mark>, and everything rendered as text: a "<b>" in a message stays the characters "<b>".
 */
import type { SearchHighlight } from "./operations";

/** Splits `text` into plain and matched pieces; ranges out of order, overlapping or out of bounds are skipped. */
export function highlightPieces(text: string, matches: readonly { start: number; end: number }[]): { text: string; matched: boolean }[] {
  const pieces: { text: string; matched: boolean }[] = [];
  let position = 0;
  for (const { start, end } of matches) {
    if (start < position || end <= start || end > text.length) continue;
    if (start > position) pieces.push({ text: text.slice(position, start), matched: false });
    pieces.push({ text: text.slice(start, end), matched: true });
    position = end;
  }
  if (position < text.length) pieces.push({ text: text.slice(position), matched: false });
  return pieces;
}

export function Highlight({ highlight }: { highlight: SearchHighlight }) {
  return (
    <>
      {highlight.truncatedBefore ? "…" : null}
      {highlightPieces(highlight.text, highlight.matches).map((piece, index) => (piece.matched ? <mark key={index}>{piece.text}</mark> : <span key={index}>{piece.text}</span>))}
      {highlight.truncatedAfter ? "…" : null}
    </>
  );
}
