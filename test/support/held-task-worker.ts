/**
 * A worker for pool tests: each task waits, without using the CPU, until the test releases it
 * through a shared flag (so "a task is running" is a fact, not a timing), then returns its label.
 */
export default function heldTask(task: { release: SharedArrayBuffer; label: string }): string {
  const flag = new Int32Array(task.release);
  // Bounded: a test that forgets to release still ends (after 60 s) instead of hanging.
  Atomics.wait(flag, 0, 0, 60_000);
  return task.label;
}
