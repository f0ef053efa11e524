/**
 * Results on disk: bench/results/<scenario>.json (one entry per database and corpus size,
 * merged with entries earlier runs left there, so a 100k run adds to a 1k/10k run instead of
 * erasing it; every entry says which run it came from), SVG plots, and SUMMARY.md rebuilt from
 * all the JSON files each time anything is written.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { CorpusStats } from "./corpus.js";
import type { DatabaseKind } from "./database.js";
import type { ScenarioName } from "./options.js";
import type { ProfileSummary } from "./profile.js";

export interface MachineInfo {
  node: string;
  platform: string;
  cpus: number;
  cpuModel: string;
  memoryMb: number;
  /** 1, 5 and 15 minute load averages when the run started: other work on the machine shows here. */
  loadAverage: number[];
}

export interface RunInfo {
  runId: string;
  startedAt: string;
  command: string;
  machine: MachineInfo;
}

export type Conditions = Record<string, string | number | boolean>;

export interface EntryBase {
  database: DatabaseKind;
  size: number;
  run: RunInfo;
  conditions: Conditions;
  corpus: CorpusStats;
  /** CPU profiles taken for this entry (where a target was missed). */
  profiles: ProfileSummary[];
}

export interface ScenarioFile<E extends EntryBase = EntryBase> {
  scenario: ScenarioName;
  title: string;
  updatedAt: string;
  entries: E[];
}

export type TargetStatus = "met" | "missed" | "not measured";

export interface TargetResult {
  target: string;
  status: TargetStatus;
  measured: string;
  /** By how much it is missed (or the headroom when met). */
  margin: string;
  /** Where the time goes, when missed. */
  evidence?: string;
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? "unknown",
    memoryMb: Math.round(os.totalmem() / 1024 / 1024),
    loadAverage: os.loadavg().map((value) => Math.round(value * 100) / 100),
  };
}

export function readScenarioFile<E extends EntryBase>(outDir: string, scenario: ScenarioName): ScenarioFile<E> | null {
  const file = path.join(outDir, `${scenario}.json`);
  if (!fs.existsSync(file)) return null;
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as ScenarioFile<E>;
  } catch {
    return null;
  }
}

/** Adds `entry`, replacing an older entry for the same database and size. */
export function writeScenarioEntry<E extends EntryBase>(outDir: string, scenario: ScenarioName, title: string, entry: E): ScenarioFile<E> {
  fs.mkdirSync(outDir, { recursive: true });
  const existing = readScenarioFile<E>(outDir, scenario);
  const kept = (existing?.entries ?? []).filter((other) => !(other.database === entry.database && other.size === entry.size));
  const entries = [...kept, entry].sort((a, b) => a.database.localeCompare(b.database) || a.size - b.size);
  const file: ScenarioFile<E> = { scenario, title, updatedAt: new Date().toISOString(), entries };
  // Written to a temporary name first: an interrupted run never leaves half a JSON file.
  const target = path.join(outDir, `${scenario}.json`);
  fs.writeFileSync(`${target}.tmp`, `${JSON.stringify(file, null, 2)}\n`);
  fs.renameSync(`${target}.tmp`, target);
  return file;
}

// ---------------------------------------------------------------------------------------------
// Markdown helpers

/**
 * A number with fixed decimals, or "–". Ratios that could not be computed are NaN in memory and
 * null once written to JSON; neither may crash a report.
 */
export function fixed(value: number | null | undefined, digits: number): string {
  return typeof value === "number" && Number.isFinite(value) ? value.toFixed(digits) : "–";
}

export function formatMs(value: number | null | undefined): string {
  if (typeof value !== "number" || !Number.isFinite(value)) return "–";
  if (value < 1) return `${value.toFixed(2)} ms`;
  if (value < 100) return `${value.toFixed(1)} ms`;
  return `${Math.round(value)} ms`;
}

export function formatRatio(value: number | null | undefined): string {
  return typeof value !== "number" || !Number.isFinite(value) ? "–" : `${value.toFixed(2)}×`;
}

export function formatPercent(value: number | null | undefined): string {
  return typeof value !== "number" || !Number.isFinite(value) ? "–" : `${(value * 100).toFixed(0)}%`;
}

export function formatRate(value: number | null | undefined): string {
  if (typeof value !== "number" || !Number.isFinite(value)) return "–";
  return value >= 100 ? `${Math.round(value).toLocaleString("en-US")}` : value.toFixed(1);
}

export function formatCount(value: number): string {
  return value.toLocaleString("en-US");
}

/** "0", or the total with what it is made of, e.g. "26 (26 degraded searches)". */
export function formatErrors(errors: { connection: number; timeouts: number; non2xx: number; graphql: number; degraded: number; total: number }): string {
  if (errors.total === 0) return "0";
  const parts = [
    errors.degraded ? `${errors.degraded} degraded (a provider timed out or failed)` : "",
    errors.graphql ? `${errors.graphql} GraphQL errors` : "",
    errors.non2xx ? `${errors.non2xx} non-2xx` : "",
    errors.connection ? `${errors.connection} connection errors (${errors.timeouts} timeouts)` : "",
  ].filter(Boolean);
  return `${errors.total}: ${parts.join(", ")}`;
}

export function databaseLabel(kind: DatabaseKind): string {
  return kind === "pglite" ? "PGlite" : "PostgreSQL";
}

export function entryHeading(entry: EntryBase): string {
  return `${databaseLabel(entry.database)}, ${formatCount(entry.size)} conversations`;
}

/** The conditions of a measurement as one compact paragraph. */
export function renderConditions(entry: EntryBase): string {
  const parts = Object.entries(entry.conditions).map(([key, value]) => `${key}: ${value}`);
  const machine = entry.run.machine;
  parts.push(`run ${entry.run.startedAt} (${entry.run.runId})`, `load average at start ${machine.loadAverage.join(" / ")} on ${machine.cpus} CPUs`);
  return `<sub>Conditions — ${parts.join("; ")}.</sub>`;
}

/** A sentence about what the servers logged as warnings, or nothing. */
export function renderWarnings(warnings: { count: number; samples: string[] } | undefined): string {
  if (!warnings || warnings.count === 0) return "";
  return `⚠️ The servers logged ${warnings.count} warning(s) or error(s), e.g. ${warnings.samples.slice(0, 2).map((sample) => `\`${sample.slice(0, 240)}\``).join("; ")}.`;
}

export function renderProfiles(profiles: readonly ProfileSummary[]): string {
  if (profiles.length === 0) return "";
  return profiles
    .map((profile) => {
      const top = profile.topFunctions.slice(0, 8).map((entry) => `\`${entry.name}\` ${entry.selfPercent}%`);
      const packages = profile.byPackage.slice(0, 8).map((entry) => `${entry.name} ${entry.selfPercent}%`);
      return [
        `CPU profile — ${profile.label} ([${profile.file}](${profile.file}), ${(profile.totalMs / 1000).toFixed(1)} s sampled, main thread busy ${profile.busyPercent}% of it):`,
        `- self time by package: ${packages.join(", ")}`,
        `- top functions by self time: ${top.join(", ")}`,
      ].join("\n");
    })
    .join("\n\n");
}
