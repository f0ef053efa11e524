// `npm run build` (and `npm install`'s postinstall): compiles the product's TypeScript to
// JavaScript in dist/, one .js file per .ts file in the same layout (dist/lib/config.js for
// lib/config.ts), so that every process and worker thread of `npm start` and the other product
// scripts runs plain JavaScript instead of transpiling with tsx on every start (20-33 s of
// module loading per start on a busy 2-core machine; see issue 38).
//
// esbuild, not tsc: it transpiles the 290 files in well under a second, where `tsc -p .` took
// tens of seconds here (it type-checks everything, tests included; `npm run typecheck` does that
// job). Files that ship beside the code (schemas, demo data, migrations, web/dist) are not copied:
// lib/project-files.ts maps a path next to a compiled module back to the source tree.
//
// dist/.build.json records what each output was built from (size and modification time of every
// source, the esbuild version, this file's own text). scripts/run.mjs compares it with the tree
// before it runs anything and rebuilds when they differ, so a stale build never runs.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const DIST = path.join(ROOT, "dist");
const MANIFEST = path.join(DIST, ".build.json");
const LOCK = path.join(DIST, ".build.lock");
/** What runs in production: bench/ and the evaluation script are developer tools run through tsx, test/ through ts-jest. */
const SOURCE_DIRECTORIES = ["app", "lib", "subgraphs", "gateway", "scripts", "deploy", "generated"];

function sourceFiles() {
  const files = [];
  for (const directory of SOURCE_DIRECTORIES) {
    const absolute = path.join(ROOT, directory);
    if (!fs.existsSync(absolute)) continue;
    for (const entry of fs.readdirSync(absolute, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith(".ts") || entry.name.endsWith(".d.ts")) continue;
      files.push(path.relative(ROOT, path.join(entry.parentPath ?? entry.path, entry.name)));
    }
  }
  return files.sort();
}

/** Everything a build depends on: a change to any of it means dist/ is stale. */
function currentKey() {
  const esbuildPackage = path.join(ROOT, "node_modules", "esbuild", "package.json");
  const esbuildVersion = fs.existsSync(esbuildPackage) ? JSON.parse(fs.readFileSync(esbuildPackage, "utf8")).version : "missing";
  const hash = createHash("sha256");
  hash.update(fs.readFileSync(fileURLToPath(import.meta.url)));
  hash.update(fs.readFileSync(path.join(ROOT, "tsconfig.json")));
  hash.update(`esbuild ${esbuildVersion}\n`);
  const sources = {};
  for (const file of sourceFiles()) {
    const stat = fs.statSync(path.join(ROOT, file));
    sources[file] = `${stat.size}:${Math.trunc(stat.mtimeMs)}`;
  }
  return { config: hash.digest("hex"), sources };
}

function readManifest() {
  try {
    return JSON.parse(fs.readFileSync(MANIFEST, "utf8"));
  } catch {
    return null;
  }
}

/** Why dist/ does not match the tree (null when it does): the first few differences, for the log. */
export function staleness(key = currentKey()) {
  const built = readManifest();
  if (!built) return "dist/ has not been built yet";
  if (built.config !== key.config) return "the build configuration changed";
  const changed = [];
  for (const [file, stamp] of Object.entries(key.sources)) if (built.sources[file] !== stamp) changed.push(file);
  for (const file of Object.keys(built.sources)) if (!(file in key.sources)) changed.push(`${file} (removed)`);
  if (changed.length === 0) return null;
  return `${changed.length} source file(s) changed since the last build: ${changed.slice(0, 3).join(", ")}${changed.length > 3 ? ", ..." : ""}`;
}

function outputOf(source) {
  return path.join(DIST, source.replace(/\.ts$/, ".js"));
}

/** Compiles every source into dist/ and records the key; removes outputs whose source is gone. */
export async function build({ log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  let esbuild;
  try {
    esbuild = await import("esbuild");
  } catch (error) {
    throw new Error(`cannot compile the TypeScript sources: esbuild is not installed (run npm install): ${error.message}`);
  }
  const started = performance.now();
  const key = currentKey();
  const files = Object.keys(key.sources);
  fs.mkdirSync(DIST, { recursive: true });
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: files,
    outdir: DIST,
    outbase: ".",
    bundle: false,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: true,
    tsconfig: path.join(ROOT, "tsconfig.json"),
    logLevel: "warning",
  });
  const expected = new Set(files.flatMap((file) => [outputOf(file), `${outputOf(file)}.map`]));
  for (const directory of SOURCE_DIRECTORIES) {
    const absolute = path.join(DIST, directory);
    if (!fs.existsSync(absolute)) continue;
    for (const entry of fs.readdirSync(absolute, { recursive: true, withFileTypes: true })) {
      const file = path.join(entry.parentPath ?? entry.path, entry.name);
      if (entry.isFile() && !expected.has(file)) fs.rmSync(file);
    }
  }
  // Written last: a build that failed half-way leaves the old key, or none, so it is redone.
  fs.writeFileSync(MANIFEST, JSON.stringify(key));
  log(`compiled ${files.length} TypeScript files to dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Rebuilds dist/ when it does not match the sources, and returns once it does. Several processes
 * may start at once (a topology, test files in parallel): one builds, under a lock directory, and
 * the others wait for it and then check again, so none runs half-written output.
 */
export async function ensureBuilt({ force = false, log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  let reason = force ? "asked to build" : staleness();
  if (!reason) return;
  fs.mkdirSync(DIST, { recursive: true });
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
    } catch (error) {
      if (error.code !== "EEXIST") throw unbuildable(error);
      // A builder that died leaves its lock: after a minute nobody is building any more.
      const age = Date.now() - fs.statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs;
      if (age > 60_000) fs.rmSync(LOCK, { recursive: true, force: true });
      await sleep(100);
      if (force) continue;
      reason = staleness();
      if (!reason) return;
      continue;
    }
    try {
      if (!force) {
        reason = staleness();
        if (!reason) return;
        log(`${reason}: compiling`);
      }
      await build({ log }).catch((error) => {
        throw unbuildable(error);
      });
      return;
    } finally {
      fs.rmSync(LOCK, { recursive: true, force: true });
    }
  }
}

function unbuildable(error) {
  return Object.assign(new Error(`dist/ is out of date and could not be rebuilt (${error.message}). Run \`npm run build\` in ${ROOT} and start again.`), { code: "BUILD_FAILED" });
}

if (process.argv[1] && pathToFileURL(path.resolve(process.argv[1])).href === import.meta.url) {
  try {
    await ensureBuilt({ force: true });
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
