/**
 * A progress bar for long commands (evaluation, re-indexing): redrawn in place on a terminal,
 * one line every 10% when output goes to a file or CI log.
 */
export interface ProgressBar {
  update(done: number): void;
  finish(message?: string): void;
}

export function progressBar(label: string, total: number, stream: NodeJS.WriteStream = process.stderr): ProgressBar {
  const started = performance.now();
  let lastDecile = -1;
  const render = (done: number) => {
    const fraction = total > 0 ? Math.min(1, done / total) : 1;
    const elapsed = (performance.now() - started) / 1000;
    const rate = elapsed > 0 ? done / elapsed : 0;
    const eta = rate > 0 && done < total ? ` eta ${Math.ceil((total - done) / rate)} s` : "";
    const width = 30;
    const filled = Math.round(fraction * width);
    return `${label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total} ${(fraction * 100).toFixed(0)}% ${rate.toFixed(1)}/s${eta}`;
  };
  return {
    update(done) {
      if (stream.isTTY) {
        stream.write(`\r${render(done)}\x1b[K`);
        return;
      }
      const decile = total > 0 ? Math.floor((done / total) * 10) : 10;
      if (decile !== lastDecile) {
        lastDecile = decile;
        stream.write(`${render(done)}\n`);
      }
    },
    finish(message) {
      const elapsed = ((performance.now() - started) / 1000).toFixed(1);
      stream.write(`${stream.isTTY ? "\r\x1b[K" : ""}${label}: ${message ?? "done"} in ${elapsed} s\n`);
    },
  };
}
