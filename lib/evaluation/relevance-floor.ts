/**
 * The relevance floor, measured (`npm run eval -- --floor 300`): can `SearchHit.relevance` tell
 * a query the corpus answers from one it does not?
 *
 * - **False positives**: `count` queries (seeded) have every document judged relevant to them
 *   removed from the corpus and are asked of what is left. Nothing there answers them, so a top
 *   hit that reaches the floor is a false "strong match".
 * - **Misses**: every query is asked of the whole corpus; of those whose first hit is judged
 *   relevant, a top hit below the floor would be called weak although it is what the user wanted.
 *
 * A search's `weakMatches` is whether its best relevance is below the floor, so both rates read
 * off each query's best relevance on the first page.
 */
import type { TenantContext } from "../tenancy/token.js";
import type { BeirDataset, BeirDocument, BeirQuery } from "./beir.js";
import { seededShuffle } from "./partitioned-evaluation.js";

/** What the measurement needs of the search service. */
export interface RelevanceSearch {
  search(tenant: TenantContext, input: { query: string; alpha: number; limit: number; after: null; providers: string[] }): Promise<{ hits: readonly { ref: { id: string }; relevance?: number | null }[] }>;
}

/** One query's first page, as the floor sees it. */
export interface FloorSample {
  queryId: string;
  /** The best relevance on the page (null: no hit, or none measured). */
  bestRelevance: number | null;
  /** Whether the first hit is judged relevant to the query. */
  topRelevant: boolean;
}

export interface FloorRow {
  floor: number;
  /** Share of held-out queries (nothing relevant left) whose best relevance reaches the floor. */
  falsePositives: number;
  /** Share of queries with a relevant first hit whose best relevance is below the floor. */
  misses: number;
}

/**
 * `count` queries chosen by `seed`, and the corpus without any document judged relevant to one
 * of them (grade > 0).
 */
export function holdOut(dataset: BeirDataset, count: number, seed: number): { queries: BeirQuery[]; corpus: BeirDocument[]; removed: number } {
  const queries = seededShuffle(dataset.queries, seed).slice(0, count);
  const removed = new Set<string>();
  for (const query of queries) for (const [documentId, grade] of dataset.qrels.get(query.id) ?? []) if (grade > 0) removed.add(documentId);
  return { queries, corpus: dataset.corpus.filter((document) => !removed.has(document.id)), removed: removed.size };
}

/** Asks each query of one keyword provider (alpha 1) and keeps its first page's best relevance. */
export async function sampleFloor(
  service: RelevanceSearch,
  tenant: TenantContext,
  queries: readonly BeirQuery[],
  documentIdOf: ReadonlyMap<string, string>,
  dataset: BeirDataset,
  providers: string[],
  onProgress?: (done: number) => void,
): Promise<FloorSample[]> {
  const samples: FloorSample[] = [];
  for (const query of queries) {
    const { hits } = await service.search(tenant, { query: query.text, alpha: 1, limit: 20, after: null, providers });
    const measured = hits.map((hit) => hit.relevance).filter((relevance): relevance is number => typeof relevance === "number");
    const top = hits[0] ? documentIdOf.get(hits[0].ref.id) : undefined;
    samples.push({
      queryId: query.id,
      bestRelevance: measured.length > 0 ? Math.max(...measured) : null,
      topRelevant: top !== undefined && (dataset.qrels.get(query.id)?.get(top) ?? 0) > 0,
    });
    onProgress?.(samples.length);
  }
  return samples;
}

/** Both rates at each floor. A held-out query with no measured hit counts as weak (it passes no floor). */
export function floorTable(heldOut: readonly FloorSample[], whole: readonly FloorSample[], floors: readonly number[]): FloorRow[] {
  const relevantTop = whole.filter((sample) => sample.topRelevant);
  const passes = (sample: FloorSample, floor: number) => sample.bestRelevance !== null && sample.bestRelevance >= floor;
  return floors.map((floor) => ({
    floor,
    falsePositives: heldOut.length === 0 ? 0 : heldOut.filter((sample) => passes(sample, floor)).length / heldOut.length,
    misses: relevantTop.length === 0 ? 0 : relevantTop.filter((sample) => !passes(sample, floor)).length / relevantTop.length,
  }));
}
