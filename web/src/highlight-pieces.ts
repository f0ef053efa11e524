/**
 * One way to cut a text at matched ranges, for every place the app marks words (search hits,
 * saved searches' runs, the conversation and document views). The ranges are UTF-16 offsets, as
 * the server gives `SearchHighlight.matches` and as JavaScript strings index. The pieces are
 * rendered as text inside <mark> or not: never as markup, so a "<b>" in a message stays "<b>".
 *
 * Ranges come from the network: a range out of order, overlapping the one before, empty,
 * reversed, out of the text, or not whole numbers is skipped rather than trusted. A range that
 * would cut an astral character (an emoji, a CJK extension ideograph: two UTF-16 units) in half
 * is widened to the whole character, so no lone surrogate is ever rendered.
 */
export interface TextPiece {
  text: string;
  matched: boolean;
}

export interface TextRange {
  start: number;
  end: number;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

export function highlightPieces(text: string, matches: readonly TextRange[] | null | undefined): TextPiece[] {
  const pieces: TextPiece[] = [];
  let position = 0;
  for (const range of matches ?? []) {
    let start = range?.start;
    let end = range?.end;
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) continue;
    // Inside a surrogate pair: move out to the pair's edges.
    if (start > 0 && start < text.length && isLowSurrogate(text.charCodeAt(start)) && isHighSurrogate(text.charCodeAt(start - 1))) start -= 1;
    if (end > 0 && end < text.length && isLowSurrogate(text.charCodeAt(end)) && isHighSurrogate(text.charCodeAt(end - 1))) end += 1;
    if (start < position || end <= start || end > text.length) continue;
    if (start > position) pieces.push({ text: text.slice(position, start), matched: false });
    pieces.push({ text: text.slice(start, end), matched: true });
    position = end;
  }
  if (position < text.length) pieces.push({ text: text.slice(position), matched: false });
  return pieces;
}
