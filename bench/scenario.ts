/** What every scenario file (bench/scenarios/*.ts) provides, and what it is given to run. */
import path from "node:path";
import type { CorpusStats } from "./corpus.js";
import type { BenchDatabase } from "./database.js";
import type { BenchOptions, ScenarioName } from "./options.js";
import type { Conditions, EntryBase, RunInfo, ScenarioFile, TargetResult } from "./report.js";

export interface ScenarioContext {
  run: RunInfo;
  options: BenchOptions;
  bench: BenchDatabase;
  size: number;
  corpus: CorpusStats;
  outDir: string;
  log: (line: string) => void;
}

export interface Plot {
  /** File name inside the results folder, e.g. "latency-postgres.svg". */
  file: string;
  svg: string;
}

export interface Scenario<E extends EntryBase = EntryBase> {
  name: ScenarioName;
  title: string;
  run(context: ScenarioContext): Promise<E>;
  renderSection(file: ScenarioFile<E>): string;
  plots?(file: ScenarioFile<E>): Plot[];
  targets?(file: ScenarioFile<E>): TargetResult[];
}

/** What every entry states about where it was measured; scenarios add their own conditions. */
export function baseConditions(context: ScenarioContext, extra: Conditions): Conditions {
  return {
    database: context.bench.description,
    "database version": context.bench.serverVersion.split(" on ")[0] ?? context.bench.serverVersion,
    conversations: context.corpus.insert.conversations,
    messages: context.corpus.insert.messages,
    ...extra,
  };
}

/** A file name for something this entry produced, e.g. "gateway-postgres-1000.cpuprofile". */
export function artifactName(context: ScenarioContext, scenario: ScenarioName, suffix: string): string {
  return `${scenario}-${context.bench.kind}-${context.size}${suffix}`;
}

export function artifactPath(context: ScenarioContext, name: string): string {
  return path.join(context.outDir, name);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
