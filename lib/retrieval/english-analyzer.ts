/**
 * PostgreSQL's `english` text search configuration, as far as highlights need it, in JavaScript:
 * which words of a passage to_tsvector('english', …) would turn into one of a query's lexemes.
 *
 * Why it exists: asking PostgreSQL to parse the passages a page returns (ts_parse + ts_lexize)
 * cost about 0.1 ms per passage and was most of what highlights added to a page (issue 20). Here
 * the database still analyzes the query (to_tsvector, so the lexemes are PostgreSQL's own) and
 * still says how often each lexeme occurs in each passage (the vector kept at write time), and
 * JavaScript only finds those words: runs of letters and digits, lowercased, English stop words
 * dropped, pure letter runs stemmed with Snowball's English stemmer (Porter2; `porter2` agrees
 * with PostgreSQL's english_stem on every one of SciFact's 29,442 distinct words), runs with
 * digits kept as they are (the `simple` dictionary of numbers and number-words).
 *
 * Why a passage's answer is checked before it is used: PostgreSQL's parser knows more than
 * runs of letters (hosts, e-mail addresses, paths, versions, signed and decimal numbers, tags),
 * and there a run's reading differs ("ops@example.com" is one token to PostgreSQL, three runs
 * here). So the JavaScript reading is used only when it counts every query lexeme exactly as
 * often as PostgreSQL's vector of the same text does; otherwise the caller asks the database
 * for that passage's words (highlightStatementSql), and PostgreSQL's answer wins.
 * test/integration/highlights-analyzer.test.ts measures the agreement on SciFact and holds the
 * result, checked or fallen back, to PostgreSQL's.
 */
import { stem } from "porter2";

/**
 * PostgreSQL's english.stop (share/tsearch_data/english.stop, the list the english_stem
 * dictionary drops before stemming); the analyzer test compares it with the database's.
 */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  ("i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself " +
    "they them their theirs themselves what which who whom this that these those am is are was were be been being have has had " +
    "having do does did doing a an the and but if or because as until while of at by for with about against between into through " +
    "during before after above below to from up down in out on off over under again further then once here there when where why " +
    "how all any both each few more most other some such no nor not only own same so than too very s t can will just don should now").split(" "),
);

/** PostgreSQL's tsvector keeps at most this many positions of one lexeme: a count there means "at least". */
export const MAX_COUNTED_POSITIONS = 255;

const DIGIT = /\p{N}/u;
/** A lexeme made only of what one run holds: the only kind the runs here can produce. */
const RUN_LEXEME = /^[\p{L}\p{N}]+$/u;
/**
 * A hyphenated compound's lexeme ("deadlock-fre", "covid-19"): PostgreSQL indexes the compound
 * and each part, and highlights mark the parts, so the compound's own count says nothing here.
 */
const COMPOUND_LEXEME = /^[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)+$/u;

/** The lexeme to_tsvector('english', …) gives one run of letters and digits, or null for a stop word. */
export function runLexeme(run: string): string | null {
  const lower = run.toLowerCase();
  if (DIGIT.test(lower)) return lower;
  if (ENGLISH_STOP_WORDS.has(lower)) return null;
  return stem(lower);
}

/** A match: the run as written and where it is (UTF-16 code units). */
export interface MatchedRun {
  token: string;
  start: number;
  end: number;
}

/** Runs located per passage at most (the window cut later needs only those near each other). */
const MAX_RUNS_LOCATED = 200;
const COMBINING_MARK = /\p{M}/u;

/**
 * The passage's runs that give one of the query's lexemes, in order, and how often each lexeme
 * was given. A run touching a combining mark is counted but not located (its letters are not the
 * whole written word: "cafe" in "cafe\u0301"), as locateTokens would not locate it either.
 */
export function matchingRuns(text: string, query: QueryLexemes): { runs: MatchedRun[]; counts: Map<string, number> } {
  const runs: MatchedRun[] = [];
  const counts = new Map<string, number>();
  const length = text.length;
  const asciiInitials = query.asciiInitials;
  const asciiPairs = query.asciiPairs;
  let at = 0;
  while (at < length) {
    // Scanned by char code, ASCII inline: a Unicode-property regular expression over every
    // passage (matching every run, or only those starting like a query lexeme) cost more than
    // the rest of a page's highlights in the search-features profile, and a call per character
    // was still most of what this function cost there.
    const first = text.charCodeAt(at);
    const width = first < 0x80 ? ASCII_RUN[first]! : runCharacterWidth(text, at);
    if (width === 0) {
      at++;
      continue;
    }
    const start = at;
    at += width;
    while (at < length) {
      const code = text.charCodeAt(at);
      if (code < 0x80) {
        if (ASCII_RUN[code] === 0) break;
        at++;
      } else {
        const width = runCharacterWidth(text, at);
        if (width === 0) break;
        at += width;
      }
    }
    const end = at;
    // Stemming keeps a word's first letter (lowercased): most runs are dropped before stemming.
    if (first < 0x80 ? asciiInitials[first] === 0 : !query.initials.has(String.fromCodePoint(text.codePointAt(start)!).toLowerCase())) continue;
    // And, but for a stem of one letter and three exceptional words, its first two (asciiPairs):
    // most of the runs left are dropped here without being cut out of the text and looked up.
    if (first < 0x80 && end - start >= 2) {
      const second = text.charCodeAt(start + 1);
      if (second < 0x80 && asciiPairs[(first << 7) | second] === 0) continue;
    }
    if (partOfLongerToken(text, start, end)) continue;
    const token = text.slice(start, end);
    let lexeme = query.seen.get(token);
    if (lexeme === undefined) {
      lexeme = runLexeme(token);
      query.seen.set(token, lexeme);
    }
    if (lexeme === null || !query.lexemes.has(lexeme)) continue;
    counts.set(lexeme, (counts.get(lexeme) ?? 0) + 1);
    if (runs.length < MAX_RUNS_LOCATED && !touchesCombiningMark(text, start, end)) runs.push({ token, start, end });
  }
  return { runs, counts };
}

/** ASCII letters and digits. */
const ASCII_RUN = new Uint8Array(128).map((_, code) => ((code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39) ? 1 : 0));

/** Code units of the run character at `at` (2 for an astral letter), or 0 when none is there. */
function runCharacterWidth(text: string, at: number): number {
  if (at >= text.length) return 0;
  const code = text.charCodeAt(at);
  if (code < 0x80) return ASCII_RUN[code]!;
  const point = text.codePointAt(at)!;
  return WORD.test(String.fromCodePoint(point)) ? (point > 0xffff ? 2 : 1) : 0;
}

function touchesCombiningMark(text: string, start: number, end: number): boolean {
  return (end < text.length && text.charCodeAt(end) >= 0x300 && COMBINING_MARK.test(String.fromCodePoint(text.codePointAt(end)!))) || (start > 0 && text.charCodeAt(start - 1) >= 0x300 && COMBINING_MARK.test(text.charAt(start - 1)));
}

const WORD = /[\p{L}\p{N}]/u;
const isWordAt = (text: string, at: number) => at >= 0 && at < text.length && WORD.test(text.charAt(at));
const isAsciiWordAt = (text: string, at: number) => at >= 0 && at < text.length && /[A-Za-z0-9]/.test(text.charAt(at));

/**
 * Whether PostgreSQL's parser reads the run at [start, end) as part of a longer token that is
 * no word (a path or URL: "ng/ml"; an e-mail address; a host, version or decimal: "example.com",
 * "10.5"; a signed number: "-5", also in "IL-10"): such runs are not counted, as to_tsvector does not count them.
 * A guess on the safe side: where it is wrong, the counts disagree and the database decides.
 */
function partOfLongerToken(text: string, start: number, end: number): boolean {
  const before = text.charAt(start - 1);
  const after = text.charAt(end);
  if (before === "@" || after === "@") return true;
  // Paths are ASCII to the parser: "ng/ml" is one token, "Wnt/β-catenin" three.
  if ((before === "/" && isAsciiWordAt(text, start - 2)) || (after === "/" && isAsciiWordAt(text, end + 1))) return true;
  if (before === "." && isWordAt(text, start - 2)) return true;
  if (after === "." && isWordAt(text, end + 1)) return true;
  // A hyphen before digits signs them: "IL-10" is the word "il" and the integer "-10".
  if (before === "-" && /^\p{N}/u.test(text.charAt(start))) return true;
  return false;
}

/** The query's lexemes, ready for matchingRuns: one per page, since it also remembers each run's lexeme. */
export interface QueryLexemes {
  lexemes: ReadonlySet<string>;
  initials: ReadonlySet<string>;
  /** By char code: 1 where a run starting with that ASCII letter or digit can give a query lexeme (`initials`, either case). */
  asciiInitials: Uint8Array;
  /** By the first two char codes of a run (first << 7 | second, both ASCII, either case): 1 where the run can give a query lexeme (queryPairs). */
  asciiPairs: Uint8Array;
  /** Runs already analyzed for this page, as written: the same words recur across its passages. */
  seen: Map<string, string | null>;
  /** The lexemes a run can give, whose counts are compared. */
  runLexemes: readonly string[];
  /** The lexemes only a longer token gives (compounds left out: their parts are compared). */
  tokenLexemes: readonly string[];
}

export function queryLexemes(lexemes: readonly string[]): QueryLexemes {
  const initials = new Set(lexemes.filter((lexeme) => lexeme.length > 0).map((lexeme) => String.fromCodePoint(lexeme.codePointAt(0)!)));
  return {
    lexemes: new Set(lexemes),
    initials,
    asciiInitials: new Uint8Array(128).map((_, code) => (initials.has(String.fromCharCode(code >= 0x41 && code <= 0x5a ? code + 0x20 : code)) ? 1 : 0)),
    asciiPairs: queryPairs(lexemes),
    seen: new Map(),
    runLexemes: lexemes.filter((lexeme) => RUN_LEXEME.test(lexeme)),
    tokenLexemes: lexemes.filter((lexeme) => !RUN_LEXEME.test(lexeme) && !COMPOUND_LEXEME.test(lexeme)),
  };
}

/**
 * Porter2's three exceptional words whose stem changes their second letter ("dying" gives "die");
 * every other word of two or more letters gives a stem that starts with its own first two
 * letters, or a stem of one letter ("oed" gives "o"). Checked for every word of up to five
 * letters, every two to four letters before an English suffix (ing, ingly, ed, edly, ies, s, y,
 * …) and every word of SciFact: these three were the only others.
 */
const SECOND_LETTER_CHANGED: ReadonlyMap<string, string> = new Map([["die", "dy"], ["lie", "ly"], ["tie", "ty"]]);

/**
 * The first two characters (ASCII, both cases) a run must start with to give one of these
 * lexemes: a lexeme's own first two, with the exceptions above; a lexeme of one character
 * admits every run with that initial. Runs of letters and digits lowercased and left unstemmed
 * keep their first two characters anyway.
 */
function queryPairs(lexemes: readonly string[]): Uint8Array {
  const pairs = new Uint8Array(128 * 128);
  const cases = (code: number) => (code >= 0x61 && code <= 0x7a ? [code, code - 0x20] : [code]);
  const admit = (first: number, second: number) => {
    for (const a of cases(first)) for (const b of cases(second)) pairs[(a << 7) | b] = 1;
  };
  for (const lexeme of lexemes) {
    const first = lexeme.charCodeAt(0);
    if (!(first < 0x80)) continue;
    if (lexeme.length === 1) {
      for (let second = 0; second < 0x80; second++) admit(first, second);
      continue;
    }
    const second = lexeme.charCodeAt(1);
    if (second < 0x80) admit(first, second);
    const exceptional = SECOND_LETTER_CHANGED.get(lexeme);
    if (exceptional) admit(exceptional.charCodeAt(0), exceptional.charCodeAt(1));
  }
  return pairs;
}

/**
 * The passage's words that stem to a query lexeme, located, when the JavaScript reading agrees
 * with PostgreSQL's counts of the query's lexemes in the same text (`databaseCounts`: lexeme →
 * number of positions in its tsvector, lexemes it lacks absent); null when it does not, and
 * only the database can say.
 */
export function checkedMatchingRuns(text: string, query: QueryLexemes, databaseCounts: ReadonlyMap<string, number>): MatchedRun[] | null {
  const { runs, counts } = matchingRuns(text, query);
  for (const lexeme of query.runLexemes) {
    const expected = databaseCounts.get(lexeme) ?? 0;
    const found = counts.get(lexeme) ?? 0;
    if (found !== expected && !(expected === MAX_COUNTED_POSITIONS && found > expected)) return null;
  }
  // A host, address, path or number PostgreSQL found here: its token is not a run.
  for (const lexeme of query.tokenLexemes) if ((databaseCounts.get(lexeme) ?? 0) > 0) return null;
  return runs;
}
