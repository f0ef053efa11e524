/**
 * Preloaded through NODE_OPTIONS (`--import=<this file>`) into a process a test starts, it writes
 * to the file MODULE_OBSERVER_FILE one JSON line per thread as the thread starts (its id and
 * execArgv) and one per module the thread resolves (its URL). Node runs NODE_OPTIONS' preloads in
 * every worker thread as well, and a thread's own resolve hook sees that thread's imports, so
 * the file says what the main thread and each worker thread loaded: what a test needs to prove
 * that `npm start` runs compiled JavaScript everywhere (no `.ts` module, no tsx loader).
 *
 * Plain JavaScript with no imports of the project, so that it changes nothing it observes.
 */
import fs from "node:fs";
import { register } from "node:module";
import { threadId } from "node:worker_threads";

const file = process.env.MODULE_OBSERVER_FILE;
if (file) {
  fs.appendFileSync(file, `${JSON.stringify({ thread: threadId, execArgv: process.execArgv })}\n`);
  const hooks = `
import fs from "node:fs";
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  fs.appendFileSync(${JSON.stringify(file)}, JSON.stringify({ thread: ${threadId}, url: result.url }) + "\\n");
  return result;
}`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
}
