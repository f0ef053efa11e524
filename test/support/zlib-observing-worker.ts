/**
 * A worker for the parser-thread test (test/unit/parser-thread-zlib.test.ts): node:zlib's
 * functions are wrapped, before the parsers load, to record every call, and the parser thread's
 * module is loaded for what it does to the thread's globals. Then a PDF or DOCX is read with the
 * product's own parsers, and the task answers what they touched.
 */
// First: the parsers below must see the wrappers. Then the parser thread's own module, for what it does to the thread's globals.
import { calls } from "./zlib-recorder.js";
import "../../lib/documents/extract-text-worker.js";
import { extractDocxText } from "../../lib/documents/docx-text.js";
import { extractPdfText } from "../../lib/documents/pdf-text.js";

export interface ObservedParse {
  format: "pdf" | "docx";
  bytes: Uint8Array;
}

export default async function observe(task: ObservedParse): Promise<{ zlibCalls: string[]; decompressionStream: string; outcome: string }> {
  calls.length = 0;
  const limits = { maxPages: 100, maxChars: 1_000_000, maxUnpackedBytes: 50_000_000, maxCompressionRatio: 100 };
  let outcome: string;
  try {
    const read = task.format === "pdf" ? await extractPdfText(task.bytes, "observed.pdf", limits) : await extractDocxText(task.bytes, "observed.docx", limits);
    outcome = `read ${read.text.length} characters`;
  } catch (error) {
    outcome = `${(error as { code?: string }).code ?? "error"}: ${(error as Error).message}`;
  }
  return { zlibCalls: [...calls], decompressionStream: typeof (globalThis as Record<string, unknown>).DecompressionStream, outcome };
}
