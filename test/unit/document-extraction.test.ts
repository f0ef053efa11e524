/**
 * Turning uploaded files into text (lib/documents/extract-text.ts): every format's text and
 * headings, PDF pages, the bytes deciding the type, every coded refusal, and the bounds (bytes,
 * pages, characters, what DOCX XML and PDF streams unpack to, time) holding on hostile files. Fixtures are generated
 * here (test/support/document-fixtures.ts); parsing runs in the real worker thread.
 *
 * The time budget reads a clock this file controls (lib/workers/task-budget.ts), so no case here
 * fails because the machine is busy (it did at load 10 when the budget was 8 s of wall-clock
 * time), and the one about the budget holds on any machine. The cases about hostile text that
 * must stay linear keep the real clock, the parser thread's CPU time, which load does not inflate.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { configureDocumentParsing, DocumentError, documentParsingPool, extractText, type DocumentErrorCode } from "../../lib/documents/extract-text.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { threadCpuClock, type WorkClock } from "../../lib/workers/task-budget.js";
import { docxGuide, flateBombPdf, handmadeDocx, manyParagraphsDocx, passwordProtectedPdf, pdfWithPages, pdfWithoutText, zipArchive } from "../support/document-fixtures.js";

/** Every parse reads `workMs` of work as soon as it begins: 0 unless a case says otherwise. */
const controlled: WorkClock & { workMs: number } = { measures: "cpu", workMs: 0, start: () => ({ read: () => controlled.workMs }) };

beforeAll(() => {
  configureDocumentParsing({ clock: controlled });
});

afterAll(async () => {
  configureDocumentParsing({ clock: threadCpuClock });
  await closeWorkerPools();
});

async function refusal(promise: Promise<unknown>): Promise<DocumentError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DocumentError);
  return error as DocumentError;
}

async function expectCode(promise: Promise<unknown>, code: DocumentErrorCode, message?: RegExp): Promise<void> {
  const error = await refusal(promise);
  expect({ code: error.code, message: error.message }).toEqual({ code, message: message ? expect.stringMatching(message) : expect.any(String) });
}

const utf8 = (text: string) => new TextEncoder().encode(text);

describe("plain text", () => {
  it("drops the BOM, NUL and control characters, and normalizes Windows newlines", async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8("Caf\u00e9 line one\r\nline\u0000 two\u0007\r\n\r\n\r\n\r\nlast\tline  \r\n")]);
    const document = await extractText({ fileName: "notes.txt", bytes });
    expect(document).toEqual({ format: "text", text: "Café line one\nline two\n\nlast\tline", sections: [{ headingPath: [], start: 0, end: 33 }], pages: [] });
  });

  it("composes decomposed accents (NFC), so the same words hash and match alike", async () => {
    const document = await extractText({ fileName: "n.txt", bytes: utf8("Cafe\u0301") });
    expect(document.text).toBe("Caf\u00e9");
  });

  it("refuses invalid UTF-8 with where it is and what to do", async () => {
    await expectCode(extractText({ fileName: "latin1.txt", bytes: new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x20, 0x6f, 0x6b]) }), "INVALID_ENCODING", /offset 3.*Save it as UTF-8/);
    await expectCode(extractText({ fileName: "utf16.txt", bytes: new Uint8Array([0xff, 0xfe, 0x68, 0x00]) }), "INVALID_ENCODING", /UTF-16/);
  });

  it("refuses an empty file and one with nothing readable", async () => {
    await expectCode(extractText({ fileName: "empty.txt", bytes: new Uint8Array() }), "EMPTY_FILE", /0 bytes/);
    await expectCode(extractText({ fileName: "blank.md", bytes: utf8(" \r\n\u0000\t\n") }), "EMPTY_FILE");
  });
});

describe("Markdown", () => {
  it("keeps the headings in the text and gives each section its heading path", async () => {
    const markdown = "Intro text.\n\n# Install\n\nGet it.\n\n## On **Linux**\n\nUse apt.\n\n```sh\n# not a heading\n```\n\n## On macOS\n\nUse brew.\n\nUsage\n=====\n\nRun it.\n";
    const document = await extractText({ fileName: "guide.md", bytes: utf8(markdown) });
    expect(document.format).toBe("markdown");
    expect(document.text).toBe(markdown.trimEnd());
    const sections = document.sections.map((section) => ({ path: section.headingPath, text: document.text.slice(section.start, section.end).split("\n")[0] }));
    expect(sections).toEqual([
      { path: [], text: "Intro text." },
      { path: ["Install"], text: "# Install" },
      { path: ["Install", "On Linux"], text: "## On **Linux**" },
      { path: ["Install", "On macOS"], text: "## On macOS" },
      { path: ["Usage"], text: "Usage" },
    ]);
    // Sections tile the text.
    expect(document.sections[0]!.start).toBe(0);
    expect(document.sections.at(-1)!.end).toBe(document.text.length);
    document.sections.slice(1).forEach((section, index) => expect(section.start).toBe(document.sections[index]!.end));
  });

  it("is chosen by the media type when the name has no extension", async () => {
    const document = await extractText({ fileName: "README", mediaType: "text/markdown; charset=utf-8", bytes: utf8("# Title\n\nBody") });
    expect(document.format).toBe("markdown");
    expect(document.sections.map((section) => section.headingPath)).toEqual([["Title"]]);
  });
});

describe("PDF", () => {
  it("reads the text layer page by page, with each page's offsets", async () => {
    const bytes = await pdfWithPages([
      ["First page, first line.", "First page, second line."],
      ["Second page text."],
      ["Third page: the end."],
    ]);
    const document = await extractText({ fileName: "report.pdf", bytes });
    expect(document.format).toBe("pdf");
    expect(document.pages.map((page) => ({ pageNumber: page.pageNumber, text: document.text.slice(page.start, page.end) }))).toEqual([
      { pageNumber: 1, text: "First page, first line.\nFirst page, second line." },
      { pageNumber: 2, text: "Second page text." },
      { pageNumber: 3, text: "Third page: the end." },
    ]);
  });

  it("is recognised by its bytes whatever its name says", async () => {
    const bytes = await pdfWithPages([["Named as text."]]);
    const document = await extractText({ fileName: "notes.txt", mediaType: "text/plain", bytes });
    expect(document.format).toBe("pdf");
    expect(document.text).toBe("Named as text.");
  });

  it("refuses a PDF whose pages have no text (a scan) with NO_TEXT_LAYER", async () => {
    await expectCode(extractText({ fileName: "scan.pdf", bytes: await pdfWithoutText() }), "NO_TEXT_LAYER", /2 page\(s\) but no text.*OCR/);
  });

  it("refuses a truncated PDF with CORRUPT_FILE, and the parser thread goes on working", async () => {
    const bytes = await pdfWithPages([["Some text."], ["More text."]]);
    await expectCode(extractText({ fileName: "cut.pdf", bytes: bytes.subarray(0, Math.floor(bytes.length / 3)) }), "CORRUPT_FILE");
    await expectCode(extractText({ fileName: "garbage.pdf", bytes: utf8("%PDF-1.7\n\u0000\u0001garbage") }), "CORRUPT_FILE");
    expect((await extractText({ fileName: "ok.pdf", bytes })).text).toContain("More text.");
  });

  it("refuses a password-protected PDF with ENCRYPTED_FILE", async () => {
    await expectCode(extractText({ fileName: "locked.pdf", bytes: await passwordProtectedPdf() }), "ENCRYPTED_FILE", /password/);
  });

  it("refuses a file named .pdf that is not one", async () => {
    await expectCode(extractText({ fileName: "fake.pdf", bytes: utf8("just text") }), "CORRUPT_FILE", /not start with %PDF-/);
  });
});

describe("DOCX", () => {
  it("gives paragraphs, headings as sections, and tables as rows of cells", async () => {
    const document = await extractText({ fileName: "guide.docx", bytes: await docxGuide() });
    expect(document.format).toBe("docx");
    expect(document.text).toBe(
      ["Install", "Download the package. Then run it.", "On Linux", "Use apt to install it & check the version.", "Distribution | Command\nDebian | apt install tool", "Configure", "Edit the settings file."].join("\n\n"),
    );
    expect(document.sections.map((section) => [section.headingPath, document.text.slice(section.start, section.end).split("\n")[0]])).toEqual([
      [["Install"], "Install"],
      [["Install", "On Linux"], "On Linux"],
      [["Configure"], "Configure"],
    ]);
  });

  it("refuses a damaged archive with CORRUPT_FILE and a ZIP that is not Word with UNSUPPORTED_TYPE", async () => {
    const bytes = await docxGuide();
    await expectCode(extractText({ fileName: "cut.docx", bytes: bytes.subarray(0, bytes.length - 40) }), "CORRUPT_FILE", /damaged ZIP/);
    await expectCode(extractText({ fileName: "photos.docx", bytes: zipArchive([{ name: "a.txt", data: "hello" }]) }), "UNSUPPORTED_TYPE", /not a Word document/);
    await expectCode(extractText({ fileName: "fake.docx", bytes: utf8("plain") }), "CORRUPT_FILE", /ZIP archive/);
  });

  it("stops a zip bomb at the unpacked-size bound even when the archive lies about its size", async () => {
    // 200 MB of XML deflated to ~200 KB, declaring 1 KB.
    const bomb = handmadeDocx("<w:p><w:r><w:t>boom</w:t></w:r></w:p>", { paddingBytes: 200 * 1024 * 1024, declaredSize: 1024 });
    expect(bomb.length).toBeLessThan(1024 * 1024);
    await expectCode(extractText({ fileName: "bomb.docx", bytes: bomb }), "DECOMPRESSION_LIMIT", /decompresses more than 100-fold \(word\/document\.xml: [\d.]+ KB to more than/);
    // Under a ratio it allows, the total bound stops it.
    await expectCode(extractText({ fileName: "bomb.docx", bytes: bomb }, { maxCompressionRatio: 100_000 }), "DECOMPRESSION_LIMIT", /decompresses to more than 100 MB \(from [\d.]+ KB\)/);
    // The same file shape under the bound is read.
    const small = handmadeDocx("<w:p><w:r><w:t>small but real</w:t></w:r></w:p>", { paddingBytes: 1024 });
    expect((await extractText({ fileName: "small.docx", bytes: small })).text).toBe("small but real");
  });
});

describe("decompression bombs", () => {
  it("refuses a 1 MB PDF whose page stream inflates to a gigabyte before pdf.js decodes it", async () => {
    const bomb = flateBombPdf(1024);
    expect(bomb.length).toBeLessThan(1.1 * 1024 * 1024);
    await expectCode(extractText({ fileName: "bomb.pdf", bytes: bomb }), "DECOMPRESSION_LIMIT", /"bomb\.pdf" decompresses to more than 100 MB \(from 1 MB\)/);
    // Past the ratio bound before the total one.
    await expectCode(extractText({ fileName: "bomb.pdf", bytes: flateBombPdf(50) }), "DECOMPRESSION_LIMIT", /decompresses more than 100-fold \(stream 1: [\d.]+ KB to more than/);
    // The same shape within both bounds is read (it has no text, which pdf.js could only tell by decoding it).
    await expectCode(extractText({ fileName: "zeros.pdf", bytes: flateBombPdf(2) }, { maxCompressionRatio: 10_000 }), "NO_TEXT_LAYER");
  });

  it("refuses a 110 KB DOCX of a million one-word paragraphs (a minute of mammoth) by its compression ratio", async () => {
    const docx = manyParagraphsDocx(1_000_000);
    expect(docx.length).toBeLessThan(120 * 1024);
    await expectCode(extractText({ fileName: "words.docx", bytes: docx }), "DECOMPRESSION_LIMIT", /decompresses more than 100-fold \(word\/document\.xml/);
    expect((await extractText({ fileName: "fewer.docx", bytes: manyParagraphsDocx(2_000) })).text.split("\n\n")).toHaveLength(2_000);
  });
});

describe("types and limits", () => {
  it("refuses unknown types and known binary ones by name", async () => {
    await expectCode(extractText({ fileName: "image.png", bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a]) }), "UNSUPPORTED_TYPE", /PNG image/);
    await expectCode(extractText({ fileName: "old.doc", bytes: new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0]) }), "UNSUPPORTED_TYPE", /save it as \.docx/);
    await expectCode(extractText({ fileName: "data.csv", mediaType: "text/csv", bytes: utf8("a,b") }), "UNSUPPORTED_TYPE", /\(text\/csv\)/);
  });

  it("refuses 10 MB + 1 byte before any parsing", async () => {
    const before = documentParsingPool().tasksSubmitted;
    await expectCode(extractText({ fileName: "big.txt", bytes: new Uint8Array(10 * 1024 * 1024 + 1).fill(0x61) }), "FILE_TOO_LARGE", /10 MB are accepted/);
    expect(documentParsingPool().tasksSubmitted).toBe(before);
    // Exactly 10 MB is read.
    const document = await extractText({ fileName: "ten.txt", bytes: new Uint8Array(10 * 1024 * 1024).fill(0x61) }, { maxChars: 20_000_000 });
    expect(document.text.length).toBe(10 * 1024 * 1024);
  });

  it("refuses a 3,000-page PDF at the default page limit, without reading its pages", async () => {
    const pages = Array.from({ length: 3_000 }, (_, index) => [`Page ${index + 1}.`]);
    await expectCode(extractText({ fileName: "long.pdf", bytes: await pdfWithPages(pages) }), "TOO_MANY_PAGES", /3,000 pages; at most 2,000/);
  });

  it("stops at the text limit", async () => {
    await expectCode(extractText({ fileName: "p.pdf", bytes: await pdfWithPages([["a".repeat(40)], ["b".repeat(40)]]) }, { maxChars: 50 }), "TEXT_TOO_LONG", /by page 2 of 2/);
    await expectCode(extractText({ fileName: "t.txt", bytes: utf8("x".repeat(51)) }, { maxChars: 50 }), "TEXT_TOO_LONG");
  });

  it("refuses a parse past the time limit and keeps serving afterwards", async () => {
    const bytes = await pdfWithPages(Array.from({ length: 200 }, (_, index) => [`Page ${index + 1} of a long report.`]));
    // The parse has used 1 ms more than the default 8 s budget by the first reading of its clock.
    controlled.workMs = 8_001;
    try {
      await expectCode(extractText({ fileName: "slow.pdf", bytes }), "EXTRACTION_TIMEOUT", /"slow\.pdf" took longer than 8 s of processing time and was stopped/);
    } finally {
      controlled.workMs = 0;
    }
    const document = await extractText({ fileName: "slow.pdf", bytes });
    expect(document.pages).toHaveLength(200);
  });

  it("stops a parse past its budget of the parser thread's real CPU time", async () => {
    configureDocumentParsing({ clock: threadCpuClock });
    try {
      // Two hundred pages take pdf.js more than 1 ms of CPU time however fast the machine is.
      const bytes = await pdfWithPages(Array.from({ length: 200 }, (_, index) => [`Page ${index + 1} of a long report.`]));
      await expectCode(extractText({ fileName: "slow.pdf", bytes }, { timeoutMs: 1 }), "EXTRACTION_TIMEOUT", /longer than 0.001 s of processing time/);
    } finally {
      configureDocumentParsing({ clock: controlled });
    }
  });

  it("reads a hostile 5 MB single word as text, bounded", async () => {
    const document = await extractText({ fileName: "word.txt", bytes: new Uint8Array(5_000_000).fill(0x7a) });
    expect(document.text.length).toBe(5_000_000);
  });
});

// Regular expressions that backtrack super-linearly turn one upload into minutes of a parser
// thread (measured before the fix, on a run of n spaces: n = 20,000 took 1.2 s and n = 160,000
// took 83 s, 8x the input for 68x the time). Each case below is a megabyte of the shape that
// made its pattern quadratic; the old code spent its whole time limit on it (EXTRACTION_TIMEOUT).
describe("hostile text stays linear", () => {
  const RUN = 1_000_000;
  // 20 s of the parser thread's CPU time: a quadratic pattern needs minutes, a linear one well under a second.
  const generous = { timeoutMs: 20_000 };

  beforeAll(() => {
    configureDocumentParsing({ clock: threadCpuClock });
  });

  it("keeps a megabyte of spaces inside a line (trailing-blank removal scans, it does not backtrack)", async () => {
    const line = `a${" ".repeat(RUN)}b`;
    const document = await extractText({ fileName: "gap.txt", bytes: utf8(`${line}\u00a0\t \nnext line  \n`) }, generous);
    expect(document.text).toBe(`${line}\nnext line`);
    // Blanks before a newline still go, whatever their mix, and only those.
    const mixed = await extractText({ fileName: "mixed.txt", bytes: utf8(`one \t\u00a0\ntwo\u00a0 three\t\n\t\n`) });
    expect(mixed.text).toBe("one\ntwo\u00a0 three");
  });

  it("reads a Markdown heading with a megabyte of spaces inside its title", async () => {
    const title = `a${" ".repeat(RUN)}b`;
    const document = await extractText({ fileName: "wide.md", bytes: utf8(`# ${title}\n\nBody text.\n`) }, generous);
    expect(document.sections.map((section) => section.headingPath)).toEqual([[title]]);
  });

  it("reads a Markdown heading of a megabyte of unclosed link brackets", async () => {
    for (const [name, title] of [["brackets.md", "[".repeat(RUN)], ["links.md", "[a](".repeat(RUN / 4)]] as const) {
      const document = await extractText({ fileName: name, bytes: utf8(`# ${title}\n\nBody text.\n`) }, generous);
      expect(document.sections.map((section) => section.headingPath)).toEqual([[title]]);
    }
    // Links still read as their text, a target with one level of parentheses included.
    const linked = await extractText({ fileName: "linked.md", bytes: utf8("# See [the guide](https://example.org/Foo_(bar)) and ![logo](a.png) ##\n\nBody.\n") });
    expect(linked.sections[0]!.headingPath).toEqual(["See the guide and logo"]);
  });
});
