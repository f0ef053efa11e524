/**
 * Markdown as the plain text a reader sees, with a map back to the source: what a highlight shows
 * instead of `## Deploy`, `**bold**`, code fences, backticks and `| --- |` rows. Highlights find
 * the matched words in the stored Markdown (where PostgreSQL's parse of that same text says they
 * are), and the map carries each word's range over to the plain text, so `matches` stay right for
 * the text a client receives.
 *
 * The text is the content of the Markdown's blocks, one block a line: paragraphs, headings, list
 * items, code lines and table rows each start on a new line ("\n" separates blocks and nothing
 * else: a line break inside a paragraph is a space), and a table row's cells are separated by
 * " · ". Markup is left out: heading hashes, emphasis and strikethrough markers, list bullets and
 * numbers, task boxes, block quote markers, code fences and backticks, table pipes and delimiter
 * rows, thematic breaks, link and image destinations, link reference definitions, footnote
 * references and backslashes of escapes. Every character of the text is copied from the source
 * (but for the separators, and control characters, which become spaces), so a matched word is the
 * same text on both sides. Raw HTML stays as written: the web app shows it as text too.
 *
 * Why a scanner of its own rather than the renderer's parser (micromark, with GFM): a page's
 * highlights convert dozens of passages of up to 4,000 characters, and micromark took 100-200 ms
 * for one such passage on this project's loaded 2-core machine, where this scan, one pass over
 * the lines and one over each line's characters, takes well under a millisecond. It reads the
 * constructs people write (CommonMark's blocks, GFM's tables, strikethrough and task lists) as
 * the renderer does; where an unusual construct is read differently, a snippet shows a character
 * of markup or drops one, and the ranges stay right either way (test/unit/markdown-plain-text).
 */

import { PlainTextWriter, type PlainText } from "./plain-text-map.js";

/** What a table row's cells are joined with in the plain text. */
export const CELL_SEPARATOR = " · ";

/** Characters without which a text reads the same as Markdown and as plain text: most snippets have none, and are copied as they are. */
const MAYBE_MARKUP = /[#*_`|[\]<>!\\~=\n\r]|^\s*(?:[-+]|\d{1,9}[.)])(?:\s|$)/;

export function markdownToPlainText(source: string): PlainText {
  const writer = new PlainTextWriter(source);
  if (!MAYBE_MARKUP.test(source)) writer.copy(0, source.length);
  else writeBlocks(source, writer);
  return writer.finish();
}

// Block structure, read line by line.
const FENCE = /^[ \t]*(`{3,}|~{3,})/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const SETEXT_UNDERLINE = /^ {0,3}(?:=+|-+)[ \t]*$/;
const QUOTE_MARKER = /^ {0,3}> ?/;
const LIST_MARKER = /^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)/;
const TASK_BOX = /^\[[ xX]\][ \t]+/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+|$)/;
const CLOSING_HASHES = /[ \t]+#+[ \t]*$|^#+[ \t]*$/;
const DEFINITION = /^ {0,3}\[[^\]]+\]:[ \t]*\S+/;
const TABLE_DELIMITER_ROW = /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

interface Line {
  /** Where its content starts once the block quote markers are read (and where the line ends, its break excluded). */
  start: number;
  end: number;
}

function writeBlocks(source: string, writer: PlainTextWriter): void {
  const lines: Line[] = [];
  for (let start = 0; start <= source.length; ) {
    let end = source.indexOf("\n", start);
    if (end < 0) end = source.length;
    let content = start;
    // Block quote markers, however deeply nested, are no part of the content.
    for (let marker = QUOTE_MARKER.exec(source.slice(content, end)); marker; marker = QUOTE_MARKER.exec(source.slice(content, end))) content += marker[0].length;
    lines.push({ start: content, end: end > start && source.charAt(end - 1) === "\r" ? end - 1 : end });
    start = end + 1;
  }
  let fence: { marker: string } | null = null;
  let inTable = false;
  let inParagraph = false;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    const text = source.slice(line.start, line.end);
    if (fence) {
      const closing = FENCE.exec(text);
      if (closing && closing[1]!.charAt(0) === fence.marker.charAt(0) && closing[1]!.length >= fence.marker.length && text.trim() === closing[1]) {
        fence = null;
      } else {
        writer.copy(line.start, line.end);
      }
      writer.breakBlock();
      continue;
    }
    const opening = FENCE.exec(text);
    if (opening && !(opening[1]!.startsWith("`") && text.slice(opening[0].length).includes("`"))) {
      fence = { marker: opening[1]! };
      writer.breakBlock();
      inParagraph = inTable = false;
      continue;
    }
    if (text.trim() === "" || THEMATIC_BREAK.test(text) || (inParagraph && SETEXT_UNDERLINE.test(text)) || DEFINITION.test(text)) {
      writer.breakBlock();
      inParagraph = inTable = false;
      continue;
    }
    // List markers (nested ones too) and a task box: a new item starts a new block.
    let content = line.start;
    for (let marker = LIST_MARKER.exec(text); marker; marker = LIST_MARKER.exec(source.slice(content, line.end))) {
      if (THEMATIC_BREAK.test(source.slice(content, line.end))) break;
      content += marker[0].length;
      writer.breakBlock();
      inParagraph = inTable = false;
      const box = TASK_BOX.exec(source.slice(content, line.end));
      if (box) content += box[0].length;
    }
    const rest = source.slice(content, line.end);
    const next = lines[index + 1];
    if (!inTable && rest.includes("|") && next && TABLE_DELIMITER_ROW.test(source.slice(next.start, next.end)) && source.slice(next.start, next.end).includes("|")) {
      writer.breakBlock();
      writeTableRow(content, line.end, writer);
      index++;
      inTable = true;
      inParagraph = false;
      continue;
    }
    if (inTable && rest.includes("|")) {
      writeTableRow(content, line.end, writer);
      continue;
    }
    inTable = false;
    const heading = HEADING.exec(rest);
    if (heading) {
      writer.breakBlock();
      const closing = CLOSING_HASHES.exec(source.slice(content + heading[0].length, line.end));
      writeInline(content + heading[0].length, closing ? content + heading[0].length + closing.index : line.end, writer);
      writer.breakBlock();
      inParagraph = false;
      continue;
    }
    // A line of a paragraph: the break before it is a space.
    if (inParagraph) writer.write(" ");
    writeInline(content, line.end, writer);
    inParagraph = true;
  }
}

/** A row of a table: its cells' content, without the pipes. */
function writeTableRow(start: number, end: number, writer: PlainTextWriter): void {
  writer.breakBlock();
  const source = writer.source;
  const cells: Array<[number, number]> = [];
  let cellStart = start;
  let inCode = false;
  for (let at = start; at <= end; at++) {
    const character = at < end ? source.charAt(at) : "|";
    if (character === "\\") at++;
    else if (character === "`") inCode = !inCode;
    else if (character === "|" && (!inCode || at === end)) {
      cells.push([cellStart, at]);
      cellStart = at + 1;
    }
  }
  // The pipes at either end of a row open and close it: no cell before the first or after the last.
  if (cells.length > 1 && source.slice(cells[0]![0], cells[0]![1]).trim() === "") cells.shift();
  if (cells.length > 1 && source.slice(cells.at(-1)![0], cells.at(-1)![1]).trim() === "") cells.pop();
  const rowStart = writer.length;
  for (const [from, to] of cells) {
    const cellStart = writer.length;
    if (cellStart > rowStart) writer.write(CELL_SEPARATOR);
    const written = writer.length;
    writeInline(from, to, writer);
    writer.trimEnd();
    // An empty cell adds no separator.
    if (writer.length <= written) writer.truncate(cellStart);
  }
  writer.breakBlock();
}

const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/;
const WORD = /[\p{L}\p{N}]/u;
const BLANK = /\s/;
/** The characters writeInline reads as possible markup, by code: everything between them is text. */
const MAYBE_INLINE_MARKUP: boolean[] = Array.from({ length: 128 }, (_, code) => "\\`![<*_~".includes(String.fromCharCode(code)));

/** The inline content between `from` and `to` (one line): text without its markup. */
function writeInline(from: number, to: number, writer: PlainTextWriter): void {
  const source = writer.source;
  let at = from;
  // A hard line break's trailing backslash.
  if (to > from && source.charAt(to - 1) === "\\" && (to - 1 === from || source.charAt(to - 2) !== "\\")) to--;
  while (at < to) {
    // Text up to the next character that may open markup is copied as one run.
    let next = at;
    while (next < to && !MAYBE_INLINE_MARKUP[source.charCodeAt(next)]) next++;
    if (next > at) {
      writer.copy(at, next);
      at = next;
      continue;
    }
    const character = source.charAt(at);
    if (character === "\\" && at + 1 < to && ASCII_PUNCTUATION.test(source.charAt(at + 1))) {
      writer.copy(at + 1, at + 2);
      at += 2;
    } else if (character === "`") {
      at = writeCodeSpan(at, to, writer);
    } else if (character === "!" && source.charAt(at + 1) === "[") {
      const link = readLink(source, at + 1, to);
      if (link) {
        writeInline(at + 2, link.textEnd, writer);
        at = link.end;
      } else {
        writer.copy(at, at + 1);
        at++;
      }
    } else if (character === "[") {
      const link = readLink(source, at, to);
      if (link && source.charAt(at + 1) === "^") at = link.end;
      else if (link) {
        writeInline(at + 1, link.textEnd, writer);
        at = link.end;
      } else {
        writer.copy(at, at + 1);
        at++;
      }
    } else if (character === "<") {
      // An autolink shows its address; any other tag stays as written.
      const close = source.indexOf(">", at);
      const inner = close > at && close < to ? source.slice(at + 1, close) : "";
      if (/^[a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s<>]*$|^[^\s@<>]+@[^\s@<>]+$/.test(inner)) {
        writer.copy(at + 1, close);
        at = close + 1;
      } else {
        writer.copy(at, at + 1);
        at++;
      }
    } else if (character === "*" || character === "_" || character === "~") {
      let end = at;
      while (end < to && source.charAt(end) === character) end++;
      if (!isEmphasisRun(source, at, end, from, to, character)) writer.copy(at, end);
      at = end;
    } else {
      writer.copy(at, at + 1);
      at++;
    }
  }
}

/**
 * Whether a run of `*`, `_` or `~` is emphasis or strikethrough markup rather than text: another
 * run of it is on the line, and it touches a word on one side (CommonMark's flanking runs); `_`
 * only outside a word (snake_case stays), `~` only in runs of one or two.
 */
function isEmphasisRun(source: string, start: number, end: number, from: number, to: number, character: string): boolean {
  // A run with no other of its kind on the line has nothing to pair with: "count(*)".
  const other = source.indexOf(character, end);
  const earlier = start > from ? source.lastIndexOf(character, start - 1) : -1;
  if ((other < 0 || other >= to) && earlier < from) return false;
  const before = start > from ? source.charAt(start - 1) : " ";
  const after = end < to ? source.charAt(end) : " ";
  const opens = !BLANK.test(after);
  const closes = !BLANK.test(before);
  if (!opens && !closes) return false;
  if (character === "_") return !(WORD.test(before) && WORD.test(after));
  if (character === "~") return end - start <= 2;
  return true;
}

/** A code span: its content without the backticks (and the one space each side that pads it); an unclosed run is text. */
function writeCodeSpan(at: number, to: number, writer: PlainTextWriter): number {
  const source = writer.source;
  let runEnd = at;
  while (runEnd < to && source.charAt(runEnd) === "`") runEnd++;
  const run = runEnd - at;
  for (let search = runEnd; search < to; ) {
    const close = source.indexOf("`", search);
    if (close < 0 || close >= to) break;
    let closeEnd = close;
    while (closeEnd < to && source.charAt(closeEnd) === "`") closeEnd++;
    if (closeEnd - close === run) {
      let contentStart = runEnd;
      let contentEnd = close;
      if (contentEnd - contentStart >= 2 && source.charAt(contentStart) === " " && source.charAt(contentEnd - 1) === " " && source.slice(contentStart, contentEnd).trim() !== "") {
        contentStart++;
        contentEnd--;
      }
      writer.copy(contentStart, contentEnd);
      return closeEnd;
    }
    search = closeEnd;
  }
  writer.copy(at, runEnd);
  return runEnd;
}

/** `[text](destination)`, `[text][label]` or `[text]` followed by either, from the `[` at `at`: where its text ends and the whole ends. */
function readLink(source: string, at: number, to: number): { textEnd: number; end: number } | null {
  let depth = 0;
  let textEnd = -1;
  for (let index = at; index < to; index++) {
    const character = source.charAt(index);
    if (character === "\\") index++;
    else if (character === "[") depth++;
    else if (character === "]" && --depth === 0) {
      textEnd = index;
      break;
    }
  }
  if (textEnd < 0) return null;
  // A footnote reference is whole as it is.
  if (source.charAt(at + 1) === "^") return { textEnd, end: textEnd + 1 };
  const next = source.charAt(textEnd + 1);
  if (next === "(") {
    let parentheses = 0;
    for (let index = textEnd + 1; index < to; index++) {
      const character = source.charAt(index);
      if (character === "\\") index++;
      else if (character === "(") parentheses++;
      else if (character === ")" && --parentheses === 0) return { textEnd, end: index + 1 };
    }
    return null;
  }
  if (next === "[") {
    const close = source.indexOf("]", textEnd + 2);
    return close > 0 && close < to ? { textEnd, end: close + 1 } : null;
  }
  return null;
}
