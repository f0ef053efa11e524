/**
 * `npm run bench`: loads a generated corpus of each requested size into a fresh database of
 * each requested kind, runs the selected scenarios against it, and writes
 * bench/results/<scenario>.json, SVG plots and SUMMARY.md. See bench/options.ts for the flags.
 *
 * Each (database, size) pair gets one corpus, loaded once and shared by the scenarios that run
 * on it; every scenario starts the servers it needs (ports chosen by the OS, 127.0.0.1 only)
 * and stops them before the next begins. Numbers are reported as ratios against a baseline
 * measured in the same process and run, because absolute times drift on a shared machine.
 */
import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";
import { runMain } from "../lib/shutdown.js";
import { FeatureHashingEmbedder } from "../lib/retrieval/embeddings/hashing-embedder.js";
import { keepCorpusStats, keptCorpus, loadCorpus } from "./corpus.js";
import { openBenchDatabase, postgresBaseUrl, postgresReachable, type DatabaseKind } from "./database.js";
import { stopLoadGenerator } from "./load.js";
import { parseBenchArgs, type BenchOptions, type ScenarioName } from "./options.js";
import { machineInfo, writeScenarioEntry, type EntryBase, type RunInfo } from "./report.js";
import type { Scenario } from "./scenario.js";
import { batchingScenario } from "./scenarios/batching.js";
import { documentIngestionScenario } from "./scenarios/document-ingestion.js";
import { gatewayScenario } from "./scenarios/gateway.js";
import { hostileLoadScenario } from "./scenarios/hostile-load.js";
import { fairSharesScenario } from "./scenarios/fair-shares.js";
import { indexingLatencyScenario } from "./scenarios/indexing-latency.js";
import { ingestionScenario } from "./scenarios/ingestion.js";
import { keywordPruningScenario } from "./scenarios/keyword-pruning.js";
import { latencyScenario } from "./scenarios/latency.js";
import { mixedSearchScenario } from "./scenarios/mixed-search.js";
import { searchFacetsScenario } from "./scenarios/search-facets.js";
import { searchFeaturesScenario } from "./scenarios/search-features.js";
import { searchPathScenario } from "./scenarios/search-path.js";
import { deferScenario } from "./scenarios/defer.js";
import { soakScenario } from "./scenarios/soak.js";
import { suggestionsScenario } from "./scenarios/suggestions.js";
import { tenantScopeScenario } from "./scenarios/tenant-scope.js";
import { typoToleranceScenario } from "./scenarios/typo-tolerance.js";
import { topologyFaultsScenario } from "./scenarios/topology-faults.js";
import { topologyThroughputScenario } from "./scenarios/topology-throughput.js";
import { writeSummary } from "./summary.js";

export const SCENARIOS: Record<ScenarioName, Scenario<EntryBase>> = {
  gateway: gatewayScenario as unknown as Scenario<EntryBase>,
  batching: batchingScenario as unknown as Scenario<EntryBase>,
  latency: latencyScenario as unknown as Scenario<EntryBase>,
  soak: soakScenario as unknown as Scenario<EntryBase>,
  ingestion: ingestionScenario as unknown as Scenario<EntryBase>,
  indexing: indexingLatencyScenario as unknown as Scenario<EntryBase>,
  hostile: hostileLoadScenario as unknown as Scenario<EntryBase>,
  "tenant-scope": tenantScopeScenario as unknown as Scenario<EntryBase>,
  "document-ingestion": documentIngestionScenario as unknown as Scenario<EntryBase>,
  "mixed-search": mixedSearchScenario as unknown as Scenario<EntryBase>,
  "search-path": searchPathScenario as unknown as Scenario<EntryBase>,
  "keyword-pruning": keywordPruningScenario as unknown as Scenario<EntryBase>,
  suggestions: suggestionsScenario as unknown as Scenario<EntryBase>,
  "search-facets": searchFacetsScenario as unknown as Scenario<EntryBase>,
  "search-features": searchFeaturesScenario as unknown as Scenario<EntryBase>,
  "typo-tolerance": typoToleranceScenario as unknown as Scenario<EntryBase>,
  defer: deferScenario as unknown as Scenario<EntryBase>,
  "topology-faults": topologyFaultsScenario as unknown as Scenario<EntryBase>,
  "topology-throughput": topologyThroughputScenario as unknown as Scenario<EntryBase>,
  "fair-shares": fairSharesScenario as unknown as Scenario<EntryBase>,
};

export interface BenchOutcome {
  run: RunInfo;
  databases: DatabaseKind[];
  /** Scenario files written (JSON), plus SUMMARY.md and plots. */
  files: string[];
}

export async function runBenchmarks(options: BenchOptions, log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Promise<BenchOutcome> {
  const run: RunInfo = {
    runId: `${new Date().toISOString().replace(/[-:]/g, "").slice(0, 15)}-${randomBytes(3).toString("hex")}`,
    startedAt: new Date().toISOString(),
    command: options.command,
    machine: machineInfo(),
  };
  const databases = await resolveDatabases(options, log);
  log(`bench run ${run.runId}: scenarios ${options.scenarios.join(", ")}; sizes ${options.sizes.join(", ")}; databases ${databases.join(", ")}; load average ${run.machine.loadAverage.join(" / ")} on ${run.machine.cpus} CPUs`);
  const files = new Set<string>();

  const failures: string[] = [];
  try {
    await runAll(options, run, databases, files, failures, log);
  } finally {
    await stopLoadGenerator();
  }
  if (failures.length > 0) throw new Error(`${failures.length} benchmark step(s) failed:\n${failures.join("\n")}`);
  log(`\nresults in ${options.outDir}: ${[...files].sort().join(", ")}`);
  return { run, databases, files: [...files].sort() };
}

async function runAll(options: BenchOptions, run: RunInfo, databases: DatabaseKind[], files: Set<string>, failures: string[], log: (line: string) => void): Promise<void> {
  for (const kind of databases) {
    for (const size of options.sizes) {
      log(`\n== ${kind}, ${size.toLocaleString("en-US")} conversations ==`);
      const bench = await openBenchDatabase(kind, { conversations: size, postgresUrl: options.postgresUrl, poolSize: 10, keep: options.keepDatabase, reuse: options.reuseDatabase, log });
      try {
        // Vectors for search come from the feature-hashing embedder: embedding 100k
        // conversations with the local model would take hours on 2 cores. The ingestion
        // scenario measures the local model separately.
        const loadStarted = performance.now();
        const corpus = options.reuseDatabase ? await keptCorpus(bench.database, size) : await loadCorpus(bench.database, size, new FeatureHashingEmbedder(), log);
        if (options.keepDatabase && !options.reuseDatabase) await keepCorpusStats(bench.database, corpus);
        log(`   (corpus ready in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s)`);
        for (const name of options.scenarios) {
          const scenario = SCENARIOS[name];
          log(`-- ${scenario.title} (${kind}, ${size})`);
          const started = performance.now();
          try {
            const entry = await scenario.run({ run, options, bench, size, corpus, outDir: options.outDir, log });
            writeScenarioEntry(options.outDir, name, scenario.title, entry);
            files.add(`${name}.json`);
          } catch (error) {
            // One scenario failing must not throw away the others' measurements: note it, go on,
            // and fail the run at the end.
            failures.push(`${name} on ${kind} at ${size}: ${(error as Error).stack ?? error}`);
            log(`   FAILED: ${(error as Error).message}`);
          }
          log(`   (${((performance.now() - started) / 1000).toFixed(1)} s)`);
          // Rebuilt after every entry: an interrupted run still leaves a readable summary.
          try {
            for (const file of writeSummary(options.outDir, SCENARIOS)) files.add(file);
          } catch (error) {
            failures.push(`SUMMARY.md: ${(error as Error).stack ?? error}`);
            log(`   could not write SUMMARY.md: ${(error as Error).message}`);
          }
        }
      } finally {
        await bench.dispose();
      }
    }
  }
}

async function resolveDatabases(options: BenchOptions, log: (line: string) => void): Promise<DatabaseKind[]> {
  if (options.databases !== "auto") {
    if (options.databases.includes("postgres") && !(await postgresReachable(options.postgresUrl))) {
      throw new Error(`PostgreSQL does not answer at ${options.postgresUrl.replace(/\/\/([^:/@]+):[^@]*@/, "//$1:***@")}; set DATABASE_URL or use --database pglite`);
    }
    return options.databases;
  }
  if (await postgresReachable(options.postgresUrl)) return ["pglite", "postgres"];
  log("PostgreSQL does not answer: running on PGlite only (--database auto)");
  return ["pglite"];
}

// Run as a command (`npm run bench`), not when imported (the smoke test imports runBenchmarks).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runMain(async () => {
    const options = parseBenchArgs(process.argv.slice(2), postgresBaseUrl());
    if (options.summaryOnly) {
      const files = writeSummary(options.outDir, SCENARIOS);
      process.stderr.write(`rebuilt ${files.join(", ")} in ${options.outDir}\n`);
    } else {
      await runBenchmarks(options);
    }
    // Hive's runtime and Prisma can keep timers alive after everything is stopped.
    process.exit(0);
  });
}
