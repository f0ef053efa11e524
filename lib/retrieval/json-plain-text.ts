/**
 * A tool's call or result, stored in a conversation as JSON, as plain text: one `key: value` line
 * for each value (a string's content without its quotes and escapes, a number, a boolean), so
 * a snippet of it reads "query: deadlock runbook" rather than `{ "query": "deadlock runbook",`.
 * A key is written before its own value only: one whose value is an object or a list leaves it to
 * the keys inside. Read by scanning, not by JSON.parse: a passage is cut to its first
 * MAX_PASSAGE_SCAN characters and seldom ends where the JSON does.
 */
import { PlainTextWriter, type PlainText } from "./plain-text-map.js";

/** An object with a string key, or a list of objects or strings: a Markdown text never opens like that. */
const JSON_OPENING = /^\s*(?:\{\s*"|\[\s*(?:\{\s*"|"))/;

export function looksLikeJson(text: string): boolean {
  return JSON_OPENING.test(text);
}

const LITERAL = /[-+.\w]/;

export function jsonToPlainText(source: string): PlainText {
  const writer = new PlainTextWriter(source);
  let key: { start: number; end: number } | null = null;
  const writeValue = (write: () => void) => {
    writer.breakBlock();
    if (key) {
      writeString(writer, key.start, key.end);
      writer.write(": ");
    }
    write();
    key = null;
  };
  for (let at = 0; at < source.length; ) {
    const character = source.charAt(at);
    if (character === '"') {
      const end = stringEnd(source, at);
      let next = end;
      while (next < source.length && /\s/.test(source.charAt(next))) next++;
      if (source.charAt(next) === ":") {
        key = { start: at + 1, end: Math.max(at + 1, end - 1) };
        at = next + 1;
        continue;
      }
      const contentEnd = end > at + 1 && source.charAt(end - 1) === '"' ? end - 1 : end;
      if (contentEnd > at + 1) writeValue(() => writeString(writer, at + 1, contentEnd));
      else key = null;
      at = end;
    } else if (LITERAL.test(character)) {
      let end = at;
      while (end < source.length && LITERAL.test(source.charAt(end))) end++;
      if (source.slice(at, end) !== "null") writeValue(() => writer.copy(at, end));
      else key = null;
      at = end;
    } else {
      // An object or a list opens: its own keys name what is inside.
      if (character === "{" || character === "[") key = null;
      at++;
    }
  }
  return writer.finish();
}

/** Past the closing quote of the string opening at `at` (the end of the text for one cut short). */
function stringEnd(source: string, at: number): number {
  for (let index = at + 1; index < source.length; index++) {
    const character = source.charAt(index);
    if (character === "\\") index++;
    else if (character === '"') return index + 1;
  }
  return source.length;
}

/** A string's content with its escapes read: `\n` and the like as spaces, `\uXXXX` as its character. */
function writeString(writer: PlainTextWriter, from: number, to: number): void {
  const source = writer.source;
  for (let at = from; at < to; ) {
    if (source.charAt(at) !== "\\" || at + 1 >= to) {
      writer.copy(at, at + 1);
      at++;
      continue;
    }
    const escaped = source.charAt(at + 1);
    if (escaped === "u" && /^[0-9a-fA-F]{4}$/.test(source.slice(at + 2, at + 6))) {
      writer.write(String.fromCharCode(Number.parseInt(source.slice(at + 2, at + 6), 16)));
      at += 6;
    } else {
      if ("nrtbf".includes(escaped)) writer.write(" ");
      else writer.copy(at + 1, at + 2);
      at += 2;
    }
  }
}
