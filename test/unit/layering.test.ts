/**
 * The floors of the tree, checked on every run: lib/ is the shared layer and imports nothing
 * above it (subgraphs/, gateway/, app/, bench/, scripts/, test/); a subgraph reaches another
 * subgraph only through the public modules listed below; and neither a subgraph nor the gateway
 * reaches up into what assembles them (app/, bench/, scripts/). An arrow that runs back down the
 * tree fails here with the file and the import that drew it.
 *
 * Import specifiers come from a plain scan of the source (static `import … from`, `export … from`,
 * side-effect `import "…"` and dynamic `import("…")`); only relative specifiers can cross a floor,
 * so package imports are ignored.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "@jest/globals";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * What other subgraphs (and the code above them) may import from each subgraph, by path inside its
 * folder. index.ts is the subgraph itself (what subgraphs/index.ts registers and startSubgraph
 * serves); search.ts is its part in the unified search (subgraphs/search/providers/registry.ts);
 * ingestion.ts is how documents enter the knowledge base from outside a request (the demo seed).
 * Everything else in a subgraph's folder is internal to it.
 */
const PUBLIC_MODULES: Record<string, readonly string[]> = {
  conversations: ["index.ts"],
  "knowledge-base": ["index.ts"],
  search: ["index.ts"],
  "external-search": ["index.ts"],
};

/** The top-level folders each floor must not import from. */
const FORBIDDEN_ABOVE: Record<string, readonly string[]> = {
  lib: ["subgraphs", "gateway", "app", "bench", "scripts", "test"],
  subgraphs: ["gateway", "app", "bench", "scripts", "test"],
  gateway: ["subgraphs", "app", "bench", "scripts", "test"],
};

const SOURCE_EXTENSIONS = [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"];

interface ImportEdge {
  /** the importing file, relative to the repository root */
  from: string;
  specifier: string;
  /** what the specifier points at, relative to the repository root */
  target: string;
}

/** Every module specifier in `source`, in order of appearance. */
function importSpecifiers(source: string): string[] {
  const found: { at: number; specifier: string }[] = [];
  const patterns = [
    // `import x from "…"`, `import type { A } from "…"`, `export { a } from "…"`, `export * from "…"`,
    // spanning lines; anchored at a line start so that doc comments (" * import …") do not match.
    /^[ \t]*(?:import|export)\b[^;"'`]*?\bfrom\s*["']([^"'\n]+)["']/gm,
    // `import "…"` for its side effects
    /^[ \t]*import\s*["']([^"'\n]+)["']/gm,
    // `await import("…")` anywhere
    /\bimport\s*\(\s*["']([^"'\n]+)["']\s*\)/g,
  ];
  for (const pattern of patterns) {
    for (const match of source.matchAll(pattern)) found.push({ at: match.index, specifier: match[1]! });
  }
  return found.sort((a, b) => a.at - b.at).map((entry) => entry.specifier);
}

function sourceFilesUnder(folder: string): string[] {
  const files: string[] = [];
  const walk = (directory: string) => {
    for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
      const full = path.join(directory, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules") walk(full);
      } else if (SOURCE_EXTENSIONS.some((extension) => entry.name.endsWith(extension)) && !entry.name.endsWith(".d.ts")) {
        files.push(full);
      }
    }
  };
  walk(path.join(ROOT, folder));
  return files;
}

/** The relative imports of every source file under `folder`, resolved to repository paths. */
function relativeImportsUnder(folder: string): ImportEdge[] {
  return sourceFilesUnder(folder).flatMap((file) =>
    importSpecifiers(fs.readFileSync(file, "utf8"))
      .filter((specifier) => specifier.startsWith("./") || specifier.startsWith("../"))
      .map((specifier) => ({
        from: toRepositoryPath(file),
        specifier,
        target: toRepositoryPath(path.resolve(path.dirname(file), specifier)),
      })),
  );
}

function toRepositoryPath(absolute: string): string {
  return path.relative(ROOT, absolute).split(path.sep).join("/");
}

/** "subgraphs/knowledge-base/search.js" and "…/search.ts" are the same module. */
function withoutExtension(modulePath: string): string {
  const extension = SOURCE_EXTENSIONS.find((candidate) => modulePath.endsWith(candidate));
  return extension ? modulePath.slice(0, -extension.length) : modulePath;
}

const describeEdge = (edge: ImportEdge) => `${edge.from} imports "${edge.specifier}" (${edge.target})`;

describe("import scan", () => {
  it("finds static, re-exported, type-only, side-effect and dynamic imports, and skips comments", () => {
    const source = [
      "/**",
      ' * import { notAnImport } from "../comment.js";',
      " */",
      'import fs from "node:fs";',
      "import {",
      "  a,",
      "  type B,",
      '} from "../lib/multi-line.js";',
      'import type { C } from "./type-only.js";',
      'export { d } from "../re-export.js";',
      'export * from "./star.js";',
      'import "./side-effect.js";',
      'const late = await import("../dynamic.js");',
      'const text = "not from here";',
    ].join("\n");
    expect(importSpecifiers(source)).toEqual(["node:fs", "../lib/multi-line.js", "./type-only.js", "../re-export.js", "./star.js", "./side-effect.js", "../dynamic.js"]);
  });

  it("sees the imports of a real file", () => {
    // If the scan silently found nothing, every floor below would pass.
    const edges = relativeImportsUnder("subgraphs/search").filter((edge) => edge.from === "subgraphs/search/providers/registry.ts");
    expect(edges.map((edge) => edge.target)).toEqual(expect.arrayContaining(["subgraphs/conversations/index.js", "subgraphs/knowledge-base/index.js"]));
  });
});

describe("floors", () => {
  it.each(Object.keys(FORBIDDEN_ABOVE))("%s/ imports nothing from the floors above it", (floor) => {
    const forbidden = FORBIDDEN_ABOVE[floor]!;
    const upward = relativeImportsUnder(floor).filter((edge) => forbidden.some((above) => edge.target === above || edge.target.startsWith(`${above}/`)));
    expect(upward.map(describeEdge)).toEqual([]);
  });

  it("a subgraph imports another subgraph only through that subgraph's public modules", () => {
    const crossings = relativeImportsUnder("subgraphs").filter((edge) => {
      const [, own] = edge.from.split("/");
      const [top, other, ...rest] = edge.target.split("/");
      // subgraphs/index.ts, the registry, has no folder of its own: it too may import only
      // public modules (each subgraph's index.ts).
      if (top !== "subgraphs" || rest.length === 0 || other === own) return false;
      return !(PUBLIC_MODULES[other!] ?? []).some((module) => withoutExtension(module) === withoutExtension(rest.join("/")));
    });
    expect(crossings.map(describeEdge)).toEqual([]);
  });

  it("no subgraph imports the registry that sits above them all", () => {
    const registryImports = relativeImportsUnder("subgraphs").filter((edge) => edge.from.split("/").length >= 3 && withoutExtension(edge.target) === "subgraphs/index");
    expect(registryImports.map(describeEdge)).toEqual([]);
  });

  it("lists only public modules that exist, for every subgraph folder", () => {
    const folders = fs
      .readdirSync(path.join(ROOT, "subgraphs"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    expect(Object.keys(PUBLIC_MODULES).sort()).toEqual(folders);
    for (const [subgraph, modules] of Object.entries(PUBLIC_MODULES)) {
      for (const module of modules) expect(`${subgraph}/${module}: ${fs.existsSync(path.join(ROOT, "subgraphs", subgraph, module))}`).toBe(`${subgraph}/${module}: true`);
    }
  });
});
