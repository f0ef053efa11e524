/**
 * What row-level security costs: the same store and provider calls, one at a time, in tenant
 * scopes (the product: BEGIN, one set_config statement, the work, COMMIT, as a role the
 * policies apply to) and without them (the same statements as the tables' owner, outside a
 * transaction), interleaved in rounds so drift hits both sides alike. Measured in process, with
 * no HTTP in between, so the ratio is the database work's own.
 */
import { withoutTenantScopesForBenchmark } from "../../lib/database/tenant-scope.js";
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { ConversationStore } from "../../subgraphs/conversations/conversation-store.js";
import { ConversationsKeywordProvider } from "../../subgraphs/conversations/search/keyword-provider.js";
import { BENCH_TENANT, queryPool, sampleConversationIds } from "../corpus.js";
import { databaseLabel, entryHeading, formatCount, formatMs, formatRatio, renderConditions, type EntryBase } from "../report.js";
import { baseConditions, type Scenario } from "../scenario.js";
import { ratio, summarizeLatencies, type LatencySummary } from "../stats.js";

const ROUNDS = 4;

interface Operation {
  name: string;
  run(iteration: number): Promise<unknown>;
}

export interface TenantScopeResult {
  operation: string;
  scoped: LatencySummary;
  unscoped: LatencySummary;
  ratios: { p50: number; p99: number };
}

export interface TenantScopeEntry extends EntryBase {
  iterationsPerRound: number;
  results: TenantScopeResult[];
}

export const tenantScopeScenario: Scenario<TenantScopeEntry> = {
  name: "tenant-scope",
  title: "Cost of row-level security (tenant scopes)",
  async run(context) {
    const { database } = context.bench;
    const store = new ConversationStore(database.prisma);
    const keyword = new ConversationsKeywordProvider(database.prisma);
    const ids = await sampleConversationIds(database, 20);
    const queries = queryPool(context.size, 200);
    const iterations = Math.max(20, Math.min(300, Math.round(context.options.durationSeconds * 20)));
    const controller = new AbortController();
    const operations: Operation[] = [
      { name: "conversations page (listPage, 20)", run: () => store.listPage(BENCH_TENANT, 21, null) },
      { name: "20 entities by id (findByIds)", run: () => store.findByIds(BENCH_TENANT, ids) },
      { name: "messages of 20 conversations (messagePages)", run: () => store.messagePages(BENCH_TENANT, ids.map((conversationId) => ({ conversationId, take: 6, afterPosition: -1 }))) },
      { name: "BM25 keyword search (window 40)", run: (i) => keyword.search({ tenant: BENCH_TENANT, query: queries[i % queries.length]!, window: 40, signal: controller.signal, timeoutMs: 10_000 }) },
    ];

    const samples = new Map(operations.map((operation) => [operation.name, { scoped: [] as number[], unscoped: [] as number[] }]));
    const time = async (operation: Operation, iteration: number) => {
      const started = performance.now();
      await operation.run(iteration);
      return performance.now() - started;
    };
    // Warm both paths (plans, caches, the keyword provider's statistics).
    for (const operation of operations) {
      for (let i = 0; i < 5; i++) {
        await time(operation, i);
        await withoutTenantScopesForBenchmark(() => time(operation, i));
      }
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const operation of operations) {
        const bucket = samples.get(operation.name)!;
        // Alternate which side goes first, round by round.
        const scopedFirst = round % 2 === 0;
        for (const scoped of scopedFirst ? [true, false] : [false, true]) {
          for (let i = 0; i < iterations; i++) {
            const took = scoped ? await time(operation, i) : await withoutTenantScopesForBenchmark(() => time(operation, i));
            (scoped ? bucket.scoped : bucket.unscoped).push(took);
          }
        }
      }
      context.log(`   tenant scopes: round ${round + 1}/${ROUNDS} done`);
    }

    const results = operations.map((operation): TenantScopeResult => {
      const bucket = samples.get(operation.name)!;
      const scoped = summarizeLatencies(bucket.scoped);
      const unscoped = summarizeLatencies(bucket.unscoped);
      return { operation: operation.name, scoped, unscoped, ratios: { p50: ratio(scoped.p50, unscoped.p50), p99: ratio(scoped.p99, unscoped.p99) } };
    });
    return {
      database: context.bench.kind,
      size: context.size,
      run: context.run,
      conditions: baseConditions(context, {
        method: `in process, one call at a time, ${ROUNDS} interleaved rounds of ${iterations} calls per side and operation`,
        scoped: "withTenantScope: BEGIN, set_config(role, app.organization_id[, statement_timeout]), the statement, COMMIT",
        unscoped: "the same statements as the tables' owner, outside a transaction (keyword search: its statement timeout then unset)",
      }),
      corpus: context.corpus,
      profiles: [],
      iterationsPerRound: iterations,
      results,
    };
  },

  renderSection(file) {
    const rows = file.entries.flatMap((entry) =>
      entry.results.map((result) => [
        databaseLabel(entry.database),
        formatCount(entry.size),
        result.operation,
        formatMs(result.unscoped.p50),
        formatMs(result.scoped.p50),
        formatRatio(result.ratios.p50),
        formatMs(result.unscoped.p99),
        formatMs(result.scoped.p99),
        formatRatio(result.ratios.p99),
      ]),
    );
    const table = renderMarkdownTable(["database", "conversations", "operation", "owner p50", "scoped p50", "ratio p50", "owner p99", "scoped p99", "ratio p99"], rows);
    const details = file.entries.map((entry) => [`**${entryHeading(entry)}**`, "", renderConditions(entry)].join("\n"));
    return [table, "", ...details.flatMap((detail) => [detail, ""])].join("\n");
  },
};
