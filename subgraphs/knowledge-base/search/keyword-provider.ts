/**
 * `documents.keyword`: BM25 over document chunks (heading path and text), computed in SQL from
 * the postings the knowledge-base migration's triggers keep current. The same ranking as
 * `conversations.keyword` (k1 1.2, b 0.75, OR semantics, the query turned into lexemes by
 * to_tsvector, so no user text can change the statement's shape); see that provider for why.
 *
 * Access scope inside the index: every posting carries its document's owner and team in the
 * primary key's INCLUDE columns, so the caller's filter (their own documents, or those shared
 * with one of their teams) is applied while reading the terms' index ranges (index-only), and
 * document frequencies count only chunks the caller may see: how often a word occurs in a
 * colleague's private document must not move the caller's scores. The chunk count and average
 * length are the organization's (one index-only scan of document_chunks); they say nothing
 * about any one document.
 *
 * Only READY documents are found. The indexer stores all of a document's chunks (and so their
 * postings) before it embeds them, and a re-indexed document keeps its old chunks until new ones
 * replace them, so postings exist for documents that are PENDING, INDEXING or FAILED. Those
 * documents are few (the indexing queue, and failures, which keep no chunks), so the statement
 * first collects their ids and drops their postings by a hashed lookup on the document id the
 * postings carry: the postings are still read index-only, and a hidden document's words count in
 * no document frequency either.
 *
 * A filter restricts which chunks are scored (their documents must match: one scan of the
 * organization's documents by the planner's choice, inside the statement) and moves no
 * statistic, as in `conversations.keyword`. Each hit carries its document's attributes (facets).
 */
import { Prisma, type PrismaClient } from "../../../generated/prisma/client.js";
import { queryPrepared, withTenantReads, type TenantReader } from "../../../lib/database/tenant-reads.js";
import { BM25_SCORE_SCALE, bm25PostingScoreSql, bm25Relevance, bm25TermWeightSql, queryInformation } from "../../../lib/retrieval/bm25.js";
import type { ProviderHit, ProviderRequest, SearchProvider } from "../../../lib/retrieval/search-provider.js";
import { NO_FILTER, type FilterField, type SearchFilter } from "../../../lib/retrieval/search-filter.js";
import { DOCUMENT_ATTRIBUTE_COLUMNS, DOCUMENT_ATTRIBUTE_COLUMN_COUNT, documentChunkHit, documentFilterSql, hasDocumentFilter, type DocumentAttributeRow } from "./document-filter.js";
import { queryTermsSql, type WordCorrection } from "../../../lib/retrieval/typo-tolerance.js";
import type { TenantContext } from "../../../lib/tenancy/token.js";
import { documentCollectionsOf, type CollectionStatistics, type DocumentCollections } from "./document-collections.js";

export class DocumentsKeywordProvider implements SearchProvider {
  readonly name = "documents.keyword";
  readonly kind = "KEYWORD" as const;
  /** Okapi BM25 with the shared analyzer and parameters (lib/retrieval/bm25.ts), as the other keyword provider. */
  readonly scoreScale = BM25_SCORE_SCALE;
  readonly latency = "LOCAL" as const;
  readonly description = "BM25 full-text ranking over the chunks of your and your teams' documents (PostgreSQL, English stemming).";
  readonly itemTypes = ["DocumentChunk"];
  readonly filters: readonly FilterField[] = ["created", "updated", "owner", "teams", "knowledgeBases", "categories", "formats"];

  /**
   * @param collections The organizations' statistics (as in the conversation provider: large
   *   organizations' kept briefly, small ones read live), and which have no chunk at all,
   *   shared with `documents.semantic` (document-collections.ts).
   */
  constructor(
    private readonly prisma: PrismaClient,
    private readonly collections: DocumentCollections = documentCollectionsOf(prisma),
  ) {}

  async search({ tenant, query, window, timeoutMs, filter = NO_FILTER, typoTolerance, onCorrections }: ProviderRequest): Promise<ProviderHit[]> {
    // Before the tenant read: on PostgreSQL even opening one may cost a statement (re-pointing the connection).
    if (this.collections.knownEmpty(tenant.organizationId)) return [];
    // The provider's timeout bounds the statements too: a search nobody waits for any more
    // must not keep the database busy. Tenant reads: on PostgreSQL a session-scoped connection
    // with no transaction around the two statements (lib/database/tenant-reads.ts).
    return withTenantReads(
      this.prisma,
      tenant.organizationId,
      async (tx) => {
        const collection = await this.collections.read(tx, tenant.organizationId);
        if (collection.chunks === 0) return [];
        return this.score(tx, tenant, query, window, collection, filter, typoTolerance === true, onCorrections);
      },
      timeoutMs ? { statementTimeoutMs: timeoutMs } : {},
    );
  }

  private async score(
    db: TenantReader,
    tenant: TenantContext,
    query: string,
    window: number,
    collection: CollectionStatistics,
    filter: SearchFilter,
    typoTolerance: boolean,
    onCorrections?: (corrections: readonly WordCorrection[]) => void,
  ): Promise<ProviderHit[]> {
    const filtered = hasDocumentFilter(filter);
    const { organizationId, userId } = tenant;
    const teamIds = [...tenant.teamIds];
    const weight = bm25TermWeightSql(Prisma.raw("f.df"), collection.chunks);
    const postingScore = bm25PostingScoreSql(Prisma.raw("t.weight"), Prisma.raw("p.tf"), Prisma.raw("p.chunk_length"), collection.averageLength);
    // As conversations.keyword's: the text cast on the page only, a named statement on PostgreSQL.
    // Rows with a NULL id are the corrections of misspelled words found in chunks the caller may see.
    const rows = await queryPrepared<{ id: string | null; score: number; term: string | null; typed: string | null; word: string | null; boost: number | null } & DocumentAttributeRow>(
      db,
      filtered ? "documents_keyword_filtered" : "documents_keyword",
      Prisma.sql`
      WITH not_ready AS MATERIALIZED (
        SELECT id FROM documents WHERE organization_id = ${organizationId} AND status <> 'READY'
      ),
      asked_terms AS MATERIALIZED (
        SELECT t.term, ${weight} * t.boost AS weight, t.typed, t.word, t.boost, f.df
        FROM (${queryTermsSql({ organizationId, userId, teamIds }, query, typoTolerance)}) t
        CROSS JOIN LATERAL (
          SELECT count(*)::float8 AS df FROM document_keyword_postings p
          WHERE p.organization_id = ${organizationId} AND p.term = t.term
            AND (p.owner_id = ${userId} OR p.team_id = ANY(${teamIds}::text[]))
            AND p.document_id NOT IN (SELECT id FROM not_ready)
        ) f
      ),
      terms AS MATERIALIZED (
        SELECT * FROM asked_terms WHERE df > 0
      ),
      ranked AS (
        SELECT p.chunk_id, sum(${postingScore}) AS score
        FROM terms t
        JOIN document_keyword_postings p ON p.organization_id = ${organizationId} AND p.term = t.term
        WHERE (p.owner_id = ${userId} OR p.team_id = ANY(${teamIds}::text[]))
          AND p.document_id NOT IN (SELECT id FROM not_ready)
          ${filtered ? Prisma.sql`AND p.document_id IN (SELECT d.id FROM documents d WHERE d.organization_id = ${organizationId} AND ${documentFilterSql(filter)})` : Prisma.empty}
        GROUP BY p.chunk_id
        ORDER BY score DESC, p.chunk_id
        LIMIT ${window}
      )
      SELECT r.chunk_id::text AS id, r.score, NULL::text AS term, NULL::text AS typed, NULL::text AS word, NULL::float8 AS boost, ${DOCUMENT_ATTRIBUTE_COLUMNS}
      FROM ranked r
      LEFT JOIN document_chunks c ON c.organization_id = ${organizationId} AND c.id = r.chunk_id
      LEFT JOIN documents d ON d.organization_id = c.organization_id AND d.id = c.document_id
      UNION ALL
      SELECT NULL, df, term, typed, word, boost, ${Prisma.raw(Array(DOCUMENT_ATTRIBUTE_COLUMN_COUNT).fill("NULL").join(", "))} FROM asked_terms WHERE typed IS NULL OR df > 0`,
    );
    const hits: ProviderHit[] = [];
    const corrections: WordCorrection[] = [];
    // The query's own lexemes (found or not) with their dfs: what the query asks for (relevance).
    const queryTerms: { df: number }[] = [];
    for (const row of rows) {
      if (row.id !== null) hits.push(documentChunkHit(row.id, Number(row.score), row));
      else if (row.typed !== null) corrections.push({ typed: row.typed, word: row.word!, term: row.term!, boost: Number(row.boost), documents: Number(row.score) });
      else queryTerms.push({ df: Number(row.score) });
    }
    if (corrections.length > 0) onCorrections?.(corrections);
    const information = queryInformation(queryTerms, corrections, collection.chunks);
    for (const hit of hits) {
      const relevance = bm25Relevance(hit.nativeScore, information);
      if (relevance !== undefined) hit.relevance = relevance;
    }
    // ranked's order, restated: UNION ALL promises none.
    return hits.sort((a, b) => b.nativeScore - a.nativeScore || (a.ref.id < b.ref.id ? -1 : a.ref.id > b.ref.id ? 1 : 0));
  }
}
