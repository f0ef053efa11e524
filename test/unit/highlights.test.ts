/**
 * The JavaScript half of highlights (lib/retrieval/highlights.ts): finding the tokens PostgreSQL
 * matched in a passage and cutting the passage to a window, in UTF-16 code units whatever the
 * text holds. The SQL half runs against a real database in test/e2e/search-highlights.test.ts.
 */
import { describe, expect, it } from "@jest/globals";
import { cutWindow, highlightsByHit, locateTokens, MAX_HIGHLIGHT_LENGTH, vectorPositionCounts, type MatchRange } from "../../lib/retrieval/highlights.js";

const slices = (text: string, ranges: readonly MatchRange[]) => ranges.map((range) => text.slice(range.start, range.end));

describe("locateTokens", () => {
  it("finds every occurrence of each token as a word of its own, in order", () => {
    const text = "Deadlocked again: a deadlock, then deadlocks. Not undeadlock or deadlockers.";
    expect(slices(text, locateTokens(text, ["Deadlocked", "deadlock", "deadlocks"]))).toEqual(["Deadlocked", "deadlock", "deadlocks"]);
  });

  it("gives UTF-16 offsets around emoji, surrogate pairs, combining marks and control characters", () => {
    const text = "👩‍💻\u0007deadlock 𝔘 café\u0301 deadlocked\t🔒<b>deadlocks</b> e\u0301deadlock";
    const ranges = locateTokens(text, ["deadlock", "deadlocked", "deadlocks"]);
    expect(slices(text, ranges)).toEqual(["deadlock", "deadlocked", "deadlocks"]);
    // Each range starts where JavaScript's own search finds the word.
    expect(ranges[0]!.start).toBe(text.indexOf("deadlock"));
    expect(ranges[2]!.start).toBe(text.indexOf("deadlocks"));
    // A combining mark before a word makes it part of the word before: "é" + "deadlock" is one word.
    expect(ranges).toHaveLength(3);
  });

  it("treats regular-expression characters in tokens as text", () => {
    const text = "costs $5 (a+b) or c.d";
    expect(slices(text, locateTokens(text, ["(a+b)", "c.d", "$5"]))).toEqual(["$5", "(a+b)", "c.d"]);
    expect(locateTokens("cxd", ["c.d"])).toEqual([]);
  });

  it("returns nothing without tokens", () => {
    expect(locateTokens("deadlock", [])).toEqual([]);
  });
});

describe("cutWindow", () => {
  it("keeps a short passage whole", () => {
    expect(cutWindow("a deadlock", [{ start: 2, end: 10 }])).toEqual({ text: "a deadlock", ranges: [{ start: 2, end: 10 }], truncatedBefore: false, truncatedAfter: false });
  });

  it("cuts a long passage to a window around its densest matches, ranges relative to the window", () => {
    const filler = "lorem ipsum dolor sit amet ".repeat(40);
    const text = `${filler}first deadlock here, another deadlock there. ${filler}`;
    const ranges = locateTokens(text, ["deadlock"]);
    const cut = cutWindow(text, ranges);
    expect(cut.text.length).toBeLessThanOrEqual(MAX_HIGHLIGHT_LENGTH);
    expect(cut.truncatedBefore).toBe(true);
    expect(cut.truncatedAfter).toBe(true);
    expect(slices(cut.text, cut.ranges)).toEqual(["deadlock", "deadlock"]);
    // Cut at word boundaries: no half word at either end.
    const words = new Set(["lorem", "ipsum", "dolor", "sit", "amet"]);
    // And no blank left at a cut edge (a client puts "…" there).
    expect(cut.text).toBe(cut.text.trim());
    const [firstWord] = cut.text.split(" ");
    const lastWord = cut.text.split(" ").at(-1);
    expect(words.has(firstWord!)).toBe(true);
    expect(words.has(lastWord!)).toBe(true);
  });

  it("never splits a surrogate pair or leaves a combining mark without its letter", () => {
    for (let shift = 0; shift < 8; shift++) {
      const text = `${"😀".repeat(120 + shift)} deadlock ${"e\u0301".repeat(200)}`;
      const cut = cutWindow(text, locateTokens(text, ["deadlock"]));
      expect(cut.text.length).toBeLessThanOrEqual(MAX_HIGHLIGHT_LENGTH);
      expect(slices(cut.text, cut.ranges)).toEqual(["deadlock"]);
      // Well-formed UTF-16 on both ends, and no mark opening or closing on a cut base letter.
      expect(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(cut.text)).toBe(false);
      expect(/^\p{M}/u.test(cut.text)).toBe(false);
      expect(/e$/u.test(cut.text) && cut.truncatedAfter).toBe(false);
    }
  });

  it("opens a passage without matches at its start", () => {
    const text = "word ".repeat(100);
    const cut = cutWindow(text, []);
    expect(cut.truncatedBefore).toBe(false);
    expect(cut.truncatedAfter).toBe(true);
    expect(cut.ranges).toEqual([]);
  });
});

describe("highlightsByHit", () => {
  const candidate = (key: string, ord: number, text: string, tokens: string[]) => ({ key, ord, text, tokens, messageId: `m${ord}`, role: "USER" });

  it("orders a hit's passages by matches, keeps at most the limit, and drops passages without matches", () => {
    const byHit = highlightsByHit(
      [candidate("Conversation:a", 0, "hello there", []), candidate("Conversation:a", 1, "one deadlock", ["deadlock"]), candidate("Conversation:a", 2, "deadlock, deadlocked", ["deadlock", "deadlocked"]), candidate("Conversation:a", 3, "a deadlock", ["deadlock"])],
      2,
    );
    expect(byHit.get("Conversation:a")!.map((passage) => [passage.messageId, passage.text])).toEqual([["m2", "deadlock, deadlocked"], ["m1", "one deadlock"]]);
  });

  it("gives a hit nothing matched its first non-empty passage without ranges", () => {
    const byHit = highlightsByHit([candidate("WebResult:w", 1, "a title", []), candidate("WebResult:w", 0, "  ", [])], 3);
    expect(byHit.get("WebResult:w")).toEqual([{ text: "a title", ranges: [], truncatedBefore: false, truncatedAfter: false, messageId: "m1", role: "USER" }]);
  });
});

describe("vectorPositionCounts", () => {
  it("counts each lexeme's positions, weights and all, as PostgreSQL prints a vector", () => {
    expect(vectorPositionCounts("'deadlock':3A,17A,40A 'servic':5A")).toEqual(new Map([["deadlock", 3], ["servic", 1]]));
    expect(vectorPositionCounts("")).toEqual(new Map());
    // A stripped lexeme (no positions) still occurs once.
    expect(vectorPositionCounts("'a' 'b':2")).toEqual(new Map([["a", 1], ["b", 1]]));
    // Quotes and backslashes are doubled inside a lexeme; spaces and colons are its own.
    expect(vectorPositionCounts("'it''s':1,2 'a\\\\b':3 'x y:z':4")).toEqual(new Map([["it's", 2], ["a\\b", 1], ["x y:z", 1]]));
  });

  it("refuses what is not a printed vector, rather than guess", () => {
    for (const text of ["deadlock:1", "'deadlock", "'deadlock':", "'deadlock':x", "'deadlock'x", "'a\\"]) expect(() => vectorPositionCounts(text)).toThrow(/not a tsvector/);
  });
});
