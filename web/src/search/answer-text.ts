/**
 * An answer's text as a person reads it: plain text cut at its citation labels (`[n]` at the
 * offsets the server gives), so each label can become a link to the passage's hit. The text is
 * shown as text, never as markup; Markdown marks a quoted passage may still carry (a heading's
 * `##`, `**bold**`, backticks, a code fence, a table's pipes) are taken out, because an answer
 * sits above the results as prose and a stray `| --- |` reads as noise there.
 */
import type { AnswerCitation } from "./answer-operations";

export type AnswerPiece = { text: string; citation?: undefined } | { citation: AnswerCitation; text?: undefined };

// Private-use characters stand in for the labels while the Markdown marks are taken out, so no
// rule can eat into a label or move it; U+E000 + i is the i-th citation.
const PLACEHOLDER_BASE = 0xe000;
const MAX_PLACEHOLDERS = 0x1900;

/**
 * The pieces of `text`: runs of plain text and the citations between them, in order. A citation
 * whose offsets do not hold its label (out of the text, overlapping the one before) is left as
 * the text it covers rather than trusted.
 */
export function answerPieces(text: string, citations: readonly AnswerCitation[]): AnswerPiece[] {
  let marked = "";
  let position = 0;
  const used: AnswerCitation[] = [];
  for (const citation of citations) {
    const { start, end } = citation;
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < position || end <= start || end > text.length) continue;
    if (text.slice(start, end) !== citation.label || used.length >= MAX_PLACEHOLDERS) continue;
    marked += text.slice(position, start) + String.fromCharCode(PLACEHOLDER_BASE + used.length);
    used.push(citation);
    position = end;
  }
  marked += text.slice(position);

  const pieces: AnswerPiece[] = [];
  let run = "";
  for (const character of plainText(marked)) {
    const code = character.charCodeAt(0);
    const index = code - PLACEHOLDER_BASE;
    if (character.length === 1 && index >= 0 && index < used.length) {
      if (run) pieces.push({ text: run });
      run = "";
      pieces.push({ citation: used[index]! });
    } else {
      run += character;
    }
  }
  if (run) pieces.push({ text: run });
  return pieces;
}

/** Text without Markdown's marks: what a quoted heading, table or code block says, in words. */
export function plainText(text: string): string {
  return (
    text
      // A code fence's own lines (``` or ~~~, with a language name) carry nothing to read.
      .replace(/^[ \t]*(```|~~~)[^\n]*\n?/gm, "")
      // A table's separator row (| --- | :---: |).
      .replace(/^[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*:?-*:?[ \t]*$\n?/gm, "")
      // A table's row: its cells, separated as a sentence would be.
      .replace(/^[ \t]*\|(.*)\|[ \t]*$/gm, (_row, cells: string) =>
        cells
          .split("|")
          .map((cell) => cell.trim())
          .filter(Boolean)
          .join(" · "),
      )
      // Pipes left between words ("a | b" from a row cut short).
      .replace(/[ \t]+\|[ \t]+/g, " · ")
      .replace(/^[ \t]*#{1,6}[ \t]+/gm, "")
      .replace(/^[ \t]*>[ \t]?/gm, "")
      .replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, "$2")
      .replace(/`+([^`\n]+)`+/g, "$1")
      .replace(/`{3,}/g, "")
      .replace(/\n{3,}/g, "\n\n")
      .trim()
  );
}
