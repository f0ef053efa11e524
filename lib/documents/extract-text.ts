/**
 * Turns an uploaded file into clean text: plain text, Markdown, PDF (its text layer) or DOCX.
 *
 *     const document = await extractText({ fileName: "guide.pdf", bytes }, { maxPages: 500 });
 *     // { format: "pdf", text, sections: [{ headingPath, start, end }], pages: [{ pageNumber, start, end }] }
 *
 * Rejects with a {@link DocumentError} whose `code` says what is wrong (EMPTY_FILE,
 * FILE_TOO_LARGE, UNSUPPORTED_TYPE, INVALID_ENCODING, CORRUPT_FILE, ENCRYPTED_FILE,
 * NO_TEXT_LAYER, TOO_MANY_PAGES, TEXT_TOO_LONG, EXTRACTION_TIMEOUT) and whose message tells the
 * uploader what to do. The type comes from the bytes first (see detect-format.ts).
 *
 * Everything is bounded: bytes (checked here, before any parsing), pages and characters (while
 * parsing, so a huge PDF stops at the first page past the limit), unpacked DOCX XML (against zip
 * bombs), time (a parse past `timeoutMs` has its thread terminated) and the thread's heap. Parsing
 * runs on its own worker thread, one at a time, with a bounded queue (`OVERLOADED` beyond it).
 */
import { createWorkerPool, workerModule, type WorkerPool } from "../workers/pool.js";
import { DocumentError, formatBytes, quote } from "./document-error.js";
import type { ExtractedText, ExtractionOutcome, ExtractionTask } from "./extract-text-worker.js";

export type { ExtractedText } from "./extract-text-worker.js";
export type { DocumentFormat } from "./detect-format.js";
export type { DocumentSection } from "./normalize-text.js";
export type { DocumentPage } from "./pdf-text.js";
export { DocumentError, type DocumentErrorCode } from "./document-error.js";

export interface ExtractionLimits {
  /** Largest file accepted, in bytes (default 10 MB = 10 × 1024 × 1024). */
  maxBytes: number;
  /** Most pages in a PDF (default 2,000). */
  maxPages: number;
  /** Most characters of extracted text (default 5,000,000). */
  maxChars: number;
  /** Most bytes of XML a DOCX may unpack to (default 100 MB): the zip-bomb bound. */
  maxUnpackedBytes: number;
  /** Longest a parse may run before its thread is terminated (default 60 s). */
  timeoutMs: number;
}

export const DEFAULT_EXTRACTION_LIMITS: ExtractionLimits = {
  maxBytes: 10 * 1024 * 1024,
  maxPages: 2_000,
  maxChars: 5_000_000,
  maxUnpackedBytes: 100 * 1024 * 1024,
  timeoutMs: 60_000,
};

export interface UploadedFile {
  fileName: string;
  mediaType?: string;
  bytes: Uint8Array;
}

// A parser's heap is bounded too: 5 M characters of text and mammoth's document tree fit well
// within it; a thread past it dies (failing only its own task) and piscina replaces it.
const PARSER_HEAP_MB = 1_024;

let pool: WorkerPool<ExtractionTask, ExtractionOutcome> | null = null;

/** The pool behind extraction, created on first use (tests read `tasksSubmitted` from it). */
export function documentParsingPool(): WorkerPool<ExtractionTask, ExtractionOutcome> {
  if (!pool || pool.closed) {
    pool = createWorkerPool({
      name: "document parsing",
      worker: workerModule(import.meta.url, "./extract-text-worker"),
      maxQueue: 16,
      resourceLimits: { maxOldGenerationSizeMb: PARSER_HEAP_MB },
    });
  }
  return pool;
}

export async function extractText(file: UploadedFile, limits: Partial<ExtractionLimits> = {}): Promise<ExtractedText> {
  const bounds = { ...DEFAULT_EXTRACTION_LIMITS, ...limits };
  for (const [name, value] of Object.entries(bounds)) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`extractText: limit ${name} must be a positive integer, got ${value}`);
  }
  if (file.bytes.length === 0) throw new DocumentError("EMPTY_FILE", `${quote(file.fileName)} is empty (0 bytes). Upload a file with content.`);
  if (file.bytes.length > bounds.maxBytes) {
    throw new DocumentError("FILE_TOO_LARGE", `${quote(file.fileName)} is ${formatBytes(file.bytes.length)}; files up to ${formatBytes(bounds.maxBytes)} are accepted. Split it into smaller files.`);
  }
  const task: ExtractionTask = {
    fileName: file.fileName,
    ...(file.mediaType ? { mediaType: file.mediaType } : {}),
    bytes: file.bytes,
    limits: { maxPages: bounds.maxPages, maxChars: bounds.maxChars, maxUnpackedBytes: bounds.maxUnpackedBytes },
  };
  const timeout = AbortSignal.timeout(bounds.timeoutMs);
  let outcome: ExtractionOutcome;
  try {
    outcome = await documentParsingPool().run(task, { signal: timeout });
  } catch (error) {
    if (timeout.aborted) {
      throw new DocumentError("EXTRACTION_TIMEOUT", `Reading ${quote(file.fileName)} took longer than ${bounds.timeoutMs / 1000} s and was stopped. Try a smaller or simpler file.`);
    }
    if ((error as { extensions?: { code?: unknown } } | null)?.extensions?.code === "OVERLOADED") throw error;
    // The thread died under the file (out of memory, a parser crash): the file is what failed.
    const reason = error instanceof Error ? error.message : String(error);
    throw new DocumentError("CORRUPT_FILE", `${quote(file.fileName)} could not be read: the parser stopped (${reason.slice(0, 200)}). Save or export it again and re-upload it.`);
  }
  if (!outcome.ok) throw new DocumentError(outcome.code, outcome.message);
  return outcome.document;
}
