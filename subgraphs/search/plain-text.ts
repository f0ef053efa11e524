/**
 * Text as PostgreSQL and a search box expect it. PostgreSQL refuses NUL in text and jsonb
 * (`invalid byte sequence for encoding "UTF8": 0x00`, `unsupported Unicode escape sequence`),
 * and a lone UTF-16 surrogate is not a character at all. A user who pastes such text into a
 * search box means the words around it, so control characters become spaces and lone
 * surrogates the replacement character; everything else is kept as it is.
 */

/** C0 controls (tab and newline included), DEL and C1 controls. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Anything either replacement looks for: most text has none, and one scan of it is cheaper than two. */
const MAYBE_NOT_PLAIN = /[\u0000-\u001f\u007f-\u009f\ud800-\udfff]/;

export function toPlainText(text: string): string {
  if (!MAYBE_NOT_PLAIN.test(text)) return text;
  return text.replace(CONTROL_CHARACTERS, " ").replace(LONE_SURROGATE, "\ufffd");
}

/** C0 controls but the line break, DEL and C1 controls. */
const CONTROL_CHARACTERS_BUT_LINE_BREAK = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;

/**
 * Like toPlainText, but a line break stays: a highlight's text (lib/retrieval/markdown-plain-text.ts)
 * puts each block of the passage on a line of its own.
 */
export function toPlainLines(text: string): string {
  if (!MAYBE_NOT_PLAIN.test(text)) return text;
  return text.replace(CONTROL_CHARACTERS_BUT_LINE_BREAK, " ").replace(LONE_SURROGATE, "\ufffd");
}

/** Every string inside a JSON-like value, made plain (for rows and jsonb documents). */
export function withPlainStrings<T>(value: T): T {
  if (typeof value === "string") return toPlainText(value) as T;
  if (Array.isArray(value)) return value.map(withPlainStrings) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [toPlainText(key), withPlainStrings(inner)])) as T;
  }
  return value;
}
