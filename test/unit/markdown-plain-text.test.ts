/**
 * Markdown as plain text with a map back to its source (lib/retrieval/markdown-plain-text.ts):
 * examples of each construct, and properties over generated documents: every word of the source's
 * content maps to the same word in the plain text, and no markup (table pipes, fences, heading
 * hashes, emphasis markers, list bullets) survives. Then highlightsByHit and cutWindow on top:
 * a passage cut from Markdown is plain, cut at block edges, and its ranges mark the query's words.
 */
import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { cutWindow, highlightsByHit, locateTokens } from "../../lib/retrieval/highlights.js";
import { jsonToPlainText, looksLikeJson } from "../../lib/retrieval/json-plain-text.js";
import { markdownToPlainText } from "../../lib/retrieval/markdown-plain-text.js";
import { plainRange, plainRanges } from "../../lib/retrieval/plain-text-map.js";

const plain = (markdown: string) => markdownToPlainText(markdown).text;

describe("markdownToPlainText", () => {
  it("leaves out headings' hashes, emphasis, code fences and backticks, one block a line", () => {
    const markdown = "## Deploy **checklist** ##\n\nRun the `deadlock` check *first*, then ~~skip~~ __nothing__.\n\n```sql\nSELECT 1; -- deadlock\n```\n";
    expect(plain(markdown)).toBe("Deploy checklist\nRun the deadlock check first, then skip nothing.\nSELECT 1; -- deadlock");
  });

  it("reads a table as rows of cells without pipes or the delimiter row", () => {
    const markdown = "Latency by service:\n\n| Service | p50 | p99 |\n| --- | ---: | :---: |\n| api | 120 ms | 340 ms |\n| `worker` \\| batch | | 2 s |\n\nAfter the table.";
    expect(plain(markdown)).toBe("Latency by service:\nService · p50 · p99\napi · 120 ms · 340 ms\nworker | batch · 2 s\nAfter the table.");
  });

  it("drops list bullets, numbers, task boxes and quote markers; keeps link text and image alt text, not their destinations", () => {
    const markdown = "- [x] done with [the runbook](https://wiki/runbook \"title\")\n  1. nested *one*\n* two ![a diagram](img.png)\n\n> quoted\n> > twice quoted\n\n[ref]: https://example.com\n\n---\n\nSee <https://example.com/x> and [a ref][ref] and a footnote[^1].";
    expect(plain(markdown)).toBe("done with the runbook\nnested one\ntwo a diagram\nquoted twice quoted\nSee https://example.com/x and a ref and a footnote.");
  });

  it("keeps what is content: snake_case, a lone asterisk, pipes and hashes in prose, raw HTML as written", () => {
    expect(plain("use snake_case_names and 5 * 3, a | b, issue #42")).toBe("use snake_case_names and 5 * 3, a | b, issue #42");
    expect(plain("A line <script>alert(1)</script> &amp; more")).toBe("A line <script>alert(1)</script> &amp; more");
  });

  it("joins a paragraph's lines with a space, and writes no control characters", () => {
    expect(plain("one\r\ntwo\tthree\u0000four\n\n\n\nfive")).toBe("one two three four\nfive");
  });

  it("maps a word's range to the same word, and refuses one that was markup", () => {
    const markdown = "# Title\n\nSee [deadlock docs](https://deadlock.example) about **deadlock**.";
    const text = markdownToPlainText(markdown);
    const [inLink, inUrl, bold] = [...markdown.matchAll(/deadlock/g)].map((match) => ({ start: match.index, end: match.index + "deadlock".length }));
    for (const range of [inLink!, bold!]) {
      const mapped = plainRange(text, range)!;
      expect(text.text.slice(mapped.start, mapped.end)).toBe("deadlock");
    }
    expect(plainRange(text, inUrl!)).toBeNull();
    expect(plainRanges(text, [inLink!, inUrl!, bold!])).toHaveLength(2);
  });
});

// Generated Markdown: blocks of words with the constructs people write around them.
const word = fc.stringMatching(/^[a-z]{1,8}$/);
const words = fc.array(word, { minLength: 1, maxLength: 6 }).map((list) => list.join(" "));
const inline = fc.oneof(
  words,
  words.map((text) => `**${text}**`),
  words.map((text) => `*${text}*`),
  words.map((text) => `_${text}_`),
  words.map((text) => `~~${text}~~`),
  words.map((text) => `\`${text}\``),
  fc.tuple(words, word).map(([text, target]) => `[${text}](https://example.com/${target})`),
);
const line = fc.array(inline, { minLength: 1, maxLength: 4 }).map((parts) => parts.join(" "));
const block = fc.oneof(
  line,
  fc.tuple(fc.integer({ min: 1, max: 6 }), line).map(([level, text]) => `${"#".repeat(level)} ${text}`),
  fc.array(line, { minLength: 1, maxLength: 3 }).map((items) => items.map((item) => `- ${item}`).join("\n")),
  fc.array(line, { minLength: 1, maxLength: 3 }).map((items) => items.map((item, index) => `${index + 1}. ${item}`).join("\n")),
  fc.array(line, { minLength: 1, maxLength: 2 }).map((lines) => lines.map((text) => `> ${text}`).join("\n")),
  fc.tuple(fc.constantFrom("```", "~~~", "````"), fc.constantFrom("", "ts", "sql"), fc.array(words, { minLength: 1, maxLength: 3 })).map(([fence, info, lines]) => `${fence}${info}\n${lines.join("\n")}\n${fence}`),
  fc.tuple(fc.integer({ min: 1, max: 4 }), fc.array(fc.array(words, { minLength: 4, maxLength: 4 }), { minLength: 1, maxLength: 3 })).map(([columns, rows]) =>
    [rows[0]!, Array(4).fill("---"), ...rows.slice(1)].map((cells) => `| ${cells.slice(0, columns).join(" | ")} |`).join("\n"),
  ),
);
const document = fc.array(block, { minLength: 1, maxLength: 8 }).map((blocks) => blocks.join("\n\n"));

describe("markdownToPlainText on generated documents", () => {
  it("maps every word of the content to the same word, in order", () => {
    fc.assert(
      fc.property(document, (markdown) => {
        const text = markdownToPlainText(markdown);
        // Every word of the source that is content (not a link's destination, not an info string).
        const destinations = [...markdown.matchAll(/\]\([^)]*\)|^(?:```|~~~|````)\S*$/gm)].map((match) => ({ start: match.index, end: match.index + match[0].length }));
        const ranges = [...markdown.matchAll(/[a-z]+/g)]
          .map((match) => ({ start: match.index, end: match.index + match[0].length }))
          .filter((range) => !destinations.some((markup) => range.start >= markup.start && range.end <= markup.end));
        const mapped = ranges.map((range) => plainRange(text, range));
        for (const [index, range] of mapped.entries()) {
          expect(range).not.toBeNull();
          expect(text.text.slice(range!.start, range!.end)).toBe(markdown.slice(ranges[index]!.start, ranges[index]!.end));
        }
        for (let index = 1; index < mapped.length; index++) expect(mapped[index]!.start).toBeGreaterThanOrEqual(mapped[index - 1]!.end);
        // The plain text holds those words and separators only.
        expect(text.text.match(/[a-z]+/g) ?? []).toEqual(ranges.map((range) => markdown.slice(range.start, range.end)));
      }),
      { numRuns: 300 },
    );
  });

  it("never shows table pipes, fences, heading hashes, emphasis markers or list bullets", () => {
    fc.assert(
      fc.property(document, (markdown) => {
        const text = plain(markdown);
        expect(text).not.toMatch(/[|`#*_~>[\]()]/);
        expect(text).not.toMatch(/^(?:- |\d+\. )/m);
        expect(text).not.toMatch(/---/);
        expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
      }),
      { numRuns: 300 },
    );
  });

  it("gives highlights plain passages whose ranges mark the query's words, cut at block edges", () => {
    fc.assert(
      fc.property(document, word, fc.integer({ min: 40, max: 300 }), (markdown, target, windowLength) => {
        const source = `${markdown}\n\n| ${target} | x |\n| - | - |\n| **${target}** | y |`;
        const passage = highlightsByHit([{ key: "DocumentChunk:c", ord: 0, text: source, tokens: [target] }], 1, windowLength).get("DocumentChunk:c")![0]!;
        expect(passage.text.length).toBeLessThanOrEqual(windowLength);
        expect(passage.text).not.toMatch(/[|`#*]/);
        expect(passage.ranges.length).toBeGreaterThan(0);
        for (const range of passage.ranges) expect(passage.text.slice(range.start, range.end)).toBe(target);
        expect(passage.text).toBe(passage.text.trim());
      }),
      { numRuns: 200 },
    );
  });
});

describe("highlightsByHit chooses before it converts", () => {
  // The reference: every passage converted to plain text, then ranked by the matches that came
  // across (most first, then ord), as highlightsByHit did before it chose on the stored text.
  const everyPassageConverted = (candidates: { key: string; ord: number; text: string; tokens: string[] }[], limit: number) => {
    const converted = candidates.map((candidate) => {
      const text = looksLikeJson(candidate.text) ? jsonToPlainText(candidate.text) : markdownToPlainText(candidate.text);
      return { ord: candidate.ord, text: text.text, ranges: plainRanges(text, locateTokens(candidate.text, candidate.tokens)) };
    });
    converted.sort((a, b) => b.ranges.length - a.ranges.length || a.ord - b.ord);
    const matched = converted.filter((passage) => passage.ranges.length > 0).slice(0, limit);
    const chosen = matched.length > 0 ? matched : converted.filter((passage) => passage.text.trim().length > 0).slice(0, 1);
    return chosen.map((passage) => cutWindow(passage.text, passage.ranges, 300));
  };

  it("returns the same passages in the same order as converting every one", () => {
    // Targets also sit in link destinations, where they match the stored text but not the plain text.
    const passage = fc.tuple(document, word, fc.integer({ min: 0, max: 3 }), fc.boolean()).map(([markdown, target, times, inLink]) => ({
      text: `${markdown}${` ${target}`.repeat(times)}${inLink ? ` [see](https://x/${target}) [more](https://y/${target})` : ""}`,
      target,
    }));
    fc.assert(
      fc.property(fc.array(passage, { minLength: 1, maxLength: 10 }), fc.integer({ min: 1, max: 4 }), word, (passages, limit, query) => {
        const candidates = passages.map((entry, ord) => ({ key: "Conversation:c", ord, text: entry.text, tokens: [query, entry.target] }));
        const chosen = highlightsByHit(candidates, limit).get("Conversation:c") ?? [];
        expect(chosen).toEqual(everyPassageConverted(candidates, limit));
      }),
      { numRuns: 300 },
    );
  });
});

describe("cutWindow at block edges", () => {
  it("opens on the block that holds the first match rather than on the end of the one before", () => {
    const text = `${"alpha beta gamma ".repeat(6).trim()}\nThe deadlock happened in the payments service.\n${"delta epsilon ".repeat(20).trim()}`;
    const cut = cutWindow(text, locateTokens(text, ["deadlock"]), 120);
    expect(cut.text.startsWith("The deadlock happened")).toBe(true);
    expect(cut.truncatedBefore).toBe(true);
    expect(cut.text.slice(cut.ranges[0]!.start, cut.ranges[0]!.end)).toBe("deadlock");
  });

  it("ends on a block's end when one ends in the window's second half", () => {
    const text = `The deadlock happened in the payments service, twice in one week.\n${"delta epsilon ".repeat(20).trim()}`;
    const cut = cutWindow(text, locateTokens(text, ["deadlock"]), 100);
    expect(cut.text).toBe("The deadlock happened in the payments service, twice in one week.");
    expect(cut.truncatedAfter).toBe(true);
  });
});

describe("jsonToPlainText (a tool's call or result)", () => {
  const result = JSON.stringify({ tool: "search_docs", query: "deadlock runbook", count: 2, stale: false, note: null, results: [{ title: "Runbook: \"db\"", snippet: "line one\nline two \u00e9" }] }, null, 2);

  it("reads each value as a `key: value` line, without braces, quotes or escapes", () => {
    expect(looksLikeJson(result)).toBe(true);
    expect(jsonToPlainText(result).text).toBe('tool: search_docs\nquery: deadlock runbook\ncount: 2\nstale: false\ntitle: Runbook: "db"\nsnippet: line one line two é');
  });

  it("is chosen only for text that opens as JSON", () => {
    for (const text of ["[link](https://x)", "[[wiki]]", "{{template}}", "plain text", "- [ ] task"]) expect(looksLikeJson(text)).toBe(false);
    for (const text of ['{"a": 1}', ' [ {"a": 1} ]', '["a", "b"]']) expect(looksLikeJson(text)).toBe(true);
  });

  it("maps every word of its values to the same word, also when the JSON is cut short", () => {
    const value = fc.oneof(words, fc.integer().map(String));
    const json = fc.dictionary(word, fc.oneof(value, fc.array(fc.dictionary(word, value, { maxKeys: 3 }), { maxLength: 2 })), { minKeys: 1, maxKeys: 5 });
    fc.assert(
      fc.property(json, fc.nat(), (object, cut) => {
        const full = JSON.stringify(object, null, 2);
        const source = full.slice(0, full.length - (cut % Math.max(1, full.length - 3)));
        const text = jsonToPlainText(source);
        expect(text.text).not.toMatch(/[{}[\]"]/);
        const ranges = [...source.matchAll(/[a-z]+/g)].map((match) => ({ start: match.index, end: match.index + match[0].length }));
        for (const range of ranges) {
          const mapped = plainRange(text, range);
          if (mapped) expect(text.text.slice(mapped.start, mapped.end)).toBe(source.slice(range.start, range.end));
        }
        // Every word the plain text shows came from the source, in order.
        expect(plainRanges(text, ranges).map((range) => text.text.slice(range.start, range.end))).toEqual(text.text.match(/[a-z]+/g) ?? []);
      }),
      { numRuns: 200 },
    );
  });
});
