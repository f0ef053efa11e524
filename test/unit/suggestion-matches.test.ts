/**
 * `SearchSuggestion.matches` (subgraphs/search/suggestions.ts): where a suggestion's text matched
 * the prefix, found by the rule the statement matched it by (search_suggestion_key: lower case,
 * whitespace runs as one space, trimmed, 200 characters) and placed in the text in UTF-16 units.
 * Through the gateway, with PostgreSQL's own matching: test/e2e/search-suggestions.test.ts.
 */
import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { suggestionMatches } from "../../subgraphs/search/suggestions.js";

const sliced = (text: string, prefix: string) => suggestionMatches(text, prefix).map(({ start, end }) => text.slice(start, end));

describe("suggestionMatches", () => {
  it("places the prefix at the start, or at the first later word that starts with it", () => {
    expect(sliced("Deadlock in billing", "dead")).toEqual(["Dead"]);
    expect(sliced("Debugging a deadlock, deadline", "dead")).toEqual(["dead"]);
    // Inside a word is not a match (the statement does not match it either).
    expect(sliced("undead workers", "dead")).toEqual([]);
    expect(sliced("Deadlock", "lock")).toEqual([]);
  });

  it("counts in UTF-16 units and covers whitespace runs and leading blanks of the text", () => {
    expect(sliced("🔥  Hot   path fix", "🔥 hot p")).toEqual(["🔥  Hot   p"]);
    expect(sliced("\t  leading blanks", "lead")).toEqual(["lead"]);
    const text = "Notes 📎 on the 🧵 THREAD pool";
    const [range] = suggestionMatches(text, "thr");
    expect(range).toEqual({ start: text.indexOf("THR"), end: text.indexOf("THR") + 3 });
  });

  it("marks nothing it cannot place: past the 200 characters a key keeps, or a letter lower-cased to two units by JavaScript", () => {
    expect(sliced(`${"a ".repeat(150)}needle`, "needle")).toEqual([]);
    expect(sliced(`${"a ".repeat(90)}needle`, "needle")).toEqual(["needle"]);
    // "İ" lower-cases to "i̇" in JavaScript: the prefix typed as "İs" is matched whole.
    expect(sliced("İstanbul office", "İs")).toEqual(["İs"]);
    // However long the blanks before it (the walk is bounded): nothing, never a wrong range.
    expect(sliced(`${" ".repeat(100_000)}needle`, "needle")).toEqual([]);
    expect(sliced("", "x")).toEqual([]);
    expect(sliced("anything", "   ")).toEqual([]);
  });

  it("always gives a range of the text whose lower-cased, collapsed form is the prefix's (property)", () => {
    const word = fc.string({ unit: fc.constantFrom("a", "B", "é", "🔥", "-", "_"), minLength: 1, maxLength: 6 });
    const blank = fc.constantFrom(" ", "  ", "\t", " \n ");
    fc.assert(
      fc.property(fc.array(fc.tuple(word, blank), { minLength: 1, maxLength: 8 }), fc.nat(7), fc.nat(5), (parts, from, cut) => {
        const text = parts.map(([w, b]) => w + b).join("");
        // Some words of the text from a word's start, cut short by whole characters (what a box holds).
        const characters = [...parts.map(([w]) => w).slice(Math.min(from, parts.length - 1)).join(" ")];
        const prefix = characters.slice(0, Math.max(1, characters.length - cut)).join("");
        const collapse = (value: string) => value.toLowerCase().replace(/\s+/g, " ").trim();
        const matches = suggestionMatches(text, prefix);
        // The prefix starts at a word of the text, so there is always a place; the first is given.
        expect(matches).toHaveLength(1);
        const [{ start, end }] = matches as [{ start: number; end: number }];
        expect(collapse(text.slice(start, end))).toBe(collapse(prefix));
        expect(start === 0 || /\s/.test(text[start - 1]!)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
