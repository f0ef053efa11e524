/**
 * Prints, after a run, the test files that took longest, so a CI log says where the suite's
 * time goes without a second run (Jest's default reporter shows a file's time only beside its
 * PASS line, scattered through the log). Its summary is the first thing to read before a
 * change that adds minutes: CI's budget is shared by three passes.
 */
export default class SlowestFilesReporter {
  constructor(_globalConfig, options = {}) {
    this.count = options.count ?? 15;
  }

  onRunComplete(_contexts, results) {
    const files = results.testResults
      .map((result) => ({ file: result.testFilePath.replace(`${process.cwd()}/`, ""), seconds: (result.perfStats.end - result.perfStats.start) / 1000 }))
      .filter((entry) => Number.isFinite(entry.seconds) && entry.seconds > 0)
      .sort((a, b) => b.seconds - a.seconds);
    if (files.length === 0) return;
    const total = files.reduce((sum, entry) => sum + entry.seconds, 0);
    const lines = files.slice(0, this.count).map((entry) => `${entry.seconds.toFixed(1).padStart(7)} s  ${entry.file}`);
    process.stderr.write(`\nSlowest ${Math.min(this.count, files.length)} of ${files.length} test files (${total.toFixed(0)} s in all files, run ${((Date.now() - results.startTime) / 1000).toFixed(0)} s):\n${lines.join("\n")}\n`);
  }
}
