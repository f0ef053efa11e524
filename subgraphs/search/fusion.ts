/**
 * Weighted Reciprocal Rank Fusion, as a pure function.
 *
 *   score(d) = Σ_p  w_p / (k + r_p(d))
 *
 * over the providers p that returned d at 1-based rank r_p(d), where w_p = alpha for
 * keyword-kind providers and 1 - alpha for semantic-kind ones, times the provider's own weight
 * (see `providerWeight`). Ties break by the best single rank d reached in any list, then by
 * the reference's id, so the same inputs always give the same order.
 *
 * Pagination is over the fused list. Providers are asked for a window of 2 × (offset + limit)
 * hits, so a deeper page needs a deeper window, and a deeper window can reorder the tail of
 * the list. To guarantee no duplicates and no gaps between pages, a cursor records the windows
 * used so far (`segments`): the list is rebuilt by keeping what earlier windows already showed
 * and appending the deeper window's order after it (`stitchSegments`).
 */

import type { EntityRef, ProviderHit, ProviderKind } from "../../lib/retrieval/search-provider.js";

export type { EntityRef, ProviderKind };

export interface RankedList {
  provider: string;
  kind: ProviderKind;
  /** The provider's effective weight w_p (alpha or 1 - alpha, times its own weight). */
  weight: number;
  /** Best first. Rank = index + 1. */
  hits: Pick<ProviderHit, "ref" | "nativeScore" | "attributes">[];
}

export interface Contribution {
  provider: string;
  rank: number;
  weight: number;
  /** weight / (k + rank) */
  contribution: number;
  nativeScore: number;
}

export interface FusedHit {
  ref: EntityRef;
  score: number;
  bestRank: number;
  contributions: Contribution[];
}

export function providerWeight(kind: ProviderKind, alpha: number, ownWeight = 1): number {
  return (kind === "KEYWORD" ? alpha : 1 - alpha) * ownWeight;
}

const refKey = (ref: EntityRef) => `${ref.typename}:${ref.id}`;

/** Fuses ranked lists, each cut to its first `window` hits. Providers with weight 0 contribute nothing. */
export function fuseRankedLists(lists: readonly RankedList[], options: { k: number; window?: number }): FusedHit[] {
  const { k } = options;
  if (!(k >= 1)) throw new RangeError(`RRF k must be at least 1, got ${k}`);
  const fused = new Map<string, FusedHit>();
  for (const list of lists) {
    if (list.weight <= 0) continue;
    const seen = new Set<string>();
    const hits = options.window === undefined ? list.hits : list.hits.slice(0, options.window);
    hits.forEach((hit, index) => {
      const key = refKey(hit.ref);
      // A provider that returns the same entity twice counts once, at its better rank.
      if (seen.has(key)) return;
      seen.add(key);
      const rank = index + 1;
      const contribution = list.weight / (k + rank);
      const entry = fused.get(key) ?? { ref: hit.ref, score: 0, bestRank: rank, contributions: [] };
      entry.score += contribution;
      entry.bestRank = Math.min(entry.bestRank, rank);
      entry.contributions.push({ provider: list.provider, rank, weight: list.weight, contribution, nativeScore: hit.nativeScore });
      fused.set(key, entry);
    });
  }
  return [...fused.values()].sort(compareFused);
}

export function compareFused(a: FusedHit, b: FusedHit): number {
  return b.score - a.score || a.bestRank - b.bestRank || (refKey(a.ref) < refKey(b.ref) ? -1 : refKey(a.ref) > refKey(b.ref) ? 1 : 0);
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
export function stitchSegments(lists: readonly RankedList[], segments: readonly Segment[], options: { k: number; minScore?: number | null }): FusedHit[] {
  let stitched: FusedHit[] = [];
  for (const segment of segments) {
    const fused = fuseRankedLists(lists, { k: options.k, window: segment.window }).filter((hit) => options.minScore == null || hit.score >= options.minScore);
    const kept = stitched.slice(0, segment.start);
    const shown = new Set(kept.map((hit) => refKey(hit.ref)));
    stitched = [...kept, ...fused.filter((hit) => !shown.has(refKey(hit.ref)))];
  }
  return stitched;
}
