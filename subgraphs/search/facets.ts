/**
 * Facet counts (`SearchResult.facets`) over the fused candidates a page was cut from, from the
 * attributes the providers returned with their hits: no statement of its own. Each value says
 * what to put into `SearchInput.filter` (or `providers`) to select exactly the candidates it
 * counts, so counts and filters agree.
 */
import { kindOfTypename, monthOf, monthRange, type HitAttributes, type ItemKind } from "../../lib/retrieval/search-filter.js";
import type { FusedHit } from "./fusion.js";

export interface FacetCount<Value> {
  value: Value;
  count: number;
}

export interface SearchFacetsData {
  /** How many fused candidates were counted. */
  window: number;
  kinds: { kind: ItemKind; count: number }[];
  providers: { provider: string; count: number }[];
  /** By creation month (UTC), newest first, with the `created` range that selects it. */
  months: { month: string; from: Date; to: Date; count: number }[];
  categories: FacetCount<string>[];
  knowledgeBases: FacetCount<string>[];
}

/** Most values per facet returned (the counts are over at most MAX_WINDOW × providers candidates anyway). */
export const MAX_FACET_VALUES = 50;

export function computeFacets(candidates: readonly FusedHit[], attributesOf: (hit: FusedHit) => HitAttributes | undefined): SearchFacetsData {
  const kinds = new Map<ItemKind, number>();
  const providers = new Map<string, number>();
  const months = new Map<string, number>();
  const categories = new Map<string, number>();
  const knowledgeBases = new Map<string, number>();
  const add = <K>(counts: Map<K, number>, key: K) => counts.set(key, (counts.get(key) ?? 0) + 1);

  for (const hit of candidates) {
    const kind = kindOfTypename(hit.ref.typename);
    if (kind) add(kinds, kind);
    for (const contribution of hit.contributions) add(providers, contribution.provider);
    const attributes = attributesOf(hit);
    if (attributes?.createdAt) add(months, monthOf(attributes.createdAt));
    if (attributes?.category) add(categories, attributes.category);
    if (attributes?.knowledgeBaseId) add(knowledgeBases, attributes.knowledgeBaseId);
  }
  const byCount = <K>(counts: Map<K, number>) =>
    [...counts.entries()].sort((a, b) => b[1] - a[1] || (String(a[0]) < String(b[0]) ? -1 : 1)).slice(0, MAX_FACET_VALUES);
  return {
    window: candidates.length,
    kinds: byCount(kinds).map(([kind, count]) => ({ kind, count })),
    providers: byCount(providers).map(([provider, count]) => ({ provider, count })),
    months: [...months.entries()]
      .sort((a, b) => (a[0] < b[0] ? 1 : -1))
      .slice(0, MAX_FACET_VALUES)
      .map(([month, count]) => ({ month, ...monthRange(month), count })),
    categories: byCount(categories).map(([value, count]) => ({ value, count })),
    knowledgeBases: byCount(knowledgeBases).map(([value, count]) => ({ value, count })),
  };
}
