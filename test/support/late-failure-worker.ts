/**
 * A worker for pool tests: answers its task, then its thread fails a moment later with no task
 * running (as a parser thread does when it runs out of memory while being stopped for its
 * task's timeout): the pool must not let that error escape.
 */
export default function lateFailure(task: { label: string; failAfterMs: number }): string {
  if (task.failAfterMs >= 0) {
    setTimeout(() => {
      throw new Error(`thread failed after answering ${task.label}`);
    }, task.failAfterMs);
  }
  return task.label;
}
