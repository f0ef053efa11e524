/**
 * Files that ship beside the code (GraphQL schemas next to their subgraph, demo data, SQL
 * migrations, the built web app, the committed supergraph) are read from the source tree, also
 * when the code runs compiled. `npm start` and the other product scripts run dist/, which mirrors
 * the tree but holds only JavaScript (scripts/build.mjs), so a path next to a compiled module is
 * mapped back to the same path in the project: `besideModule("./schema.graphql", import.meta.url)`
 * names subgraphs/search/schema.graphql from dist/subgraphs/search/index.js as from
 * subgraphs/search/index.ts (tsx, Jest).
 */
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = fileURLToPath(import.meta.url);
/** The tree this module runs from: the project itself, or its dist/ folder when compiled. */
const RUNNING_TREE = path.resolve(path.dirname(HERE), "..");
const COMPILED = path.extname(HERE) === ".js" && path.basename(RUNNING_TREE) === "dist";

/** The project's root folder (where package.json is), whether the code runs from source or from dist/. */
export const PROJECT_ROOT = COMPILED ? path.dirname(RUNNING_TREE) : RUNNING_TREE;

/** `relative` resolved against the module at `moduleUrl` (pass `import.meta.url`), in the source tree. */
export function besideModule(relative: string, moduleUrl: string): URL {
  const resolved = fileURLToPath(new URL(relative, moduleUrl));
  if (!COMPILED) return pathToFileURL(resolved);
  const inside = path.relative(RUNNING_TREE, resolved);
  if (inside.startsWith("..") || path.isAbsolute(inside)) return pathToFileURL(resolved);
  const mapped = pathToFileURL(path.join(PROJECT_ROOT, inside));
  // A folder keeps its trailing slash, as new URL("./tools/", …) gives it.
  if (relative.endsWith("/") && !mapped.href.endsWith("/")) return new URL(`${mapped.href}/`);
  return mapped;
}

/**
 * Node's arguments that run a product script (`scripts/start-gateway.ts`, relative to the project)
 * the way package.json's scripts run it: compiled, through scripts/run.mjs, which rebuilds dist/
 * first if the sources changed. For code that starts the product's processes itself (the local
 * topology, tests of whole processes): `spawn(process.execPath, productScriptArguments(...))`.
 */
export function productScriptArguments(script: string, ...args: string[]): string[] {
  return [path.join(PROJECT_ROOT, "scripts", "run.mjs"), path.resolve(PROJECT_ROOT, script), ...args];
}
