/**
 * Highlights are cut from the server's UTF-16 match ranges and rendered as text: what a hostile
 * or buggy answer can put in a range never throws, never renders markup, and never loses or
 * repeats a character of the passage.
 */
import fc from "fast-check";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { MarkedWords, queryTerms } from "../src/conversations/MarkedWords";
import { highlightPieces } from "../src/highlight-pieces";
import { Highlight } from "../src/components/Highlight";

/** No lone surrogate: what String.prototype.isWellFormed checks (ES2024, beyond this project's lib). */
const wellFormed = (text: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
const joined = (pieces: { text: string }[]) => pieces.map((piece) => piece.text).join("");
const marked = (pieces: { text: string; matched: boolean }[]) => pieces.filter((piece) => piece.matched).map((piece) => piece.text);

describe("highlightPieces", () => {
  it("marks the ranges given, in UTF-16 offsets", () => {
    const pieces = highlightPieces("a deadlock in the deadlock detector", [
      { start: 2, end: 10 },
      { start: 18, end: 26 },
    ]);
    expect(pieces).toEqual([
      { text: "a ", matched: false },
      { text: "deadlock", matched: true },
      { text: " in the ", matched: false },
      { text: "deadlock", matched: true },
      { text: " detector", matched: false },
    ]);
  });

  it("counts an astral character as two units, as the server's ranges do", () => {
    // "🔥" is U+1F525: two UTF-16 units, so "hot" starts at 3 ("🔥 " is 3 units).
    const text = "🔥 hot path 𠀋 kanji";
    expect(marked(highlightPieces(text, [{ start: 3, end: 6 }, { start: 12, end: 14 }]))).toEqual(["hot", "𠀋"]);
  });

  it("widens a range that would cut an astral character in half, never rendering a lone surrogate", () => {
    const text = "ab🔥cd";
    const pieces = highlightPieces(text, [{ start: 3, end: 5 }]);
    expect(marked(pieces)).toEqual(["🔥c"]);
    for (const piece of pieces) expect(wellFormed(piece.text)).toBe(true);
    expect(marked(highlightPieces(text, [{ start: 1, end: 3 }]))).toEqual(["b🔥"]);
  });

  it("skips ranges that overlap, come out of order, are empty, reversed, outside the text or not integers", () => {
    const text = "0123456789";
    const hostile = [
      { start: 2, end: 4 },
      { start: 3, end: 6 }, // overlaps the one before
      { start: 0, end: 1 }, // out of order
      { start: 7, end: 7 }, // empty
      { start: 9, end: 8 }, // reversed
      { start: 8, end: 11 }, // past the end
      { start: -1, end: 1 },
      { start: NaN, end: 5 },
      { start: 5.5, end: 6 },
      { start: Infinity, end: Infinity },
      { start: 6, end: 8 },
    ];
    expect(highlightPieces(text, hostile)).toEqual([
      { text: "01", matched: false },
      { text: "23", matched: true },
      { text: "45", matched: false },
      { text: "67", matched: true },
      { text: "89", matched: false },
    ]);
    expect(highlightPieces(text, null)).toEqual([{ text, matched: false }]);
    expect(highlightPieces("", [{ start: 0, end: 1 }])).toEqual([]);
  });

  it("keeps every character of the text exactly once, in order, whatever the ranges (property)", () => {
    const range = fc.record({ start: fc.oneof(fc.integer({ min: -5, max: 60 }), fc.double()), end: fc.oneof(fc.integer({ min: -5, max: 60 }), fc.double()) });
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 40 }), fc.array(range, { maxLength: 12 }), (text, ranges) => {
        const pieces = highlightPieces(text, ranges);
        expect(joined(pieces)).toBe(text);
        for (const piece of pieces) {
          expect(piece.text.length).toBeGreaterThan(0);
          expect(wellFormed(piece.text)).toBe(wellFormed(text));
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("the Highlight components", () => {
  const text = 'run <script>alert("x")</script> & <b>deadlock</b>';
  const highlight = { text, matches: [{ start: 4, end: 12 }, { start: text.indexOf("deadlock"), end: text.indexOf("deadlock") + 8 }], truncatedBefore: true, truncatedAfter: false, messageId: null, role: null };

  it("render the passage as text: markup in it is escaped, only the matches are in <mark>", () => {
    const html = renderToStaticMarkup(<Highlight highlight={highlight} />);
    expect(html).toBe('…<span>run </span><mark>&lt;script&gt;</mark><span>alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;</span><mark>deadlock</mark><span>&lt;/b&gt;</span>');
    expect(html).not.toMatch(/<script|<b>/);
  });

  it("conversation and document views mark the words the keyword search matches (stemmed, whole words), as text", () => {
    const html = renderToStaticMarkup(<MarkedWords text="Deadlocks <i>and</i> a deadlock; undeadlock" terms={queryTerms("deadlock")} />);
    expect(html).toBe("<mark>Deadlocks</mark> &lt;i&gt;and&lt;/i&gt; a <mark>deadlock</mark>; undeadlock");
    // The query's own form does not matter, its stem does; a word merely starting like it is no match.
    const text = "The deadlocked transaction ran again; ranking the runs.";
    expect(renderToStaticMarkup(<MarkedWords text={text} terms={queryTerms("DEADLOCKING ran")} />)).toBe(
      "The <mark>deadlocked</mark> transaction <mark>ran</mark> again; ranking the runs.",
    );
    // Stop words are not searched, so not marked; no query, nothing marked.
    expect(queryTerms("the and of")).toBeNull();
    expect(renderToStaticMarkup(<MarkedWords text={text} terms={queryTerms(null)} />)).toBe(text);
  });

  it("never throw on ranges from a hostile answer", () => {
    const hostile = { ...highlight, matches: [{ start: -3, end: 2 }, { start: 1e9, end: 1e9 + 1 }, { start: 30, end: 2 }] };
    expect(() => renderToStaticMarkup(<Highlight highlight={hostile} />)).not.toThrow();
    expect(renderToStaticMarkup(<Highlight highlight={hostile} />)).not.toContain("<mark>");
  });
});
