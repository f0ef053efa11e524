/**
 * Okapi BM25 as both keyword providers compute it in SQL (conversations.keyword over
 * conversations, documents.keyword over document chunks): the parameters, and the two halves of
 * the score as SQL fragments, so the statements cannot drift apart.
 *
 *   score(d) = Σ over the query's terms t in d of  (k1 + 1) · idf(t) · tf / (tf + k1 · (1 − b + b · len(d) / avglen))
 *   idf(t)   = ln(1 + (N − df + 0.5) / (df + 0.5))     (Lucene's; never negative)
 *
 * Written as weight(t) · tf / (tf + k1·(1 − b) + (k1·b / avglen) · len(d)): the factors that
 * are the same for every posting of a statement are multiplied out once, per term or per
 * statement, instead of for each of the (up to hundreds of thousands of) postings it reads.
 * Measured by issue 12 on the 10,000-conversation bench corpus: with the text cast moved to the
 * 20 rows returned (see the providers), 12–17% less PostgreSQL CPU per keyword statement, the
 * same top 20 on all 200 benchmark queries. The scores differ from the unfactored form only in
 * the last bits of a double.
 */
import { LRUCache } from "lru-cache";
import { Prisma } from "../../generated/prisma/client.js";

/** The score scale (SearchProvider.scoreScale) of every provider that ranks with these functions. */
export const BM25_SCORE_SCALE = "okapi-bm25";

/** The usual defaults (Robertson; Lucene and Pyserini use the same). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * A term's weight, (k1 + 1) · idf, from its document frequency `df` (an SQL float8 expression)
 * in a collection of `documents`. greatest(documents, df): collection statistics may be kept
 * briefly and trail a burst of new documents; the idf must stay a number, never the log of a
 * negative.
 */
export function bm25TermWeightSql(df: Prisma.Sql, documents: number): Prisma.Sql {
  return Prisma.sql`${BM25_K1 + 1}::float8 * ln(1 + (greatest(${documents}::float8, ${df}) - ${df} + 0.5) / (${df} + 0.5))`;
}

/**
 * One posting's share of its document's score: `weight` · tf / (tf + k1·(1 − b) + (k1·b / avglen) · len).
 * `weight`, `tf` and `length` are SQL expressions (a term's weight column, the posting's term
 * frequency and its document's length).
 */
export function bm25PostingScoreSql(weight: Prisma.Sql, tf: Prisma.Sql, length: Prisma.Sql, averageLength: number): Prisma.Sql {
  const lengthFactor = (BM25_K1 * BM25_B) / Math.max(averageLength, Number.MIN_VALUE);
  return Prisma.sql`${weight} * ${tf} / (${tf} + ${BM25_K1 * (1 - BM25_B)}::float8 + ${lengthFactor}::float8 * ${length})`;
}

/** A term's idf as the statements compute it (bm25TermWeightSql divided by k1 + 1). */
export function bm25Idf(df: number, documents: number): number {
  return Math.log(1 + (Math.max(documents, df) - df + 0.5) / (df + 0.5));
}

/**
 * What a query asks for, in BM25 points: the most a text can score for it, each of its words
 * repeated without end ((k1 + 1) · idf each, the bound of BM25's term-frequency saturation), so
 * a hit's score divided by it reads 0 to 1 whatever the query and the collection
 * (`bm25Relevance`): the idf-weighted mean of how saturated each query word is in the hit,
 * tf / (tf + k1 · (1 − b + b · len / avglen)). A word that occurs once in a text of average
 * length is saturated to 1 / (1 + k1) = 0.45, three times to 0.71; a word the text lacks, 0.
 * Repeating one word of the query cannot make up for another's absence, as a plain share of the
 * summed idfs (where one word's saturation may reach 2.2 times its idf) would let it.
 *
 * - A word of the query found in the collection counts its idf.
 * - A word found nowhere counts the idf of a term in no document, the most a word can weigh: a
 *   query about something the collection does not hold ("refund timing" where nothing mentions
 *   refunds) then covers little, however well its other words match.
 * - A misspelled word that typo tolerance corrected counts as its best correction (boost · idf),
 *   what the search looked for in its place, instead of as a word found nowhere.
 *
 * `terms` are the query's own lexemes with their document frequencies (0 for none), as the
 * statement counted them; `corrections` the corrections it found in documents.
 */
export function queryInformation(terms: readonly { df: number }[], corrections: readonly { typed: string; boost: number; documents: number }[], documents: number): number {
  const bestCorrection = new Map<string, number>();
  for (const correction of corrections) {
    const weight = correction.boost * bm25Idf(correction.documents, documents);
    bestCorrection.set(correction.typed, Math.max(bestCorrection.get(correction.typed) ?? 0, weight));
  }
  const absent = terms.filter((term) => !(term.df > 0)).length;
  let information = terms.reduce((sum, term) => sum + (term.df > 0 ? bm25Idf(term.df, documents) : 0), 0);
  information += Math.max(0, absent - bestCorrection.size) * bm25Idf(0, documents);
  for (const weight of bestCorrection.values()) information += weight;
  return (BM25_K1 + 1) * information;
}

/** A hit's score as a share of what its query asks for (queryInformation), within 0..1; undefined when the query asks for nothing. */
export function bm25Relevance(score: number, information: number): number | undefined {
  if (!(information > 0) || !Number.isFinite(score)) return undefined;
  return Math.min(1, Math.max(0, score / information));
}

export interface CommonTermFrequenciesOptions {
  /** How long a collection's terms are kept, from the first one remembered (then all are counted again). */
  ttlMs: number;
  /** Only terms in at least this many documents are kept: rarer ones cost little to count. */
  fromDf: number;
  /** Terms kept per collection at most (the most frequent stay). */
  maxTerms: number;
  /** Collections kept at most (least recently used go first). Default 1,000. */
  maxCollections?: number;
  /** The clock TTLs are measured on (tests). */
  clock?: { now(): number };
}

/** Terms with their document frequencies, as two parallel arrays (SQL parameters). */
export interface KnownTermFrequencies {
  terms: string[];
  dfs: number[];
  /**
   * The same two arrays as PostgreSQL array literals, made once per change instead of by the
   * driver for every statement (a few hundred elements: measurable in a profile under load).
   */
  literals?: { terms: string; dfs: string };
}

/** A PostgreSQL array literal of these strings: every element quoted, backslash and quote escaped. */
export function textArrayLiteral(values: readonly string[]): string {
  return `{${values.map((value) => `"${value.replace(/[\\"]/g, (character) => `\\${character}`)}"`).join(",")}}`;
}

/** Nothing known: every term is counted. */
export const NONE_KNOWN: KnownTermFrequencies = Object.freeze({ terms: [], dfs: [] }) as KnownTermFrequencies;

/**
 * The document frequencies of a collection's common terms, kept as briefly as its collection
 * statistics, so a keyword statement need not count their postings: a near-stop-word's df is a
 * count of every one of its postings, read again right after to score them (at 10,000
 * conversations the terms with 1,000 postings or more are most of what the counting reads).
 * Each statement is given what is known and reports the common terms it had to count.
 *
 * The same approximation as the kept collection size and average length, and Lucene's per
 * segment: for at most `ttlMs` a df may trail the postings written since; which documents
 * match, and their term frequencies, are always read live. A collection's terms expire
 * together, so no df is older than the statistics it is combined with by more than the TTL.
 */
export class CommonTermFrequencies {
  private readonly collections: LRUCache<string, { dfs: Map<string, number>; snapshot: KnownTermFrequencies | null }>;

  constructor(private readonly options: CommonTermFrequenciesOptions) {
    this.collections = new LRUCache({
      max: options.maxCollections ?? 1_000,
      ttl: Math.max(1, options.ttlMs),
      // Remembering more terms must not extend the collection's first ones.
      noUpdateTTL: true,
      ...(options.clock ? { perf: options.clock, ttlResolution: 0 } : {}),
    });
  }

  /** What is known of the collection's terms (empty when nothing, or nothing current, is). */
  known(collection: string): KnownTermFrequencies {
    const entry = this.collections.get(collection);
    if (!entry) return NONE_KNOWN;
    if (!entry.snapshot) {
      const terms = [...entry.dfs.keys()];
      const dfs = [...entry.dfs.values()];
      entry.snapshot = { terms, dfs, literals: { terms: textArrayLiteral(terms), dfs: `{${dfs.join(",")}}` } };
    }
    return entry.snapshot;
  }

  /** Keeps the common ones among terms a statement counted. */
  remember(collection: string, counted: readonly { term: string; df: number }[]): void {
    const common = counted.filter((row) => row.df >= this.options.fromDf);
    if (common.length === 0) return;
    let entry = this.collections.get(collection);
    if (!entry) {
      entry = { dfs: new Map(), snapshot: null };
      this.collections.set(collection, entry);
    }
    for (const { term, df } of common) {
      if (entry.dfs.size >= this.options.maxTerms && !entry.dfs.has(term)) {
        // Full: a more frequent term takes the least frequent one's place (a few hundred entries, rarely full).
        let rarest: string | null = null;
        for (const [known, knownDf] of entry.dfs) if (rarest === null || knownDf < entry.dfs.get(rarest)!) rarest = known;
        if (rarest === null || entry.dfs.get(rarest)! >= df) continue;
        entry.dfs.delete(rarest);
      }
      entry.dfs.set(term, df);
    }
    entry.snapshot = null;
  }

  /** Forgets a collection's terms (tests; a write of this process that changed many dfs). */
  forget(collection: string): void {
    this.collections.delete(collection);
  }
}
