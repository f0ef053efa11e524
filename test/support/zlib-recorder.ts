/**
 * node:zlib's functions wrapped to record every call (zlib-observing-worker.ts imports this
 * first, so that the parsers it imports next see the wrappers).
 */
import { createRequire, syncBuiltinESMExports } from "node:module";

const require = createRequire(import.meta.url);
const zlib = require("node:zlib") as Record<string, unknown>;
export const calls: string[] = [];
for (const [name, value] of Object.entries(zlib)) {
  // Every function that makes or drives a native handle: the one-shot calls, the create* streams and the classes.
  if (typeof value !== "function" || !/^(inflate|deflate|gunzip|gzip|unzip|brotli|zstd|create|Inflate|Deflate|Gunzip|Gzip|Unzip|InflateRaw|DeflateRaw|Brotli|Zstd)/.test(name)) continue;
  const original = value as (...args: unknown[]) => unknown;
  // Some (createDeflate, ...) are read-only but configurable: defined anew rather than assigned.
  Object.defineProperty(zlib, name, {
    value: function (this: unknown, ...args: unknown[]) {
      calls.push(name);
      return new.target ? Reflect.construct(original, args, new.target) : original.apply(this, args);
    },
    writable: true,
    enumerable: true,
    configurable: true,
  });
}
// `import { inflateSync } from "node:zlib"` in the parsers must see the wrappers too.
syncBuiltinESMExports();

