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

const RUN = /[\p{L}\p{N}]+/gu;
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

/** The passage's runs that give one of `lexemes`, as written, and how often each lexeme was given. */
export function matchingRuns(text: string, lexemes: ReadonlySet<string>, initials: ReadonlySet<string>): { tokens: Set<string>; counts: Map<string, number> } {
  const tokens = new Set<string>();
  const counts = new Map<string, number>();
  for (const match of text.matchAll(RUN)) {
    const run = match[0];
    // Stemming keeps a word's first letter (lowercased): most runs are dropped before stemming.
    if (!initials.has(run.charAt(0).toLowerCase())) continue;
    if (partOfLongerToken(text, match.index, match.index + run.length)) continue;
    const lexeme = runLexeme(run);
    if (lexeme === null || !lexemes.has(lexeme)) continue;
    tokens.add(run);
    counts.set(lexeme, (counts.get(lexeme) ?? 0) + 1);
  }
  return { tokens, counts };
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

/** The query's lexemes, ready for matchingRuns. */
export interface QueryLexemes {
  lexemes: ReadonlySet<string>;
  initials: ReadonlySet<string>;
}

export function queryLexemes(lexemes: readonly string[]): QueryLexemes {
  return { lexemes: new Set(lexemes), initials: new Set(lexemes.map((lexeme) => lexeme.charAt(0))) };
}

/**
 * The passage's words that stem to a query lexeme, when the JavaScript reading agrees with
 * PostgreSQL's counts of the query's lexemes in the same text (`databaseCounts`: lexeme →
 * number of positions in its tsvector, lexemes it lacks absent); null when it does not, and
 * only the database can say.
 */
export function checkedMatchingTokens(text: string, query: QueryLexemes, databaseCounts: ReadonlyMap<string, number>): string[] | null {
  const { tokens, counts } = matchingRuns(text, query.lexemes, query.initials);
  for (const lexeme of query.lexemes) {
    const expected = databaseCounts.get(lexeme) ?? 0;
    if (RUN_LEXEME.test(lexeme)) {
      const found = counts.get(lexeme) ?? 0;
      if (found !== expected && !(expected === MAX_COUNTED_POSITIONS && found > expected)) return null;
    } else if (expected > 0 && !COMPOUND_LEXEME.test(lexeme)) {
      // A host, address, path or number PostgreSQL found here: its token is not a run.
      return null;
    }
  }
  return [...tokens];
}
