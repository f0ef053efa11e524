/**
 * The agent-facing knowledge queries: `queryKnowledgeBase` (the caller's documents, or one LOCAL
 * knowledge base's) and `queryPlatformKnowledge` (the knowledge bases a capability maps to, in
 * priority order). Documents are searched with the documents domain's own providers (from
 * ./search.ts), their rankings fused with weighted RRF; BEDROCK and S3VECTORS knowledge bases are asked
 * through remote-knowledge-bases.ts under their credential modes. Each source runs under its own timeout and reports its
 * own status, so one failing knowledge base never costs the others their answer. Every source
 * asked is logged (knowledge-query-log.ts) after the answer is built, off the response path.
 */
import type { ProviderHit, SearchProvider } from "../../lib/retrieval/search-provider.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import type { DocumentStore } from "./document-store.js";
import type { KnowledgeBase, KnowledgeBaseStore } from "./knowledge-base-store.js";
import type { KnowledgeQueryLog } from "./knowledge-query-log.js";
import type { KnowledgePassage, RemoteKnowledgeBases, SourceAnswer, SourceReport, SourceStatus } from "./remote-knowledge-bases.js";

export type { KnowledgePassage, SourceReport, SourceStatus };

export interface KnowledgeQueryResult {
  passages: KnowledgePassage[];
  sources: SourceReport[];
  tookMs: number;
}

export interface KnowledgeQueryDependencies {
  documents: DocumentStore;
  knowledgeBases: KnowledgeBaseStore;
  /** The documents domain's providers (keyword and semantic), from ./search.ts. */
  documentProviders: readonly SearchProvider[];
  /** BEDROCK and S3VECTORS knowledge bases, under their credential modes. */
  remote: RemoteKnowledgeBases;
  /** Each source's time budget. */
  sourceTimeoutMs: number;
  log: KnowledgeQueryLog;
}

/** RRF's k, as the unified search uses it. */
const RRF_K = 60;
/** Keyword and semantic rankings count alike here (the unified search's default alpha). */
const ALPHA = 0.5;
const MAX_WINDOW = 200;

export class KnowledgeQueries {
  constructor(private readonly deps: KnowledgeQueryDependencies) {}

  /** The caller's documents, or those of one LOCAL knowledge base the caller may see. */
  async queryKnowledgeBase(tenant: TenantContext, query: string, limit: number, knowledgeBaseId: string | null): Promise<KnowledgeQueryResult> {
    const started = performance.now();
    const base = knowledgeBaseId ? await this.deps.knowledgeBases.get(tenant, knowledgeBaseId) : null;
    const answer = base ? await this.askKnowledgeBase(tenant, base, query, limit, 0) : await this.askDocuments(tenant, query, limit, null, 0);
    this.log(tenant, query, [answer]);
    return { passages: answer.passages, sources: [answer.report], tookMs: Math.round(performance.now() - started) };
  }

  /**
   * Asks the knowledge bases `capability` maps to, in priority order, all at once (each under its
   * own timeout), and lists their passages in that order, each cut to its mapping's maxResults
   * and minScore, up to `limit` in all.
   */
  async queryPlatformKnowledge(tenant: TenantContext, capability: string, query: string, limit: number): Promise<KnowledgeQueryResult> {
    const started = performance.now();
    const mappings = await this.deps.knowledgeBases.capabilityMappings(tenant, capability);
    // The same knowledge base mapped twice (by the organization and the platform) is asked once, at its first place.
    const seen = new Set<string>();
    const unique = mappings.filter((mapping) => !seen.has(mapping.knowledgeBaseId) && seen.add(mapping.knowledgeBaseId));
    const answers = await Promise.all(unique.map((mapping) => this.askKnowledgeBase(tenant, mapping.knowledgeBase, query, mapping.maxResults, mapping.minScore)));
    const passages = answers.flatMap((answer) => answer.passages).slice(0, limit);
    this.log(tenant, query, answers);
    return { passages, sources: answers.map((answer) => answer.report), tookMs: Math.round(performance.now() - started) };
  }

  // Private: one knowledge base, whatever its backend, as one source that never throws.
  private async askKnowledgeBase(tenant: TenantContext, base: KnowledgeBase, query: string, limit: number, minScore: number): Promise<SourceAnswer> {
    if (base.backend === "LOCAL") {
      if (base.scope === "PLATFORM") {
        // Platform documents would belong to the platform organization, which row-level security hides from every tenant's document providers.
        return unsupported(base, "documents", "platform LOCAL knowledge bases cannot be queried yet: map a BEDROCK one, or one of your organization's");
      }
      return this.askDocuments(tenant, query, limit, base, minScore);
    }
    return this.deps.remote.ask(tenant, base, query, limit, minScore);
  }

  private async askDocuments(tenant: TenantContext, query: string, limit: number, base: KnowledgeBase | null, minScore: number): Promise<SourceAnswer> {
    const started = performance.now();
    // Chunks outside the knowledge base are dropped after ranking, so a scoped query asks deeper.
    const window = Math.min(MAX_WINDOW, limit * (base ? 8 : 2));
    const lists = await Promise.all(
      this.deps.documentProviders.map(async (provider) => {
        const signal = AbortSignal.timeout(this.deps.sourceTimeoutMs);
        try {
          const hits = await withDeadline(provider.search({ tenant, query, window, signal, timeoutMs: this.deps.sourceTimeoutMs }), signal);
          return { provider, hits, error: null as string | null };
        } catch (error) {
          return { provider, hits: [] as ProviderHit[], error: `${provider.name}: ${signal.aborted ? `no answer within ${this.deps.sourceTimeoutMs} ms` : (error as Error).message}` };
        }
      }),
    );
    const fused = fuseByRank(lists.map(({ provider, hits }) => ({ weight: provider.kind === "KEYWORD" ? ALPHA : 1 - ALPHA, ids: hits.filter((hit) => hit.ref.typename === "DocumentChunk").map((hit) => hit.ref.id) })));
    // Scope-checked reads: a chunk the caller may not see (or one deleted since) drops out here.
    const chunks = await this.deps.documents.findChunksByIds(tenant, fused.map((hit) => hit.id));
    const documents = await this.deps.documents.findByIds(tenant, [...new Set(chunks.map((chunk) => chunk.documentId))]);
    const chunkById = new Map(chunks.map((chunk) => [chunk.id, chunk]));
    const documentById = new Map(documents.map((document) => [document.id, document]));
    const passages: KnowledgePassage[] = [];
    for (const hit of fused) {
      const chunk = chunkById.get(hit.id);
      const document = chunk && documentById.get(chunk.documentId);
      if (!chunk || !document || (base && document.knowledgeBaseId !== base.id) || hit.score < minScore) continue;
      passages.push({
        text: chunk.text,
        score: hit.score,
        source: { documentId: document.id, chunkId: chunk.id, fileName: document.fileName, uri: null, headingPath: chunk.headingPath, page: chunk.page },
        knowledgeBase: base,
      });
      if (passages.length >= limit) break;
    }
    const errors = lists.flatMap((list) => (list.error ? [list.error] : []));
    const status: SourceStatus = errors.length === 0 ? "OK" : errors.length === lists.length ? "ERROR" : "DEGRADED";
    return {
      passages,
      report: { knowledgeBase: base, provider: "documents", status, returned: passages.length, error: errors.length > 0 ? errors.join("; ") : null, tookMs: Math.round(performance.now() - started) },
    };
  }

  // Private: one log row per source asked, written after the answer is built (the log batches; nothing here waits).
  private log(tenant: TenantContext, query: string, answers: SourceAnswer[]): void {
    for (const { passages, report } of answers) {
      this.deps.log.record({
        organizationId: tenant.organizationId,
        userId: tenant.userId,
        knowledgeBaseId: report.knowledgeBase?.id ?? null,
        query,
        results: passages.length,
        topScore: passages.length > 0 ? Math.max(...passages.map((passage) => passage.score)) : null,
        provider: report.provider,
        status: report.status,
        credits: 0,
        latencyMs: report.tookMs,
      });
    }
  }
}

function unsupported(base: KnowledgeBase, provider: string, error: string): SourceAnswer {
  return { passages: [], report: { knowledgeBase: base, provider, status: "UNSUPPORTED", returned: 0, error, tookMs: 0 } };
}

/**
 * Weighted Reciprocal Rank Fusion over ranked id lists, score(d) = Σ w / (k + rank), divided by
 * the best score possible (first in every list with weight) so that it reads 0 to 1 and a
 * capability's minScore means the same whatever the weights. Ties break by id. The unified
 * search's fusion (subgraphs/search/fusion.ts) is the same formula with explanations and paging.
 */
export function fuseByRank(lists: readonly { weight: number; ids: readonly string[] }[], k = RRF_K): { id: string; score: number }[] {
  const best = lists.reduce((sum, list) => sum + (list.weight > 0 && list.ids.length > 0 ? list.weight / (k + 1) : 0), 0);
  const scores = new Map<string, number>();
  for (const list of lists) {
    if (list.weight <= 0) continue;
    const seen = new Set<string>();
    list.ids.forEach((id, index) => {
      if (seen.has(id)) return;
      seen.add(id);
      scores.set(id, (scores.get(id) ?? 0) + list.weight / (k + index + 1));
    });
  }
  return [...scores]
    .map(([id, score]) => ({ id, score: best > 0 ? score / best : 0 }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function withDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error("timed out"));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
