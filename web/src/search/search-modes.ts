/**
 * How a person chooses between matching words and matching meaning, in words: each mode is an
 * alpha (the keyword providers' weight; the semantic ones get 1 - alpha). "Exact words" is keyword
 * search alone, "By meaning" semantic search alone, "Balanced" both equally. A URL may hold any
 * other alpha (a saved search, a developer's link): that is a custom mix, shown in the details.
 */
export interface SearchMode {
  id: "exact" | "balanced" | "meaning";
  label: string;
  alpha: number;
  /** What the mode does, for the option's description. */
  hint: string;
}

export const SEARCH_MODES: readonly SearchMode[] = [
  { id: "exact", label: "Exact words", alpha: 1, hint: "Results that contain your words (or their close spellings)." },
  { id: "balanced", label: "Balanced", alpha: 0.5, hint: "Your words and related meaning weigh the same." },
  { id: "meaning", label: "By meaning", alpha: 0, hint: "Related text, even without your words." },
];

const EPSILON = 1e-9;

/** The mode an alpha is, or null for a mix no mode names. */
export function modeOfAlpha(alpha: number): SearchMode | null {
  return SEARCH_MODES.find((mode) => Math.abs(mode.alpha - alpha) < EPSILON) ?? null;
}

/**
 * The URL's alpha for a chosen mode: none (the deployment's default) when the mode is the
 * default, so a search stays on the default as the deployment tunes it.
 */
export function alphaForMode(mode: SearchMode, defaultAlpha: number | null): number | null {
  return defaultAlpha !== null && Math.abs(mode.alpha - defaultAlpha) < EPSILON ? null : mode.alpha;
}
