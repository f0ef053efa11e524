/**
 * Splits an extracted document into chunks for search: by tokens (default 500, overlapping by
 * 50), never across a heading, ending at a paragraph or sentence where one is near, never
 * starting mid-word, and never longer than the embedder reads (`maxInputChars`, an extra cap in
 * characters). Each chunk knows its heading path, its character offsets in the document's text,
 * its pages (PDFs) and a content hash. Deterministic: the same text and options give the same
 * chunks and hashes.
 *
 * How tokens are counted, and why it stays bounded: the text is cut into units (sentences, short
 * ones merged to at least {@link MIN_UNIT_CHARS} characters), and every unit is counted exactly by
 * the project's o200k counter (lib/text/token-count.ts) in one worker task. Chunks are packed from
 * whole units. A unit too big for a chunk alone (a run-on sentence, a 5 MB "word") is cut at
 * word boundaries, over-long words at code-point boundaries, and its pieces get its tokens in
 * proportion to their characters, so no piece is counted again: the counter itself bounds the
 * cost of one huge unit (it extrapolates over-long runs). A chunk's `tokenCount` is the sum of its
 * units' counts; the exact count of the joined text differs by about a token per unit boundary.
 *
 * The conversation chunker (lib/retrieval/chunking.ts) cuts by characters and knows no headings;
 * documents need both, hence this one.
 */
import { createHash } from "node:crypto";
import { countTokensOfEach } from "../text/token-count.js";
import type { Embedder } from "../retrieval/embeddings/embedder.js";
import type { DocumentPage } from "./pdf-text.js";
import type { DocumentSection } from "./normalize-text.js";

export interface DocumentChunkingOptions {
  /** Most tokens per chunk, overlap included (default 500). */
  maxTokens: number;
  /** Tokens repeated from the end of one chunk at the start of the next, within a section (default 50). */
  overlapTokens: number;
  /** Most characters per chunk, e.g. the embedder's `maxInputChars` (default: no cap beyond tokens). */
  maxChars?: number;
  /** How tokens are counted, one count per text (default: the project's o200k counter in its worker). */
  countTokens?: (texts: readonly string[]) => Promise<number[]>;
}

export const DEFAULT_DOCUMENT_CHUNKING: DocumentChunkingOptions = { maxTokens: 500, overlapTokens: 50 };

/** The default options capped to what an embedder reads. */
export function documentChunkingFor(embedder: Pick<Embedder, "maxInputChars">, options: Partial<DocumentChunkingOptions> = {}): DocumentChunkingOptions {
  return { ...DEFAULT_DOCUMENT_CHUNKING, ...(embedder.maxInputChars ? { maxChars: embedder.maxInputChars } : {}), ...options };
}

export interface DocumentChunk {
  /** 0-based position in the document. */
  index: number;
  text: string;
  /** Offsets of `text` in the document's text, `[start, end)`. */
  start: number;
  end: number;
  /** The headings the chunk sits under, outermost first (`[]` before the first heading). */
  headingPath: string[];
  /** The PDF pages the chunk's text comes from, ascending (`[]` for other formats). */
  pageNumbers: number[];
  tokenCount: number;
  /** sha256 (hex) of `text`. */
  contentHash: string;
}

export interface ChunkedDocument {
  /** sha256 (hex) of the document's whole normalized text: identical content, identical hash. */
  contentHash: string;
  chunks: DocumentChunk[];
}

/** Sentences shorter than this are merged with the next, which bounds the number of units. */
export const MIN_UNIT_CHARS = 100;
/** Paragraphs shorter than this are merged with the next too (a hostile "a.\n\na.\n\n…" stays bounded). */
export const MIN_PARAGRAPH_CHARS = 20;

interface Unit {
  start: number;
  end: number;
  tokens: number;
  /** A paragraph ends here: the best place to end a chunk. */
  paragraphEnd: boolean;
  /** A sentence ends here: the next best. False for pieces of an over-long unit. */
  sentenceEnd: boolean;
}

export async function chunkDocument(
  document: { text: string; sections: readonly DocumentSection[]; pages?: readonly DocumentPage[] },
  options: Partial<DocumentChunkingOptions> = {},
): Promise<ChunkedDocument> {
  const settings = { ...DEFAULT_DOCUMENT_CHUNKING, ...options };
  const { maxTokens, overlapTokens } = settings;
  const maxChars = settings.maxChars ?? Number.POSITIVE_INFINITY;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new RangeError(`chunkDocument: maxTokens must be a positive integer, got ${maxTokens}`);
  if (!Number.isInteger(overlapTokens) || overlapTokens < 0 || overlapTokens >= maxTokens) {
    throw new RangeError(`chunkDocument: overlapTokens must be an integer from 0 to maxTokens - 1 (${maxTokens - 1}), got ${overlapTokens}`);
  }
  if (!(maxChars >= 1)) throw new RangeError(`chunkDocument: maxChars must be at least 1, got ${maxChars}`);
  const count = settings.countTokens ?? countTokensOfEach;
  const { text } = document;

  const sectionUnits = document.sections.map((section) => sentenceUnits(text, section.start, section.end));
  const all = sectionUnits.flat();
  const counts = all.length > 0 ? await count(all.map((unit) => text.slice(unit.start, unit.end))) : [];
  all.forEach((unit, index) => (unit.tokens = counts[index]!));

  const chunks: DocumentChunk[] = [];
  document.sections.forEach((section, sectionIndex) => {
    const units = sectionUnits[sectionIndex]!.flatMap((unit) => (unit.tokens > maxTokens || unit.end - unit.start > maxChars ? splitUnit(text, unit, maxTokens, maxChars) : [unit]));
    for (const span of packSection(text, units, { maxTokens, overlapTokens, maxChars })) {
      const chunkText = text.slice(span.start, span.end);
      chunks.push({
        index: chunks.length,
        text: chunkText,
        start: span.start,
        end: span.end,
        headingPath: [...section.headingPath],
        pageNumbers: (document.pages ?? []).filter((page) => page.start < span.end && page.end > span.start).map((page) => page.pageNumber),
        tokenCount: span.tokens,
        contentHash: sha256(chunkText),
      });
    }
  });
  return { contentHash: sha256(text), chunks };
}

export function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

// Private: a separator is a run of whitespace that holds a blank line (a paragraph break) or
// follows sentence punctuation (optionally closed by a quote or bracket). Found by a plain scan:
// a regular expression over a megabytes-long run of whitespace exhausts V8's backtracking stack
// on some machines (seen in CI on 5 MB of one separator character).
const SENTENCE_END = new Set([".", "!", "?", "…"]);
const CLOSERS = new Set(['"', "'", "”", "’", ")", "]"]);

function endsSentence(text: string, at: number): boolean {
  const before = text[at - 1];
  if (before === undefined) return false;
  if (SENTENCE_END.has(before)) return true;
  return CLOSERS.has(before) && at >= 2 && SENTENCE_END.has(text[at - 2]!);
}

/** Whether text[start, end) (all whitespace) holds a blank line: a newline, spaces or tabs, a newline. */
function holdsBlankLine(text: string, start: number, end: number): boolean {
  let sawNewline = false;
  for (let i = start; i < end; i++) {
    const char = text[i];
    if (char === "\n") {
      if (sawNewline) return true;
      sawNewline = true;
    } else if (char !== " " && char !== "\t") sawNewline = false;
  }
  return false;
}

/** Sentence units of text[from, to), trimmed of whitespace, short ones merged. */
function sentenceUnits(text: string, from: number, to: number): Unit[] {
  const units: Unit[] = [];
  const section = text.slice(from, to);
  let cursor = 0;
  const push = (end: number, paragraphEnd: boolean) => {
    const raw = section.slice(cursor, end);
    const lead = raw.length - raw.trimStart().length;
    const body = raw.trim();
    if (body.length === 0) return;
    const start = from + cursor + lead;
    const last = units[units.length - 1];
    const lastLength = last ? last.end - last.start : Infinity;
    if (last && lastLength < MIN_UNIT_CHARS && (!last.paragraphEnd || lastLength < MIN_PARAGRAPH_CHARS)) {
      last.end = start + body.length;
      last.paragraphEnd = paragraphEnd;
    } else units.push({ start, end: start + body.length, tokens: 0, paragraphEnd, sentenceEnd: true });
  };
  let i = 0;
  while (i < section.length) {
    if (!isWhitespace(section.charCodeAt(i))) {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < section.length && isWhitespace(section.charCodeAt(end))) end++;
    const paragraph = holdsBlankLine(section, i, end);
    if (paragraph || endsSentence(section, i)) {
      push(i, paragraph);
      cursor = end;
    }
    i = end;
  }
  push(section.length, true);
  return units;
}

/** Whether a UTF-16 code unit is whitespace, as `\s` in a JavaScript regular expression means it. */
function isWhitespace(code: number): boolean {
  return (
    code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff
  );
}

/** Pieces of a unit too big for one chunk: words, over-long words cut, tokens shared by length. */
function splitUnit(text: string, unit: Unit, maxTokens: number, maxChars: number): Unit[] {
  const length = unit.end - unit.start;
  const tokensPerChar = Math.max(unit.tokens, 1) / length;
  // The longest piece that fits a chunk on its own by both measures.
  const pieceCap = Math.max(1, Math.min(maxChars, Math.floor(maxTokens / tokensPerChar)));
  const pieces: Unit[] = [];
  // Words are found by a plain scan, not a regular expression: V8's backtracking stack gave out
  // ("Maximum call stack size exceeded") matching /\S+/ over a 5 MB word.
  let position = unit.start;
  while (position < unit.end) {
    while (position < unit.end && isWhitespace(text.charCodeAt(position))) position += 1;
    if (position >= unit.end) break;
    const wordStart = position;
    while (position < unit.end && !isWhitespace(text.charCodeAt(position))) position += 1;
    const wordEnd = position;
    for (let start = wordStart; start < wordEnd; ) {
      let end = Math.min(start + pieceCap, wordEnd);
      // Never cut a surrogate pair in two.
      if (end < wordEnd && end > start + 1 && isLowSurrogate(text.charCodeAt(end))) end -= 1;
      pieces.push({ start, end, tokens: Math.max(1, Math.min(maxTokens, Math.ceil((end - start) * tokensPerChar))), paragraphEnd: false, sentenceEnd: false });
      start = end;
    }
  }
  const last = pieces[pieces.length - 1];
  if (last) {
    last.paragraphEnd = unit.paragraphEnd;
    last.sentenceEnd = unit.sentenceEnd;
  }
  return pieces;
}

interface Span {
  start: number;
  end: number;
  tokens: number;
}

/**
 * Greedy packing of one section's units. A chunk takes units while they fit; it then ends at the
 * last paragraph end in its second half, else the last sentence end there, else where it is.
 * The next chunk starts with the tail of this one that fits in the overlap: whole units, or the
 * last words of the last unit (at a word boundary), or nothing when even that does not fit.
 */
function packSection(text: string, units: readonly Unit[], limits: { maxTokens: number; overlapTokens: number; maxChars: number }): Span[] {
  const spans: Span[] = [];
  let first = 0;
  let carried: Span | null = null;
  while (first < units.length) {
    let start: number = carried?.start ?? units[first]!.start;
    let tokens: number = carried?.tokens ?? 0;
    let last = first - 1;
    for (let index = first; index < units.length; index++) {
      const unit = units[index]!;
      if (tokens + unit.tokens > limits.maxTokens || unit.end - start > limits.maxChars) {
        if (last >= first) break;
        // Not even one unit fits after the overlap: drop the overlap (a unit alone always fits).
        start = unit.start;
        tokens = 0;
      }
      tokens += unit.tokens;
      last = index;
    }
    const end = preferredEnd(units, first, last, tokens - (carried?.tokens ?? 0));
    const chunkTokens = (carried && start === carried.start ? carried.tokens : 0) + sum(units, first, end);
    spans.push({ start, end: units[end]!.end, tokens: chunkTokens });
    first = end + 1;
    carried = first < units.length && limits.overlapTokens > 0 ? overlapTail(text, units, end, limits.overlapTokens, start) : null;
  }
  return spans;
}

function preferredEnd(units: readonly Unit[], first: number, last: number, tokens: number): number {
  if (last === units.length - 1) return last;
  const half = tokens / 2;
  for (const good of ["paragraphEnd", "sentenceEnd"] as const) {
    let running = 0;
    let best = -1;
    for (let index = first; index <= last; index++) {
      running += units[index]!.tokens;
      if (running >= half && units[index]![good]) best = index;
    }
    if (best >= 0) return best;
  }
  return last;
}

function overlapTail(text: string, units: readonly Unit[], end: number, overlapTokens: number, chunkStart: number): Span | null {
  let tokens = 0;
  let index = end;
  while (index >= 0 && units[index]!.start > chunkStart && tokens + units[index]!.tokens <= overlapTokens) {
    tokens += units[index]!.tokens;
    index -= 1;
  }
  if (index < end) return { start: units[index + 1]!.start, end: units[end]!.end, tokens };
  // No whole unit fits: the last words of the last unit, at a word boundary, by its tokens per character.
  const unit = units[end]!;
  const perChar = unit.tokens / (unit.end - unit.start);
  const budgetChars = Math.floor(overlapTokens / Math.max(perChar, 1e-9));
  const from = Math.max(unit.start, chunkStart, unit.end - budgetChars);
  const space = text.slice(from, unit.end).search(/\s\S/);
  if (space < 0) return null;
  const start = from + space + 1;
  if (start <= unit.start) return null;
  return { start, end: unit.end, tokens: Math.ceil((unit.end - start) * perChar) };
}

function sum(units: readonly Unit[], from: number, to: number): number {
  let total = 0;
  for (let index = from; index <= to; index++) total += units[index]!.tokens;
  return total;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
