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
import { Prisma } from "../../generated/prisma/client.js";

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
