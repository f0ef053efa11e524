/**
 * Soak: a long run of mixed traffic through the gateway at full concurrency — searches at
 * several alphas, the newest-first conversation list, single conversations with their first
 * messages — with the product's defaults (result cache on with its 60 s TTL, in-flight merging
 * on, Rust planner). Expected: no errors at all, and resident memory at the end within 20% of
 * its level after warm-up. Memory is sampled every second from this process, which holds the
 * gateway, both subgraphs and (with PGlite) the database; the load generator runs in a child
 * process and is not counted.
 */
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { renderLinePlot } from "../../lib/evaluation/svg-plot.js";
import { queryPool, sampleConversationIds } from "../corpus.js";
import { graphqlBody, runLoad, type LoadResult } from "../load.js";
import { SOAK_CONVERSATION, SOAK_LIST, SOAK_SEARCH } from "../queries.js";
import { databaseLabel, entryHeading, fixed, formatErrors, formatMs, formatPercent, formatRate, renderConditions, renderWarnings, type EntryBase, type TargetResult } from "../report.js";
import { baseConditions, type Plot, type Scenario } from "../scenario.js";
import { benchConfig, benchToken, settle, startBenchGateway, startBenchSubgraphs, type ServerWarnings } from "../stack.js";
import { mean, ratio, round } from "../stats.js";

/** The issue's bound on memory growth over the soak. */
export const MEMORY_GROWTH_LIMIT = 0.2;
const ALPHAS = [0, 0.25, 0.5, 0.75, 1];

export interface MemorySample {
  /** Seconds since the warm-up began. */
  t: number;
  phase: "warm-up" | "soak";
  rssMb: number;
  heapUsedMb: number;
  externalMb: number;
}

export interface SoakEntry extends EntryBase {
  mix: Record<string, number>;
  warmUpSeconds: number;
  /** Seconds the servers and database kept working after the load stopped. */
  drainSeconds: number;
  load: LoadResult;
  memory: {
    samples: MemorySample[];
    /** Mean RSS over the last 3 samples of the warm-up, and of the soak. */
    afterWarmUpMb: number;
    atEndMb: number;
    peakMb: number;
    /** End / after warm-up. */
    growth: number;
    heapAfterWarmUpMb: number;
    heapAtEndMb: number;
    /**
     * The lowest V8 heap seen in the first and the second half of the soak: what survives
     * garbage collection. A leak raises the floor; allocation churn only raises the peaks
     * (and with them RSS, which V8 gives back slowly).
     */
    heapFloorFirstHalfMb: number;
    heapFloorSecondHalfMb: number;
    /** RSS and heap right after a forced full collection, after warm-up and at the end (null without --expose-gc). */
    afterForcedGc: { afterWarmUp: { rssMb: number; heapUsedMb: number }; atEnd: { rssMb: number; heapUsedMb: number } } | null;
  };
  passed: { errors: boolean; memory: boolean };
  serverWarnings: ServerWarnings;
}

export const soakScenario: Scenario<SoakEntry> = {
  name: "soak",
  title: "Soak",
  async run(context) {
    const config = benchConfig({ cacheTtlSeconds: 60 });
    const subgraphs = await startBenchSubgraphs(context.bench.database, config);
    const gateway = await startBenchGateway(subgraphs, { queryPlanner: "rust", deduplicateInflightRequests: true });
    const samples: MemorySample[] = [];
    const began = performance.now();
    let phase: MemorySample["phase"] = "warm-up";
    const sample = () => {
      const usage = process.memoryUsage();
      samples.push({
        t: round((performance.now() - began) / 1000, 2),
        phase,
        rssMb: round(usage.rss / 1048576, 1),
        heapUsedMb: round(usage.heapUsed / 1048576, 1),
        externalMb: round(usage.external / 1048576, 1),
      });
    };
    const sampler = setInterval(sample, 1_000);
    try {
      const token = await benchToken(config);
      const { bodies, mix } = await soakBodies(context.bench.database, context.size);
      const seconds = context.options.soakDurationSeconds;
      const base = { url: gateway.url, token, bodies, connections: context.options.connections };
      sample();
      // Warm up until the V8 heap has been through two major collections (or a cap): before
      // its first peak, RSS has not reached the level it keeps under this load, and growth
      // measured from there is the heap finding its working size, not a leak. A fixed 10 s
      // ended before the first peak at 10,000 conversations (RSS +50% with a flat live heap).
      const minimumWarmUp = Math.min(10, Math.max(1, seconds / 4));
      const maximumWarmUp = Math.max(minimumWarmUp, Math.min(45, seconds * 0.75));
      let warmedUp = 0;
      while (warmedUp < maximumWarmUp) {
        const chunk = warmedUp === 0 ? minimumWarmUp : Math.min(5, maximumWarmUp - warmedUp);
        await runLoad({ ...base, durationSeconds: chunk });
        warmedUp += chunk;
        sample();
        if (majorCollections(samples) >= 2) break;
      }
      const warmUpSeconds = round(warmedUp, 1);
      const warmUpCollections = majorCollections(samples);
      const afterWarmUp = samples.filter((entry) => entry.phase === "warm-up").slice(-3);
      const gcAfterWarmUp = forcedGc();
      phase = "soak";
      const load = await runLoad({ ...base, durationSeconds: seconds });
      sample();
      // Work still running after the clients stopped: SQL of providers that already timed out
      // keeps going (nothing cancels it), and so do query-log writes.
      const drainSeconds = await settle(subgraphs, context.bench.database);
      const soakSamples = samples.filter((entry) => entry.phase === "soak");
      const atEnd = soakSamples.slice(-3);
      const gcAtEnd = forcedGc();
      const half = soakSamples.length / 2;
      const floor = (list: MemorySample[]) => Math.min(...list.map((entry) => entry.heapUsedMb));
      const afterWarmUpMb = round(mean(afterWarmUp.map((entry) => entry.rssMb)), 1);
      const atEndMb = round(mean(atEnd.map((entry) => entry.rssMb)), 1);
      const growth = ratio(atEndMb, afterWarmUpMb) - 1;
      context.log(
        `  ${load.completed} requests (${formatRate(load.requestsPerSecond)} req/s, p50 ${formatMs(load.latencyMs.p50)}, p99 ${formatMs(load.latencyMs.p99)}), ${load.errors.total} errors; RSS ${afterWarmUpMb} MB after warm-up, ${atEndMb} MB at the end (${formatPercent(growth)})`,
      );
      return {
        database: context.bench.kind,
        size: context.size,
        run: context.run,
        conditions: baseConditions(context, {
          connections: context.options.connections,
          "soak seconds": seconds,
          "warm-up": `${warmUpSeconds} s, until the heap had been through two major collections (${warmUpCollections} seen; at most ${round(maximumWarmUp, 1)} s)`,
          "query planner": "Rust",
          "in-flight merging": "on (Hive's default)",
          "result cache": "on (in-process LRU, 60 s TTL: the product's default)",
          timeouts: "the product's defaults (providers 2 s, gateway-to-subgraph 10 s): a provider timeout counts as an error (degraded search)",
          embedder: "feature hashing (256-d)",
          memory: "process.memoryUsage().rss of the process holding gateway, subgraphs and database client (PGlite included when used); load generator in a child process",
        }),
        corpus: context.corpus,
        profiles: [],
        mix,
        warmUpSeconds,
        drainSeconds,
        load,
        memory: {
          samples,
          afterWarmUpMb,
          atEndMb,
          peakMb: Math.max(...samples.map((entry) => entry.rssMb)),
          growth: round(growth, 4),
          heapAfterWarmUpMb: round(mean(afterWarmUp.map((entry) => entry.heapUsedMb)), 1),
          heapAtEndMb: round(mean(atEnd.map((entry) => entry.heapUsedMb)), 1),
          heapFloorFirstHalfMb: floor(soakSamples.slice(0, Math.max(1, Math.floor(half)))),
          heapFloorSecondHalfMb: floor(soakSamples.slice(Math.floor(half))),
          afterForcedGc: gcAfterWarmUp && gcAtEnd ? { afterWarmUp: gcAfterWarmUp, atEnd: gcAtEnd } : null,
        },
        passed: { errors: load.errors.total === 0, memory: growth <= MEMORY_GROWTH_LIMIT },
        serverWarnings: subgraphs.warnings,
      };
    } finally {
      clearInterval(sampler);
      await gateway.stop();
      await subgraphs.stop();
    }
  },

  renderSection(file) {
    const table = renderMarkdownTable(
      ["database", "conversations", "requests", "req/s", "p50", "p99", "errors", "RSS after warm-up", "RSS at end", "growth", "heap after warm-up → end"],
      file.entries.map((entry) => [
        databaseLabel(entry.database),
        entry.size,
        entry.load.completed,
        formatRate(entry.load.requestsPerSecond),
        formatMs(entry.load.latencyMs.p50),
        formatMs(entry.load.latencyMs.p99),
        formatErrors(entry.load.errors),
        `${entry.memory.afterWarmUpMb} MB`,
        `${entry.memory.atEndMb} MB`,
        `${entry.memory.growth >= 0 ? "+" : ""}${fixed(entry.memory.growth * 100, 1)}%`,
        `${entry.memory.heapAfterWarmUpMb} → ${entry.memory.heapAtEndMb} MB`,
      ]),
    );
    const details = file.entries.map((entry) =>
      [
        `**${entryHeading(entry)}** — mix: ${Object.entries(entry.mix).map(([kind, share]) => `${kind} ${formatPercent(share)}`).join(", ")}; peak RSS ${entry.memory.peakMb} MB; ` +
          `V8 heap floor (lowest sample, i.e. after collections) ${entry.memory.heapFloorFirstHalfMb} MB in the first half of the soak, ${entry.memory.heapFloorSecondHalfMb} MB in the second` +
          (entry.memory.afterForcedGc
            ? `; after a forced full GC: RSS ${entry.memory.afterForcedGc.afterWarmUp.rssMb} → ${entry.memory.afterForcedGc.atEnd.rssMb} MB, heap ${entry.memory.afterForcedGc.afterWarmUp.heapUsedMb} → ${entry.memory.afterForcedGc.atEnd.heapUsedMb} MB`
            : "") +
          `; servers and database busy ${fixed(entry.drainSeconds, 1)} s after the load stopped.` +
          (entry.load.errors.first ? ` First error: \`${entry.load.errors.first.slice(0, 300)}\`` : ""),
        "",
        renderWarnings(entry.serverWarnings),
        "",
        renderConditions(entry),
      ].join("\n"),
    );
    return [table, "", ...details.flatMap((detail) => [detail, ""])].join("\n");
  },

  plots(file) {
    return file.entries.map(
      (entry): Plot => ({
        file: `soak-${entry.database}-${entry.size}.svg`,
        svg: renderLinePlot({
          title: `Resident memory during the soak — ${entryHeading(entry)}`,
          subtitle: `${entry.load.connections} connections, mixed queries; warm-up ${entry.warmUpSeconds} s, then ${entry.load.durationSeconds} s measured`,
          xLabel: "seconds since warm-up began",
          yLabel: "MB",
          series: [
            { name: "RSS", points: entry.memory.samples.map((sample) => ({ x: sample.t, y: sample.rssMb })) },
            { name: "V8 heap used", points: entry.memory.samples.map((sample) => ({ x: sample.t, y: sample.heapUsedMb })) },
          ],
          referenceLines: [
            { y: entry.memory.afterWarmUpMb, label: `RSS after warm-up ${entry.memory.afterWarmUpMb} MB` },
            { y: round(entry.memory.afterWarmUpMb * (1 + MEMORY_GROWTH_LIMIT), 1), label: "+20% limit" },
          ],
          yDomain: [0, Math.ceil((Math.max(entry.memory.peakMb, entry.memory.afterWarmUpMb * (1 + MEMORY_GROWTH_LIMIT)) * 1.1) / 50) * 50],
          valueLabels: false,
        }),
      }),
    );
  },

  targets(file) {
    return file.entries.flatMap((entry): TargetResult[] => [
      {
        target: `Soak: zero errors (${entryHeading(entry)})`,
        status: entry.passed.errors ? "met" : "missed",
        measured: `${formatErrors(entry.load.errors)} with ${entry.load.completed} requests completed over ${entry.load.durationSeconds} s`,
        margin: entry.passed.errors ? "–" : `${entry.load.errors.total} too many`,
        ...(entry.passed.errors
          ? {}
          : { evidence: `servers and database still busy ${fixed(entry.drainSeconds, 0)} s after the load stopped: timed-out provider SQL is not cancelled` }),
      },
      {
        target: `Soak: RSS at the end within 20% of after warm-up (${entryHeading(entry)})`,
        status: entry.passed.memory ? "met" : "missed",
        measured: `${entry.memory.afterWarmUpMb} → ${entry.memory.atEndMb} MB (${fixed(entry.memory.growth * 100, 1)}%)`,
        margin: entry.passed.memory ? `${fixed((MEMORY_GROWTH_LIMIT - entry.memory.growth) * 100, 1)} points headroom` : `${fixed((entry.memory.growth - MEMORY_GROWTH_LIMIT) * 100, 1)} points over`,
        ...(entry.passed.memory
          ? {}
          : {
              evidence:
                `V8 heap floor ${entry.memory.heapFloorFirstHalfMb} → ${entry.memory.heapFloorSecondHalfMb} MB` +
                (entry.memory.afterForcedGc ? `, live heap after a forced full GC ${entry.memory.afterForcedGc.afterWarmUp.heapUsedMb} → ${entry.memory.afterForcedGc.atEnd.heapUsedMb} MB` : "") +
                (liveHeapGrowth(entry) < 0.1
                  ? `: the live heap did not grow, so RSS follows the heap's peaks between collections (peak RSS ${entry.memory.peakMb} MB), not retained objects`
                  : `: the live heap grew ${formatPercent(liveHeapGrowth(entry))}, which looks like retained objects`),
            }),
      },
    ]);
  },
};

/** Sharp drops of the V8 heap between one-second samples: major collections. */
function majorCollections(samples: readonly MemorySample[]): number {
  let count = 0;
  for (let index = 1; index < samples.length; index++) if (samples[index]!.heapUsedMb < samples[index - 1]!.heapUsedMb * 0.7) count += 1;
  return count;
}

/** Growth of what survives garbage collection: after forced GCs when available, else the heap's floor. */
function liveHeapGrowth(entry: SoakEntry): number {
  const gc = entry.memory.afterForcedGc;
  return gc ? gc.atEnd.heapUsedMb / gc.afterWarmUp.heapUsedMb - 1 : entry.memory.heapFloorSecondHalfMb / entry.memory.heapFloorFirstHalfMb - 1;
}

/**
 * RSS and heap after a full garbage collection, when the process runs with --expose-gc (the
 * npm script does): separates memory still referenced from garbage not yet collected.
 */
function forcedGc(): { rssMb: number; heapUsedMb: number } | null {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return null;
  gc();
  const usage = process.memoryUsage();
  return { rssMb: round(usage.rss / 1048576, 1), heapUsedMb: round(usage.heapUsed / 1048576, 1) };
}

/** About 60% searches (varied queries, alphas 0 to 1), 20% list pages, 20% single conversations. */
async function soakBodies(database: Parameters<typeof sampleConversationIds>[0], size: number): Promise<{ bodies: string[]; mix: Record<string, number> }> {
  const queries = queryPool(size, 300);
  const ids = await sampleConversationIds(database, 100);
  const bodies: string[] = [];
  const counts = { search: 0, "conversation list": 0, "conversation by id": 0 };
  for (let index = 0; index < 500; index++) {
    const slot = index % 5;
    if (slot < 3) {
      bodies.push(graphqlBody(SOAK_SEARCH, { input: { query: queries[index % queries.length]!, alpha: ALPHAS[(index + Math.floor(index / 5)) % ALPHAS.length], limit: 20 } }));
      counts.search += 1;
    } else if (slot === 3) {
      bodies.push(graphqlBody(SOAK_LIST, { first: [10, 20, 50][index % 3] }));
      counts["conversation list"] += 1;
    } else {
      bodies.push(graphqlBody(SOAK_CONVERSATION, { id: ids[index % Math.max(1, ids.length)] ?? "00000000-0000-0000-0000-000000000000" }));
      counts["conversation by id"] += 1;
    }
  }
  return { bodies, mix: Object.fromEntries(Object.entries(counts).map(([kind, count]) => [kind, count / bodies.length])) };
}
