/**
 * The product runs compiled (scripts/build.mjs, scripts/run.mjs): a stale build never runs. Tried
 * on a small project of its own in a temporary folder (the build and launcher copied in, this
 * project's node_modules linked for esbuild), so that nothing here rewrites the real dist/ under
 * processes other tests are running: a script runs compiled, a changed source is rebuilt before
 * it runs, saying so, an unchanged tree is not, and the output of a removed source goes away.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { PROJECT_ROOT } from "../../lib/project-files.js";

let project: string;

function write(file: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
  fs.writeFileSync(path.join(project, file), text);
}

function run(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ["scripts/run.mjs", ...args], { cwd: project, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" }, timeout: 120_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(() => {
  project = fs.mkdtempSync(path.join(os.tmpdir(), "compiled-build-"));
  for (const file of ["scripts/build.mjs", "scripts/run.mjs", "tsconfig.json", "package.json"]) write(file, fs.readFileSync(path.join(PROJECT_ROOT, file), "utf8"));
  fs.symlinkSync(path.join(PROJECT_ROOT, "node_modules"), path.join(project, "node_modules"));
  write("lib/greeting.ts", `export const greeting: string = "hello";\n`);
  write("lib/gone.ts", `export const gone = 1;\n`);
  write(
    "scripts/hello.ts",
    `import { greeting } from "../lib/greeting.js";\nconst args: string[] = process.argv.slice(2);\nconsole.log(JSON.stringify({ greeting, args, main: process.argv[1], url: import.meta.url, execArgv: process.execArgv }));\n`,
  );
});

afterAll(() => {
  fs.rmSync(project, { recursive: true, force: true });
});

describe("scripts/run.mjs", () => {
  it("builds a tree that was never built, then runs the script's JavaScript with its arguments", () => {
    const first = run("scripts/hello.ts", "--flag", "value");
    expect(first.status).toBe(0);
    expect(first.stderr).toMatch(/dist\/ has not been built yet: compiling/);
    const printed = JSON.parse(first.stdout) as { greeting: string; args: string[]; main: string; url: string; execArgv: string[] };
    expect(printed).toMatchObject({ greeting: "hello", args: ["--flag", "value"], main: path.join(project, "dist/scripts/hello.js"), execArgv: [] });
    expect(printed.url).toBe(`file://${path.join(project, "dist/scripts/hello.js")}`);
  });

  it("runs an unchanged build as it is, without compiling", () => {
    const again = run("scripts/hello.ts");
    expect(again.status).toBe(0);
    expect(again.stderr).toBe("");
  });

  it("rebuilds, saying which source changed, before running a tree edited since the build", () => {
    write("lib/greeting.ts", `export const greeting: string = "hello again, with a longer text";\n`);
    const edited = run("scripts/hello.ts");
    expect(edited.status).toBe(0);
    expect(edited.stderr).toMatch(/1 source file\(s\) changed since the last build: lib\/greeting\.ts: compiling/);
    expect(JSON.parse(edited.stdout)).toMatchObject({ greeting: "hello again, with a longer text" });
  });

  it("removes the output of a source that is gone", () => {
    expect(fs.existsSync(path.join(project, "dist/lib/gone.js"))).toBe(true);
    fs.rmSync(path.join(project, "lib/gone.ts"));
    const after = run("scripts/hello.ts");
    expect(after.stderr).toMatch(/lib\/gone\.ts \(removed\)/);
    expect(fs.existsSync(path.join(project, "dist/lib/gone.js"))).toBe(false);
  });

  it("says what to do when the sources do not compile, and runs nothing", () => {
    write("lib/greeting.ts", `export const greeting: string = "unterminated;\n`);
    const broken = run("scripts/hello.ts");
    expect(broken.status).toBe(1);
    expect(broken.stdout).toBe("");
    expect(broken.stderr).toMatch(/could not be rebuilt .*Run `npm run build`/s);
  });

  it("refuses a script outside the project or not TypeScript, with its usage", () => {
    expect(run("/etc/hostname.ts").stderr).toMatch(/is not inside/);
    expect(run("scripts/hello.js").stderr).toMatch(/usage: node scripts\/run\.mjs/);
  });
});

describe("npm run build", () => {
  it("compiles every source of the product folders, and says how many", () => {
    write("lib/greeting.ts", `export const greeting: string = "fixed";\n`);
    const built = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: project, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } });
    expect(built.status).toBe(0);
    expect(built.stderr).toMatch(/compiled 2 TypeScript files to dist\//);
    expect(JSON.parse(run("scripts/hello.ts").stdout)).toMatchObject({ greeting: "fixed" });
  });
});
