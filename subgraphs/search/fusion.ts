/**
 * Fusing the providers' ranked lists into one, as pure functions. Three methods:
 *
 * - `RRF`, weighted Reciprocal Rank Fusion: score(d) = Σ_p w_p / (k + r_p(d)) over the providers
 *   p that returned d at 1-based rank r_p(d). It reads only ranks, so every provider's first hit
 *   is worth the same, however good or weak it is.
 * - `RELATIVE_SCORE` (min-max, Weaviate's relativeScoreFusion, Elasticsearch's linear retriever
 *   with the minmax normalizer): each list's native scores are mapped to [0, 1] by its own minimum
 *   and maximum, and score(d) = Σ_p w_p · norm_p(d).
 * - `DISTRIBUTION_SCORE` (Qdrant's DBSF): as above, but each list is normalized by its mean ± 3
 *   standard deviations (clamped to [0, 1]): the scale follows how the whole list spreads, so a
 *   list's best hit reaches 1 only when it stands out from the rest.
 *
 * Providers whose scores mean the same (SearchProvider.scoreScale: the keyword providers' BM25)
 * are normalized together, over all their hits, so a document's strong match is not made equal
 * to a conversation's weak one by normalizing each list to its own best. Hits that one of our own
 * rankings scored inside a provider that merges sources (ProviderHit.rankedAs: the platform's
 * documents in `knowledge-bases`) fuse as that ranking's list: its scale, its kind's weight
 * (`rankingsOf`).
 *
 * w_p = alpha for keyword-kind providers and 1 - alpha for semantic-kind ones, times the
 * provider's own weight (see `providerWeight`). A list whose scores are all equal (one hit
 * included) says nothing about how good its hits are: each gets 0.5. A native score that is not
 * a finite number (a remote provider's NaN or Infinity) is never averaged in: NaN and -Infinity
 * normalize to 0, +Infinity to 1. Ties break by the best single rank d reached in any list,
 * then by the reference's id, so the same inputs always give the same order.
 *
 * Pagination is over the fused list. Providers are asked for a window of 2 × (offset + limit)
 * hits, so a deeper page needs a deeper window, and a deeper window can reorder the tail of
 * the list. To guarantee no duplicates and no gaps between pages, a cursor records the windows
 * used so far (`segments`): the list is rebuilt by keeping what earlier windows already showed
 * and appending the deeper window's order after it (`stitchSegments`).
 */

import { FUSION_METHODS, providerWeight, type FusionMethod } from "../../lib/retrieval/fusion-method.js";
import { rankingKey, type EntityRef, type ProviderHit, type ProviderKind } from "../../lib/retrieval/search-provider.js";

export type { EntityRef, ProviderKind };

export interface RankedList {
  provider: string;
  kind: ProviderKind;
  /** The provider's effective weight w_p (alpha or 1 - alpha, times its own weight). */
  weight: number;
  /** SearchProvider.scoreScale: lists of one scale are normalized together. */
  scale?: string;
  /**
   * What a hit ranked as another kind of provider (ProviderHit.rankedAs) weighs in this search,
   * by kind. Unset: such a hit weighs `weight`, like the list's others.
   */
  kindWeights?: Readonly<Record<ProviderKind, number>>;
  /** Best first. Rank = index + 1. */
  hits: Pick<ProviderHit, "ref" | "nativeScore" | "attributes" | "group" | "rankedAs" | "relevance">[];
}

export { FUSION_METHODS, providerWeight, type FusionMethod };

/**
 * What a search that names no method gets (SearchInput.fusion): the best measured. On the demo's
 * judged questions (test/integration/demo-judged-queries.test.ts) RELATIVE_SCORE and
 * DISTRIBUTION_SCORE put what a person would open first for 19 of 20, RRF for 14; on SciFact split
 * across conversations, documents and a knowledge base (npm run eval -- --partition, docs/search.md)
 * RELATIVE_SCORE scores 0.696 nDCG@10 at the default alpha (0.698 in one index), DISTRIBUTION_SCORE 0.572, RRF 0.549.
 */
export const DEFAULT_FUSION: FusionMethod = "RELATIVE_SCORE";

export interface FusionOptions {
  method?: FusionMethod;
  /** RRF's rank constant (at least 1; the other methods ignore it). */
  k: number;
  /** Each list is cut to its first `window` hits before fusion (and before normalization). */
  window?: number;
  /**
   * Hits of one group (a document's chunks, ProviderHit.group) fuse as one item: each provider
   * votes once for the group, at its best-ranked member; the item shown is the member with the
   * best rank in any list, and the others become its `moreMatches`. Off: every hit is its own item.
   */
  distinct?: boolean;
}

export interface Contribution {
  provider: string;
  /** The side of alpha it counted on: the provider's kind, or the kind of the ranking of ours that scored the hit (rankedAs). */
  kind: ProviderKind;
  rank: number;
  weight: number;
  /** weight / (k + rank) for RRF; weight × the normalized native score for the others */
  contribution: number;
  nativeScore: number;
}

export interface FusedHit {
  /** What the fused list holds once: the group (distinct) or the entity. */
  key: string;
  ref: EntityRef;
  score: number;
  bestRank: number;
  contributions: Contribution[];
  /** The group's other members any provider returned, best rank first (distinct only; else empty). */
  moreMatches: EntityRef[];
  /** The best ProviderHit.relevance any of its hits carried (0 to 1); unset when none measured it. */
  relevance?: number;
}

const refKey = (ref: EntityRef) => `${ref.typename}:${ref.id}`;

/** Fuses ranked lists, each cut to its first `window` hits. Providers with weight 0 contribute nothing. */
export function fuseRankedLists(lists: readonly RankedList[], options: FusionOptions): FusedHit[] {
  const { k } = options;
  const method = options.method ?? "RRF";
  if (!(k >= 1)) throw new RangeError(`RRF k must be at least 1, got ${k}`);
  type Entry = FusedHit & { members: Map<string, { ref: EntityRef; rank: number }> };
  const fused = new Map<string, Entry>();
  const windowed = (list: RankedList) => (options.window === undefined ? list.hits : list.hits.slice(0, options.window));
  // A provider's hits ranked by several rankings (rankedAs) fuse as one list per ranking.
  const rankings = lists.flatMap(rankingsOf);
  // One normalizer per score scale: lists that measure alike are normalized over all their scores together.
  const scaleOf = (list: RankedList) => list.scale ?? `provider:${list.provider}`;
  const normalizers = new Map<string, (score: number) => number>();
  if (method !== "RRF") {
    const scoresByScale = new Map<string, number[]>();
    for (const list of rankings) if (list.weight > 0) (scoresByScale.get(scaleOf(list)) ?? scoresByScale.set(scaleOf(list), []).get(scaleOf(list))!).push(...windowed(list).map((hit) => hit.nativeScore));
    for (const [scale, scores] of scoresByScale) normalizers.set(scale, scoreNormalizer(scores, method));
  }
  for (const list of rankings) {
    if (list.weight <= 0) continue;
    const seen = new Set<string>();
    const hits = windowed(list);
    const normalize = normalizers.get(scaleOf(list)) ?? null;
    hits.forEach((hit, index) => {
      const key = options.distinct && hit.group ? `group:${hit.group}` : refKey(hit.ref);
      const rank = index + 1;
      const entry: Entry = fused.get(key) ?? { key, ref: hit.ref, score: 0, bestRank: rank, contributions: [], moreMatches: [], members: new Map() };
      fused.set(key, entry);
      if (hit.relevance !== undefined && Number.isFinite(hit.relevance)) entry.relevance = Math.max(entry.relevance ?? 0, Math.min(1, Math.max(0, hit.relevance)));
      const member = entry.members.get(refKey(hit.ref));
      if (!member || rank < member.rank) entry.members.set(refKey(hit.ref), { ref: hit.ref, rank });
      // A provider votes once per item: a group's later members, or an entity it returned twice, add no score.
      if (seen.has(key)) return;
      seen.add(key);
      const contribution = normalize ? list.weight * normalize(hit.nativeScore) : list.weight / (k + rank);
      entry.score += contribution;
      entry.bestRank = Math.min(entry.bestRank, rank);
      entry.contributions.push({ provider: list.provider, kind: list.kind, rank, weight: list.weight, contribution, nativeScore: hit.nativeScore });
    });
  }
  return [...fused.values()]
    .map(({ members, ...entry }) => {
      // The member shown is the best ranked in any list (the first list's on a tie: Map order).
      const [shown, ...others] = [...members.values()].sort((a, b) => a.rank - b.rank);
      return { ...entry, ref: shown!.ref, moreMatches: others.map((other) => other.ref) };
    })
    .sort(compareFused);
}

/**
 * A provider's list as the rankings it holds: hits that one of our own rankings scored inside a
 * provider that merges sources (ProviderHit.rankedAs: the platform's documents in
 * `knowledge-bases`, by BM25 and by vectors) form a list per ranking, in the provider's order,
 * with that ranking's kind, weight (RankedList.kindWeights) and scale, and vote on their own, as
 * the caller's own documents' keyword and semantic providers do. The provider's other hits stay
 * its list. A list without such hits is returned as it is.
 */
export function rankingsOf(list: RankedList): RankedList[] {
  if (!list.hits.some((hit) => hit.rankedAs)) return [list];
  const byRanking = new Map<string, RankedList>();
  for (const hit of list.hits) {
    const ranking = hit.rankedAs;
    const key = rankingKey(ranking);
    let sub = byRanking.get(key);
    if (!sub) {
      sub = ranking
        ? { provider: list.provider, kind: ranking.kind, weight: list.kindWeights?.[ranking.kind] ?? list.weight, scale: ranking.scoreScale ?? `provider:${list.provider}:${ranking.kind}`, hits: [] }
        : { ...list, hits: [] };
      byRanking.set(key, sub);
    }
    sub.hits.push(hit);
  }
  return [...byRanking.values()];
}

/** A provider's answer cut to `window` hits per ranking it holds (see rankingsOf): what fusion reads of it. */
export function firstOfEachRanking<T extends Pick<ProviderHit, "rankedAs">>(hits: readonly T[], window: number): T[] {
  const taken = new Map<string, number>();
  return hits.filter((hit) => {
    const key = rankingKey(hit.rankedAs);
    const count = taken.get(key) ?? 0;
    taken.set(key, count + 1);
    return count < window;
  });
}

/** The score a list gives when it cannot tell its hits apart (all scores equal, or one hit). */
const UNINFORMATIVE_SCORE = 0.5;

/**
 * Maps one list's native scores to [0, 1] (see the methods above). The bounds come from the
 * finite scores only; a list with none, or whose finite scores are all equal, gives 0.5 to each.
 */
export function scoreNormalizer(scores: readonly number[], method: Exclude<FusionMethod, "RRF">): (score: number) => number {
  const finite = scores.filter(Number.isFinite);
  let low: number;
  let high: number;
  if (method === "RELATIVE_SCORE") {
    low = Math.min(...finite);
    high = Math.max(...finite);
  } else {
    const mean = finite.reduce((sum, score) => sum + score, 0) / finite.length;
    const deviation = Math.sqrt(finite.reduce((sum, score) => sum + (score - mean) ** 2, 0) / finite.length);
    low = mean - 3 * deviation;
    high = mean + 3 * deviation;
  }
  const spread = high - low;
  return (score) => {
    if (Number.isNaN(score) || score === -Infinity) return 0;
    if (score === Infinity) return 1;
    if (finite.length === 0 || !(spread > 0) || !Number.isFinite(spread)) return UNINFORMATIVE_SCORE;
    return Math.min(1, Math.max(0, (score - low) / spread));
  };
}

export function compareFused(a: FusedHit, b: FusedHit): number {
  return b.score - a.score || a.bestRank - b.bestRank || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/** A window used while paging: from `start` on, the list follows the fusion of `window`-deep provider lists. */
export interface Segment {
  window: number;
  start: number;
}

/**
 * The fused list as a client paging through it sees it: for each segment, the items before
 * its `start` stay as earlier segments ordered them, and the rest follow this segment's
 * fusion, minus what was already shown. `minScore` drops hits below it after fusion.
 */
export function stitchSegments(lists: readonly RankedList[], segments: readonly Segment[], options: Omit<FusionOptions, "window"> & { minScore?: number | null }): FusedHit[] {
  let stitched: FusedHit[] = [];
  for (const segment of segments) {
    const fused = fuseRankedLists(lists, { k: options.k, method: options.method ?? "RRF", distinct: options.distinct ?? false, window: segment.window }).filter(
      (hit) => options.minScore == null || hit.score >= options.minScore,
    );
    const kept = stitched.slice(0, segment.start);
    const shown = new Set(kept.map((hit) => hit.key));
    stitched = [...kept, ...fused.filter((hit) => !shown.has(hit.key))];
  }
  return stitched;
}
