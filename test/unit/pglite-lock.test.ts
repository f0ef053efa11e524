import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "@jest/globals";
import { DataDirectoryLockedError, lockDataDirectory } from "../../lib/database/pglite-lock.js";

const dirs: string[] = [];
function tempDataDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pglite-lock-"));
  dirs.push(dir);
  return path.join(dir, "data");
}
afterEach(() => dirs.splice(0).forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

describe("lockDataDirectory", () => {
  it("lets one holder in and refuses a second with a message that says what to do", () => {
    const dataDir = tempDataDir();
    const lock = lockDataDirectory(dataDir);
    expect(() => lockDataDirectory(dataDir)).toThrow(DataDirectoryLockedError);
    expect(() => lockDataDirectory(dataDir)).toThrow(new RegExp(`already open in another process \\(pid ${process.pid}`));
    expect(() => lockDataDirectory(dataDir)).toThrow(/stop that process \(Ctrl-C where it runs\) and run this command again/);
    lock.release();
    lockDataDirectory(dataDir).release();
    expect(fs.existsSync(lock.path)).toBe(false);
  });

  it("names the command that holds the directory as its user typed it, so they know what to stop", () => {
    const dataDir = tempDataDir();
    const holder = `${dataDir}.lock`;
    fs.mkdirSync(path.dirname(holder), { recursive: true });
    // What `npm start` leaves: npm names the script it runs in npm_lifecycle_event.
    const started = spawnSync(process.execPath, ["--import", "tsx", "-e", `import("./lib/database/pglite-lock.ts").then((m) => { m.lockDataDirectory(${JSON.stringify(dataDir)}); process.stdout.write(require("node:fs").readFileSync(${JSON.stringify(holder)}, "utf8")); })`], { env: { ...process.env, npm_lifecycle_event: "start" } });
    const written = JSON.parse(started.stdout.toString()) as { command: string };
    expect(written.command).toBe("npm start");
    // The holder is gone (it exited without releasing), so make the lock look held by this live process.
    fs.writeFileSync(holder, JSON.stringify({ ...written, pid: process.pid, host: os.hostname() }));
    expect(() => lockDataDirectory(dataDir)).toThrow(/running `npm start`\)\. PGlite allows one process per data directory: stop that process/);
  });

  it("takes over a lock left by a process that no longer exists", () => {
    const dataDir = tempDataDir();
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString();
    fs.writeFileSync(`${dataDir}.lock`, JSON.stringify({ pid: Number(dead), host: os.hostname(), since: "earlier" }));
    const lock = lockDataDirectory(dataDir);
    expect(JSON.parse(fs.readFileSync(lock.path, "utf8")).pid).toBe(process.pid);
    lock.release();
  });
});
