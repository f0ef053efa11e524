/**
 * Documents as one source of passages: the documents domain's providers (keyword and semantic,
 * from ./search.ts) ranked and fused with weighted RRF at the asker's alpha (the deployment's
 * default for its embedder when none is given), then read back under the caller's access scope.
 * Each passage also keeps the score and scale of each provider that ranked it
 * (KnowledgePassage.rankings), so the unified search can weigh it against the same rankings' hits.
 * The agent-facing knowledge queries (knowledge-queries.ts) ask the caller's documents or one
 * LOCAL knowledge base's here, and the unified search's `knowledge-bases` provider asks the
 * platform's LOCAL knowledge bases here, so a knowledge base answers the same whoever asks.
 *
 * A platform LOCAL knowledge base's documents belong to the platform organization (the
 * operator's `npm run platform-kb` writes them). They are ranked as the platform's own user
 * (PLATFORM_TENANT): the providers' statements then run in the platform's tenant scope, where
 * row-level security admits the platform's rows only, so no tenant's document can ever rank in,
 * or lend its words to, a platform answer; the statistics (document frequencies, lengths) are the
 * platform's own. Those are reads: nothing on this path writes. The ranked chunks are then read
 * back in the caller's own scope, through the migration's `platform_read` policy.
 */
import type { HitRanking, ProviderHit, SearchProvider } from "../../lib/retrieval/search-provider.js";
import { providerWeight } from "../../lib/retrieval/fusion-method.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import type { DocumentStore } from "./document-store.js";
import { PLATFORM_ORGANIZATION_ID, type KnowledgeBase } from "./knowledge-base-store.js";
import type { KnowledgePassage, SourceAnswer, SourceStatus } from "./remote-knowledge-bases.js";

/**
 * The platform organization's one user: it owns the platform's documents (the operator's
 * command files every one as its own) and ranks them. No token can name it
 * (lib/tenancy/token.ts refuses reserved organization ids).
 */
export const PLATFORM_TENANT: TenantContext = Object.freeze({
  organizationId: PLATFORM_ORGANIZATION_ID,
  userId: PLATFORM_ORGANIZATION_ID,
  teamIds: [],
  role: "member",
  userName: "Platform knowledge",
  userEmail: null,
}) as TenantContext;

/** Whether this knowledge base's passages are the platform's documents (a platform LOCAL one). */
export function isPlatformLocal(base: KnowledgeBase): boolean {
  return base.backend === "LOCAL" && base.scope === "PLATFORM" && base.organizationId === PLATFORM_ORGANIZATION_ID;
}

export interface DocumentPassagesDependencies {
  documents: DocumentStore;
  /** The documents domain's providers (keyword and semantic), from ./search.ts. */
  providers: readonly SearchProvider[];
  /** Each provider's time budget. */
  timeoutMs: number;
  /**
   * The balance of keyword and semantic rankings when the asker gives none: the deployment's
   * default alpha for its embedder (resolveDefaultAlpha), as the unified search weighs the
   * caller's own documents. With the bundled models that is 1, keyword only (measured), and the
   * semantic provider is not asked at all.
   */
  defaultAlpha: number;
}

/** RRF's k, as the unified search uses it. */
const RRF_K = 60;
const MAX_WINDOW = 200;

export class DocumentPassages {
  constructor(private readonly deps: DocumentPassagesDependencies) {}

  /**
   * The caller's documents (`base` null), or one LOCAL knowledge base's documents that the
   * caller may see, as one source that never throws: a failing ranking is reported in its status.
   */
  async ask(tenant: TenantContext, query: string, limit: number, base: KnowledgeBase | null, minScore: number, alpha = this.deps.defaultAlpha): Promise<SourceAnswer> {
    const started = performance.now();
    const ranker = base && isPlatformLocal(base) ? PLATFORM_TENANT : tenant;
    // Chunks outside the knowledge base are dropped after ranking, so a scoped query asks deeper.
    const window = Math.min(MAX_WINDOW, limit * (base ? 8 : 2));
    // A ranking the balance gives no weight is not asked (alpha 1: no query is embedded).
    const weighted = this.deps.providers.filter((provider) => providerWeight(provider.kind, alpha) > 0);
    const lists = await Promise.all(
      weighted.map(async (provider) => {
        const signal = AbortSignal.timeout(this.deps.timeoutMs);
        try {
          const hits = await withDeadline(provider.search({ tenant: ranker, query, window, signal, timeoutMs: this.deps.timeoutMs }), signal);
          return { provider, hits, error: null as string | null };
        } catch (error) {
          return { provider, hits: [] as ProviderHit[], error: `${provider.name}: ${signal.aborted ? `no answer within ${this.deps.timeoutMs} ms` : (error as Error).message}` };
        }
      }),
    );
    const chunkHits = lists.map(({ provider, hits }) => ({ provider, hits: hits.filter((hit) => hit.ref.typename === "DocumentChunk") }));
    const fused = fuseByRank(chunkHits.map(({ provider, hits }) => ({ weight: providerWeight(provider.kind, alpha), ids: hits.map((hit) => hit.ref.id) })));
    // Each provider's own score for a passage, with its kind and scale, so the unified search can
    // weigh it against the same ranking's other hits (ProviderHit.rankedAs).
    const legs = chunkHits.map(({ provider, hits }) => ({
      ranking: { kind: provider.kind, ...(provider.scoreScale ? { scoreScale: provider.scoreScale } : {}) } satisfies HitRanking,
      scoreOf: new Map(hits.map((hit) => [hit.ref.id, hit.nativeScore])),
    }));
    // How much of the query a chunk covers, from whichever ranking measures it (the keyword one).
    const relevanceOf = new Map<string, number>();
    for (const { hits } of chunkHits) for (const hit of hits) if (hit.relevance !== undefined) relevanceOf.set(hit.ref.id, Math.max(hit.relevance, relevanceOf.get(hit.ref.id) ?? 0));
    // Scope-checked reads, as the caller: a chunk the caller may not see (or one deleted since) drops out here.
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
        rankings: legs.filter((leg) => leg.scoreOf.has(hit.id)).map((leg) => ({ ...leg.ranking, nativeScore: leg.scoreOf.get(hit.id)! })),
        ...(relevanceOf.has(hit.id) ? { relevance: relevanceOf.get(hit.id)! } : {}),
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
