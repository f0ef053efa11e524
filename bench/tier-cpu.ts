/**
 * CPU time per tier of a multi-process topology (gateways, HAProxy, search instances, other
 * subgraphs, PostgreSQL, PgBouncer), read from /proc/<pid>/stat: where the time of a request
 * goes when the pieces are separate processes. A tier is named by the pids of its root
 * processes; it counts each root and every live descendant (a PostgreSQL postmaster's backends,
 * walsender and walreceiver), each with its waited-for children's time (`cutime`/`cstime`), so a
 * backend that exits between two samples still counts, through its postmaster. CPU is spent
 * time, so unlike latency it hardly moves when other work on a shared machine takes cores away;
 * the machine's whole busy time is sampled beside it to say how much of the machine the
 * topology had. Linux only: elsewhere every figure is null.
 */
import fs from "node:fs";
import { clockTicks } from "./postgres-cpu.js";

export interface TierCpuSample {
  /** Tier name → CPU ms of its process trees; null when none of its roots could be read. */
  tiers: Record<string, number | null>;
  /** Busy CPU ms of the whole machine (every core; /proc/stat less idle and iowait), or null. */
  machineBusyMs: number | null;
}

interface ProcessStat {
  parent: number;
  /** utime + stime + cutime + cstime, in ms. */
  cpuMs: number;
}

function readProcesses(): Map<number, ProcessStat> {
  const processes = new Map<number, ProcessStat>();
  let entries: string[];
  try {
    entries = fs.readdirSync("/proc");
  } catch {
    return processes;
  }
  const tick = 1000 / clockTicks();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // ended between the listing and the read
    }
    // Fields after the command name (which is in parentheses and may hold spaces): state is [0].
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]));
    processes.set(Number(entry), { parent: Number(fields[1]), cpuMs: (utime! + stime! + cutime! + cstime!) * tick });
  }
  return processes;
}

function machineBusyMs(): number | null {
  try {
    const line = fs.readFileSync("/proc/stat", "utf8").split("\n").find((l) => l.startsWith("cpu "));
    if (!line) return null;
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    const total = ticks.slice(0, 8).reduce((sum, value) => sum + value, 0);
    // idle and iowait are fields 4 and 5 (guest time is already inside user time).
    return ((total - ticks[3]! - ticks[4]!) * 1000) / clockTicks();
  } catch {
    return null;
  }
}

/** Samples every tier's CPU now; `tiers` maps a tier's name to its root pids. */
export function sampleTierCpu(tiers: Record<string, readonly (number | undefined)[]>): TierCpuSample {
  const processes = readProcesses();
  const children = new Map<number, number[]>();
  for (const [pid, stat] of processes) children.set(stat.parent, [...(children.get(stat.parent) ?? []), pid]);
  const result: Record<string, number | null> = {};
  for (const [tier, roots] of Object.entries(tiers)) {
    const seen = new Set<number>();
    const stack = roots.filter((pid): pid is number => pid !== undefined && processes.has(pid));
    let total = 0;
    while (stack.length > 0) {
      const pid = stack.pop()!;
      if (seen.has(pid)) continue;
      seen.add(pid);
      total += processes.get(pid)!.cpuMs;
      stack.push(...(children.get(pid) ?? []));
    }
    result[tier] = seen.size > 0 ? total : null;
  }
  return { tiers: result, machineBusyMs: machineBusyMs() };
}

/** CPU ms each tier spent between two samples (null where either could not be read). */
export function tierCpuDelta(before: TierCpuSample, after: TierCpuSample): TierCpuSample {
  const tiers: Record<string, number | null> = {};
  for (const [tier, ms] of Object.entries(after.tiers)) {
    const first = before.tiers[tier];
    tiers[tier] = ms === null || first === null || first === undefined ? null : Math.max(0, ms - first);
  }
  return { tiers, machineBusyMs: after.machineBusyMs === null || before.machineBusyMs === null ? null : after.machineBusyMs - before.machineBusyMs };
}

/** Adds deltas (rounds of one mode). */
export function addTierCpu(a: TierCpuSample, b: TierCpuSample): TierCpuSample {
  const tiers: Record<string, number | null> = { ...a.tiers };
  for (const [tier, ms] of Object.entries(b.tiers)) tiers[tier] = ms === null || tiers[tier] === null ? null : (tiers[tier] ?? 0) + ms;
  return { tiers, machineBusyMs: a.machineBusyMs === null || b.machineBusyMs === null ? null : a.machineBusyMs + b.machineBusyMs };
}
