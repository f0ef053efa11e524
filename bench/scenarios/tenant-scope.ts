/**
 * What row-level security costs: the same store and provider calls, one at a time, in tenant
 * scopes (the product: BEGIN, one set_config statement, the work, COMMIT, as a role the
 * policies apply to) and without them (the same statements as the tables' owner, outside a
 * transaction), interleaved in rounds so drift hits both sides alike. Measured in process, with
 * no HTTP in between, so the ratio is the database work's own.
 *
 * Then the search reads two ways (issue 12): tenant reads in scope transactions (the path
 * before: BEGIN, set_config, the statement, COMMIT per provider, plus a separate liveness
 * check) against session-scoped connections (tenant-reads.ts), in the same process, with
 * several searches in flight: searches/s, Node CPU per search and statements per search.
 */
import { withTransactionTenantReadsForBenchmark } from "../../lib/database/tenant-reads.js";
import { withoutTenantScopesForBenchmark } from "../../lib/database/tenant-scope.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { PgVectorStore } from "../../lib/retrieval/vector-stores/pgvector.js";
import { ConversationsSemanticProvider } from "../../subgraphs/conversations/search/semantic-provider.js";
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

/** One side of the search-path comparison. */
export interface SearchPathSide {
  searchesPerSecond: number;
  /** Node CPU (user + system) per search, ms: what the process spends besides waiting. */
  cpuMsPerSearch: number;
  /** Data statements and transaction/scope overhead statements per search. */
  statementsPerSearch: number;
  overheadPerSearch: number;
  latency: LatencySummary;
}

export interface SearchPathResult {
  operation: string;
  transaction: SearchPathSide;
  session: SearchPathSide;
  /** session / transaction. */
  ratios: { searchesPerSecond: number; cpuMsPerSearch: number; p50: number };
}

export interface TenantScopeEntry extends EntryBase {
  iterationsPerRound: number;
  results: TenantScopeResult[];
  /** Absent in entries written before issue 12's session reads. */
  searchPaths?: SearchPathResult[];
  searchConcurrency?: number;
}

/** Searches in flight at once in the search-path comparison: a loaded subgraph, on 2 cores. */
const SEARCH_CONCURRENCY = 8;

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

    const searchPaths = await compareSearchPaths(context, queries, iterations);

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
        keywordScoped: "on PostgreSQL the keyword search's scoped side is a tenant read on a session-scoped connection (no transaction), as in the product since issue 12",
        searchPaths: `before: tenant reads in withTenantScope transactions (withTransactionTenantReadsForBenchmark), semantic search with its separate liveness check; after: session-scoped tenant reads, liveness folded into the vector statement; ${SEARCH_CONCURRENCY} in flight, ${ROUNDS} interleaved rounds per side; Node CPU from process.cpuUsage`,
      }),
      corpus: context.corpus,
      profiles: [],
      iterationsPerRound: iterations,
      results,
      searchPaths,
      searchConcurrency: SEARCH_CONCURRENCY,
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
    const pathRows = file.entries.flatMap((entry) =>
      (entry.searchPaths ?? []).map((result) => [
        databaseLabel(entry.database),
        formatCount(entry.size),
        result.operation,
        result.transaction.searchesPerSecond.toFixed(0),
        result.session.searchesPerSecond.toFixed(0),
        formatRatio(result.ratios.searchesPerSecond),
        result.transaction.cpuMsPerSearch.toFixed(2),
        result.session.cpuMsPerSearch.toFixed(2),
        formatRatio(result.ratios.cpuMsPerSearch),
        `${result.transaction.statementsPerSearch.toFixed(1)} + ${result.transaction.overheadPerSearch.toFixed(1)}`,
        `${result.session.statementsPerSearch.toFixed(1)} + ${result.session.overheadPerSearch.toFixed(1)}`,
        formatRatio(result.ratios.p50),
      ]),
    );
    const pathTable = pathRows.length
      ? [
          "",
          `Search reads in scope transactions (before) against session-scoped tenant reads (after), ${file.entries[0]?.searchConcurrency ?? SEARCH_CONCURRENCY} searches in flight; statements are data + transaction/scope overhead per search:`,
          "",
          renderMarkdownTable(
            ["database", "conversations", "search", "before /s", "after /s", "ratio /s", "before CPU ms", "after CPU ms", "ratio CPU", "before statements", "after statements", "ratio p50"],
            pathRows,
          ),
        ].join("\n")
      : "";
    const details = file.entries.map((entry) => [`**${entryHeading(entry)}**`, "", renderConditions(entry)].join("\n"));
    return [table, pathTable, "", ...details.flatMap((detail) => [detail, ""])].join("\n");
  },
};

/**
 * The same searches through both tenant-read paths, interleaved in rounds (which side goes first
 * alternates), SEARCH_CONCURRENCY at a time: throughput, the process's CPU and the statements
 * the database handle counted, per search.
 */
async function compareSearchPaths(context: Parameters<Scenario<TenantScopeEntry>["run"]>[0], queries: readonly string[], iterations: number): Promise<SearchPathResult[]> {
  const { database } = context.bench;
  const embedder = new FeatureHashingEmbedder();
  const keyword = new ConversationsKeywordProvider(database.prisma);
  const semantic = new ConversationsSemanticProvider(embedder, new PgVectorStore(database), database.prisma);
  const controller = new AbortController();
  const request = (i: number) => ({ tenant: BENCH_TENANT, query: queries[i % queries.length]!, window: 40, signal: controller.signal, timeoutMs: 10_000 });
  const searches: Operation[] = [
    { name: "BM25 keyword search (window 40)", run: (i) => keyword.search(request(i)) },
    { name: "semantic search (pgvector, window 40)", run: (i) => semantic.search(request(i)) },
    { name: "hybrid: keyword + semantic side by side", run: (i) => Promise.all([keyword.search(request(i)), semantic.search(request(i))]) },
  ];
  const calls = Math.max(40, iterations);
  const totals = new Map(searches.map((search) => [search.name, { transaction: emptyTotals(), session: emptyTotals() }]));
  const batch = async (search: Operation, side: Totals) => {
    let next = 0;
    database.statements.reset();
    const cpu = process.cpuUsage();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: SEARCH_CONCURRENCY }, async () => {
        for (let i = next++; i < calls; i = next++) {
          const began = performance.now();
          await search.run(i);
          side.latencies.push(performance.now() - began);
        }
      }),
    );
    side.wallMs += performance.now() - started;
    const used = process.cpuUsage(cpu);
    side.cpuMs += (used.user + used.system) / 1000;
    side.statements += database.statements.count;
    side.overhead += database.statements.overhead;
    side.calls += calls;
  };
  for (const search of searches) {
    // Warm both paths (plans, the embedder's cache, every pooled connection's settings).
    await batch(search, emptyTotals());
    await withTransactionTenantReadsForBenchmark(() => batch(search, emptyTotals()));
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const search of searches) {
      const sides = totals.get(search.name)!;
      for (const session of round % 2 === 0 ? [true, false] : [false, true]) {
        if (session) await batch(search, sides.session);
        else await withTransactionTenantReadsForBenchmark(() => batch(search, sides.transaction));
      }
    }
    context.log(`   search paths: round ${round + 1}/${ROUNDS} done`);
  }
  return searches.map((search) => {
    const sides = totals.get(search.name)!;
    const transaction = summarizeSide(sides.transaction);
    const session = summarizeSide(sides.session);
    return {
      operation: search.name,
      transaction,
      session,
      ratios: {
        searchesPerSecond: ratio(session.searchesPerSecond, transaction.searchesPerSecond),
        cpuMsPerSearch: ratio(session.cpuMsPerSearch, transaction.cpuMsPerSearch),
        p50: ratio(session.latency.p50, transaction.latency.p50),
      },
    };
  });
}

interface Totals {
  calls: number;
  wallMs: number;
  cpuMs: number;
  statements: number;
  overhead: number;
  latencies: number[];
}

const emptyTotals = (): Totals => ({ calls: 0, wallMs: 0, cpuMs: 0, statements: 0, overhead: 0, latencies: [] });

function summarizeSide(totals: Totals): SearchPathSide {
  return {
    searchesPerSecond: totals.calls / (totals.wallMs / 1000),
    cpuMsPerSearch: totals.cpuMs / totals.calls,
    statementsPerSearch: totals.statements / totals.calls,
    overheadPerSearch: totals.overhead / totals.calls,
    latency: summarizeLatencies(totals.latencies),
  };
}
