// `node scripts/run.mjs scripts/start.ts [arguments]`: how package.json runs every product script
// (npm start, start:gateway, db:migrate, ...). It runs the compiled JavaScript of the named source
// (dist/scripts/start.js), in this same process (no wrapper process: signals reach the script's
// own handlers), after checking that dist/ matches the sources: a stale or missing build is
// rebuilt first, with a line on stderr saying why (scripts/build.mjs), so that what runs is always
// what the tree says. Worker threads inherit this process's flags, which carry no TypeScript
// loader, and load compiled .js workers (lib/workers/pool.ts finds them by the caller's extension).
import module from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { DIST, ROOT, ensureBuilt } from "./build.mjs";

const [source, ...rest] = process.argv.slice(2);
if (!source || !source.endsWith(".ts")) {
  process.stderr.write("usage: node scripts/run.mjs <script.ts under this project> [arguments...]\n");
  process.exit(2);
}
const relative = path.relative(ROOT, path.resolve(source));
if (relative.startsWith("..")) {
  process.stderr.write(`${source} is not inside ${ROOT}\n`);
  process.exit(2);
}

try {
  await ensureBuilt();
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}

// Node 22.1+ keeps V8's compiled code of every module it loads (ours and node_modules') between
// starts, which makes a restart parse less; Node 20 has no such cache and skips this. Worker
// threads read the same cache through the environment variable.
if (typeof module.enableCompileCache === "function" && !process.env.NODE_DISABLE_COMPILE_CACHE) {
  const directory = path.join(DIST, ".compile-cache");
  process.env.NODE_COMPILE_CACHE ??= directory;
  module.enableCompileCache(process.env.NODE_COMPILE_CACHE);
}

const compiled = path.join(DIST, relative.replace(/\.ts$/, ".js"));
// The script sees the command line it would have had run directly (`node dist/scripts/x.js ...`):
// its arguments from argv[2], and argv[1] naming itself (scripts check that to know they are main).
process.argv.splice(1, process.argv.length - 1, compiled, ...rest);
await import(pathToFileURL(compiled).href);
