/**
 * Run as `node --allow-natives-syntax --import tsx test/support/builtin-prototypes.mjs <module> [<module> ...]`
 * (each a file or a package name):
 * imports each module and prints, as JSON, the built-in prototypes whose properties V8 no longer
 * keeps in fast mode (%HasFastProperties).
 *
 * Why it matters: one library that defines `class … extends String` (ioredis 6.0.0 did, for
 * RESP3's verbatim strings) leaves String.prototype in dictionary mode, and every string method
 * call in the process then takes V8's slow path. Measured here: the highlights analyzer's loop
 * over a page's messages ran 0.70 ms instead of 0.24 ms, only because ioredis was imported.
 * Nothing in a profile points at the library, so a test has to.
 */
import fs from "node:fs";
import { pathToFileURL } from "node:url";

// Natives syntax is not JavaScript a file may hold: V8 parses it here, at run time.
const hasFastProperties = new Function("object", "return %HasFastProperties(object)");

// A file path, or a package name (resolved from here, as the server resolves it).
for (const module of process.argv.slice(2)) await import(fs.existsSync(module) ? pathToFileURL(module).href : module);

const prototypes = { String, Number, Boolean, Symbol, Object, Array, Function, RegExp, Map, Set, WeakMap, Promise, Date, Error, Uint8Array, ArrayBuffer };
const slow = Object.entries(prototypes)
  .filter(([, constructor]) => !hasFastProperties(constructor.prototype))
  .map(([name]) => `${name}.prototype`);
console.log(JSON.stringify(slow));
