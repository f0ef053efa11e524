/**
 * An answer's text as a person reads it: plain text cut at its citation labels (`[n]` at the
 * offsets the server gives), so each label can become a link to the passage's hit. The text is
 * shown as text, never as markup; Markdown marks a quoted passage may still carry (a heading's
 * `##`, `**bold**`, backticks, a code fence, a table's pipes) are taken out, because an answer
 * sits above the results as prose and a stray `| --- |` reads as noise there.
 */
import { highlightPieces, type TextPiece, type TextRange } from "../highlight-pieces";
import type { AnswerCitation, AnswerPassage } from "./answer-operations";

export type AnswerPiece = { text: string; citation?: undefined } | { citation: AnswerCitation; text?: undefined };

// Private-use characters stand in for the labels (and a passage's marked words) while the
// Markdown marks are taken out, so no rule can eat into them or move them: U+E000 + i is the
// i-th citation; U+F000 and U+F001 open and close a marked word.
const CITATION_BASE = 0xe000;
const MAX_CITATIONS = 0x1000;
const MARK_OPEN = "\uf000";
const MARK_CLOSE = "\uf001";
/** `||` (code's "or") is not a table's border: it stands aside while the borders are read. */
const DOUBLE_PIPE = "\uf002";

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
    if (text.slice(start, end) !== citation.label || used.length >= MAX_CITATIONS) continue;
    marked += text.slice(position, start) + String.fromCharCode(CITATION_BASE + used.length);
    used.push(citation);
    position = end;
  }
  marked += text.slice(position);

  const pieces: AnswerPiece[] = [];
  let run = "";
  for (const character of plainText(marked)) {
    const index = character.charCodeAt(0) - CITATION_BASE;
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

/** A passage cut at its matched words (highlight-pieces.ts), in plain text: the marks stay on the words they marked. */
export function plainPassagePieces(text: string, matches: readonly TextRange[]): TextPiece[] {
  const marked = highlightPieces(text, matches)
    .map((piece) => (piece.matched ? MARK_OPEN + piece.text + MARK_CLOSE : piece.text))
    .join("");
  const pieces: TextPiece[] = [];
  for (const part of plainText(marked).split(MARK_CLOSE)) {
    const [before, inside] = part.split(MARK_OPEN) as [string, string | undefined];
    if (before) pieces.push({ text: before, matched: false });
    if (inside) pieces.push({ text: inside, matched: true });
  }
  return pieces;
}

/**
 * Text without Markdown's marks: what a quoted heading, table or code block says, in words.
 * Passages often arrive with their lines joined, so the marks are found inside a line too.
 */
export function plainText(text: string): string {
  return (
    text
      .replaceAll("||", DOUBLE_PIPE)
      // A code fence (``` or ~~~ and its language name) carries nothing to read.
      .replace(/(`{3,}|~{3,})[A-Za-z0-9_+-]*/g, " ")
      // A table's separator row (| --- | :---: |).
      .replace(/\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+(?:[ \t]*:?-{3,}:?(?=\s|$))?/g, " ")
      // A table's cell borders: its cells read as a list.
      .replace(/[ \t]*\|(?:[ \t]*\|)*[ \t]*/g, " · ")
      .replace(/(^|\n)[ \t]*· /g, "$1")
      .replace(/ ·[ \t]*(?=\n|$)/g, "")
      // A row that starts after a sentence, its lines joined: the sentence's end is border enough.
      .replace(/([.!?:;]) · /g, "$1 ")
      // Heading and quote marks.
      .replace(/(^|\s)#{1,6}[ \t]+/g, "$1")
      .replace(/(^|\n)[ \t]*>[ \t]?/g, "$1")
      // Emphasis: **strong**, __strong__, *em*, _em_.
      .replace(/(\*\*|__)(?=\S)([^\n]*?\S)\1/g, "$2")
      .replace(/(^|[\s(["'])[*_](?=[^\s*_])([^*_\n]*?[^\s*_])[*_](?=$|[\s.,;:!?)\]"'])/g, "$1$2")
      // Code spans: the code, without its backticks.
      .replace(/`+/g, "")
      .replace(/[ \t]+\n/g, "\n")
      .replace(/\n{3,}/g, "\n\n")
      .replace(/[ \t]{2,}/g, " ")
      .replaceAll(DOUBLE_PIPE, "||")
      .trim()
  );
}

/** A passage of the Sources list, with the later passages that quote the very same text. */
export interface SourceGroup {
  passage: AnswerPassage;
  alsoIn: AnswerPassage[];
}

/**
 * The Sources list with each text shown once: a passage whose text (and cut) an earlier one
 * already shows is named under it ("Same passage in [3] …") rather than repeated, as a runbook
 * pasted into several conversations is. Numbers stay the API's, so each `[n]` of the answer still
 * names its own hit.
 */
export function groupIdenticalPassages(passages: readonly AnswerPassage[]): SourceGroup[] {
  const groups: SourceGroup[] = [];
  const byText = new Map<string, SourceGroup>();
  for (const passage of passages) {
    const key = `${passage.truncatedBefore ? "…" : ""}${passage.text.trim()}${passage.truncatedAfter ? "…" : ""}`;
    const earlier = byText.get(key);
    if (earlier) {
      earlier.alsoIn.push(passage);
      continue;
    }
    const group = { passage, alsoIn: [] };
    byText.set(key, group);
    groups.push(group);
  }
  return groups;
}
