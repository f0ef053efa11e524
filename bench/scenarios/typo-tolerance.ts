/**
 * What typo tolerance costs (issue 20, item 4): the conversations keyword provider, in process,
 * one search at a time, on the same queries three ways, interleaved in rounds (which side goes
 * first rotates) so drift hits all alike:
 * - exact, tolerance off: the statement as it was before typo tolerance;
 * - exact, tolerance on: every query word is in the vocabulary, so the statement only looks the
 *   words up (the price every correctly typed search pays);
 * - one word misspelled, tolerance on: one edit in one word of 5 letters or more
 *   (lib/evaluation/typos.ts, seeded), so that word is expanded to its nearest vocabulary words.
 * Target: misspelled ≤ 1.5× exact (both with tolerance on), p50.
 */
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { misspell } from "../../lib/evaluation/typos.js";
import { ConversationsKeywordProvider } from "../../subgraphs/conversations/search/keyword-provider.js";
import { BENCH_TENANT, queryPool } from "../corpus.js";
import { databaseLabel, entryHeading, formatCount, formatMs, formatRatio, renderConditions, type EntryBase } from "../report.js";
import { baseConditions, type Scenario } from "../scenario.js";
import { ratio, summarizeLatencies, type LatencySummary } from "../stats.js";

const ROUNDS = 4;
const WINDOW = 40;
const SEED = 20;

type Side = "exactOff" | "exactOn" | "misspelledOn";
const SIDES: readonly Side[] = ["exactOff", "exactOn", "misspelledOn"];

export interface TypoToleranceEntry extends EntryBase {
  queries: number;
  iterationsPerRound: number;
  latency: Record<Side, LatencySummary>;
  /** misspelled / exact with tolerance on, and exact on / exact off, at p50 and p99. */
  ratios: { misspelledOverExact: { p50: number; p99: number }; toleranceOnOverOff: { p50: number; p99: number } };
  /** Misspelled searches whose answer named a correction (a suggestion would follow). */
  corrected: number;
  examples: [string, string][];
}

export const typoToleranceScenario: Scenario<TypoToleranceEntry> = {
  name: "typo-tolerance",
  title: "Cost of typo tolerance (one misspelled word against the exact query)",
  async run(context) {
    const keyword = new ConversationsKeywordProvider(context.bench.database.prisma);
    const pairs = queryPool(context.size, 200)
      .map((query, index) => [query, misspell(query, SEED * 100_003 + index, 5, 1).text] as [string, string])
      .filter(([exact, misspelled]) => exact !== misspelled);
    const iterations = Math.max(20, Math.min(pairs.length, Math.round(context.options.durationSeconds * 10)));
    const controller = new AbortController();
    let corrected = 0;
    const search = (side: Side, i: number) => {
      const [exact, misspelled] = pairs[i % pairs.length]!;
      return keyword.search({
        tenant: BENCH_TENANT,
        query: side === "misspelledOn" ? misspelled : exact,
        window: WINDOW,
        signal: controller.signal,
        timeoutMs: 10_000,
        typoTolerance: side !== "exactOff",
        onCorrections: () => void (side === "misspelledOn" && corrected++),
      });
    };
    const samples: Record<Side, number[]> = { exactOff: [], exactOn: [], misspelledOn: [] };
    // Warm: plans, the provider's statistics, the index pages of every side.
    for (const side of SIDES) for (let i = 0; i < 10; i++) await search(side, i);
    corrected = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const order = SIDES.map((_, k) => SIDES[(k + round) % SIDES.length]!);
      for (let i = 0; i < iterations; i++) {
        for (const side of order) {
          const started = performance.now();
          await search(side, i);
          samples[side].push(performance.now() - started);
        }
      }
      context.log(`   typo tolerance: round ${round + 1}/${ROUNDS} done`);
    }
    const latency = { exactOff: summarizeLatencies(samples.exactOff), exactOn: summarizeLatencies(samples.exactOn), misspelledOn: summarizeLatencies(samples.misspelledOn) };
    return {
      database: context.bench.kind,
      size: context.size,
      run: context.run,
      conditions: baseConditions(context, {
        method: `in process, ConversationsKeywordProvider.search (window ${WINDOW}), one call at a time, ${ROUNDS} rounds of ${iterations} queries, the three sides interleaved query by query`,
        queries: `${pairs.length} of the bench query pool (titles and openings of messages), each with one edit in one word of 5+ letters (seed ${SEED})`,
      }),
      corpus: context.corpus,
      profiles: [],
      queries: pairs.length,
      iterationsPerRound: iterations,
      latency,
      ratios: {
        misspelledOverExact: { p50: ratio(latency.misspelledOn.p50, latency.exactOn.p50), p99: ratio(latency.misspelledOn.p99, latency.exactOn.p99) },
        toleranceOnOverOff: { p50: ratio(latency.exactOn.p50, latency.exactOff.p50), p99: ratio(latency.exactOn.p99, latency.exactOff.p99) },
      },
      corrected,
      examples: pairs.slice(0, 5),
    };
  },

  renderSection(file) {
    const rows = file.entries.map((entry) => [
      databaseLabel(entry.database),
      formatCount(entry.size),
      formatMs(entry.latency.exactOff.p50),
      formatMs(entry.latency.exactOn.p50),
      formatMs(entry.latency.misspelledOn.p50),
      formatRatio(entry.ratios.toleranceOnOverOff.p50),
      formatRatio(entry.ratios.misspelledOverExact.p50),
      formatRatio(entry.ratios.misspelledOverExact.p99),
      `${entry.corrected} / ${entry.latency.misspelledOn.count}`,
    ]);
    const table = renderMarkdownTable(
      ["database", "conversations", "exact, off p50", "exact, on p50", "misspelled, on p50", "on / off p50", "misspelled / exact p50", "misspelled / exact p99", "searches with a correction"],
      rows,
    );
    const details = file.entries.map((entry) => [`**${entryHeading(entry)}**`, "", renderConditions(entry)].join("\n"));
    return [table, "", ...details.flatMap((detail) => [detail, ""])].join("\n");
  },

  targets(file) {
    return file.entries.map((entry) => {
      const measured = entry.ratios.misspelledOverExact.p50;
      return {
        target: `typo tolerance: one misspelled word ≤ 1.5× the exact query, p50 (${databaseLabel(entry.database)}, ${formatCount(entry.size)} conversations)`,
        status: measured <= 1.5 ? "met" : "missed",
        measured: formatRatio(measured),
        margin: formatRatio(Math.abs(1.5 - measured)),
      };
    });
  },
};
