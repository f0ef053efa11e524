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
 */
import { Prisma, type PrismaClient } from "../../../generated/prisma/client.js";
import { queryPrepared, withTenantReads, type TenantReader } from "../../../lib/database/tenant-reads.js";
import { bm25PostingScoreSql, bm25TermWeightSql } from "../../../lib/retrieval/bm25.js";
import type { ProviderHit, ProviderRequest, SearchProvider } from "../../../lib/retrieval/search-provider.js";
import type { TenantContext } from "../../../lib/tenancy/token.js";
import { documentCollectionsOf, type CollectionStatistics, type DocumentCollections } from "./document-collections.js";

export class DocumentsKeywordProvider implements SearchProvider {
  readonly name = "documents.keyword";
  readonly kind = "KEYWORD" as const;
  readonly latency = "LOCAL" as const;
  readonly description = "BM25 full-text ranking over the chunks of your and your teams' documents (PostgreSQL, English stemming).";

  /**
   * @param collections The organizations' statistics (as in the conversation provider: large
   *   organizations' kept briefly, small ones read live), and which have no chunk at all,
   *   shared with `documents.semantic` (document-collections.ts).
   */
  constructor(
    private readonly prisma: PrismaClient,
    private readonly collections: DocumentCollections = documentCollectionsOf(prisma),
  ) {}

  async search({ tenant, query, window, timeoutMs }: ProviderRequest): Promise<ProviderHit[]> {
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
        return this.score(tx, tenant, query, window, collection);
      },
      timeoutMs ? { statementTimeoutMs: timeoutMs } : {},
    );
  }

  private async score(db: TenantReader, tenant: TenantContext, query: string, window: number, collection: CollectionStatistics): Promise<ProviderHit[]> {
    const { organizationId, userId } = tenant;
    const teamIds = [...tenant.teamIds];
    const weight = bm25TermWeightSql(Prisma.raw("f.df"), collection.chunks);
    const postingScore = bm25PostingScoreSql(Prisma.raw("t.weight"), Prisma.raw("p.tf"), Prisma.raw("p.chunk_length"), collection.averageLength);
    // As conversations.keyword's: the text cast on the page only, a named statement on PostgreSQL.
    const rows = await queryPrepared<{ id: string; score: number }>(
      db,
      "documents_keyword",
      Prisma.sql`
      WITH not_ready AS MATERIALIZED (
        SELECT id FROM documents WHERE organization_id = ${organizationId} AND status <> 'READY'
      ),
      terms AS MATERIALIZED (
        SELECT t.term, ${weight} AS weight
        FROM (SELECT DISTINCT lexeme AS term FROM unnest(to_tsvector('english'::regconfig, ${query}))) t
        CROSS JOIN LATERAL (
          SELECT count(*)::float8 AS df FROM document_keyword_postings p
          WHERE p.organization_id = ${organizationId} AND p.term = t.term
            AND (p.owner_id = ${userId} OR p.team_id = ANY(${teamIds}::text[]))
            AND p.document_id NOT IN (SELECT id FROM not_ready)
        ) f
        WHERE f.df > 0
      ),
      ranked AS (
        SELECT p.chunk_id, sum(${postingScore}) AS score
        FROM terms t
        JOIN document_keyword_postings p ON p.organization_id = ${organizationId} AND p.term = t.term
        WHERE (p.owner_id = ${userId} OR p.team_id = ANY(${teamIds}::text[]))
          AND p.document_id NOT IN (SELECT id FROM not_ready)
        GROUP BY p.chunk_id
        ORDER BY score DESC, p.chunk_id
        LIMIT ${window}
      )
      SELECT chunk_id::text AS id, score FROM ranked ORDER BY score DESC, chunk_id`,
    );
    return rows.map((row) => ({ ref: { typename: "DocumentChunk", id: row.id }, nativeScore: Number(row.score) }));
  }
}
