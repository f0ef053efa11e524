/**
 * Document parsing in a worker thread (see extract-text.ts): PDF and DOCX parsers are large,
 * CPU-bound, and fed hostile bytes, so they never run on a thread that answers requests.
 *
 * Every failure comes back as a value, not a thrown error: classes do not survive the trip
 * between threads, and a parser's own exception (pdf.js, JSZip, mammoth) becomes a
 * `CORRUPT_FILE` with the parser's reason rather than a crash of the thread.
 */
import { DocumentError, quote, type DocumentErrorCode } from "./document-error.js";
import { detectFormat, type DocumentFormat } from "./detect-format.js";
import { extractDocxText } from "./docx-text.js";
import { decodeUtf8, hasReadableText, markdownSections, normalizeText, type DocumentSection } from "./normalize-text.js";
import { extractPdfText, tooMuchText, type DocumentPage } from "./pdf-text.js";
import type { DecompressionBounds } from "./unpacked-budget.js";
import { budgetedWorker } from "../workers/task-budget.js";

export interface ExtractionTask {
  fileName: string;
  mediaType?: string;
  bytes: Uint8Array;
  limits: { maxPages: number; maxChars: number } & DecompressionBounds;
}

export interface ExtractedText {
  format: DocumentFormat;
  /** Normalized text (see normalize-text.ts); every offset below points into it. */
  text: string;
  /** The document divided by its headings, in order, covering the text (one section with `[]` when it has none). */
  sections: DocumentSection[];
  /** PDFs: where each page's text is. Other formats: `[]`. */
  pages: DocumentPage[];
}

export type ExtractionOutcome = { ok: true; document: ExtractedText } | { ok: false; code: DocumentErrorCode; message: string };

// This thread is terminated when its budget runs out, and terminating a thread while a native
// zlib handle is half made aborts the whole process (see unpacked-budget.ts). pdf.js inflates
// some streams through the web DecompressionStream, which is node:zlib underneath, when the
// global exists, and with its own JavaScript inflater otherwise: so on this thread it does not.
// (CompressionStream goes too: pdf.js uses it only to save files, which a reader never does.)
for (const name of ["DecompressionStream", "CompressionStream"]) Reflect.deleteProperty(globalThis, name);

// Budgeted from when the handler begins (lib/workers/task-budget.ts): the thread's cold start is not the file's fault.
export default budgetedWorker(extractInWorker);

async function extractInWorker(task: ExtractionTask): Promise<ExtractionOutcome> {
  try {
    return { ok: true, document: await extract(task) };
  } catch (error) {
    if (error instanceof DocumentError) return { ok: false, code: error.code, message: error.message };
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, code: "CORRUPT_FILE", message: `${quote(task.fileName)} could not be read (${reason.slice(0, 200)}). Save or export it again and re-upload it.` };
  }
}

async function extract(task: ExtractionTask): Promise<ExtractedText> {
  const { fileName, bytes, limits } = task;
  const format = detectFormat({ fileName, ...(task.mediaType ? { mediaType: task.mediaType } : {}) }, bytes);
  let result: Omit<ExtractedText, "format">;
  if (format === "pdf") result = await extractPdfText(bytes, fileName, limits);
  else if (format === "docx") result = { ...(await extractDocxText(bytes, fileName, limits)), pages: [] };
  else {
    const text = normalizeText(decodeUtf8(bytes, fileName));
    if (text.length > limits.maxChars) throw tooMuchText(fileName, limits.maxChars, `${text.length.toLocaleString("en")} characters`);
    const sections = format === "markdown" ? markdownSections(text) : [{ headingPath: [], start: 0, end: text.length }];
    result = { text, sections, pages: [] };
  }
  if (!hasReadableText(result.text)) {
    throw new DocumentError("EMPTY_FILE", `${quote(fileName)} has no text in it (only whitespace or control characters). Upload a file with content.`);
  }
  return { format, ...result };
}
