/**
 * Text as we store it, whatever it came from: Unicode NFC, `\n` newlines, no NUL or other control
 * characters (tabs and newlines stay), no unpaired surrogates, no trailing spaces at line ends,
 * at most one blank line in a row. Plus how Markdown's headings divide a text into sections.
 */
import { DocumentError, quote } from "./document-error.js";

/** A stretch of text under one heading path: from its heading (or the start) to the next heading. */
export interface DocumentSection {
  /** The headings above and including this section's own, outermost first; `[]` before the first heading. */
  headingPath: string[];
  /** Character offsets into the document's text, `[start, end)`. */
  start: number;
  end: number;
}

/**
 * Plain text and Markdown must be UTF-8. Invalid UTF-8 is refused, not repaired: a file in
 * Latin-1 or Windows-1252 would otherwise be stored with every accented letter replaced by
 * U+FFFD, searchable by nobody, and the uploader can fix it in one step (save as UTF-8).
 * A UTF-8 byte-order mark is dropped; a UTF-16 one is named in the error.
 */
export function decodeUtf8(bytes: Uint8Array, fileName: string): string {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    throw new DocumentError("INVALID_ENCODING", `${quote(fileName)} is UTF-16 text; only UTF-8 is accepted. Save it as UTF-8 and upload it again.`);
  }
  try {
    // ignoreBOM: false (the default) drops a leading UTF-8 BOM.
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const offset = firstInvalidUtf8(bytes);
    throw new DocumentError("INVALID_ENCODING", `${quote(fileName)} is not valid UTF-8 (first bad byte at offset ${offset}); it may be in Latin-1 or Windows-1252. Save it as UTF-8 and upload it again.`);
  }
}

// Only runs on a file already known to be bad, to say where.
function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const byte = bytes[i]!;
    const length = byte < 0x80 ? 1 : byte >= 0xc2 && byte < 0xe0 ? 2 : byte >= 0xe0 && byte < 0xf0 ? 3 : byte >= 0xf0 && byte < 0xf5 ? 4 : 0;
    if (length === 0) return i;
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(i, i + length));
    } catch {
      return i;
    }
    i += length;
  }
  return i;
}

// C0 controls but tab and newline, DEL, C1 controls, and unpaired surrogates.
const UNWANTED = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function normalizeText(text: string): string {
  return text
    .replace(/\r\n?|[\u2028\u2029\u0085]/g, "\n")
    .replace(UNWANTED, "")
    .normalize("NFC")
    .split("\n")
    .map(withoutTrailingBlanks)
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/^\n+/, "")
    .trimEnd();
}

// Private: a scan from the line's end, not /[ \t\u00A0]+$/gm. That pattern retries at every
// blank of a run that does not end the line, each retry reading to the run's end: quadratic
// (a line with 160,000 spaces inside it took 83 s).
function withoutTrailingBlanks(line: string): string {
  let end = line.length;
  while (end > 0) {
    const code = line.charCodeAt(end - 1);
    if (code !== 0x20 && code !== 0x09 && code !== 0xa0) break;
    end -= 1;
  }
  return end === line.length ? line : line.slice(0, end);
}

/** Whether anything readable is left (letters, digits, symbols: not only whitespace). */
export function hasReadableText(text: string): boolean {
  return /\S/u.test(text);
}

const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * Sections of a Markdown text by its ATX (`## Install`) and setext (underlined) headings,
 * ignoring `#` lines inside fenced code blocks. Heading text loses its inline markup
 * (`**`, `` ` ``, links keep their text) so a heading path reads as the rendered heading.
 */
export function markdownSections(text: string): DocumentSection[] {
  const headings: { level: number; title: string; start: number }[] = [];
  let fence: string | null = null;
  let offset = 0;
  let previous: { line: string; start: number; blankBefore: boolean } | null = null;
  let lastBlank = true;
  for (const line of text.split("\n")) {
    const start = offset;
    offset += line.length + 1;
    const fenceMatch = FENCE.exec(line);
    if (fence) {
      if (fenceMatch && fenceMatch[1]!.startsWith(fence)) fence = null;
      previous = null;
      lastBlank = false;
      continue;
    }
    if (fenceMatch) {
      fence = fenceMatch[1]!;
      previous = null;
      lastBlank = false;
      continue;
    }
    const atx = atxHeading(line);
    if (atx) {
      headings.push({ level: atx.level, title: inlineText(atx.title), start });
      previous = null;
      lastBlank = false;
      continue;
    }
    const underline = SETEXT_UNDERLINE.exec(line);
    // A setext heading is one paragraph line directly above the underline (a `---` after a blank line is a rule).
    if (underline && previous && previous.blankBefore && previous.line.trim().length > 0) {
      headings.push({ level: underline[1]!.startsWith("=") ? 1 : 2, title: inlineText(previous.line), start: previous.start });
      previous = null;
      lastBlank = false;
      continue;
    }
    const blank = line.trim().length === 0;
    previous = blank ? null : { line, start, blankBefore: lastBlank };
    lastBlank = blank;
  }
  return sectionsFromHeadings(headings, text.length);
}

/** Sections from headings in text order (also used for DOCX, whose headings come from styles). */
export function sectionsFromHeadings(headings: readonly { level: number; title: string; start: number }[], length: number): DocumentSection[] {
  const sections: DocumentSection[] = [];
  const path: { level: number; title: string }[] = [];
  const firstStart = headings[0]?.start ?? length;
  if (firstStart > 0 || headings.length === 0) sections.push({ headingPath: [], start: 0, end: firstStart });
  headings.forEach((heading, index) => {
    while (path.length > 0 && path[path.length - 1]!.level >= heading.level) path.pop();
    path.push(heading);
    sections.push({ headingPath: path.map((entry) => entry.title), start: heading.start, end: headings[index + 1]?.start ?? length });
  });
  return sections.filter((section) => section.end > section.start || sections.length === 1);
}

const isBlank = (code: number) => code === 0x20 || code === 0x09;

/**
 * An ATX heading line (`## Install ##`): its level and raw title, or null. What
 * /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/ matched, found by scanning: that pattern
 * retried its optional closing sequence at every character of the lazy title, and each blank
 * run inside a title was read again from every blank in it (quadratic: a title with 160,000
 * spaces inside took 71 s).
 */
function atxHeading(line: string): { level: number; title: string } | null {
  let at = 0;
  while (at < 3 && line.charCodeAt(at) === 0x20) at += 1;
  let level = 0;
  while (level < 7 && line.charCodeAt(at + level) === 0x23) level += 1;
  if (level === 0 || level > 6) return null;
  at += level;
  if (at < line.length && !isBlank(line.charCodeAt(at))) return null;
  // `.` in the pattern stopped at these; normalized text has none, but the scan stays exact.
  if (/[\r\u2028\u2029]/.test(line)) return null;
  while (at < line.length && isBlank(line.charCodeAt(at))) at += 1;
  let end = line.length;
  while (end > at && isBlank(line.charCodeAt(end - 1))) end -= 1;
  // A closing run of `#`s counts only after a blank (`# C#` keeps its `#`).
  let hashes = end;
  while (hashes > at && line.charCodeAt(hashes - 1) === 0x23) hashes -= 1;
  if (hashes < end && hashes > at && isBlank(line.charCodeAt(hashes - 1))) {
    end = hashes;
    while (end > at && isBlank(line.charCodeAt(end - 1))) end -= 1;
  }
  return { level, title: line.slice(at, end) };
}

function inlineText(markdown: string): string {
  return markdown
    // A link's text stops at the next bracket and its target at an unbalanced parenthesis (one
    // level of pairs allowed, as in Wikipedia's `Foo_(bar)`), so no two attempts read the same
    // characters twice over: /\[([^\]]*)\]\([^)]*\)/ read a run of unclosed `[` (or `[a](`) again
    // from every bracket (quadratic).
    .replace(/!?\[([^[\]]*)\]\([^()]*(?:\([^()]*\)[^()]*)*\)/g, "$1")
    .replace(/(\*\*|__|\*|_|`)(.+?)\1/g, "$2")
    .replace(/\\([\\`*_{}[\]()#+\-.!])/g, "$1")
    .trim();
}
