/**
 * A passage with its matched words marked. The server gives plain text and UTF-16 ranges; the
 * text is sliced at those ranges and each slice rendered as text (never as markup), the matched
 * ones inside <mark>.
 */
import type { HitHighlight } from "./operations";

export function Highlight({ highlight }: { highlight: HitHighlight }) {
  const { text, matches } = highlight;
  const parts: React.ReactNode[] = [];
  let cursor = 0;
  for (const [index, range] of matches.entries()) {
    // Ranges come sorted and disjoint; a range out of order or out of bounds is skipped, not trusted.
    if (range.start < cursor || range.end > text.length || range.end <= range.start) continue;
    if (range.start > cursor) parts.push(text.slice(cursor, range.start));
    parts.push(<mark key={index}>{text.slice(range.start, range.end)}</mark>);
    cursor = range.end;
  }
  if (cursor < text.length) parts.push(text.slice(cursor));
  return (
    <>
      {highlight.truncatedBefore ? "… " : null}
      {parts}
      {highlight.truncatedAfter ? " …" : null}
    </>
  );
}
