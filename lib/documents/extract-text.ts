/**
 * Turns an uploaded file into clean text: plain text, Markdown, PDF (its text layer) or DOCX.
 *
 *     const document = await extractText({ fileName: "guide.pdf", bytes }, { maxPages: 500 });
 *     // { format: "pdf", text, sections: [{ headingPath, start, end }], pages: [{ pageNumber, start, end }] }
 *
 * Rejects with a {@link DocumentError} whose `code` says what is wrong (EMPTY_FILE,
 * FILE_TOO_LARGE, UNSUPPORTED_TYPE, INVALID_ENCODING, CORRUPT_FILE, ENCRYPTED_FILE,
 * NO_TEXT_LAYER, TOO_MANY_PAGES, TEXT_TOO_LONG, DECOMPRESSION_LIMIT, EXTRACTION_TIMEOUT,
 * MEMORY_LIMIT) and whose message tells the uploader what to do. The type comes from the bytes first (see detect-format.ts).
 *
 * Everything is bounded: bytes (checked here, before any parsing), pages and characters (while
 * parsing, so a huge PDF stops at the first page past the limit), what compressed parts unpack
 * to (DOCX XML and PDF streams, before the parser sees them: unpacked-budget.ts), time (a parse
 * past `timeoutMs` of its thread's own CPU time has its thread terminated, see
 * lib/workers/task-budget.ts: a busy machine or a cold thread alone never fails a small file)
 * and the thread's heap (a parse past it dies alone).
 *
 * Parsing runs on worker threads shared fairly between organizations (`extractText(file, limits,
 * { organizationId })`): each may have `perOrganization` parses running (default 1 of 2 threads)
 * and a few waiting, so one organization's hostile files wait behind each other, never in front
 * of everyone else's. A full queue is `OVERLOADED` at once.
 */
import { FairShareQueue } from "../workers/fair-share.js";
import { createWorkerPool, workerModule, type WorkerPool } from "../workers/pool.js";
import { runWithinBudget, TaskBudgetExceeded, threadCpuClock, type BudgetedTask, type WorkClock } from "../workers/task-budget.js";
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
  /** Most bytes a file's compressed parts (DOCX XML, PDF streams) may unpack to (default 100 MB). */
  maxUnpackedBytes: number;
  /** Most times its compressed size a part past 1 MB may unpack to (default 100). */
  maxCompressionRatio: number;
  /**
   * Most CPU time a parse may use on its thread, counted from when the parse began (its thread's
   * modules loaded), before the thread is terminated (default 8 s). Where the thread's CPU time
   * cannot be read (not Linux), wall-clock time from the same moment.
   */
  timeoutMs: number;
}

export const DEFAULT_EXTRACTION_LIMITS: ExtractionLimits = {
  maxBytes: 10 * 1024 * 1024,
  maxPages: 2_000,
  maxChars: 5_000_000,
  maxUnpackedBytes: 100 * 1024 * 1024,
  maxCompressionRatio: 100,
  // Under the gateway's 10 s upstream timeout, so on a machine that is not overloaded a refused
  // file gets its reason, not a 504. (On one that is, the gateway may answer 504 first; the parse
  // goes on to its own end, and the document is stored or refused as if the client had waited.)
  timeoutMs: 8_000,
};

/** How the parser threads are shared (DOCUMENT_PARSE_* in lib/config.ts). */
export interface DocumentParsingSettings {
  /** Parser threads (default 2). */
  threads: number;
  /** Parses of one organization running at once (default 1). */
  perOrganization: number;
  /** Parses of one organization waiting for a thread (default 4); one more is OVERLOADED. */
  queuePerOrganization: number;
  /** Parses waiting over all organizations (default 32). */
  queue: number;
  /** Heap of each parser thread, in MB (default 512); a parse past it fails with MEMORY_LIMIT. */
  heapMb: number;
  /** Limits of every parse, unless a call sets its own. */
  limits: ExtractionLimits;
  /** What `timeoutMs` counts (default: the parser thread's CPU time); tests pass a clock they control. */
  clock: WorkClock;
}

const DEFAULT_PARSING_SETTINGS: DocumentParsingSettings = {
  threads: 2,
  perOrganization: 1,
  queuePerOrganization: 4,
  queue: 32,
  heapMb: 512,
  limits: DEFAULT_EXTRACTION_LIMITS,
  clock: threadCpuClock,
};

/**
 * The wall-clock backstop of one parse, counted from when it got its thread: far above the
 * budget, so that neither a cold thread on a busy machine (20-33 s to load its modules at load
 * 7-12) nor time stolen by other processes reaches it, yet a thread that never starts or hangs
 * without using CPU is still stopped.
 */
export function extractionBackstopMs(timeoutMs: number): number {
  return Math.max(15 * timeoutMs, 120_000);
}

export interface UploadedFile {
  fileName: string;
  mediaType?: string;
  bytes: Uint8Array;
}

let settings = DEFAULT_PARSING_SETTINGS;
let pool: WorkerPool<BudgetedTask<ExtractionTask>, ExtractionOutcome> | null = null;
let shares: FairShareQueue | null = null;

/**
 * Sets how parsing is shared and bounded (the knowledge-base subgraph calls it at start with
 * its configuration). Parses already running finish under the old settings.
 */
export function configureDocumentParsing(next: Partial<Omit<DocumentParsingSettings, "limits">> & { limits?: Partial<ExtractionLimits> }): void {
  const merged = { ...settings, ...next, limits: { ...settings.limits, ...next.limits } };
  checkLimits(merged.limits);
  if (!Number.isInteger(merged.heapMb) || merged.heapMb < 16) throw new RangeError(`configureDocumentParsing: heapMb must be an integer of at least 16, got ${merged.heapMb}`);
  const previous = pool;
  settings = merged;
  pool = null;
  shares = null;
  void previous?.close();
}

/** The pool behind extraction, created on first use (tests read `tasksSubmitted` from it). */
export function documentParsingPool(): WorkerPool<BudgetedTask<ExtractionTask>, ExtractionOutcome> {
  if (!pool || pool.closed) {
    pool = createWorkerPool({
      name: "document parsing",
      worker: workerModule(import.meta.url, "./extract-text-worker"),
      maxThreads: settings.threads,
      // Tasks reach the pool only when the fair share gives them a thread; the slack covers a
      // thread that is being replaced after it was terminated.
      maxQueue: settings.threads,
      resourceLimits: { maxOldGenerationSizeMb: settings.heapMb },
    });
  }
  return pool;
}

/** Who parses next (tests read its counts). */
export function documentParsingShares(): FairShareQueue {
  shares ??= new FairShareQueue({
    name: "document parsing",
    maxRunning: settings.threads,
    maxRunningPerKey: settings.perOrganization,
    maxQueuedPerKey: settings.queuePerOrganization,
    maxQueued: settings.queue,
    maxWaitMs: settings.limits.timeoutMs * 2,
  });
  return shares;
}

export async function extractText(file: UploadedFile, limits: Partial<ExtractionLimits> = {}, options: { organizationId?: string } = {}): Promise<ExtractedText> {
  const bounds = { ...settings.limits, ...limits };
  checkLimits(bounds);
  if (file.bytes.length === 0) throw new DocumentError("EMPTY_FILE", `${quote(file.fileName)} is empty (0 bytes). Upload a file with content.`);
  if (file.bytes.length > bounds.maxBytes) {
    throw new DocumentError("FILE_TOO_LARGE", `${quote(file.fileName)} is ${formatBytes(file.bytes.length)}; files up to ${formatBytes(bounds.maxBytes)} are accepted. Split it into smaller files.`);
  }
  const task: ExtractionTask = {
    fileName: file.fileName,
    ...(file.mediaType ? { mediaType: file.mediaType } : {}),
    bytes: file.bytes,
    limits: { maxPages: bounds.maxPages, maxChars: bounds.maxChars, maxUnpackedBytes: bounds.maxUnpackedBytes, maxCompressionRatio: bounds.maxCompressionRatio },
  };
  const { heapMb, clock } = settings;
  const parsingPool = documentParsingPool();
  const outcome = await documentParsingShares().run(options.organizationId ?? "", async () => {
    // The time budget starts with the parse on its thread, not with the wait for a thread nor
    // with the thread's start (task-budget.ts).
    try {
      return await runWithinBudget(parsingPool, task, { budgetMs: bounds.timeoutMs, backstopMs: extractionBackstopMs(bounds.timeoutMs), clock });
    } catch (error) {
      throw parserStopped(error, file.fileName, bounds.timeoutMs, heapMb);
    }
  });
  if (!outcome.ok) throw new DocumentError(outcome.code, outcome.message);
  return outcome.document;
}

function checkLimits(limits: ExtractionLimits): void {
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`extractText: limit ${name} must be a positive integer, got ${value}`);
  }
}

/** Why the thread under a file stopped, as the file's error (an OVERLOADED pool passes through). */
function parserStopped(error: unknown, fileName: string, timeoutMs: number, heapMb: number): unknown {
  if (error instanceof TaskBudgetExceeded && error.limit === "budget") {
    const time = error.measures === "cpu" ? `${timeoutMs / 1000} s of processing time` : `${timeoutMs / 1000} s`;
    return new DocumentError("EXTRACTION_TIMEOUT", `Reading ${quote(fileName)} took longer than ${time} and was stopped. Try a smaller or simpler file.`);
  }
  if (error instanceof TaskBudgetExceeded) {
    // Not the file's doing as far as anyone can tell: its parser did not start or stopped answering.
    return new DocumentError(
      "EXTRACTION_TIMEOUT",
      `Reading ${quote(fileName)} did not finish within ${extractionBackstopMs(timeoutMs) / 1000} s because the server is overloaded (its parser thread did not start or stopped answering). Upload it again in a few minutes.`,
    );
  }
  if ((error as { extensions?: { code?: unknown } } | null)?.extensions?.code === "OVERLOADED") return error;
  const reason = error instanceof Error ? error.message : String(error);
  if ((error as { code?: unknown } | null)?.code === "ERR_WORKER_OUT_OF_MEMORY" || /reaching memory limit/.test(reason)) {
    return new DocumentError("MEMORY_LIMIT", `Reading ${quote(fileName)} needed more than ${heapMb} MB of memory, the most one file may use, and was stopped. Split it into smaller files.`);
  }
  // The thread died under the file some other way (a parser crash): the file is what failed.
  return new DocumentError("CORRUPT_FILE", `${quote(fileName)} could not be read: the parser stopped (${reason.slice(0, 200)}). Save or export it again and re-upload it.`);
}
