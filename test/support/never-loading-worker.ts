/**
 * A worker whose module never finishes loading (a thread that never starts its task), blocked
 * without using the CPU: only a wall-clock backstop can end a task sent to it.
 */
import { budgetedWorker } from "../../lib/workers/task-budget.js";

Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);

export default budgetedWorker((task: string) => task);
