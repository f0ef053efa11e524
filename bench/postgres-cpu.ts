/**
 * PostgreSQL's own CPU time, read from /proc/<pid>/stat (utime + stime) of this machine's
 * postgres processes: the benchmark's database server runs here, so its CPU per search can be
 * measured beside Node's. Two sums per measurement:
 * - the backends serving the benchmark's throwaway database (pg_stat_activity), which is what a
 *   search costs PostgreSQL;
 * - every postgres process on the machine, which also counts other work on the shared server
 *   (other engineers' tests, background writers): shown for context only.
 * A backend that exits mid-measurement takes its CPU with it, so measurements keep their
 * connections open from start to end. Where /proc cannot be read (another OS, a remote server,
 * a container without access) every figure is null and the report says so.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import type pg from "pg";

/** Kernel clock ticks per second (getconf CLK_TCK; 100 when it cannot be read): the unit of /proc CPU times. */
let ticksPerSecond: number | null = null;

export function clockTicks(): number {
  if (ticksPerSecond !== null) return ticksPerSecond;
  try {
    const value = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
    ticksPerSecond = Number.isFinite(value) && value > 0 ? value : 100;
  } catch {
    ticksPerSecond = 100;
  }
  return ticksPerSecond;
}

/** utime + stime of one process in milliseconds, or null when it is gone or unreadable. */
export function processCpuMs(pid: number): number | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its end.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return null;
  return ((utime + stime) * 1000) / clockTicks();
}

/** Every process on this machine whose command name is postgres. */
export function machinePostgresPids(): number[] {
  let entries: string[];
  try {
    entries = fs.readdirSync("/proc");
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const entry of entries) {
    if (entry.length === 0 || entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres") pids.push(Number(entry));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return pids;
}

export interface PostgresCpuSample {
  /** pid → CPU ms, the benchmark database's backends. */
  database: Map<number, number>;
  /** pid → CPU ms, every postgres process here. */
  machine: Map<number, number>;
}

export interface PostgresCpuDelta {
  /** CPU ms the benchmark database's backends spent between the samples; null if unreadable. */
  databaseMs: number | null;
  /** CPU ms all postgres processes on this machine spent; null if unreadable. */
  machineMs: number | null;
  backends: number;
}

/** Samples CPU now. `monitor` is a connection to the benchmark database; its own backend is left out. */
export async function samplePostgresCpu(monitor: pg.Client): Promise<PostgresCpuSample> {
  const { rows } = await monitor.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
  const database = new Map<number, number>();
  for (const { pid } of rows) {
    const ms = processCpuMs(pid);
    if (ms !== null) database.set(pid, ms);
  }
  const machine = new Map<number, number>();
  for (const pid of machinePostgresPids()) {
    const ms = processCpuMs(pid);
    if (ms !== null) machine.set(pid, ms);
  }
  return { database, machine };
}

/** What was spent between two samples; a backend first seen in `after` counts from zero. */
export function postgresCpuDelta(before: PostgresCpuSample, after: PostgresCpuSample): PostgresCpuDelta {
  const spent = (first: Map<number, number>, second: Map<number, number>) => {
    let total = 0;
    for (const [pid, ms] of second) total += ms - (first.get(pid) ?? 0);
    return total;
  };
  return {
    databaseMs: after.database.size > 0 ? spent(before.database, after.database) : null,
    machineMs: after.machine.size > 0 ? spent(before.machine, after.machine) : null,
    backends: after.database.size,
  };
}
