/**
 * Cleaning what vendors send before it is stored or shown: titles and snippets come with
 * highlighting tags, entities, control characters and sometimes megabytes of hostile markup;
 * links can be `javascript:` or carry credentials. plainText() makes bounded plain text in one
 * left-to-right pass (no regular expression runs over the input, so no backtracking blow-up),
 * safeUrl() keeps only links that are safe to put in an href, and normalizeUrl() gives the key
 * under which the same page found by two providers collapses into one result.
 *
 * plainText's result is text, not HTML: `&lt;b&gt;` becomes "<b>", so whoever renders it as
 * HTML must still escape it (GraphQL clients receive it as a string).
 */
import { DecodingMode, HtmlEntityDecoder } from "entities/decode";

/** Elements whose content is never text a reader should see. */
const DROPPED_CONTENT = new Set(["script", "style", "noscript", "template", "iframe", "object", "svg", "head", "title"]);
/** Elements that end a line or a block: they become a line break so words do not run together. */
const LINE_BREAKING = new Set([
  "br", "p", "div", "li", "ul", "ol", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "hr",
  "section", "article", "header", "footer", "dd", "dt", "dl",
]);
/** Elements between which a space belongs (cells, labels). */
const SPACING = new Set(["td", "th", "option", "label", "figcaption"]);

/**
 * The longest character reference we try to read after "&": HTML's longest named one,
 * "&CounterClockwiseContourIntegral;", is 33 characters; numeric ones with a few leading zeros fit.
 */
const MAX_ENTITY_LENGTH = 40;
const REPLACEMENT = "\ufffd";

/**
 * `value` as plain text of at most `maxChars` UTF-16 code units, never splitting a surrogate
 * pair: tags and comments removed (with the content of script, style and the like), common
 * character references decoded, NUL and unpaired surrogates replaced by U+FFFD, other control and bidi
 * override characters dropped, whitespace collapsed (a run with one line break becomes "\n",
 * with more "\n\n", otherwise one space) and trimmed. "" for anything that is not a string.
 */
export function plainText(value: unknown, maxChars: number): string {
  if (typeof value !== "string") return "";
  if (!Number.isInteger(maxChars) || maxChars < 0) throw new RangeError(`plainText needs a maxChars that is an integer >= 0, got ${String(maxChars)}`);
  const text = new TextBuilder(maxChars);
  const length = value.length;
  // Where the next ">" is, or -1 for none after `nextGtFrom`: remembered, so a run of "<" never rescans.
  let nextGt = -2;
  let nextGtFrom = 0;
  const gtAt = (from: number): number => {
    if (nextGt === -1 && from >= nextGtFrom) return -1;
    if (nextGt < from) {
      nextGt = value.indexOf(">", from);
      nextGtFrom = from;
    }
    return nextGt;
  };
  // After one tag ran to the end inside an unclosed quote, quotes are ignored for the rest:
  // otherwise each later tag could scan to the end again (quadratic on hostile input).
  let quotesHonoured = true;

  let i = 0;
  while (i < length && !text.full) {
    const char = value.charCodeAt(i);
    if (char === 0x3c /* < */) {
      if (value.startsWith("<!--", i)) {
        const end = value.indexOf("-->", i + 4);
        if (end === -1) break; // an unclosed comment hides the rest, as in a browser
        i = end + 3;
        continue;
      }
      const next = value.charCodeAt(i + 1);
      const startsTag = isAsciiLetter(next) || ((next === 0x2f /* / */ || next === 0x21 /* ! */ || next === 0x3f /* ? */) && i + 2 < length);
      if (startsTag) {
        let end = -1;
        if (quotesHonoured) {
          end = endOfTag(value, i + 1);
          if (end === -1) quotesHonoured = false;
        }
        if (end === -1) end = gtAt(i + 1);
        if (end !== -1) {
          const closing = next === 0x2f;
          const name = tagName(value, closing ? i + 2 : i + 1, end);
          i = end + 1;
          if (LINE_BREAKING.has(name)) text.whitespace(name === "p" ? 2 : 1);
          else if (SPACING.has(name)) text.whitespace(0);
          if (!closing && DROPPED_CONTENT.has(name) && value.charCodeAt(end - 1) !== 0x2f /* self-closing */) {
            const close = indexOfClosingTag(value, name, i);
            if (close === -1) break; // an unclosed <script> hides the rest
            i = close;
          }
          continue;
        }
        // No ">" anywhere after: a literal "<", as in "a<b".
      }
      text.char("<");
      i += 1;
      continue;
    }
    if (char === 0x26 /* & */) {
      const decoded = decodeEntity(value, i);
      if (decoded) {
        text.decoded(decoded.text);
        i = decoded.end;
        continue;
      }
      text.char("&");
      i += 1;
      continue;
    }
    if (char >= 0xd800 && char <= 0xdbff) {
      const low = value.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        text.char(value.slice(i, i + 2));
        i += 2;
        continue;
      }
      text.char(REPLACEMENT);
      i += 1;
      continue;
    }
    text.codeUnit(char, value[i]!);
    i += 1;
  }
  return text.result();
}

/** Longest URL we keep: what browsers, sitemaps and search engines commonly accept. */
export const MAX_URL_LENGTH = 2_048;

/**
 * `value` when it is an absolute http(s) URL with a host and no credentials, at most
 * MAX_URL_LENGTH long, in the WHATWG serialization (so what is kept is what a browser would
 * follow); null otherwise (javascript:, data:, relative, malformed, user:pass@).
 */
export function safeUrl(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const text = value.trim();
  if (text.length === 0 || text.length > MAX_URL_LENGTH) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  if (!url.hostname || url.username !== "" || url.password !== "") return null;
  return url.href.length > MAX_URL_LENGTH ? null : url.href;
}

/** Query parameters that only say where a click came from; two links differing in them are the same page. */
const TRACKING_PARAMETERS = new Set(["gclid", "fbclid", "msclkid", "mc_cid", "mc_eid", "ref", "ref_src", "igshid", "_ga", "yclid"]);

function isTrackingParameter(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith("utm_") || TRACKING_PARAMETERS.has(lower);
}

/**
 * The key under which duplicate results collapse: scheme folded (http and https give the same
 * key), host lower-cased without a leading `www.` or a trailing dot, default ports, fragment,
 * trailing slash (except the root's) and tracking parameters dropped, the other query
 * parameters sorted. A key, not a link to follow: keep the URL itself for that. A value that is
 * not an http(s) URL is its own key (trimmed).
 */
export function normalizeUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return url.trim();
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return url.trim();
  let host = parsed.hostname.toLowerCase();
  if (host.endsWith(".")) host = host.slice(0, -1);
  if (host.startsWith("www.")) host = host.slice(4);
  // The WHATWG parser already drops a scheme's own default port; with the scheme folded, both are defaults.
  const port = parsed.port === "" || parsed.port === "80" || parsed.port === "443" ? "" : `:${parsed.port}`;
  let path = parsed.pathname;
  let end = path.length;
  while (end > 1 && path.charCodeAt(end - 1) === 0x2f) end -= 1;
  path = end === path.length ? path : path.slice(0, end);
  if (path === "") path = "/";
  const query = new URLSearchParams();
  const kept = [...parsed.searchParams].filter(([name]) => !isTrackingParameter(name));
  kept.sort(([a, aValue], [b, bValue]) => (a < b ? -1 : a > b ? 1 : aValue < bValue ? -1 : aValue > bValue ? 1 : 0));
  for (const [name, value] of kept) query.append(name, value);
  const search = query.toString();
  return `https://${host}${port}${path}${search ? `?${search}` : ""}`;
}

// Private: builds the result, collapsing whitespace as it goes and stopping at maxChars.
class TextBuilder {
  private out = "";
  /** Pending whitespace before the next visible character: -1 none, 0 a space, 1 or 2 line breaks. */
  private pending = -1;
  full = false;

  constructor(private readonly maxChars: number) {
    if (maxChars === 0) this.full = true;
  }

  /** Whitespace of strength `breaks` (0 a space, 1 a line break, 2 a paragraph break). */
  whitespace(breaks: number): void {
    if (breaks > this.pending) this.pending = breaks;
  }

  /** A code unit of the input, outside tags. */
  codeUnit(code: number, char: string): void {
    if (code === 0x0a || code === 0x0d || code === 0x2028 || code === 0x2029) {
      // "\r\n" counts once: a line break after a line break of the same run adds one only past "\r".
      if (code === 0x0a && this.lastWasCarriageReturn) {
        this.lastWasCarriageReturn = false;
        return;
      }
      this.lastWasCarriageReturn = code === 0x0d;
      this.whitespace(Math.min(2, this.breaksInRun + 1));
      this.breaksInRun += 1;
      return;
    }
    this.lastWasCarriageReturn = false;
    if (code === 0x20 || code === 0x09 || code === 0x0c || code === 0x0b || isUnicodeSpace(code)) {
      this.whitespace(0);
      return;
    }
    if (code === 0) return this.char(REPLACEMENT);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || isInvisibleHazard(code)) return;
    if (code >= 0xdc00 && code <= 0xdfff) return this.char(REPLACEMENT); // a low surrogate with no high one before it
    this.char(char);
  }

  /** What an entity decoded to: filtered like input, but never markup again. */
  decoded(text: string): void {
    for (let i = 0; i < text.length; i += 1) {
      const code = text.charCodeAt(i);
      if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
        this.char(text.slice(i, i + 2));
        i += 1;
      } else this.codeUnit(code, text[i]!);
    }
  }

  /** A visible character (one code point). */
  char(char: string): void {
    if (this.full) return;
    let prefix = "";
    if (this.pending >= 0 && this.out.length > 0) prefix = this.pending === 0 ? " " : this.pending === 1 ? "\n" : "\n\n";
    if (this.out.length + prefix.length + char.length > this.maxChars) {
      this.full = true;
      return;
    }
    this.out += prefix + char;
    this.pending = -1;
    this.breaksInRun = 0;
    this.lastWasCarriageReturn = false;
  }

  result(): string {
    return this.out;
  }

  private breaksInRun = 0;
  private lastWasCarriageReturn = false;
}

function isAsciiLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

function isUnicodeSpace(code: number): boolean {
  return code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x202f || code === 0x205f || code === 0x3000;
}

/** Characters that change how the text around them displays (Trojan-Source style bidi overrides) or hide in it (BOM). */
function isInvisibleHazard(code: number): boolean {
  return (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069) || code === 0xfeff;
}

// Private: index of the ">" closing the tag whose name starts at `from`, skipping quoted
// attribute values ("<a title='1 > 0'>"); -1 when the input ends first.
function endOfTag(value: string, from: number): number {
  let quote = 0;
  for (let i = from; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (quote !== 0) {
      if (code === quote) quote = 0;
    } else if (code === 0x22 || code === 0x27) {
      // Only a quote that opens an attribute value (after "=") starts a quoted run.
      if (value.charCodeAt(i - 1) === 0x3d /* = */) quote = code;
    } else if (code === 0x3e) return i;
  }
  return -1;
}

// Private: the lower-cased tag name at `from` (letters, digits, "-"), "" for <!…> and <?…>.
function tagName(value: string, from: number, end: number): string {
  let i = from;
  while (i < end) {
    const code = value.charCodeAt(i);
    if (!(isAsciiLetter(code) || (code >= 0x30 && code <= 0x39) || code === 0x2d)) break;
    i += 1;
  }
  return value.slice(from, i).toLowerCase();
}

// Private: where the "</name" closing a dropped element starts' tag ends (just past its ">"),
// or -1. Compared case-insensitively by hand: lower-casing the input could change its length.
function indexOfClosingTag(value: string, name: string, from: number): number {
  let at = value.indexOf("</", from);
  while (at !== -1) {
    let matches = true;
    for (let k = 0; k < name.length; k += 1) {
      if ((value.charCodeAt(at + 2 + k) | 0x20) !== name.charCodeAt(k)) {
        matches = false;
        break;
      }
    }
    const after = value.charCodeAt(at + 2 + name.length);
    if (matches && !isAsciiLetter(after)) {
      const end = value.indexOf(">", at + 2 + name.length);
      return end === -1 ? value.length : end + 1;
    }
    at = value.indexOf("</", at + 2);
  }
  return -1;
}

// Private: the character reference at `at` ("&amp;", "&eacute;", "&#39;", "&#x27;"), decoded by
// the `entities` package with HTML's whole named-reference table and the spec's numeric rules
// (NUL, surrogates and out-of-range code points become U+FFFD), or null when there is none (then
// "&" stays literal). Strict: a reference must end in ";", so "AT&T" and "a=1&copy=2" stay as
// written. The decoder sees at most MAX_ENTITY_LENGTH characters: "&&&&…" or "&#0000…" over
// megabytes costs a bounded look per "&", never a rescan to the end.
let decodedReference = "";
const referenceDecoder = new HtmlEntityDecoder((codePoint) => {
  // Named references arrive one UTF-16 unit per call (surrogate halves too), numeric ones whole.
  decodedReference += String.fromCodePoint(codePoint);
});

function decodeEntity(value: string, at: number): { text: string; end: number } | null {
  decodedReference = "";
  referenceDecoder.startEntity(DecodingMode.Strict);
  let consumed = referenceDecoder.write(value.slice(at, at + MAX_ENTITY_LENGTH), 1);
  if (consumed < 0) consumed = referenceDecoder.end();
  if (consumed <= 0 || decodedReference === "") return null;
  return { text: decodedReference, end: at + consumed };
}
