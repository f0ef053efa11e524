/**
 * The ways a search fuses its providers' ranked lists (SearchInput.fusion; the functions are in
 * subgraphs/search/fusion.ts). Here, below subgraphs/, so that the evaluation can name them too.
 */
export type FusionMethod = "RRF" | "RELATIVE_SCORE" | "DISTRIBUTION_SCORE";

export const FUSION_METHODS: readonly FusionMethod[] = ["RRF", "RELATIVE_SCORE", "DISTRIBUTION_SCORE"];
