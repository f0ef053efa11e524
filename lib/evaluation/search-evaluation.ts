/**
 * Measures search quality on a BEIR data set through the product's own code path: documents
 * become conversations of a throwaway organization (title + one message), the triggers build
 * the keyword index, the indexer embeds them, and every query goes through SearchService with
 * the real providers and fusion, exactly as `Query.search` runs it (minus HTTP and the cache).
 * lib/ sits below subgraphs/, so the service comes in from the caller (scripts/eval.ts) as an
 * EvaluatedSearch: only the part of SearchService's shape the evaluation reads.
 */
import { randomUUID } from "node:crypto";
import type { Database } from "../database/connect.js";
import type { TenantContext } from "../tenancy/token.js";
import type { BackgroundIndexer } from "../retrieval/search-provider.js";
import type { BeirDataset, BeirDocument } from "./beir.js";
import { evaluateRun } from "./metrics.js";
import type { FusionMethod } from "../retrieval/fusion-method.js";

/**
 * What the evaluation asks of the search it measures: one page of fused hits per call, with a
 * cursor to the next page and a status per provider. subgraphs/search's SearchService has this
 * shape (TypeScript checks it where scripts/eval.ts passes the service in).
 */
export interface EvaluatedSearch {
  search(
    tenant: TenantContext,
    input: { query: string; alpha?: number | null; limit: number; after: string | null; providers?: string[]; typoTolerance?: boolean; fusion?: FusionMethod },
  ): Promise<{
    hits: readonly { ref: { id: string } }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
    /** "ERROR" and "TIMEOUT" count as failed providers; "SKIPPED" ones are named in the row */
    providers: readonly { name: string; status: string }[];
  }>;
}

export interface IngestedCorpus {
  tenant: TenantContext;
  /** hit id (conversation, document chunk, knowledge base passage) → BEIR document id */
  documentIdOf: Map<string, string>;
  /**
   * Adds to documentIdOf the hits it cannot know before a search: a knowledge base's passages
   * are stored, under ids of their own, only as the search retrieves them.
   */
  mapNewHits?: (ids: readonly string[]) => Promise<void>;
}

/**
 * A fresh organization with its one user, the evaluator, for a corpus to be ingested into: its
 * rows are nobody else's, so the search ranks the corpus alone and it can be deleted afterwards.
 */
export async function createEvaluationOrganization(database: Database, name: string, label: string): Promise<TenantContext> {
  const organizationId = `eval-${name}-${randomUUID().slice(0, 8)}`;
  const tenant: TenantContext = { organizationId, userId: "evaluator", teamIds: [], role: "member", userName: "Evaluator", userEmail: null };
  await database.prisma.organization.create({ data: { id: organizationId, name: label } });
  await database.prisma.user.create({ data: { organizationId, id: tenant.userId, name: "Evaluator" } });
  return tenant;
}

/** Loads the corpus as conversations of a fresh organization, in batches. */
export async function ingestCorpus(database: Database, dataset: BeirDataset, onProgress?: (done: number, total: number) => void): Promise<IngestedCorpus> {
  const tenant = await createEvaluationOrganization(database, dataset.name, `Evaluation: ${dataset.name}`);
  const corpus: IngestedCorpus = { tenant, documentIdOf: new Map() };
  await ingestConversations(database, corpus, dataset.corpus, onProgress);
  return corpus;
}

/**
 * Adds `documents` as conversations (title + one message) of the corpus's organization, in
 * batches, and records which conversation is which BEIR document.
 */
export async function ingestConversations(database: Database, corpus: IngestedCorpus, documents: readonly BeirDocument[], onProgress?: (done: number, total: number) => void): Promise<void> {
  const { tenant } = corpus;
  const { organizationId } = tenant;
  const batchSize = 200;
  for (let start = 0; start < documents.length; start += batchSize) {
    const batch = documents.slice(start, start + batchSize);
    const created = await database.prisma.conversation.createManyAndReturn({
      data: batch.map((document) => ({ organizationId, userId: tenant.userId, title: document.title.trim() || document.id })),
      select: { id: true },
    });
    await database.prisma.message.createMany({
      data: batch.map((document, index) => ({
        conversationId: created[index]!.id,
        organizationId,
        position: 0,
        role: "user" as const,
        content: document.text,
        // Token counts do not affect ranking; a cheap estimate keeps ingestion fast.
        tokenCount: Math.ceil(document.text.length / 4),
      })),
    });
    batch.forEach((document, index) => corpus.documentIdOf.set(created[index]!.id, document.id));
    onProgress?.(Math.min(start + batchSize, documents.length), documents.length);
  }
}

/** Embeds everything the ingestion queued. */
export async function indexCorpus(indexer: BackgroundIndexer, onProgress?: (done: number) => void): Promise<number> {
  return indexer.drain(onProgress);
}

export interface EvaluationRow {
  label: string;
  /** null: the deployment's default */
  alpha: number | null;
  ndcgAt10: number;
  recallAt100: number;
  queries: number;
  failedProviders: number;
  /**
   * Providers the search skipped for at least one query (e.g. SEMANTIC ones at alpha 1): what
   * they hold could not be found in that run.
   */
  skippedProviders: string[];
  meanLatencyMs: number;
}

export interface EvaluateOptions {
  /** Provider names to ask (all the service has, by default). */
  providers?: readonly string[];
  /**
   * Pages of 100 hits to read per query at most (1 by default). Hits that map to one document
   * (a document's chunks) count once, at their best rank, so a chunked corpus needs more than
   * one page to rank 100 documents.
   */
  maxPages?: number;
  /** `SearchInput.typoTolerance` (the service's default, on, when unset). */
  typoTolerance?: boolean;
  /** The text searched for each query (its own, by default): the typo evaluation misspells it. */
  queryText?: (query: { id: string; text: string }) => string;
  /** `SearchInput.fusion`; the service's default when unset. */
  fusion?: FusionMethod;
  /** Receives each query's ranking as scored (BEIR ids, a document once): the tests read it. */
  onRanking?: (queryId: string, ranked: readonly string[]) => void;
}

/** Runs every query at one alpha and scores the fused ranking. */
export async function evaluateAlpha(
  service: EvaluatedSearch,
  dataset: BeirDataset,
  corpus: IngestedCorpus,
  /** null: the deployment's default alpha (no alpha in the input, as a client that gives none). */
  alpha: number | null,
  label: string,
  options: EvaluateOptions = {},
): Promise<EvaluationRow> {
  const run = new Map<string, string[]>();
  const maxPages = Math.max(1, Math.min(options.maxPages ?? 1, 5));
  let failedProviders = 0;
  const skippedProviders = new Set<string>();
  let totalMs = 0;
  for (const query of dataset.queries) {
    const started = performance.now();
    const ranked: string[] = [];
    const seen = new Set<string>();
    let after: string | null = null;
    for (let page = 0; page < maxPages; page++) {
      const result = await service.search(corpus.tenant, {
        query: (options.queryText?.(query) ?? query.text).slice(0, 1_000),
        ...(alpha === null ? {} : { alpha }),
        limit: 100,
        after,
        ...(options.providers ? { providers: [...options.providers] } : {}),
        ...(options.typoTolerance !== undefined ? { typoTolerance: options.typoTolerance } : {}),
        ...(options.fusion !== undefined ? { fusion: options.fusion } : {}),
      });
      if (corpus.mapNewHits) await corpus.mapNewHits(result.hits.map((hit) => hit.ref.id).filter((id) => !corpus.documentIdOf.has(id)));
      failedProviders += result.providers.filter((report) => report.status === "ERROR" || report.status === "TIMEOUT").length;
      // A provider left out of `providers` is reported SKIPPED too: only the ones asked for count.
      for (const report of result.providers) if (report.status === "SKIPPED" && (!options.providers || options.providers.includes(report.name))) skippedProviders.add(report.name);
      for (const hit of result.hits) {
        // A document scores as its best hit: later hits of the same document add nothing.
        const documentId = corpus.documentIdOf.get(hit.ref.id) ?? hit.ref.id;
        if (!seen.has(documentId)) {
          seen.add(documentId);
          ranked.push(documentId);
        }
      }
      if (ranked.length >= 100 || !result.pageInfo.hasNextPage || !result.pageInfo.endCursor) break;
      after = result.pageInfo.endCursor;
    }
    totalMs += performance.now() - started;
    run.set(query.id, ranked.slice(0, 100));
    options.onRanking?.(query.id, ranked.slice(0, 100));
  }
  const scores = evaluateRun(run, dataset.qrels, [10, 100]);
  return {
    label,
    alpha,
    ndcgAt10: scores.ndcg[10]!,
    recallAt100: scores.recall[100]!,
    queries: scores.queryCount,
    failedProviders,
    skippedProviders: [...skippedProviders].sort(),
    meanLatencyMs: totalMs / Math.max(1, dataset.queries.length),
  };
}
