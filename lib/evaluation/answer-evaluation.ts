/**
 * Citation recall of grounded answers on a BEIR data set: for each judged query, the question
 * goes through the answer pipeline (the unified search, the passages from highlights, the
 * answer written from them), and the answer counts when one of its citations names a document
 * judged relevant. With k passages this is citation recall@k: the share of questions whose
 * answer cites at least one relevant document. Beside it, the share whose k passages hold one
 * (what the citations can reach at best: the retrieval's hit rate at k), so a low figure says
 * whether the search or the sentence choice lost the document.
 *
 * lib/ sits below subgraphs/: the pipeline comes in from the caller (scripts/eval.ts) as an
 * EvaluatedAnswers, only the part of it this reads.
 */
import type { TenantContext } from "../tenancy/token.js";
import type { BeirDataset } from "./beir.js";
import type { IngestedCorpus } from "./search-evaluation.js";

export interface EvaluatedAnswers {
  /** One answer: the entity ids of the passages it was given, in order, and of those it cites. */
  answer(tenant: TenantContext, input: { question: string; passages: number; alpha: number; providers?: string[] }): Promise<{ passageIds: string[]; citedIds: string[]; text: string | null }>;
}

export interface AnswerEvaluationRow {
  /** Passages per answer (k). */
  passages: number;
  alpha: number;
  /** Share of judged queries whose answer cites at least one relevant document. */
  citationRecall: number;
  /** Share of judged queries with at least one relevant document among the k passages (the ceiling of citationRecall). */
  passageHitRate: number;
  /** Share of queries that got an answer at all (some passage matched). */
  answered: number;
  meanCitations: number;
  queries: number;
  meanLatencyMs: number;
}

export interface AnswerEvaluationOptions {
  alpha: number;
  providers?: readonly string[];
}

export async function evaluateAnswers(answers: EvaluatedAnswers, dataset: BeirDataset, corpus: IngestedCorpus, passages: number, options: AnswerEvaluationOptions, onProgress?: (done: number) => void): Promise<AnswerEvaluationRow> {
  let judged = 0;
  let cited = 0;
  let reached = 0;
  let answered = 0;
  let citations = 0;
  let totalMs = 0;
  let done = 0;
  for (const query of dataset.queries) {
    const relevant = dataset.qrels.get(query.id);
    const relevantIds = new Set([...(relevant ?? new Map<string, number>())].filter(([, grade]) => grade > 0).map(([id]) => id));
    if (relevantIds.size === 0) continue;
    judged += 1;
    const started = performance.now();
    const answer = await answers.answer(corpus.tenant, { question: query.text.slice(0, 1_000), passages, alpha: options.alpha, ...(options.providers ? { providers: [...options.providers] } : {}) });
    totalMs += performance.now() - started;
    const documentOf = (entityId: string) => corpus.documentIdOf.get(entityId) ?? entityId;
    if (answer.text !== null) answered += 1;
    citations += answer.citedIds.length;
    if (answer.citedIds.some((id) => relevantIds.has(documentOf(id)))) cited += 1;
    if (answer.passageIds.some((id) => relevantIds.has(documentOf(id)))) reached += 1;
    onProgress?.(++done);
  }
  const share = (count: number) => (judged === 0 ? Number.NaN : count / judged);
  return {
    passages,
    alpha: options.alpha,
    citationRecall: share(cited),
    passageHitRate: share(reached),
    answered: share(answered),
    meanCitations: judged === 0 ? Number.NaN : citations / judged,
    queries: judged,
    meanLatencyMs: totalMs / Math.max(1, judged),
  };
}
