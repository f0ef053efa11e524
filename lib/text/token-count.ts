/**
 * Counts tokens the way current OpenAI models do (o200k_base, via js-tiktoken, whose rank
 * tables ship inside the npm package: no download at run time).
 *
 * Counting runs in a worker thread (token-count-worker.ts, which also explains how its cost is
 * bounded for any input): user text never holds the event loop. The thread starts on first use
 * and builds the rank tables once (about a second). A burst beyond the pool's queue is refused
 * with `OVERLOADED` rather than left waiting.
 */
import { createWorkerPool, workerModule, type WorkerPool } from "../workers/pool.js";

let pool: WorkerPool<readonly string[], number[]> | null = null;

/** The pool behind the counter, created on first use (tests read `tasksSubmitted` from it). */
export function tokenCountPool(): WorkerPool<readonly string[], number[]> {
  if (!pool || pool.closed) pool = createWorkerPool({ name: "token counting", worker: workerModule(import.meta.url, "./token-count-worker") });
  return pool;
}

export async function countTokens(text: string): Promise<number> {
  if (text.length === 0) return 0;
  const [count] = await countTokensOfEach([text]);
  return count!;
}

/** One count per text, in order, in a single worker task (one queue slot however many texts). */
export async function countTokensOfEach(texts: readonly string[]): Promise<number[]> {
  if (texts.every((text) => text.length === 0)) return texts.map(() => 0);
  return tokenCountPool().run(texts);
}
