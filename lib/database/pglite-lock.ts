/**
 * PGlite is one process per data directory: two processes that open the same directory both
 * appear to work and then silently lose data. This lock file (beside the directory, created with
 * O_EXCL so only one process can win) turns that into a loud, immediate error.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export class DataDirectoryLockedError extends Error {
  constructor(dataDir: string, lockPath: string, holder: string) {
    super(
      `The embedded database at ${dataDir} is already open in another process (${holder}). ` +
        `PGlite allows one process per data directory: stop that process (Ctrl-C where it runs) and run this command again, ` +
        `or set PGLITE_DATA_DIR to another folder, or use PostgreSQL with DATABASE_URL. If no such process exists, delete ${lockPath}.`,
    );
    this.name = "DataDirectoryLockedError";
  }
}

export interface DataDirectoryLock {
  path: string;
  release(): void;
}

export function lockDataDirectory(dataDir: string): DataDirectoryLock {
  const lockPath = `${dataDir.replace(/[\\/]+$/, "")}.lock`;
  fs.mkdirSync(path.dirname(lockPath), { recursive: true });
  const owner = { pid: process.pid, host: os.hostname(), since: new Date().toISOString(), command: runningCommand() };

  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(lockPath, "wx");
      fs.writeSync(fd, JSON.stringify(owner));
      fs.closeSync(fd);
      let released = false;
      return {
        path: lockPath,
        release() {
          if (released) return;
          released = true;
          try {
            const current = JSON.parse(fs.readFileSync(lockPath, "utf8")) as { pid?: number };
            if (current.pid === process.pid) fs.unlinkSync(lockPath);
          } catch {
            // Already gone: nothing to release.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = readHolder(lockPath);
      // A lock left by a process that crashed on this host is stale: take it over once.
      if (attempt === 0 && holder && holder.host === os.hostname() && !isAlive(holder.pid)) {
        fs.rmSync(lockPath, { force: true });
        continue;
      }
      // Naming the command ("npm start") tells a newcomer which terminal to stop; a pid alone does not.
      const who = holder ? `pid ${holder.pid} on ${holder.host} since ${holder.since}${holder.command ? `, running \`${holder.command}\`` : ""}` : "unknown holder";
      throw new DataDirectoryLockedError(dataDir, lockPath, who);
    }
  }
  throw new DataDirectoryLockedError(dataDir, lockPath, "unknown holder");
}

/** The command as the user typed it, when npm ran it (`npm start`, `npm run platform-kb`), else the script. */
function runningCommand(): string | undefined {
  const script = process.env.npm_lifecycle_event;
  if (script) return script === "start" || script === "test" ? `npm ${script}` : `npm run ${script}`;
  return process.argv[1] ? `node ${path.relative(process.cwd(), process.argv[1]) || process.argv[1]}` : undefined;
}

function readHolder(lockPath: string): { pid: number; host: string; since: string; command?: string } | null {
  try {
    const parsed = JSON.parse(fs.readFileSync(lockPath, "utf8")) as { pid: number; host: string; since: string; command?: string };
    return typeof parsed.pid === "number" ? parsed : null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
