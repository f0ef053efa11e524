/**
 * Mixed search: what documents in the index cost a search. The benchmark's conversations plus
 * 10,000 Markdown documents of the same organization and user (bench/documents.ts: chunked by
 * the product's chunker, postings by its triggers, vectors through its vector store), then the same queries two
 * ways in one run, against the same warm servers:
 *
 * - conversations only: `providers: [conversations.keyword, conversations.semantic]`;
 * - mixed: all four providers (documents.keyword and documents.semantic too), fused together.
 *
 * Measured in the search subgraph's process one query at a time (SearchResult.tookMs, the two
 * modes alternating query by query so drift hits both alike), and over HTTP straight to the
 * search subgraph with one connection and under load (`--connections`), the two modes in turn.
 * Result cache off. Reported as mixed / conversations-only ratios of p50 and p99. The documents
 * are deleted afterwards, so later scenarios on this corpus see conversations only.
 */
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { BENCH_TENANT, queryPool } from "../corpus.js";
import { loadSearchableDocuments, type SearchableDocumentsStats } from "../documents.js";
import { graphqlBody, runLoad, warmUp, type LoadResult } from "../load.js";
import { databaseLabel, entryHeading, formatCount, formatErrors, formatMs, formatRatio, renderConditions, type EntryBase } from "../report.js";
import { baseConditions, type Scenario } from "../scenario.js";
import { benchConfig, benchToken, settle, startBenchSubgraphs, type BenchSubgraphs } from "../stack.js";
import { ratio, summarizeLatencies, type LatencySummary } from "../stats.js";

/** Documents added to the corpus (fewer when the run's size is smaller: a smoke run stays small). */
export const MIXED_DOCUMENTS = 10_000;
const CONVERSATION_PROVIDERS = ["conversations.keyword", "conversations.semantic"];
const ALL_PROVIDERS = [...CONVERSATION_PROVIDERS, "documents.keyword", "documents.semantic"];
const ALPHA = 0.5;
const PAGE = 20;
const PROVIDER_TIMEOUT_MS = 60_000;

/** Straight to the search subgraph: hits of both kinds, as references. */
const MIXED_SEARCH = `query BenchMixedSearch($input: SearchInput!) {
  search(input: $input) { providers { name status error } hits { score item { __typename ... on Conversation { id } ... on DocumentChunk { id } } } }
}`;

type Mode = "conversationsOnly" | "mixed";

export interface ModeLatency {
  service: { searches: number; fused: LatencySummary; providers: Record<string, LatencySummary>; degraded: number; documentHitShare: number };
  oneConnection: LoadResult;
  underLoad: LoadResult;
}

export interface MixedSearchEntry extends EntryBase {
  documents: SearchableDocumentsStats;
  distinctQueries: number;
  modes: Record<Mode, ModeLatency>;
  /** mixed / conversations only. */
  ratios: {
    serviceP50: number;
    serviceP99: number;
    oneConnectionP50: number;
    oneConnectionP99: number;
    underLoadP50: number;
    underLoadP99: number;
    underLoadThroughput: number;
  };
  totalErrors: number;
}

async function measureServiceAlternating(subgraphs: BenchSubgraphs, queries: readonly string[], minimum: number, seconds: number) {
  const samples: Record<Mode, { fused: number[]; providers: Map<string, number[]>; degraded: number; hits: number; documentHits: number }> = {
    conversationsOnly: { fused: [], providers: new Map(), degraded: 0, hits: 0, documentHits: 0 },
    mixed: { fused: [], providers: new Map(), degraded: 0, hits: 0, documentHits: 0 },
  };
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const hardStop = started + Math.max(seconds * 4, 30) * 1000;
  for (let index = 0; (performance.now() < deadline || index < minimum) && performance.now() < hardStop && index < 20_000; index++) {
    const query = queries[index % queries.length]!;
    // Which mode goes first alternates too: the second search of a pair may find warmer pages.
    const order: Mode[] = index % 2 === 0 ? ["conversationsOnly", "mixed"] : ["mixed", "conversationsOnly"];
    for (const mode of order) {
      const result = await subgraphs.search.service.search(BENCH_TENANT, { query, alpha: ALPHA, limit: PAGE, providers: mode === "mixed" ? ALL_PROVIDERS : CONVERSATION_PROVIDERS });
      const sample = samples[mode];
      sample.fused.push(result.tookMs);
      sample.hits += result.hits.length;
      sample.documentHits += result.hits.filter((hit) => hit.ref.typename === "DocumentChunk").length;
      for (const report of result.providers) {
        if (report.status === "ERROR" || report.status === "TIMEOUT") sample.degraded += 1;
        if (report.status !== "OK") continue;
        const list = sample.providers.get(report.name) ?? [];
        list.push(report.tookMs);
        sample.providers.set(report.name, list);
      }
    }
  }
  const summarize = (mode: Mode) => {
    const sample = samples[mode];
    return {
      searches: sample.fused.length,
      fused: summarizeLatencies(sample.fused),
      providers: Object.fromEntries([...sample.providers.entries()].map(([name, values]) => [name, summarizeLatencies(values)])),
      degraded: sample.degraded,
      documentHitShare: sample.hits ? Math.round((sample.documentHits / sample.hits) * 1000) / 1000 : 0,
    };
  };
  return { conversationsOnly: summarize("conversationsOnly"), mixed: summarize("mixed") };
}

export const mixedSearchScenario: Scenario<MixedSearchEntry> = {
  name: "mixed-search",
  title: "Mixed search: documents and conversations",
  async run(context) {
    const { database } = context.bench;
    const count = Math.min(MIXED_DOCUMENTS, context.size * 10);
    const documents = await loadSearchableDocuments(database, BENCH_TENANT, count, new FeatureHashingEmbedder(), context.log);
    context.log(`  ${documents.ready} documents READY (${documents.chunks} chunks) in ${documents.loadSeconds} s`);
    try {
      const config = benchConfig({ cacheTtlSeconds: 0, providerTimeoutMs: PROVIDER_TIMEOUT_MS, upstreamTimeoutMs: PROVIDER_TIMEOUT_MS });
      const token = await benchToken(config);
      const queries = queryPool(context.size, 1_000);
      const seconds = context.options.durationSeconds;
      const subgraphs = await startBenchSubgraphs(database, config);
      try {
        await measureServiceAlternating(subgraphs, queries.slice(-20), 20, 0); // warm-up, discarded
        const service = await measureServiceAlternating(subgraphs, queries, 100, seconds);
        context.log(`  service, one at a time: conversations only p50 ${formatMs(service.conversationsOnly.fused.p50)} p99 ${formatMs(service.conversationsOnly.fused.p99)}; mixed p50 ${formatMs(service.mixed.fused.p50)} p99 ${formatMs(service.mixed.fused.p99)} (${(service.mixed.documentHitShare * 100).toFixed(0)}% of mixed hits are document chunks)`);
        const http: Record<Mode, { oneConnection: LoadResult; underLoad: LoadResult }> = {} as never;
        for (const mode of ["conversationsOnly", "mixed"] as Mode[]) {
          const bodies = queries.map((query) => graphqlBody(MIXED_SEARCH, { input: { query, alpha: ALPHA, limit: PAGE, providers: mode === "mixed" ? ALL_PROVIDERS : CONVERSATION_PROVIDERS } }));
          const load = (connections: number) => ({ url: subgraphs.searchServer.url, token, bodies, connections, durationSeconds: seconds, timeoutSeconds: PROVIDER_TIMEOUT_MS / 1000 });
          await warmUp(load(1), Math.min(2, seconds / 3));
          const oneConnection = await runLoad(load(1));
          await settle(subgraphs, database);
          const underLoad = await runLoad(load(context.options.connections));
          await settle(subgraphs, database);
          http[mode] = { oneConnection, underLoad };
          context.log(`  ${mode}: 1 connection p50 ${formatMs(oneConnection.latencyMs.p50)} p99 ${formatMs(oneConnection.latencyMs.p99)}; ${context.options.connections} connections p50 ${formatMs(underLoad.latencyMs.p50)} p99 ${formatMs(underLoad.latencyMs.p99)}, ${underLoad.requestsPerSecond.toFixed(0)} req/s; errors ${oneConnection.errors.total + underLoad.errors.total}`);
        }
        const modes: Record<Mode, ModeLatency> = {
          conversationsOnly: { service: service.conversationsOnly, ...http.conversationsOnly },
          mixed: { service: service.mixed, ...http.mixed },
        };
        const c = modes.conversationsOnly;
        const m = modes.mixed;
        return {
          database: context.bench.kind,
          size: context.size,
          run: context.run,
          conditions: baseConditions(context, {
            documents: `${documents.ready} Markdown documents (${documents.chunks} chunks) of the benchmark user, demo generator seed 7, title + first question and answer each; loaded in bulk with the product's chunker, triggers and PgVectorStore (bench/documents.ts), feature hashing (256-d) on pgvector`,
            modes: "conversations only = providers conversations.keyword + conversations.semantic; mixed = those + documents.keyword + documents.semantic",
            search: `alpha ${ALPHA}, ${PAGE} hits, result cache off, provider timeout ${PROVIDER_TIMEOUT_MS / 1000} s (measured, not cut off)`,
            "one at a time": "SearchService.search in the search subgraph's process, modes alternating per query",
            http: `straight to the search subgraph (no gateway), 1 connection and ${context.options.connections} connections, ${seconds} s each, modes in turn`,
          }),
          corpus: context.corpus,
          profiles: [],
          documents,
          distinctQueries: queries.length,
          modes,
          ratios: {
            serviceP50: ratio(m.service.fused.p50, c.service.fused.p50, 2),
            serviceP99: ratio(m.service.fused.p99, c.service.fused.p99, 2),
            oneConnectionP50: ratio(m.oneConnection.latencyMs.p50, c.oneConnection.latencyMs.p50, 2),
            oneConnectionP99: ratio(m.oneConnection.latencyMs.p99, c.oneConnection.latencyMs.p99, 2),
            underLoadP50: ratio(m.underLoad.latencyMs.p50, c.underLoad.latencyMs.p50, 2),
            underLoadP99: ratio(m.underLoad.latencyMs.p99, c.underLoad.latencyMs.p99, 2),
            underLoadThroughput: ratio(m.underLoad.requestsPerSecond, c.underLoad.requestsPerSecond, 2),
          },
          totalErrors: [c, m].reduce((total, mode) => total + mode.oneConnection.errors.total + mode.underLoad.errors.total + mode.service.degraded, 0),
        };
      } finally {
        await subgraphs.stop();
      }
    } finally {
      // Later scenarios on this corpus measure conversations only.
      await database.prisma.document.deleteMany({ where: { organizationId: BENCH_TENANT.organizationId } });
    }
  },

  renderSection(file) {
    const rows = file.entries.flatMap((entry) =>
      (["conversationsOnly", "mixed"] as Mode[]).map((mode) => {
        const data = entry.modes[mode];
        return [
          databaseLabel(entry.database),
          formatCount(entry.size),
          mode === "mixed" ? `mixed (+${formatCount(entry.documents.ready)} documents)` : "conversations only",
          `${formatMs(data.service.fused.p50)} / ${formatMs(data.service.fused.p99)}`,
          `${formatMs(data.oneConnection.latencyMs.p50)} / ${formatMs(data.oneConnection.latencyMs.p99)}`,
          `${formatMs(data.underLoad.latencyMs.p50)} / ${formatMs(data.underLoad.latencyMs.p99)}`,
          data.underLoad.requestsPerSecond.toFixed(0),
          formatErrors(data.underLoad.errors),
        ];
      }),
    );
    const table = renderMarkdownTable(["database", "conversations", "search", "one at a time p50 / p99", "HTTP, 1 connection p50 / p99", "HTTP, under load p50 / p99", "req/s under load", "errors under load"], rows);
    const details = file.entries.map((entry) =>
      [
        `**${entryHeading(entry)}** — mixed / conversations only: one at a time p50 ${formatRatio(entry.ratios.serviceP50)}, p99 ${formatRatio(entry.ratios.serviceP99)}; ` +
          `1 connection p50 ${formatRatio(entry.ratios.oneConnectionP50)}, p99 ${formatRatio(entry.ratios.oneConnectionP99)}; ` +
          `under load p50 ${formatRatio(entry.ratios.underLoadP50)}, p99 ${formatRatio(entry.ratios.underLoadP99)}, throughput ${formatRatio(entry.ratios.underLoadThroughput)}. ` +
          `${(entry.modes.mixed.service.documentHitShare * 100).toFixed(0)}% of mixed hits were document chunks. Documents: ${formatCount(entry.documents.ready)} READY, ${formatCount(entry.documents.chunks)} chunks, loaded in ${entry.documents.loadSeconds.toFixed(1)} s (HNSW rebuild ${entry.documents.hnswSeconds.toFixed(1)} s of it). ` +
          `Providers (one at a time, mixed, p50): ${Object.entries(entry.modes.mixed.service.providers).map(([name, summary]) => `${name} ${formatMs(summary.p50)}`).join(", ")}. Errors: ${entry.totalErrors}.`,
        "",
        renderConditions(entry),
      ].join("\n"),
    );
    return [table, "", ...details.flatMap((detail) => [detail, ""])].join("\n");
  },
};
