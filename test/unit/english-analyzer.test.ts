/**
 * The JavaScript reading of PostgreSQL's `english` configuration (english-analyzer.ts): how runs
 * become lexemes, which runs it leaves to the database's longer tokens, and when its answer is
 * refused for the database's. test/integration/highlights-analyzer.test.ts holds it to PostgreSQL.
 */
import { describe, expect, it } from "@jest/globals";
import { checkedMatchingTokens, matchingRuns, MAX_COUNTED_POSITIONS, queryLexemes, runLexeme } from "../../lib/retrieval/english-analyzer.js";

const counts = (entries: Record<string, number>) => new Map(Object.entries(entries));

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
    const found = matchingRuns("Deadlocked twice; deadlock-free retries, then deadlocks.", query.lexemes, query.initials);
    expect([...found.tokens].sort()).toEqual(["Deadlocked", "deadlock", "deadlocks", "retries"]);
    expect(Object.fromEntries(found.counts)).toEqual({ deadlock: 3, retri: 1 });
  });

  it("leaves runs inside paths, addresses, hosts, decimals and signed numbers to the database", () => {
    const query = queryLexemes(["ops", "op", "exampl", "ml", "5", "10", "log"]);
    const found = matchingRuns("mail ops@example.com, 5 ng/ml, 10.5 mg, IL-10 and /var/log", query.lexemes, query.initials);
    // Only "5" stands alone.
    expect([...found.tokens]).toEqual(["5"]);
    // A slash between a word of other letters and an ASCII one is no path to the parser ("Wnt/β-catenin").
    expect([...matchingRuns("Wnt/β-catenin", new Set(["wnt"]), new Set(["w"])).tokens]).toEqual(["Wnt"]);
  });
});

describe("checkedMatchingTokens", () => {
  const query = queryLexemes(["deadlock", "deadlock-fre", "ops@example.com"]);

  it("answers when its counts are the database's (compound lexemes are marked by their parts)", () => {
    expect(checkedMatchingTokens("a deadlock-free deadlock", query, counts({ deadlock: 2, "deadlock-fre": 1 }))?.sort()).toEqual(["deadlock"]);
  });

  it("refuses when a count differs, or when the database found a query term that is no run", () => {
    expect(checkedMatchingTokens("a deadlock", query, counts({ deadlock: 2 }))).toBeNull();
    expect(checkedMatchingTokens("a deadlock", query, counts({}))).toBeNull();
    expect(checkedMatchingTokens("ops@example.com deadlock", query, counts({ deadlock: 1, "ops@example.com": 1 }))).toBeNull();
  });

  it("reads the database's count of 255 positions as at least that many", () => {
    const text = "deadlock ".repeat(300);
    expect(checkedMatchingTokens(text, query, counts({ deadlock: MAX_COUNTED_POSITIONS }))).toEqual(["deadlock"]);
  });
});
