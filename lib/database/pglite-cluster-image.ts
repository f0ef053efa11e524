/**
 * A fresh PGlite data folder starts with initdb, run in WASM on the main thread: 2.4 s of a first
 * `npm start`'s 9-10 s on this project's 2-core machine, and the same cluster every time for a
 * given PGlite build and set of extensions. So it is made once, saved as a tarball (PGlite's own
 * `dumpDataDir` format), and a new data folder is filled from it (`loadDataDir`: 0.5 s) instead.
 *
 * The image is an empty cluster, before any migration: the migrations still run on the user's
 * database, as on PostgreSQL, so the image never has to follow prisma/migrations. It lives in
 * node_modules/.cache (where build tools keep what they can rebuild), named by what it depends
 * on: PGlite's version and the extensions, so an upgrade never loads an old cluster. `npm
 * install` makes it (scripts/prepare-pglite.ts, in postinstall); when it is missing the first
 * start makes it itself, which costs one dump more than initdb alone.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { PGlite, type Extensions } from "@electric-sql/pglite";
import { PROJECT_ROOT } from "../project-files.js";

const IMAGE_FOLDER = path.join(PROJECT_ROOT, "node_modules", ".cache", "context-search");

/** Bumped when what goes into an image changes (not PGlite's or the extensions': those are in the name already). */
const IMAGE_FORMAT = 1;

function pgliteVersion(): string {
  const require = createRequire(import.meta.url);
  try {
    return (require("@electric-sql/pglite/package.json") as { version: string }).version;
  } catch {
    // The package does not export its package.json: read it beside its resolved entry point.
    let folder = path.dirname(require.resolve("@electric-sql/pglite"));
    while (!fs.existsSync(path.join(folder, "package.json"))) folder = path.dirname(folder);
    return (JSON.parse(fs.readFileSync(path.join(folder, "package.json"), "utf8")) as { version: string }).version;
  }
}

/** Where the image for this PGlite and these extensions is kept in `folder` (it may not exist yet). */
export function clusterImagePath(extensions: Extensions, folder: string = IMAGE_FOLDER): string {
  const key = createHash("sha256").update(JSON.stringify({ format: IMAGE_FORMAT, pglite: pgliteVersion(), extensions: Object.keys(extensions).sort() })).digest("hex").slice(0, 16);
  return path.join(folder, `pglite-cluster-${key}.tar`);
}

/** True when `dataDir` holds no cluster yet (PostgreSQL writes PG_VERSION first thing in initdb). */
export function isNewDataDirectory(dataDir: string): boolean {
  return !fs.existsSync(path.join(dataDir, "PG_VERSION"));
}

// One read per process: a test run opens many in-memory databases from the same image.
const images = new Map<string, Promise<Blob>>();

/**
 * The empty cluster's image, made now when there is none. Several processes may make it at once
 * (parallel tests, a first start beside `npm install`): each writes its own file and renames it
 * into place, so a reader sees a whole image or none, and any of them is as good as another.
 */
export function clusterImage(extensions: Extensions, folder: string = IMAGE_FOLDER): Promise<Blob> {
  const file = clusterImagePath(extensions, folder);
  let image = images.get(file);
  if (!image) {
    image = readOrMakeImage(file, extensions);
    images.set(file, image);
    // A failure is not kept: the next database to open tries again.
    image.catch(() => images.delete(file));
  }
  return image;
}

async function readOrMakeImage(file: string, extensions: Extensions): Promise<Blob> {
  try {
    return new Blob([fs.readFileSync(file)]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const cluster = new PGlite({ extensions });
  let image: Blob;
  try {
    await cluster.waitReady;
    image = await cluster.dumpDataDir("none");
  } finally {
    await cluster.close();
  }
  // A cache that cannot be written (a read-only install) only costs the next start the same initdb.
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(temporary, Buffer.from(await image.arrayBuffer()));
    fs.renameSync(temporary, file);
  } catch {
    // The image in memory still serves this process.
    fs.rmSync(temporary, { force: true });
  }
  return image;
}
