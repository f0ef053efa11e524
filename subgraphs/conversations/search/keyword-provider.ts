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
 * Cost: when the query's terms have many postings, keyword_search_conversations (the
 * keyword_search_pruning migration) prunes MaxScore-style with the universal BM25 bound
 * idf·(k1+1), which needs no per-term statistics (nothing extra on the write path): a first
 * candidate set gives θ, the window-th best full score; terms whose summed bounds stay below θ
 * (the near-stop-words, whose idf is tiny) are only probed (primary key) for conversations that
 * contain another term, never summed in full. Scoring stays exact: the same window as
 * scoreAllPostings (below), up to the order floats are summed in. In large organizations the
 * dfs of common terms are cached like the document count (CACHE_DF_FROM): while such a df
 * changes within the TTL, idf uses the cached value, so scores can differ from a live count
 * by that drift (as they already do for the cached document count and average length); the
 * pruning stays exact for the scores used, since bounds and scores take the same idf.
 */
import { LRUCache } from "lru-cache";
import type { PrismaClient } from "../../../generated/prisma/client.js";
import { withTenantReads, type TenantReader } from "../../../lib/database/tenant-reads.js";
import type { ProviderHit, ProviderRequest, SearchProvider } from "../../../lib/retrieval/search-provider.js";

/** BM25 parameters: the usual defaults (Robertson; Lucene and Pyserini use the same). */
const K1 = 1.2;
const B = 0.75;

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
/** See keyword_search_conversations (keyword_search_pruning migration): pruning pays from here. */
export const PRUNE_FROM_POSTINGS = 20_000;
/**
 * A term's df is a collection statistic like the document count: in organizations large enough
 * to cache those, dfs of at least this many postings are kept for COLLECTION_STATISTICS_TTL_MS
 * too, so the near-stop-words' long ranges are not counted on every search. Smaller dfs are
 * always counted: that is cheap, and it is where one new conversation changes the idf most (a
 * term that just appeared is found at once, never hidden behind a cached 0).
 */
export const CACHE_DF_FROM = 1_000;

interface CollectionStatistics {
  documents: number;
  averageLength: number;
}

export class ConversationsKeywordProvider implements SearchProvider {
  readonly name = "conversations.keyword";
  readonly kind = "KEYWORD" as const;
  readonly description = "BM25 full-text ranking over conversation titles and messages (PostgreSQL, English stemming).";

  private readonly collections = new LRUCache<string, CollectionStatistics>({ max: 10_000, ttl: COLLECTION_STATISTICS_TTL_MS });
  /** df by organization and term (see CACHE_DF_FROM). */
  private readonly dfs = new LRUCache<string, number>({ max: 100_000, ttl: COLLECTION_STATISTICS_TTL_MS });
  /**
   * A query text's lexemes, as the function reported them: the analyzer is fixed ('english'),
   * so the same text always gives the same lexemes. Needed to look dfs up before the call.
   * Bounded by total text length, not only by entries.
   */
  private readonly lexemes = new LRUCache<string, string[]>({ maxSize: 4_000_000, sizeCalculation: (terms, text) => text.length + terms.join("").length + 1 });

  /**
   * @param pruneFromPostings below this many postings of the query's terms in all, score them
   * all instead of pruning (the database function's default when omitted); tests pass 0 to
   * exercise the pruning on a small corpus; likewise cacheFromDocuments and cacheDfFrom
   * (CACHE_FROM_DOCUMENTS, CACHE_DF_FROM) to exercise the caches.
   */
  constructor(
    private readonly prisma: PrismaClient,
    private readonly options: { pruneFromPostings?: number; cacheFromDocuments?: number; cacheDfFrom?: number } = {},
  ) {}

  async search({ tenant, query, window, timeoutMs }: ProviderRequest): Promise<ProviderHit[]> {
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
        return this.score(tx, tenant.organizationId, query, window, collection);
      },
      timeoutMs ? { statementTimeoutMs: timeoutMs } : {},
    );
  }

  private async score(prisma: TenantReader, organizationId: string, query: string, window: number, collection: CollectionStatistics): Promise<ProviderHit[]> {
    // Pruned exact BM25 (MaxScore, keyword_search_pruning migration): the same top window as
    // scoreAllPostings below, without summing the postings of terms that cannot change it.
    const caching = collection.documents >= (this.options.cacheFromDocuments ?? CACHE_FROM_DOCUMENTS);
    const knownTerms: string[] = [];
    const knownDfs: number[] = [];
    if (caching) {
      for (const term of this.lexemes.get(query) ?? []) {
        const df = this.dfs.get(`${organizationId}\u0000${term}`);
        if (df !== undefined) {
          knownTerms.push(term);
          knownDfs.push(df);
        }
      }
    }
    // Rows with a NULL id carry the dfs the function counted (terms not passed in), not hits.
    const rows = await prisma.$queryRaw<{ id: string | null; score: number | null; term: string | null; df: number | null }[]>`
      SELECT id::text AS id, score, term, df
      FROM keyword_search_conversations(${organizationId}, ${query}, ${collection.documents}::float8, ${collection.averageLength}::float8, ${window}::int,
                                        ${this.options.pruneFromPostings ?? PRUNE_FROM_POSTINGS}::int, ${knownTerms}::text[], ${knownDfs}::float8[])`;
    const hits: { id: string; score: number }[] = [];
    const counted: string[] = [];
    for (const row of rows) {
      if (row.id !== null) hits.push({ id: row.id, score: Number(row.score) });
      else if (row.term !== null) {
        counted.push(row.term);
        if (caching && Number(row.df) >= (this.options.cacheDfFrom ?? CACHE_DF_FROM)) this.dfs.set(`${organizationId}\u0000${row.term}`, Number(row.df));
      }
    }
    if (caching && !this.lexemes.has(query)) this.lexemes.set(query, [...knownTerms, ...counted]);
    return hits.map((row) => ({ ref: { typename: "Conversation", id: row.id }, nativeScore: Number(row.score) }));
  }

  private async collectionStatistics(db: TenantReader, organizationId: string): Promise<CollectionStatistics> {
    const cached = this.collections.get(organizationId);
    if (cached) return cached;
    const [row] = await db.$queryRaw<{ documents: number; average_length: number }[]>`
      SELECT count(*)::float8 AS documents, greatest(coalesce(avg(length), 1), 1)::float8 AS average_length
      FROM keyword_documents WHERE organization_id = ${organizationId}`;
    const statistics = { documents: Number(row?.documents ?? 0), averageLength: Number(row?.average_length ?? 1) };
    if (statistics.documents >= (this.options.cacheFromDocuments ?? CACHE_FROM_DOCUMENTS)) this.collections.set(organizationId, statistics);
    return statistics;
  }
}

/**
 * The exhaustive statement the provider ran before pruning: reads every posting of every query
 * term (twice: once to count df). Not used by the provider; kept as the reference the pruning
 * test compares against and the baseline the keyword-pruning benchmark measures.
 */
export async function scoreAllPostings(
  prisma: TenantReader,
  organizationId: string,
  query: string,
  window: number,
  collection: { documents: number; averageLength: number },
): Promise<{ id: string; score: number }[]> {
  // greatest(documents, df): cached statistics may trail a burst of new conversations; idf
  // must stay a number, never the log of a negative.
  const rows = await prisma.$queryRaw<{ id: string; score: number }[]>`
    WITH terms AS MATERIALIZED (
      SELECT t.term, ln(1 + (greatest(${collection.documents}::float8, f.df) - f.df + 0.5) / (f.df + 0.5)) AS idf
      FROM (SELECT DISTINCT lexeme AS term FROM unnest(to_tsvector('english'::regconfig, ${query}))) t
      CROSS JOIN LATERAL (
        SELECT count(*)::float8 AS df FROM keyword_postings p
        WHERE p.organization_id = ${organizationId} AND p.term = t.term
      ) f
      WHERE f.df > 0
    )
    SELECT p.conversation_id::text AS id,
           sum(
             t.idf * p.tf * ${K1 + 1}::float8
             / (p.tf + ${K1}::float8 * (${1 - B}::float8 + ${B}::float8 * p.document_length / ${collection.averageLength}::float8))
           ) AS score
    FROM terms t
    JOIN keyword_postings p ON p.organization_id = ${organizationId} AND p.term = t.term
    GROUP BY p.conversation_id
    ORDER BY score DESC, p.conversation_id
    LIMIT ${window}`;
  return rows.map((row) => ({ id: row.id, score: Number(row.score) }));
}
