/**
 * `knowledge-bases`: the unified search's provider over every BEDROCK and S3VECTORS knowledge
 * base the caller may query (the platform's, the organization's, their teams'), and the
 * platform's LOCAL ones (its curated documents, ranked as document-passages.ts ranks any
 * knowledge base's documents), asked side by side under the provider's deadline. Remote
 * knowledge bases' passages are merged by rank (weighted RRF with equal weights: one Bedrock
 * score and one cosine similarity are not on the same scale, but first place is first place).
 * The platform's passages come as one list per ranking of ours that found them (BM25, and
 * vectors below alpha 1), each hit with that ranking's score (ProviderHit.rankedAs), so the
 * unified search weighs them exactly as the caller's own documents. Its hits are `KnowledgeBasePassage` entities, stored as they are retrieved
 * (passage-store.ts) so the gateway can load them from this subgraph like any other item.
 *
 * The organization's own LOCAL knowledge bases are not asked here: their documents are the
 * organization's documents, which `documents.keyword` and `documents.semantic` already rank;
 * asking them twice would give their chunks two votes. The platform's documents are in no
 * organization's, so they are asked here, once.
 *
 * Listing the knowledge bases costs a statement, and most organizations have none: the list is
 * kept per (organization, teams) for a few seconds, so a new or deleted knowledge base shows in
 * search after at most that long. A knowledge base that fails is left out of this search (its
 * reason is logged and shows in its `status` when it lasts); the provider itself fails only when
 * every knowledge base it asked did, with their reasons.
 *
 * Filters: knowledge bases, categories and teams choose which knowledge bases are asked (a
 * passage's are its knowledge base's), so no passage of another is ever fetched. Remote
 * knowledge bases return no dates, owners or formats: a search filtered by those skips this
 * provider (SearchProvider.filters), and one filtered by sites too.
 */
import { BriefCache } from "../../../lib/cache/brief-cache.js";
import type { Logger } from "../../../lib/logger.js";
import { rankingKey, type HitRanking, type ProviderHit, type ProviderRequest, type SearchProvider } from "../../../lib/retrieval/search-provider.js";
import { NO_FILTER, type FilterField, type SearchFilter } from "../../../lib/retrieval/search-filter.js";
import type { TenantContext } from "../../../lib/tenancy/token.js";
import type { KnowledgeBase, KnowledgeBaseStore } from "../knowledge-base-store.js";
import { fuseByRank, isPlatformLocal, type DocumentPassages } from "../document-passages.js";
import type { PassageStore } from "../passage-store.js";
import type { RemoteKnowledgeBases } from "../remote-knowledge-bases.js";

/** Knowledge bases asked per search at most, in listing order (platform, company, team; by name). */
export const MAX_KNOWLEDGE_BASES_PER_SEARCH = 8;
/** Passages asked of each knowledge base at most (Bedrock and S3 Vectors both cap at 100). */
const MAX_PER_KNOWLEDGE_BASE = 50;

export interface KnowledgeBasesProviderOptions {
  /** How long a caller's list of knowledge bases is reused. Default 5 s; 0 lists on every search. */
  listTtlMs?: number;
}

export class KnowledgeBasesProvider implements SearchProvider {
  readonly name = "knowledge-bases";
  readonly kind = "SEMANTIC" as const;
  // Bedrock and S3 Vectors answer over the network, in hundreds of milliseconds.
  readonly latency = "REMOTE" as const;
  readonly description = "Passages from the Bedrock and S3 Vectors knowledge bases you may query (the platform's, your organization's and your teams') and from the platform's curated documents, merged by rank.";
  readonly itemTypes = ["KnowledgeBasePassage"];
  readonly filters: readonly FilterField[] = ["knowledgeBases", "categories", "teams"];
  /**
   * Lists by (organization, teams). One listing per key at a time: when the entry expires under
   * load, the searches in flight share it instead of each sending the same statement.
   */
  private readonly lists: BriefCache<string, KnowledgeBase[]>;

  constructor(
    private readonly knowledgeBases: KnowledgeBaseStore,
    private readonly remote: RemoteKnowledgeBases,
    private readonly passages: PassageStore,
    private readonly logger: Logger,
    options: KnowledgeBasesProviderOptions = {},
    /** Asks the platform's LOCAL knowledge bases; without it they are left out. */
    private readonly documents: DocumentPassages | null = null,
  ) {
    this.lists = new BriefCache({ ttlMs: options.listTtlMs ?? 5_000 });
  }

  async search({ tenant, query, window, signal, filter = NO_FILTER, alpha }: ProviderRequest): Promise<ProviderHit[]> {
    const bases = (await this.queryable(tenant)).filter((base) => selectedBy(base, filter) && (this.documents !== null || !isPlatformLocal(base)));
    if (bases.length === 0) return [];
    const perBase = Math.min(MAX_PER_KNOWLEDGE_BASE, window);
    const answers = await Promise.all(
      bases.map((base) => (isPlatformLocal(base) ? this.documents!.ask(tenant, query, perBase, base, 0, alpha) : this.remote.ask(tenant, base, query, perBase, 0, signal))),
    );
    const failed = answers.filter((answer) => answer.report.status !== "OK");
    for (const { report } of failed) this.logger.warn(`knowledge base ${report.knowledgeBase?.id} left out of a search: ${report.status} ${report.error ?? ""}`);
    if (failed.length === answers.length) {
      throw new Error(failed.map(({ report }) => `${report.knowledgeBase?.name}: ${report.status}${report.error ? ` (${report.error})` : ""}`).join("; "));
    }

    const rows = answers.flatMap(({ passages }) =>
      passages.map((passage) => ({ knowledgeBaseId: passage.knowledgeBase!.id, text: passage.text, uri: passage.source.uri, page: passage.source.page, score: passage.score, relevance: passage.relevance, documentId: passage.source.documentId })),
    );
    if (rows.length === 0) return [];
    const ids = await this.passages.upsert(tenant, rows);
    // A passage's id hashes its knowledge base and text: the first row of an id stands for all of them.
    const passageOf = new Map<string, (typeof rows)[number]>();
    rows.forEach((row, index) => passageOf.has(ids[index]!) || passageOf.set(ids[index]!, row));
    const baseOf = new Map(bases.map((base) => [base.id, base]));
    const hitOf = (id: string, nativeScore: number, rankedAs?: HitRanking): ProviderHit => {
      const row = passageOf.get(id)!;
      return {
        ref: { typename: "KnowledgeBasePassage", id },
        nativeScore,
        attributes: { knowledgeBaseId: row.knowledgeBaseId, category: baseOf.get(row.knowledgeBaseId)?.category ?? null },
        // A platform document's passages are one item of a distinct page, as the caller's documents' chunks are.
        ...(row.documentId ? { group: `Document:${row.documentId}` } : {}),
        ...(row.relevance !== undefined ? { relevance: row.relevance } : {}),
        ...(rankedAs ? { rankedAs } : {}),
      };
    };
    // Remote knowledge bases' passages: merged by rank, each with its own score.
    let offset = 0;
    const remoteLists: { weight: number; ids: string[] }[] = [];
    // Platform passages: one list per ranking of ours (BM25; vectors below alpha 1), each passage
    // with that ranking's own score, so the search weighs them as it weighs the caller's
    // conversations and documents (ProviderHit.rankedAs, fusion.ts rankingsOf).
    const ours = new Map<string, { ranking: HitRanking; scored: { id: string; nativeScore: number }[] }>();
    answers.forEach(({ passages }) => {
      const listIds = ids.slice(offset, offset + passages.length);
      offset += passages.length;
      if (!passages.some((passage) => passage.rankings)) {
        remoteLists.push({ weight: 1, ids: listIds });
        return;
      }
      passages.forEach((passage, index) => {
        for (const { nativeScore, ...ranking } of passage.rankings ?? []) {
          const key = rankingKey(ranking);
          const entry = ours.get(key) ?? ours.set(key, { ranking, scored: [] }).get(key)!;
          entry.scored.push({ id: listIds[index]!, nativeScore });
        }
      });
    });
    const hits = fuseByRank(remoteLists)
      .slice(0, window)
      .map((hit) => hitOf(hit.id, passageOf.get(hit.id)?.score ?? 0));
    for (const { ranking, scored } of ours.values()) {
      // Best first, one entry per passage (two knowledge bases never share one: ids hash the base).
      scored.sort((a, b) => b.nativeScore - a.nativeScore || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      hits.push(...scored.slice(0, window).map(({ id, nativeScore }) => hitOf(id, nativeScore, ranking)));
    }
    return hits;
  }

  /** The knowledge bases this provider asks for the caller, reused for a few seconds per (organization, teams). */
  private async queryable(tenant: TenantContext): Promise<KnowledgeBase[]> {
    const key = `${tenant.organizationId}\u0000${[...tenant.teamIds].sort().join("\u0000")}`;
    return this.lists.get(key, () => this.knowledgeBases.listSearchable(tenant, MAX_KNOWLEDGE_BASES_PER_SEARCH));
  }
}

/** Whether a filter selects this knowledge base's passages (the fields this provider applies). */
function selectedBy(base: KnowledgeBase, filter: SearchFilter): boolean {
  if (filter.knowledgeBases && !filter.knowledgeBases.includes(base.id.toLowerCase())) return false;
  if (filter.categories && (base.category === null || !filter.categories.includes(base.category))) return false;
  if (filter.teams && (base.teamId === null || !filter.teams.includes(base.teamId))) return false;
  return true;
}
