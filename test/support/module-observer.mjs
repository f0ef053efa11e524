/**
 * Preloaded through NODE_OPTIONS (`--import=<this file>`) into a process a test starts, it writes
 * to the file MODULE_OBSERVER_FILE one JSON line per thread as the thread starts (its id and
 * execArgv) and one per module the thread resolves (its URL). Node runs NODE_OPTIONS' preloads in
 * every worker thread as well, and a thread's own resolve hook sees that thread's imports, so
 * the file says what the main thread and each worker thread loaded: what a test needs to prove
 * that `npm start` runs compiled JavaScript everywhere (no `.ts` module, no tsx loader).
 *
 * Two ways in, both watched: `import` (an ESM resolve hook, module.register) and `require()`
 * (CommonJS's filename resolution), which the hook does not see on Node 20; piscina loads a
 * worker module with require() first, and Node 20.19+ can require ES modules.
 *
 * Plain JavaScript with no imports of the project, so that it changes nothing it observes.
 */
import fs from "node:fs";
import Module, { register } from "node:module";
import { pathToFileURL } from "node:url";
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
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function (...args) {
    const filename = resolveFilename.apply(this, args);
    const url = filename.startsWith("/") ? pathToFileURL(filename).href : filename;
    fs.appendFileSync(file, `${JSON.stringify({ thread: threadId, url })}\n`);
    return filename;
  };
}
