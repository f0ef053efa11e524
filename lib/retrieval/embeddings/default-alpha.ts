/**
 * The alpha a search uses when the caller gives none. Hybrid search is only better than keyword
 * search when the embedder is good enough, so the default is a property of the embedder: each
 * one says what was measured for it (with `npm run eval`, files under docs/evaluation/) or that
 * nothing was, and a deployment can override it (SEARCH_DEFAULT_ALPHA) after measuring its own.
 *
 * The default only balances the keyword providers against the semantic providers that rank with
 * this embedder: it says nothing about semantic providers with models of their own (Bedrock and
 * S3 Vectors knowledge bases), which a default searched without are weighted as at the
 * conventional hybrid alpha (see SearchService).
 */
import type { Embedder } from "./embedder.js";

/** The usual hybrid default (equal votes), kept where nothing here was measured. */
export const CONVENTIONAL_ALPHA = 0.5;

/** What an embedder says about the alpha to use with it. */
export interface EmbedderAlpha {
  /** 0 (semantic only) to 1 (keyword only). */
  alpha: number;
  /** MEASURED: chosen from an evaluation run here; CONVENTIONAL: nothing measured, the usual 0.5. */
  basis: "MEASURED" | "CONVENTIONAL";
  /** Where the number comes from, for people: an eval file and its numbers, or why none exists. */
  source: string;
}

/** The default a deployment applies, with where it comes from. */
export interface DefaultAlpha {
  alpha: number;
  /** The model id of the embedder it is for (`Embedder.model`). */
  embedder: string;
  /** The embedder's own default, whether or not the deployment overrides it. */
  embedderAlpha: EmbedderAlpha;
  /** Whether SEARCH_DEFAULT_ALPHA set `alpha` (then it need not equal `embedderAlpha.alpha`). */
  overridden: boolean;
}

/** An embedder that says nothing (a test's, a custom one) gets the conventional default, and says so. */
export function embedderAlpha(embedder: Pick<Embedder, "model" | "defaultAlpha">): EmbedderAlpha {
  return embedder.defaultAlpha ?? { alpha: CONVENTIONAL_ALPHA, basis: "CONVENTIONAL", source: `no measurement for ${embedder.model}: the conventional hybrid default` };
}

/** The embedder's default, or the deployment's override of it (already validated by loadConfig). */
export function resolveDefaultAlpha(embedder: Pick<Embedder, "model" | "defaultAlpha">, override: number | null | undefined): DefaultAlpha {
  const own = embedderAlpha(embedder);
  if (override != null && !(Number.isFinite(override) && override >= 0 && override <= 1)) {
    throw new RangeError(`a default alpha must be between 0 and 1, got ${override}`);
  }
  return { alpha: override ?? own.alpha, embedder: embedder.model, embedderAlpha: own, overridden: override != null };
}
