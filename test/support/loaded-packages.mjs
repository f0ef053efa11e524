/**
 * Run as `node --import tsx test/support/loaded-packages.mjs <prefix> <module> [<module> ...]`:
 * imports each module (a path, or a URL: a `data:` module can import file URLs and call what it
 * imported) and prints, as JSON, the npm packages starting with <prefix> that were loaded on the
 * way. It is how a test sees what a module's import costs, in a process of its own.
 *
 * Seen by a resolve hook (module.register; it runs on the loader's thread, so the list is asked
 * for over a port once the imports are done) and, for anything loaded with require() from a
 * CommonJS package, which that hook does not see on Node 20, by the CommonJS module cache.
 */
import { createRequire, register } from "node:module";
import { MessageChannel } from "node:worker_threads";
import { pathToFileURL } from "node:url";

const hooks = `
let seen = new Set();
export function initialize({ port }) {
  port.on("message", () => port.postMessage([...seen]));
  port.unref();
}
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  seen.add(result.url);
  return result;
}`;

const [prefix, ...modules] = process.argv.slice(2);
const { port1, port2 } = new MessageChannel();
register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { port: port2 }, transferList: [port2] });

for (const module of modules) await import(/^[a-z]+:/.test(module) ? module : pathToFileURL(module).href);

const resolved = await new Promise((done) => {
  port1.once("message", done);
  port1.postMessage("list");
});
port1.close();
const required = Object.keys(createRequire(import.meta.url).cache).map((path) => pathToFileURL(path).href);
const packages = new Set();
for (const url of [...resolved, ...required]) {
  const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (match && match[1].startsWith(prefix)) packages.add(match[1]);
}
console.log(JSON.stringify([...packages].sort()));
