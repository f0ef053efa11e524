/**
 * Plain text made from a passage's stored text (Markdown, a tool's JSON), with where each of its
 * characters came from: what carries a matched word's range from the stored text, where the
 * database found it, to the plain text a client is given. The readers (markdown-plain-text.ts,
 * json-plain-text.ts) write through PlainTextWriter, which copies characters of the source with
 * their offsets and writes separators without one.
 */

export interface PlainText {
  /** The plain text: blocks separated by "\n", no other control characters. */
  text: string;
  /** The stored text it was made from (Markdown, JSON). */
  source: string;
  /** For each UTF-16 unit of `text`, the unit of `source` it was copied from; -1 for a separator written here. */
  origins: Int32Array;
}

/** A UTF-16 range: `text.slice(start, end)`. */
export interface TextRange {
  start: number;
  end: number;
}

/**
 * Where a range of the source is in the plain text: null when any of it was markup (a word in a
 * link's destination) or did not come across whole and in order.
 */
export function plainRange(plain: PlainText, range: TextRange, plainOf = plainIndexes(plain)): TextRange | null {
  if (!(Number.isSafeInteger(range.start) && Number.isSafeInteger(range.end) && range.start >= 0 && range.end > range.start && range.end <= plain.source.length)) return null;
  const start = plainOf[range.start]!;
  if (start < 0) return null;
  for (let offset = 1; offset < range.end - range.start; offset++) if (plainOf[range.start + offset] !== start + offset) return null;
  const end = start + (range.end - range.start);
  return plain.text.slice(start, end) === plain.source.slice(range.start, range.end) ? { start, end } : null;
}

/** Ranges of the source carried to the plain text, in order; those that did not come across are dropped. */
export function plainRanges(plain: PlainText, ranges: readonly TextRange[]): TextRange[] {
  if (ranges.length === 0) return [];
  const plainOf = plainIndexes(plain);
  return ranges.map((range) => plainRange(plain, range, plainOf)).filter((range): range is TextRange => range !== null);
}

/** For each unit of the source, where it is in the plain text (-1: left out). */
function plainIndexes(plain: PlainText): Int32Array {
  const plainOf = new Int32Array(plain.source.length).fill(-1);
  plain.origins.forEach((origin, index) => {
    if (origin >= 0 && plainOf[origin] === -1) plainOf[origin] = index;
  });
  return plainOf;
}

/**
 * Builds a PlainText: copies ranges of the source (control characters as spaces, no blank at the
 * start of a block and none doubled) and writes separators, "\n" between blocks.
 *
 * Why typed arrays rather than an array of one-character strings: every passage a page shows is
 * written here unit by unit, and joining the strings and copying the origins out of a plain array
 * were a third of the conversion's time (a profile over the 2,491 demo messages).
 */
export class PlainTextWriter {
  private units: Uint16Array;
  private origins: Int32Array;
  private size = 0;

  constructor(readonly source: string) {
    // The text is the source less its markup, plus a separator or two: rarely longer.
    const capacity = source.length + 16;
    this.units = new Uint16Array(capacity);
    this.origins = new Int32Array(capacity);
  }

  get length(): number {
    return this.size;
  }

  /** The source's units from `from` to `to`, as written (control characters as spaces). */
  copy(from: number, to: number): void {
    for (let at = from; at < to; at++) this.push(this.source.charCodeAt(at), at);
  }

  /** A separator between blocks: at most one, never at the start, with no blank before it. */
  breakBlock(): void {
    this.trimEnd();
    if (this.size > 0 && this.last() !== NEWLINE) this.append(NEWLINE, -1);
  }

  /** Text that is not in the source (a separator). */
  write(separator: string): void {
    for (let index = 0; index < separator.length; index++) this.push(separator.charCodeAt(index), -1);
  }

  trimEnd(): void {
    while (this.size > 0 && this.last() === SPACE) this.size--;
  }

  /** Drops what was written after `length` units. */
  truncate(length: number): void {
    if (length < this.size) this.size = Math.max(0, length);
  }

  finish(): PlainText {
    while (this.size > 0 && isTrailingBlank(this.last())) this.size--;
    let text = "";
    // In slices, so no call passes more arguments than the engine allows.
    for (let at = 0; at < this.size; at += 4_096) text += String.fromCharCode.apply(null, this.units.subarray(at, Math.min(this.size, at + 4_096)) as unknown as number[]);
    return { text, source: this.source, origins: this.origins.slice(0, this.size) };
  }

  private last(): number {
    return this.units[this.size - 1]!;
  }

  private push(code: number, origin: number): void {
    const blank = code <= 0x20 || (code >= 0x7f && code <= 0x9f);
    if (blank) {
      // No blank at the start of a block, and none doubled.
      if (this.size === 0) return;
      const last = this.last();
      if (last === NEWLINE || last === SPACE) return;
    }
    this.append(blank ? SPACE : code, origin);
  }

  private append(code: number, origin: number): void {
    if (this.size === this.units.length) {
      const units = new Uint16Array(this.units.length * 2);
      units.set(this.units);
      this.units = units;
      const origins = new Int32Array(this.origins.length * 2);
      origins.set(this.origins);
      this.origins = origins;
    }
    this.units[this.size] = code;
    this.origins[this.size] = origin;
    this.size++;
  }
}

const NEWLINE = 0x0a;
const SPACE = 0x20;

/** What finish() trims from the end: the blanks /\s/ matches (only spaces and newlines are written, but a copied unit may be another blank). */
function isTrailingBlank(code: number): boolean {
  return /\s/.test(String.fromCharCode(code));
}
