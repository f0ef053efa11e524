/**
 * Batching proof under load: for every search through the gateway that returns a page of
 * conversation hits, the conversations subgraph must receive exactly one `_entities` call, and
 * answer it with exactly one SQL statement reading conversations by id (DataLoader collapsing
 * the page's 20 references), however many searches run at once.
 *
 * Counted at the source: the subgraph server's operation log, and a listener on Prisma's query
 * events that sorts every statement the process sends (the search subgraph shares the database
 * client, so its statements are sorted out rather than counted as entity reads). In-flight
 * merging is off so each client request reaches the subgraphs on its own, the result cache is
 * off so every search runs, and the queries differ so nothing could be merged anyway. A fixed
 * number of requests (rather than a duration) makes every request's statements complete
 * before counting.
 */
import type { PrismaClient } from "../../generated/prisma/client.js";
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { queryPool } from "../corpus.js";
import { graphqlBody, runLoad, type LoadResult } from "../load.js";
import { GATEWAY_SEARCH_WITH_ENTITIES } from "../queries.js";
import { entryHeading, formatErrors, formatMs, formatRate, renderConditions, renderWarnings, type EntryBase, type TargetResult } from "../report.js";
import { baseConditions, sleep, type Scenario } from "../scenario.js";
import { benchConfig, benchToken, settle, startBenchGateway, startBenchSubgraphs, type ServerWarnings } from "../stack.js";
import { ratio } from "../stats.js";

/** Provider, gateway-to-subgraph and client timeouts here (the product's are 2 s and 10 s). */
const LONG_TIMEOUT_MS = 60_000;

/** Kinds of SQL statement a search request causes, recognised by their text. */
const STATEMENT_KINDS: [kind: string, pattern: RegExp][] = [
  // Prisma's findMany({ where: { id: { in: [...] } } }) from the conversations subgraph's DataLoader.
  ["conversations by id (entity read)", /FROM "public"\."conversations" WHERE .*"public"\."conversations"\."id" IN \(/s],
  ["BM25 keyword search", /keyword_postings/],
  ["vector search", /FROM embedding_chunks/],
  ["vector search settings (SET LOCAL)", /^SET LOCAL/],
  ["semantic hits still live", /FROM conversations\s+WHERE id = ANY/],
  ["query log insert", /INSERT INTO "public"\."search_queries"/],
  ["transaction commit", /COMMIT/],
];

export interface BatchingEntry extends EntryBase {
  pageSize: number;
  load: LoadResult;
  /** Requests whose searches reached the search subgraph (= requests, with merging off). */
  searchOperations: number;
  entitiesCalls: number;
  conversationsOperations: number;
  entityReads: number;
  /** Fewest and most ids one entity read asked for: at least the page size when batched. */
  idsPerEntityRead: { min: number; max: number };
  statementsByKind: Record<string, number>;
  perRequest: {
    entitiesCalls: number;
    entityReadStatements: number;
    sqlStatements: number;
  };
  /** Exactly one `_entities` call and one entity read per page of hits. (Errors are reported beside it.) */
  batched: boolean;
  serverWarnings: ServerWarnings;
}

export const batchingScenario: Scenario<BatchingEntry> = {
  name: "batching",
  title: "Batching under load",
  async run(context) {
    // Generous timeouts: a search whose providers timed out returns no hits and so needs no
    // entities; under heavy load that would hide exactly the calls this scenario counts.
    const config = benchConfig({ cacheTtlSeconds: 0, providerTimeoutMs: LONG_TIMEOUT_MS, upstreamTimeoutMs: LONG_TIMEOUT_MS });
    const subgraphs = await startBenchSubgraphs(context.bench.database, config);
    const gateway = await startBenchGateway(subgraphs, { queryPlanner: "rust", deduplicateInflightRequests: false });
    const pageSize = 20;
    const tally = new Map<string, number>();
    let entityReads = 0;
    let idsMin = Number.POSITIVE_INFINITY;
    let idsMax = 0;
    let counting = false;
    // A second listener beside the Database's own counter, whose log keeps only 1,000 statements.
    // Prisma has no way to remove a listener: it stays, idle, until this database is closed.
    (context.bench.database.prisma as unknown as PrismaClient<"query">).$on("query", (event) => {
      if (!counting) return;
      const kind = STATEMENT_KINDS.find(([, pattern]) => pattern.test(event.query))?.[0] ?? "other";
      tally.set(kind, (tally.get(kind) ?? 0) + 1);
      if (kind === STATEMENT_KINDS[0]![0]) {
        entityReads += 1;
        // The ids are the placeholders inside `"id" IN (…)`; the organization and OFFSET have their own.
        const list = /"id" IN \(([^)]*)\)/.exec(event.query)?.[1] ?? "";
        const ids = (list.match(/\$\d+/g) ?? []).length;
        idsMin = Math.min(idsMin, ids);
        idsMax = Math.max(idsMax, ids);
      }
    });
    try {
      const token = await benchToken(config);
      const bodies = queryPool(context.size, 500).map((query, index) => graphqlBody(GATEWAY_SEARCH_WITH_ENTITIES, { input: { query, limit: pageSize, alpha: [0.25, 0.5, 0.75][index % 3] } }));
      const base = {
        url: gateway.url,
        token,
        bodies,
        connections: context.options.connections,
        durationSeconds: Math.min(3, Math.max(0.5, context.options.durationSeconds / 3)),
        timeoutSeconds: LONG_TIMEOUT_MS / 1000,
      };
      // The warm-up also tells how many requests fit in the requested duration.
      const warm = await runLoad(base);
      const amount = Math.max(context.options.connections * 2, Math.round(warm.requestsPerSecond * context.options.durationSeconds));
      await settle(subgraphs, context.bench.database);
      subgraphs.searchServer.operations.reset();
      subgraphs.conversationsServer.operations.reset();
      counting = true;
      const load = await runLoad({ ...base, amount });
      // Query-log inserts are written after the response, off the request path.
      await subgraphs.search.queryLog.flush();
      await sleep(50);
      counting = false;

      const conversationsOperations = subgraphs.conversationsServer.operations.count;
      const entitiesCalls = subgraphs.conversationsServer.operations.recent.every((document) => document.includes("_entities")) ? conversationsOperations : Number.NaN;
      const searchOperations = subgraphs.searchServer.operations.count;
      const sqlStatements = [...tally.values()].reduce((sum, count) => sum + count, 0);
      // Per search that returned hits: a search with no hits has no entities to load.
      const pages = load.responsesWithHits;
      const perRequest = {
        entitiesCalls: ratio(entitiesCalls, pages),
        entityReadStatements: ratio(entityReads, pages),
        sqlStatements: ratio(sqlStatements, load.completed, 2),
      };
      context.log(`  ${load.completed} searches: ${perRequest.entitiesCalls} _entities call(s) and ${perRequest.entityReadStatements} entity read(s) per search; ${perRequest.sqlStatements} SQL statements per search in all`);
      return {
        database: context.bench.kind,
        size: context.size,
        run: context.run,
        conditions: baseConditions(context, {
          connections: context.options.connections,
          requests: amount,
          "page size": pageSize,
          queries: `${bodies.length} distinct (titles and users' opening lines), alpha 0.25/0.5/0.75`,
          "query planner": "Rust",
          "in-flight merging": "off (each client request reaches the subgraphs)",
          "result cache": "off (SEARCH_CACHE_TTL_SECONDS=0)",
          timeouts: `provider, gateway-to-subgraph and client ${LONG_TIMEOUT_MS / 1000} s, so every search completes with its hits`,
          embedder: "feature hashing (256-d)",
        }),
        corpus: context.corpus,
        profiles: [],
        pageSize,
        load,
        searchOperations,
        entitiesCalls,
        conversationsOperations,
        entityReads,
        idsPerEntityRead: { min: Number.isFinite(idsMin) ? idsMin : 0, max: idsMax },
        statementsByKind: Object.fromEntries([...tally.entries()].sort((a, b) => b[1] - a[1])),
        perRequest,
        batched: pages > 0 && perRequest.entitiesCalls === 1 && perRequest.entityReadStatements === 1,
        serverWarnings: subgraphs.warnings,
      };
    } finally {
      counting = false;
      await gateway.stop();
      await subgraphs.stop();
    }
  },

  renderSection(file) {
    return file.entries
      .map((entry) => {
        const perRequest = (count: number) => ratio(count, entry.load.completed, 2);
        const table = renderMarkdownTable(
          ["SQL statement", "count", "per search"],
          Object.entries(entry.statementsByKind).map(([kind, count]) => [kind, count, perRequest(count)]),
        );
        return [
          `### ${entryHeading(entry)}`,
          "",
          `${isBatched(entry) ? "✅" : "❌"} ${entry.load.completed} searches (${entry.load.connections} connections, ${formatRate(entry.load.requestsPerSecond)} req/s, p50 ${formatMs(entry.load.latencyMs.p50)}, errors: ${formatErrors(entry.load.errors)}), ${entry.load.responsesWithHits} of them a page of ${entry.pageSize} conversation hits: ` +
            `**${entry.perRequest.entitiesCalls} \`_entities\` call and ${entry.perRequest.entityReadStatements} conversations-by-id statement per search** ` +
            `(${entry.entitiesCalls} calls, ${entry.entityReads} statements; each statement asked for ${entry.idsPerEntityRead.min}–${entry.idsPerEntityRead.max} ids). ` +
            `${entry.perRequest.sqlStatements} SQL statements per search in all, by kind:`,
          "",
          table,
          "",
          renderWarnings(entry.serverWarnings),
          entry.load.errors.first ? `First error: \`${entry.load.errors.first.slice(0, 400)}\`` : "",
          "",
          renderConditions(entry),
        ].join("\n");
      })
      .join("\n\n");
  },

  targets(file) {
    return file.entries.map(
      (entry): TargetResult => ({
        target: `One \`_entities\` call and one SQL statement per search page (${entryHeading(entry)})`,
        status: isBatched(entry) ? "met" : "missed",
        measured:
          `${entry.perRequest.entitiesCalls} call / ${entry.perRequest.entityReadStatements} statement per page over ${entry.load.responsesWithHits} pages of hits` +
          (entry.load.errors.total > 0 ? ` (⚠️ ${formatErrors(entry.load.errors)})` : ""),
        margin: isBatched(entry) ? "exact" : "see batching section",
      }),
    );
  },
};

/** Recomputed from the counts, so entries written by earlier versions are judged the same way. */
function isBatched(entry: BatchingEntry): boolean {
  return entry.load.responsesWithHits > 0 && entry.perRequest.entitiesCalls === 1 && entry.perRequest.entityReadStatements === 1;
}
