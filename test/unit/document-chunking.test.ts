/**
 * Chunking extracted documents (lib/documents/chunk-document.ts): token budgets and overlap,
 * heading and paragraph boundaries, the embedder's character cap, offsets, pages and hashes,
 * determinism, and bounded cost on hostile text. Tokens are counted by the project's counter.
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { chunkDocument, documentChunkingFor, sha256, type DocumentChunk } from "../../lib/documents/chunk-document.js";
import { extractText } from "../../lib/documents/extract-text.js";
import { countTokensOfEach } from "../../lib/text/token-count.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { pdfWithPages } from "../support/document-fixtures.js";

afterAll(async () => {
  await closeWorkerPools();
});

const WORDS = "the system stores every document and indexes its chunks so that search finds them quickly while users keep working on their questions about install steps".split(" ");

/** Deterministic prose: `count` sentences of 8–20 words. */
function prose(count: number, seed: number): string {
  const sentences: string[] = [];
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31);
  for (let i = 0; i < count; i++) {
    const length = 8 + (next() % 13);
    const words = Array.from({ length }, () => WORDS[next() % WORDS.length]!);
    sentences.push(`${words[0]!.charAt(0).toUpperCase()}${words.join(" ").slice(1)}.`);
  }
  return sentences.join(" ");
}

const guide = [
  "# Install",
  prose(12, 1),
  prose(9, 2),
  "## On Linux",
  prose(30, 3),
  prose(4, 4),
  "## On macOS",
  prose(3, 5),
  "# Usage",
  prose(25, 6),
].join("\n\n");

async function guideDocument() {
  return extractText({ fileName: "guide.md", bytes: new TextEncoder().encode(guide) });
}

function expectWellFormed(text: string, chunks: readonly DocumentChunk[]): void {
  chunks.forEach((chunk, index) => {
    expect(chunk.index).toBe(index);
    expect(text.slice(chunk.start, chunk.end)).toBe(chunk.text);
    expect(chunk.text).toBe(chunk.text.trim());
    // Never starts mid-word: the character before is whitespace (or it is the text's start).
    if (chunk.start > 0) expect(text.charAt(chunk.start - 1)).toMatch(/\s/);
    expect(chunk.contentHash).toBe(sha256(chunk.text));
  });
}

describe("chunkDocument", () => {
  it("keeps chunks within the token budget, inside one section, with its heading path", async () => {
    const document = await guideDocument();
    const { chunks } = await chunkDocument(document, { maxTokens: 80, overlapTokens: 15 });
    expectWellFormed(document.text, chunks);
    expect(chunks.length).toBeGreaterThan(8);
    const exact = await countTokensOfEach(chunks.map((chunk) => chunk.text));
    chunks.forEach((chunk, index) => {
      expect(chunk.tokenCount).toBeLessThanOrEqual(80);
      // The sum of unit counts is within a token per unit boundary of the exact count.
      expect(exact[index]!).toBeLessThanOrEqual(84);
      const section = document.sections.find((candidate) => candidate.start <= chunk.start && chunk.start < candidate.end)!;
      expect(chunk.end).toBeLessThanOrEqual(section.end);
      expect(chunk.headingPath).toEqual(section.headingPath);
      // Ends at a sentence (the prose has no other punctuation), or at a heading line.
      expect(chunk.text).toMatch(/(\.|^#.*)$/);
    });
    expect([...new Set(chunks.map((chunk) => chunk.headingPath.join(" > ")))]).toEqual(["Install", "Install > On Linux", "Install > On macOS", "Usage"]);
  });

  it("overlaps consecutive chunks of a section by at most the overlap budget, and covers all text", async () => {
    const document = await guideDocument();
    const { chunks } = await chunkDocument(document, { maxTokens: 80, overlapTokens: 15 });
    let overlapping = 0;
    for (let i = 1; i < chunks.length; i++) {
      const [previous, chunk] = [chunks[i - 1]!, chunks[i]!];
      expect(chunk.start).toBeGreaterThan(previous.start);
      expect(chunk.end).toBeGreaterThan(previous.end);
      if (previous.headingPath.join() !== chunk.headingPath.join()) {
        expect(chunk.start).toBeGreaterThanOrEqual(previous.end);
        continue;
      }
      // No gap in a section: every word is in some chunk.
      expect(document.text.slice(previous.end, chunk.start).trim()).toBe("");
      if (chunk.start < previous.end) {
        overlapping += 1;
        const [overlapTokens] = await countTokensOfEach([document.text.slice(chunk.start, previous.end)]);
        expect(overlapTokens!).toBeLessThanOrEqual(18);
      }
    }
    expect(overlapping).toBeGreaterThan(4);
  });

  it("prefers to end a chunk at a paragraph", async () => {
    const paragraphs = Array.from({ length: 6 }, (_, index) => prose(3, 10 + index));
    const text = paragraphs.join("\n\n");
    const { chunks } = await chunkDocument({ text, sections: [{ headingPath: [], start: 0, end: text.length }] }, { maxTokens: 160, overlapTokens: 0 });
    const paragraphEnds = new Set(paragraphs.map((_, index) => paragraphs.slice(0, index + 1).join("\n\n").length));
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(paragraphEnds.has(chunk.end)).toBe(true);
  });

  it("never exceeds what the embedder reads", async () => {
    const document = await guideDocument();
    const options = documentChunkingFor({ maxInputChars: 450 });
    expect(options).toEqual({ maxTokens: 500, overlapTokens: 50, maxChars: 450 });
    const { chunks } = await chunkDocument(document, options);
    expectWellFormed(document.text, chunks);
    for (const chunk of chunks) expect(chunk.text.length).toBeLessThanOrEqual(450);
  });

  it("fills chunks near the default 500 tokens on long prose", async () => {
    const text = prose(400, 42);
    const { chunks } = await chunkDocument({ text, sections: [{ headingPath: [], start: 0, end: text.length }] });
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks.slice(0, -1)) {
      expect(chunk.tokenCount).toBeLessThanOrEqual(500);
      expect(chunk.tokenCount).toBeGreaterThan(400);
    }
  });

  it("is deterministic and hashes the normalized text", async () => {
    const document = await guideDocument();
    const first = await chunkDocument(document, { maxTokens: 100, overlapTokens: 20 });
    const second = await chunkDocument(await guideDocument(), { maxTokens: 100, overlapTokens: 20 });
    expect(second).toEqual(first);
    expect(first.contentHash).toBe(sha256(document.text));
    // The same words with Windows newlines and a BOM are the same content.
    const windows = await extractText({ fileName: "guide.md", bytes: new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(guide.replace(/\n/g, "\r\n"))]) });
    expect((await chunkDocument(windows)).contentHash).toBe(first.contentHash);
  });

  it("gives each chunk of a PDF its pages", async () => {
    const page = (n: number) => [prose(2, n).slice(0, 90), prose(2, n + 1).slice(0, 90), "End of page."];
    const document = await extractText({ fileName: "report.pdf", bytes: await pdfWithPages([page(1), page(3), page(5)]) });
    const { chunks } = await chunkDocument(document, { maxTokens: 40, overlapTokens: 8 });
    expectWellFormed(document.text, chunks);
    expect(chunks[0]!.pageNumbers).toEqual([1]);
    expect(chunks.at(-1)!.pageNumbers).toEqual([3]);
    expect(chunks.some((chunk) => chunk.pageNumbers.includes(2))).toBe(true);
    for (const chunk of chunks) {
      const expected = document.pages.filter((p) => p.start < chunk.end && p.end > chunk.start).map((p) => p.pageNumber);
      expect(chunk.pageNumbers).toEqual(expected);
    }
  });

  it("stays bounded on a 5 MB single word: one count, pieces within both caps", async () => {
    const text = "z".repeat(5_000_000);
    const counted: number[] = [];
    const countTokens = async (texts: readonly string[]) => {
      counted.push(texts.length);
      return countTokensOfEach(texts);
    };
    const { chunks } = await chunkDocument({ text, sections: [{ headingPath: [], start: 0, end: text.length }] }, { countTokens, maxChars: 2_000 });
    expect(counted).toEqual([1]);
    expect(chunks.length).toBeGreaterThanOrEqual(2_500);
    let covered = 0;
    for (const chunk of chunks) {
      expect(chunk.start).toBe(covered);
      expect(chunk.text.length).toBeLessThanOrEqual(2_000);
      expect(chunk.tokenCount).toBeLessThanOrEqual(500);
      covered = chunk.end;
    }
    expect(covered).toBe(text.length);
  });

  // The bounds are per character of text, so the work they allow grows with the text, not with
  // its sentences; 100,000 of them show that as well as a million did, in a tenth of the
  // counting (a million took 20 CPU-seconds and, under load, past Jest's 60 s).
  it("merges tiny sentences so that hostile punctuation cannot multiply the work", async () => {
    const text = "a. ".repeat(100_000).trim();
    const counted: number[] = [];
    const countTokens = async (texts: readonly string[]) => {
      counted.push(texts.length);
      return countTokensOfEach(texts);
    };
    const { chunks } = await chunkDocument({ text, sections: [{ headingPath: [], start: 0, end: text.length }] }, { countTokens });
    expect(counted).toHaveLength(1);
    expect(counted[0]!).toBeLessThanOrEqual(text.length / 100 + 1);
    for (const chunk of chunks) expect(chunk.tokenCount).toBeLessThanOrEqual(500);
    const paragraphs = "a.\n\n".repeat(100_000).trim();
    await chunkDocument({ text: paragraphs, sections: [{ headingPath: [], start: 0, end: paragraphs.length }] }, { countTokens });
    expect(counted[1]!).toBeLessThanOrEqual(paragraphs.length / 20 + 1);
  });

  // The separator pattern's matches are as long as the whitespace they span: audited with 5 MB
  // runs (after a full stop, after a blank line), each one match in under 40 ms, no stack
  // overflow, and a whole 7.5 MB document chunked in under 250 ms. This keeps it that way.
  it("reads 5 MB of one separator character as one separator, with the sentences on either side intact", async () => {
    for (const separator of [" ", "\t", "\n \n"]) {
      const text = `First sentence.${separator.repeat(5_000_000 / separator.length)}Second sentence.`;
      const { chunks } = await chunkDocument({ text, sections: [{ headingPath: [], start: 0, end: text.length }] }, { maxChars: 2_000 });
      // Lengths first: a failing comparison of megabyte strings would take Jest minutes to print.
      expect(chunks.map((chunk) => chunk.text.length)).toEqual([15, 16]);
      expect(chunks.map((chunk) => chunk.text)).toEqual(["First sentence.", "Second sentence."]);
    }
  });

  it("refuses options that cannot work", async () => {
    const document = { text: "x", sections: [{ headingPath: [], start: 0, end: 1 }] };
    await expect(chunkDocument(document, { maxTokens: 0 })).rejects.toThrow(/maxTokens must be a positive integer/);
    await expect(chunkDocument(document, { maxTokens: 50, overlapTokens: 50 })).rejects.toThrow(/overlapTokens must be an integer from 0 to maxTokens - 1/);
  });
});
