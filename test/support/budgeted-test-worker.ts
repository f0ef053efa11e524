/**
 * A worker for task-budget tests (lib/workers/task-budget.ts). Loading it does a fixed amount of
 * CPU work (hundreds of milliseconds, more than the tests' budgets), as a cold thread's module loading does, so a budget that counted the thread's start would
 * spend it before the task begins. Tasks: "echo" returns at once; "spin" uses the CPU until
 * its thread is terminated.
 */
import { budgetedWorker } from "../../lib/workers/task-budget.js";

let sum = 0;
for (let index = 0; index < 300_000_000; index++) sum = (sum + index) % 1_000_003;
export const loadingWork = sum;

export default budgetedWorker((task: { kind: "echo" | "spin"; label: string }) => {
  if (task.kind === "spin") for (;;);
  return task.label;
});
