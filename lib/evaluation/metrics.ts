/**
 * Ranking-quality metrics computed the way BEIR reports them, so our numbers sit next to
 * published ones. BEIR (beir.retrieval.evaluation.EvaluateRetrieval.evaluate) hands each run to
 * pytrec_eval, which is trec_eval 9.x compiled in; the measures are "ndcg_cut.k" and "recall.k".
 *
 * nDCG@k as trec_eval's ndcg_cut computes it:
 *   - gain of a retrieved document = its relevance grade in the qrels (linear, not 2^grade - 1);
 *     unjudged documents and grades <= 0 gain nothing;
 *   - discount at 1-based rank r = log2(r + 1), so rank 1 counts fully;
 *   - ideal DCG = the same sum over the qrels' grades sorted high to low, cut at k, i.e. over
 *     every judged document, retrieved or not;
 *   - a query whose ideal DCG is 0 scores 0.
 * recall@k as trec_eval's recall.k: relevant documents (grade >= 1, pytrec_eval's default
 * relevance_level) in the top k, over all relevant documents for the query.
 *
 * Where this differs from running BEIR, deliberately:
 *   - trec_eval re-sorts a run by score (ties by document id); here the ranked list is taken as
 *     ranked, which is what the product returns. Pass lists without ties in doubt.
 *   - a repeated document is dropped, as if the list were de-duplicated (trec_eval refuses
 *     duplicates), so it can neither earn gain twice nor push others out of the top k.
 *   - BEIR averages over the queries pytrec_eval returns, i.e. those present in the run, so a
 *     query the system returned nothing for silently drops out; `evaluateRun` counts it as 0.
 *   - BEIR by default drops results whose document id equals the query id (for ArguAna and
 *     Quora, where queries are also documents); callers evaluating those must filter likewise.
 */

/** Relevance grades by document id for one query; grade <= 0 means judged non-relevant. */
export type Judgements = ReadonlyMap<string, number>;

export function ndcgAtK(ranked: readonly string[], relevant: Judgements, k: number): number {
  requireCutoff(k);
  const ideal = idealDcg(relevant, k);
  if (ideal === 0) return 0;
  let dcg = 0;
  topK(ranked, k).forEach((documentId, index) => {
    const grade = relevant.get(documentId) ?? 0;
    if (grade > 0) dcg += grade / Math.log2(index + 2);
  });
  return dcg / ideal;
}

export function recallAtK(ranked: readonly string[], relevant: Judgements, k: number): number {
  requireCutoff(k);
  let relevantCount = 0;
  for (const grade of relevant.values()) if (grade > 0) relevantCount += 1;
  if (relevantCount === 0) return 0;
  let found = 0;
  for (const documentId of topK(ranked, k)) if ((relevant.get(documentId) ?? 0) > 0) found += 1;
  return found / relevantCount;
}

/** Arithmetic mean; NaN for no values, so an empty evaluation cannot pass for a score of 0. */
export function meanOf(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

export interface QueryScores {
  /** nDCG@k by cutoff k. */
  ndcg: Record<number, number>;
  /** recall@k by cutoff k. */
  recall: Record<number, number>;
}

export interface RunEvaluation extends QueryScores {
  /** Judged queries averaged over (those with at least one grade > 0). */
  queryCount: number;
  /** Judged queries the run had no results for; each scored 0. */
  queriesWithoutResults: number;
  perQuery: Map<string, QueryScores>;
}

/**
 * Means over every query in `qrels` with at least one relevant document. Run entries for
 * unjudged queries are ignored; judged queries missing from the run score 0 at every cutoff.
 */
export function evaluateRun(
  run: ReadonlyMap<string, readonly string[]>,
  qrels: ReadonlyMap<string, Judgements>,
  ks: readonly number[],
): RunEvaluation {
  if (ks.length === 0) throw new RangeError("evaluateRun needs at least one cutoff k");
  ks.forEach(requireCutoff);
  const perQuery = new Map<string, QueryScores>();
  let queriesWithoutResults = 0;
  for (const [queryId, judgements] of qrels) {
    if (![...judgements.values()].some((grade) => grade > 0)) continue;
    const ranked = run.get(queryId) ?? [];
    if (ranked.length === 0) queriesWithoutResults += 1;
    const scores: QueryScores = { ndcg: {}, recall: {} };
    for (const k of ks) {
      scores.ndcg[k] = ndcgAtK(ranked, judgements, k);
      scores.recall[k] = recallAtK(ranked, judgements, k);
    }
    perQuery.set(queryId, scores);
  }
  if (perQuery.size === 0) throw new RangeError("evaluateRun: the qrels have no query with a relevant document");

  const all = [...perQuery.values()];
  const ndcg: Record<number, number> = {};
  const recall: Record<number, number> = {};
  for (const k of ks) {
    ndcg[k] = meanOf(all.map((scores) => scores.ndcg[k] ?? 0));
    recall[k] = meanOf(all.map((scores) => scores.recall[k] ?? 0));
  }
  return { queryCount: perQuery.size, queriesWithoutResults, ndcg, recall, perQuery };
}

function idealDcg(relevant: Judgements, k: number): number {
  const grades = [...relevant.values()].filter((grade) => grade > 0).sort((a, b) => b - a);
  let ideal = 0;
  grades.slice(0, k).forEach((grade, index) => {
    ideal += grade / Math.log2(index + 2);
  });
  return ideal;
}

/** The first k distinct documents: a repeat must not earn gain twice. */
function topK(ranked: readonly string[], k: number): string[] {
  const seen = new Set<string>();
  const top: string[] = [];
  for (const documentId of ranked) {
    if (top.length === k) break;
    if (seen.has(documentId)) continue;
    seen.add(documentId);
    top.push(documentId);
  }
  return top;
}

function requireCutoff(k: number): void {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`cutoff k must be a positive integer, got ${k}`);
}
