/**
 * The parser thread never makes a native zlib handle. It is terminated when a file's CPU budget
 * runs out, and terminating a thread while such a handle is half made aborts the whole process
 * (Node 20 and 24: `Assertion failed: init_done_ && "close before init"`): a hostile file that
 * keeps the parsers inflating until the budget ends must not take the server down. So the
 * product's own PDF and DOCX parsers read Flate-compressed files on a thread whose node:zlib
 * records every call, and the web DecompressionStream that pdf.js would use is absent there.
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { closeWorkerPools, createWorkerPool, workerModule } from "../../lib/workers/pool.js";
import { docxGuide, flateBombPdf, manyParagraphsDocx, pdfWithPages } from "../support/document-fixtures.js";
import type { ObservedParse } from "../support/zlib-observing-worker.js";

const pool = createWorkerPool<ObservedParse, { zlibCalls: string[]; decompressionStream: string; outcome: string }>({
  name: "observed parsing",
  worker: workerModule(import.meta.url, "../support/zlib-observing-worker"),
  maxThreads: 1,
});
afterAll(() => closeWorkerPools());

describe("the parser thread and node:zlib", () => {
  it("reads Flate-compressed PDFs and DOCX files, bombs included, without one call to node:zlib", async () => {
    const files: (ObservedParse & { expected: RegExp })[] = [
      // pdf-lib deflates every page's content stream.
      { format: "pdf", bytes: await pdfWithPages([["Deadlocks in the order service"], ["Retry with backoff"]]), expected: /^read \d+ characters$/ },
      { format: "pdf", bytes: flateBombPdf(200), expected: /^DECOMPRESSION_LIMIT/ },
      { format: "docx", bytes: await docxGuide(), expected: /^read \d+ characters$/ },
      { format: "docx", bytes: manyParagraphsDocx(100_000), expected: /^DECOMPRESSION_LIMIT/ },
    ];
    for (const file of files) {
      const observed = await pool.run(file);
      expect(observed.outcome).toMatch(file.expected);
      expect(observed.zlibCalls).toEqual([]);
      expect(observed.decompressionStream).toBe("undefined");
    }
  });
});
