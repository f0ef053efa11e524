/**
 * The agent-facing knowledge queries: `queryKnowledgeBase` (the caller's documents, or one LOCAL
 * knowledge base's) and `queryPlatformKnowledge` (the knowledge bases a capability maps to, in
 * priority order). Documents, and LOCAL knowledge bases (the platform's too), are asked through
 * document-passages.ts; BEDROCK and S3VECTORS knowledge bases are asked
 * through remote-knowledge-bases.ts under their credential modes. Each source runs under its own timeout and reports its
 * own status, so one failing knowledge base never costs the others their answer. Every source
 * asked is logged (knowledge-query-log.ts) after the answer is built, off the response path.
 */
import type { TenantContext } from "../../lib/tenancy/token.js";
import type { DocumentPassages } from "./document-passages.js";
import type { KnowledgeBase, KnowledgeBaseStore } from "./knowledge-base-store.js";
import type { KnowledgeQueryLog } from "./knowledge-query-log.js";
import type { KnowledgePassage, RemoteKnowledgeBases, SourceAnswer, SourceReport, SourceStatus } from "./remote-knowledge-bases.js";

export type { KnowledgePassage, SourceReport, SourceStatus };
export { fuseByRank } from "./document-passages.js";

export interface KnowledgeQueryResult {
  passages: KnowledgePassage[];
  sources: SourceReport[];
  tookMs: number;
}

export interface KnowledgeQueryDependencies {
  knowledgeBases: KnowledgeBaseStore;
  /** The caller's documents and LOCAL knowledge bases (the platform's too). */
  documents: DocumentPassages;
  /** BEDROCK and S3VECTORS knowledge bases, under their credential modes. */
  remote: RemoteKnowledgeBases;
  log: KnowledgeQueryLog;
}

export class KnowledgeQueries {
  constructor(private readonly deps: KnowledgeQueryDependencies) {}

  /** The caller's documents, or those of one LOCAL knowledge base the caller may see (the platform's included). */
  async queryKnowledgeBase(tenant: TenantContext, query: string, limit: number, knowledgeBaseId: string | null): Promise<KnowledgeQueryResult> {
    const started = performance.now();
    const base = knowledgeBaseId ? await this.deps.knowledgeBases.get(tenant, knowledgeBaseId) : null;
    const answer = base ? await this.askKnowledgeBase(tenant, base, query, limit, 0) : await this.deps.documents.ask(tenant, query, limit, null, 0);
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
  private askKnowledgeBase(tenant: TenantContext, base: KnowledgeBase, query: string, limit: number, minScore: number): Promise<SourceAnswer> {
    return base.backend === "LOCAL" ? this.deps.documents.ask(tenant, query, limit, base, minScore) : this.deps.remote.ask(tenant, base, query, limit, minScore);
  }

  // Private: one log row per source asked, written after the answer is built (the log batches; nothing here waits).
  private log(tenant: TenantContext, query: string, answers: SourceAnswer[]): void {
    for (const { passages, report } of answers) {
      this.deps.log.record({
        organizationId: tenant.organizationId,
        userId: tenant.userId,
        knowledgeBaseId: report.knowledgeBase?.id ?? null,
        knowledgeBaseOrganizationId: report.knowledgeBase?.organizationId ?? null,
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
