/**
 * The JavaScript reading of PostgreSQL's `english` configuration (english-analyzer.ts): how runs
 * become lexemes, which runs it leaves to the database's longer tokens, and when its answer is
 * refused for the database's. test/integration/highlights-analyzer.test.ts holds it to PostgreSQL.
 */
import { describe, expect, it } from "@jest/globals";
import { stem } from "porter2";
import type { MatchedRun } from "../../lib/retrieval/english-analyzer.js";
import { checkedMatchingRuns, matchingRuns, MAX_COUNTED_POSITIONS, queryLexemes, runLexeme } from "../../lib/retrieval/english-analyzer.js";

const counts = (entries: Record<string, number>) => new Map(Object.entries(entries));
const words = (runs: readonly MatchedRun[] | null) => (runs === null ? null : [...new Set(runs.map((run) => run.token))].sort());

describe("runLexeme", () => {
  it("stems letters, drops stop words and keeps runs with digits as written, lowercased", () => {
    expect(["Deadlocked", "deadlocks", "DEADLOCKING", "running", "retries"].map(runLexeme)).toEqual(["deadlock", "deadlock", "deadlock", "run", "retri"]);
    expect(["The", "of", "and", "Because"].map(runLexeme)).toEqual([null, null, null, null]);
    expect(["42", "V2", "CD4"].map(runLexeme)).toEqual(["42", "v2", "cd4"]);
  });
});

describe("matchingRuns", () => {
  it("finds the words that give a query lexeme, as written, with how often each lexeme was given", () => {
    const query = queryLexemes(["deadlock", "retri"]);
    const text = "Deadlocked twice; deadlock-free retries, then deadlocks.";
    const found = matchingRuns(text, query);
    expect(found.runs.map((run) => text.slice(run.start, run.end))).toEqual(["Deadlocked", "deadlock", "retries", "deadlocks"]);
    expect(Object.fromEntries(found.counts)).toEqual({ deadlock: 3, retri: 1 });
  });

  it("finds words whose stem changed their second letter, or is a single letter, past the two-letter filter", () => {
    const text = "Dying, LYING and tying; oed and OED, but not dye, lye or tee.";
    const found = matchingRuns(text, queryLexemes(["die", "lie", "tie", "o"]));
    expect(found.runs.map((run) => run.token)).toEqual(["Dying", "LYING", "tying", "oed", "OED"]);
    expect(Object.fromEntries(found.counts)).toEqual({ die: 1, lie: 1, tie: 1, o: 2 });
  });

  // The filter assumes Porter2 keeps a word's first two letters but for those exceptions:
  // checked here over every word of up to four letters, so a stemmer upgrade that breaks it fails.
  it("relies on a Porter2 property that holds for every short word", () => {
    const letters = "abcdefghijklmnopqrstuvwxyz";
    const changed: string[] = [];
    const check = (word: string) => {
      const stemmed = stem(word);
      if (stemmed.length === 1 ? stemmed !== word[0] : stemmed.slice(0, 2) !== word.slice(0, 2)) changed.push(`${word}:${stemmed}`);
    };
    for (const a of letters) for (const b of letters) {
      check(a + b);
      for (const c of letters) {
        check(a + b + c);
        for (const d of letters) check(a + b + c + d);
        for (const suffix of ["ing", "ingly", "ed", "edly", "ies", "ied", "s", "y"]) check(a + b + c + suffix);
      }
      for (const suffix of ["ing", "ingly", "ed", "edly", "ies", "ied", "s", "y"]) check(a + b + suffix);
    }
    expect(changed.sort()).toEqual(["dying:die", "lying:lie", "tying:tie"]);
  });

  it("leaves runs inside paths, addresses, hosts, decimals and signed numbers to the database", () => {
    const query = queryLexemes(["ops", "op", "exampl", "ml", "5", "10", "log"]);
    const found = matchingRuns("mail ops@example.com, 5 ng/ml, 10.5 mg, IL-10 and /var/log", query);
    // Only "5" stands alone.
    expect(words(found.runs)).toEqual(["5"]);
    // A slash between a word of other letters and an ASCII one is no path to the parser ("Wnt/β-catenin").
    expect(words(matchingRuns("Wnt/β-catenin", queryLexemes(["wnt"])).runs)).toEqual(["Wnt"]);
    // Astral letters are letters; a run touching a combining mark is counted but not located.
    const astral = runLexeme("𝔘𝔫𝔦")!;
    const marked = matchingRuns("𝔘𝔫𝔦 cafe\u0301 cafe", queryLexemes([astral, "cafe"]));
    expect(Object.fromEntries(marked.counts)).toEqual({ [astral]: 1, cafe: 2 });
    expect(marked.runs).toEqual([{ token: "𝔘𝔫𝔦", start: 0, end: 6 }, { token: "cafe", start: 13, end: 17 }]);
  });
});

describe("checkedMatchingRuns", () => {
  const query = queryLexemes(["deadlock", "deadlock-fre", "ops@example.com"]);

  it("answers when its counts are the database's (compound lexemes are marked by their parts)", () => {
    expect(words(checkedMatchingRuns("a deadlock-free deadlock", query, counts({ deadlock: 2, "deadlock-fre": 1 })))).toEqual(["deadlock"]);
  });

  it("refuses when a count differs, or when the database found a query term that is no run", () => {
    expect(checkedMatchingRuns("a deadlock", query, counts({ deadlock: 2 }))).toBeNull();
    expect(checkedMatchingRuns("a deadlock", query, counts({}))).toBeNull();
    expect(checkedMatchingRuns("ops@example.com deadlock", query, counts({ deadlock: 1, "ops@example.com": 1 }))).toBeNull();
  });

  it("reads the database's count of 255 positions as at least that many", () => {
    const text = "deadlock ".repeat(300);
    expect(words(checkedMatchingRuns(text, query, counts({ deadlock: MAX_COUNTED_POSITIONS })))).toEqual(["deadlock"]);
  });
});
