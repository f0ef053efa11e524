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
    lock.release();
    lockDataDirectory(dataDir).release();
    expect(fs.existsSync(lock.path)).toBe(false);
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
