/**
 * `conversations.keyword`: BM25 over conversations (title and messages), computed in SQL from
 * the postings table the search migrations keep current.
 *
 * Why not ts_rank: PostgreSQL's rankers ignore how rare a term is across the collection and
 * measured ~0.12 nDCG@10 below BM25 on SciFact. Why OR semantics: a sentence-like query almost
 * never has every word in one document (AND matched nothing for 277 of 300 SciFact queries).
 *
 * The query text is turned into lexemes by to_tsvector, the same analyzer that built the
 * index. to_tsvector accepts any string: tsquery operators, quotes, backslashes and SQL in the
 * user's text are just characters, so no input can make this query fail or change its shape.
 *
 * Cost: the statement reads only the index ranges of the query's own terms (the postings'
 * primary key covers tf and document length, so these are index-only scans), counts each
 * range for its document frequency unless a kept one is passed in (a large organization's
 * common terms, kept with its statistics) and sums BM25 per conversation. The work grows with
 * how many conversations contain the query's terms, not with the corpus.
 *
 * A filter (owner, created and updated ranges) restricts which conversations are scored,
 * inside the same statement, and moves no statistic: document frequencies and lengths stay the
 * organization's, so a conversation scores the same with and without a filter, and a filtered
 * page is the unfiltered ranking with the others left out (as deep as the window, however rare
 * the matches). Each hit comes back with its conversation's dates and owner (primary-key lookups
 * of the window's rows only), which facets count.
 *
 * MaxScore pruning (bench/sql/keyword-search-pruning.sql) was measured against this statement
 * and not shipped: at 10,000 conversations it cost 1.69x the CPU per search when always
 * pruning, 2.2x on the queries with 20,000 postings or more (see the keyword-pruning benchmark).
 */
import { Prisma, type PrismaClient } from "../../../generated/prisma/client.js";
import { BriefCache } from "../../../lib/cache/brief-cache.js";
import { queryPrepared, withTenantReads, type TenantReader } from "../../../lib/database/tenant-reads.js";
import { BM25_SCORE_SCALE, bm25PostingScoreSql, bm25Relevance, bm25TermWeightSql, queryInformation, CommonTermFrequencies, NONE_KNOWN, type KnownTermFrequencies } from "../../../lib/retrieval/bm25.js";
import type { ProviderHit, ProviderRequest, SearchProvider } from "../../../lib/retrieval/search-provider.js";
import { NO_FILTER, type FilterField, type HitAttributes, type SearchFilter } from "../../../lib/retrieval/search-filter.js";
import { conversationFilterSql, hasConversationFilter } from "./conversation-filter.js";
import { queryTermsSql, type WordCorrection } from "../../../lib/retrieval/typo-tolerance.js";
import type { TenantContext } from "../../../lib/tenancy/token.js";

/**
 * Collection statistics are read once per organization and kept this long when the
 * organization is large: counting 100,000 document lengths takes ~10 ms, more than the rest of
 * a typical search. BM25 needs only approximately current values (Lucene reads them per
 * segment, not per write); which conversations match, and their term frequencies, are always
 * read live.
 */
const COLLECTION_STATISTICS_TTL_MS = 10_000;
/** Below this many documents the statistics cost well under a millisecond: always read them live. */
const CACHE_FROM_DOCUMENTS = 5_000;
/**
 * Terms in this many conversations or more have their df kept with the statistics: counting a
 * term's postings costs about as much as scoring them, and below this both are cheap. At 10,000
 * conversations a few hundred terms qualify; at most COMMON_TERMS_KEPT are kept (the most
 * frequent), passed to every statement as two arrays (a few kilobytes).
 */
export const COMMON_TERM_FROM_DF = 1_000;
export const COMMON_TERMS_KEPT = 256;

interface CollectionStatistics {
  documents: number;
  averageLength: number;
}

export interface ConversationsKeywordProviderOptions {
  /** The clock the statistics' TTL is measured on (tests). */
  clock?: { now(): number };
}

export class ConversationsKeywordProvider implements SearchProvider {
  readonly name = "conversations.keyword";
  readonly kind = "KEYWORD" as const;
  /** Okapi BM25 with the shared analyzer and parameters (lib/retrieval/bm25.ts), as the other keyword provider. */
  readonly scoreScale = BM25_SCORE_SCALE;
  readonly latency = "LOCAL" as const;
  readonly description = "BM25 full-text ranking over conversation titles and messages (PostgreSQL, English stemming).";
  readonly itemTypes = ["Conversation"];
  readonly filters: readonly FilterField[] = ["created", "updated", "owner"];

  /**
   * Statistics by organization, read by one search at a time: when a large organization's entry
   * expires under load, the searches in flight share one read instead of each counting again.
   * The read runs on the first caller's tenant reader (pinned to the same organization, so its
   * answer is every caller's); if it fails there (that caller's timeout), the others read again.
   */
  private readonly collections: BriefCache<string, CollectionStatistics>;
  /** The dfs of large organizations' common terms, kept as long as their statistics. */
  private readonly commonTerms: CommonTermFrequencies;

  constructor(
    private readonly prisma: PrismaClient,
    options: ConversationsKeywordProviderOptions = {},
  ) {
    this.collections = new BriefCache({
      ttlMs: COLLECTION_STATISTICS_TTL_MS,
      keepFor: (statistics) => (statistics.documents >= CACHE_FROM_DOCUMENTS ? COLLECTION_STATISTICS_TTL_MS : 0),
      callerBound: true,
      ...(options.clock ? { clock: options.clock } : {}),
    });
    this.commonTerms = new CommonTermFrequencies({
      ttlMs: COLLECTION_STATISTICS_TTL_MS,
      fromDf: COMMON_TERM_FROM_DF,
      maxTerms: COMMON_TERMS_KEPT,
      ...(options.clock ? { clock: options.clock } : {}),
    });
  }

  async search({ tenant, query, window, timeoutMs, filter = NO_FILTER, typoTolerance, onCorrections }: ProviderRequest): Promise<ProviderHit[]> {
    // One tenant scope for the statistics and the scoring. Under overload, searches the service
    // has already given up on would otherwise keep running and push every later one past its
    // timeout too (seen in the 100k soak: the database stayed busy 108 s after the load
    // stopped): the scope's statement timeout makes the database cancel them.
    return withTenantReads(
      this.prisma,
      tenant.organizationId,
      async (tx) => {
        const collection = await this.collectionStatistics(tx, tenant.organizationId);
        if (collection.documents === 0) return [];
        return this.score(tx, tenant, query, window, collection, filter, typoTolerance === true, onCorrections);
      },
      timeoutMs ? { statementTimeoutMs: timeoutMs } : {},
    );
  }

  private async score(
    prisma: TenantReader,
    tenant: TenantContext,
    query: string,
    window: number,
    collection: CollectionStatistics,
    filter: SearchFilter,
    typoTolerance: boolean,
    onCorrections?: (corrections: readonly WordCorrection[]) => void,
  ): Promise<ProviderHit[]> {
    const { organizationId } = tenant;
    const reader = { userId: tenant.userId, teamIds: tenant.teamIds };
    // Small organizations are read live, statistics and dfs alike (cheap, and exact).
    const keeping = collection.documents >= CACHE_FROM_DOCUMENTS;
    const known = keeping ? this.commonTerms.known(organizationId) : undefined;
    const { hits, counted, corrections } = await scorePostings(prisma, organizationId, query, window, collection, known, keeping ? COMMON_TERM_FROM_DF : undefined, filter, typoTolerance, reader);
    if (keeping) this.commonTerms.remember(organizationId, counted);
    if (corrections.length > 0) onCorrections?.(corrections);
    return hits.map((row) => ({ ref: { typename: "Conversation", id: row.id }, nativeScore: row.score, ...(row.attributes ? { attributes: row.attributes } : {}), ...(row.relevance !== undefined ? { relevance: row.relevance } : {}) }));
  }

  private collectionStatistics(db: TenantReader, organizationId: string): Promise<CollectionStatistics> {
    return this.collections.get(organizationId, async () => {
      const [row] = await db.$queryRaw<{ documents: number; average_length: number }[]>`
        SELECT count(*)::float8 AS documents, greatest(coalesce(avg(length), 1), 1)::float8 AS average_length
        FROM keyword_documents WHERE organization_id = ${organizationId}`;
      return { documents: Number(row?.documents ?? 0), averageLength: Number(row?.average_length ?? 1) };
    });
  }
}

/**
 * The provider's statement: reads every posting of every query term, and counts the postings of
 * each term whose df is not known (a second read of the same index range).
 *
 * `known` are dfs kept from earlier statements (CommonTermFrequencies): those terms are not
 * counted. The statement reports the terms it counted with at least `reportFromDf` postings, for
 * the caller to keep; rows with a NULL id carry them (term, df), not hits. With `typoTolerance`
 * the term set also holds corrections of the query's misspelled words (typo-tolerance.ts,
 * weighed by their boost); those found in at least one conversation come back as `corrections`.
 *
 * The uuid-to-text cast is applied to the page returned, not to every conversation scored (up
 * to all of them): the grouped, sorted rows stay uuids until the last step. A named statement
 * on PostgreSQL's tenant-read pool (queryPrepared): parsed and planned once per connection.
 */
export async function scorePostings(
  prisma: TenantReader,
  organizationId: string,
  query: string,
  window: number,
  collection: { documents: number; averageLength: number },
  known: KnownTermFrequencies = NONE_KNOWN,
  reportFromDf = Number.MAX_SAFE_INTEGER,
  filter: SearchFilter = NO_FILTER,
  typoTolerance = false,
  /** Whose documents count as readable words for typo tolerance (typo-tolerance.ts); none when left out. */
  reader: { userId: string; teamIds: readonly string[] } = { userId: "", teamIds: [] },
): Promise<{ hits: { id: string; score: number; attributes: HitAttributes | undefined; relevance?: number }[]; counted: { term: string; df: number }[]; corrections: WordCorrection[] }> {
  const filtered = hasConversationFilter(filter);
  const weight = bm25TermWeightSql(Prisma.raw("t.df"), collection.documents);
  const postingScore = bm25PostingScoreSql(Prisma.raw("t.weight"), Prisma.raw("p.tf"), Prisma.raw("p.document_length"), collection.averageLength);
  const rows = await queryPrepared<{
    id: string | null;
    score: number;
    term: string | null;
    counted: boolean | null;
    typed: string | null;
    word: string | null;
    boost: number | null;
    created_at: Date | null;
    updated_at: Date | null;
    user_id: string | null;
  }>(
    prisma,
    // Two statement texts, each always the same (the filter's values are parameters): a named statement per shape.
    filtered ? "conversations_keyword_filtered" : "conversations_keyword",
    Prisma.sql`
    WITH counted AS MATERIALIZED (
      SELECT q.term, q.boost, q.typed, q.word, coalesce(k.df, (
               SELECT count(*)::float8 FROM keyword_postings p
               WHERE p.organization_id = ${organizationId} AND p.term = q.term
             )) AS df,
             k.df IS NULL AS was_counted
      FROM (${queryTermsSql({ organizationId, ...reader }, query, typoTolerance)}) q
      LEFT JOIN unnest(${known.literals?.terms ?? known.terms}::text[], ${known.literals?.dfs ?? known.dfs}::float8[]) AS k(term, df) ON k.term = q.term
    ),
    terms AS MATERIALIZED (
      SELECT t.term, ${weight} * t.boost AS weight FROM counted t WHERE t.df > 0
    ),
    ranked AS (
      SELECT p.conversation_id, sum(${postingScore}) AS score
      FROM terms t
      JOIN keyword_postings p ON p.organization_id = ${organizationId} AND p.term = t.term
      ${filtered ? Prisma.sql`WHERE p.conversation_id IN (SELECT c.id FROM conversations c WHERE c.organization_id = ${organizationId} AND c.deleted_at IS NULL AND ${conversationFilterSql(filter)})` : Prisma.empty}
      GROUP BY p.conversation_id
      ORDER BY score DESC, p.conversation_id
      LIMIT ${window}
    )
    SELECT r.conversation_id::text AS id, r.score, NULL::text AS term, NULL::boolean AS counted, NULL::text AS typed, NULL::text AS word, NULL::float8 AS boost, c.created_at, c.updated_at, c.user_id
    FROM ranked r LEFT JOIN conversations c ON c.organization_id = ${organizationId} AND c.id = r.conversation_id
    UNION ALL
    SELECT NULL, df, term, was_counted AND df >= ${reportFromDf}::float8, typed, word, boost, NULL, NULL, NULL FROM counted
    WHERE typed IS NULL OR df > 0`,
  );
  const hits: { id: string; score: number; attributes: HitAttributes | undefined; relevance?: number }[] = [];
  const counted: { term: string; df: number }[] = [];
  const corrections: WordCorrection[] = [];
  // The query's own lexemes (found or not) with their dfs: what the query asks for (relevance).
  const queryTerms: { df: number }[] = [];
  for (const row of rows) {
    if (row.id !== null) {
      hits.push({ id: row.id, score: Number(row.score), attributes: conversationAttributes(row) });
      continue;
    }
    if (row.counted) counted.push({ term: row.term!, df: Number(row.score) });
    if (row.typed !== null) corrections.push({ typed: row.typed, word: row.word!, term: row.term!, boost: Number(row.boost), documents: Number(row.score) });
    else queryTerms.push({ df: Number(row.score) });
  }
  // ranked's order, restated: UNION ALL promises none. Lowercase hex uuids compare as PostgreSQL orders uuids.
  hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const information = queryInformation(queryTerms, corrections, collection.documents);
  for (const hit of hits) {
    const relevance = bm25Relevance(hit.score, information);
    if (relevance !== undefined) hit.relevance = relevance;
  }
  return { hits, counted, corrections };
}

/** A hit's conversation dates and owner; none when the conversation is gone (its postings outlive it briefly). */
export function conversationAttributes(row: { created_at: Date | string | null; updated_at: Date | string | null; user_id: string | null }): HitAttributes | undefined {
  if (row.created_at === null || row.updated_at === null || row.user_id === null) return undefined;
  return { createdAt: new Date(row.created_at).toISOString(), updatedAt: new Date(row.updated_at).toISOString(), ownerId: row.user_id };
}

/**
 * The statement with nothing known: every term counted. The baseline the keyword-pruning
 * benchmark and its test compare against.
 */
export async function scoreAllPostings(
  prisma: TenantReader,
  organizationId: string,
  query: string,
  window: number,
  collection: { documents: number; averageLength: number },
): Promise<{ id: string; score: number }[]> {
  return (await scorePostings(prisma, organizationId, query, window, collection)).hits.map(({ id, score }) => ({ id, score }));
}
