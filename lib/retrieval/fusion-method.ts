/**
 * The ways a search fuses its providers' ranked lists (SearchInput.fusion; the functions are in
 * subgraphs/search/fusion.ts). Here, below subgraphs/, so that the evaluation can name them too,
 * and a knowledge base's own ranking weighs keyword and semantic by the search's rule.
 */
import type { ProviderKind } from "./search-provider.js";

export type FusionMethod = "RRF" | "RELATIVE_SCORE" | "DISTRIBUTION_SCORE";

export const FUSION_METHODS: readonly FusionMethod[] = ["RRF", "RELATIVE_SCORE", "DISTRIBUTION_SCORE"];

/**
 * A provider's weight w_p in a search at `alpha`: alpha for keyword-kind providers, 1 - alpha for
 * semantic ones, times the provider's own weight. Every ranking of ours that mixes the two kinds
 * weighs them so (the unified search, a knowledge base's documents).
 */
export function providerWeight(kind: ProviderKind, alpha: number, ownWeight = 1): number {
  return (kind === "KEYWORD" ? alpha : 1 - alpha) * ownWeight;
}
