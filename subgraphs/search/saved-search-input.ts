/**
 * Checks what a client asks to save. The search part is checked by the search service itself
 * (the same rules, limits and messages as `search`, filter included), so a saved search runs as
 * long as the deployment and the caller's teams are what they were; the name is checked here.
 */
import { badUserInput } from "../../lib/graphql/errors.js";
import { MAX_PAGE_SIZE } from "../../lib/graphql/pagination.js";
import type { NewSavedSearch, ProviderWeight } from "./saved-search-store.js";
import { filterInputOf, type SearchFilterInput } from "./search-filter-input.js";
import type { SearchService } from "./search-service.js";
import type { TenantContext } from "../../lib/tenancy/token.js";

export const MAX_SAVED_SEARCH_NAME_LENGTH = 200;

export interface SaveSearchInput {
  name: string;
  query: string;
  alpha?: number | null;
  providers?: string[] | null;
  weights?: ProviderWeight[] | null;
  filter?: SearchFilterInput | null;
  typoTolerance?: boolean | null;
}

export function validateSaveSearchInput(service: SearchService, tenant: TenantContext, input: SaveSearchInput): NewSavedSearch {
  const name = validateSavedSearchName(input.name, "input.name");
  const alpha = input.alpha ?? 0.5;
  const typoTolerance = input.typoTolerance ?? true;
  const { query, filter } = service.validate({ query: input.query, alpha, providers: input.providers, weights: input.weights, filter: input.filter, typoTolerance }, tenant);
  return {
    name,
    query,
    alpha,
    providers: input.providers == null ? null : [...new Set(input.providers)],
    weights: (input.weights ?? []).map(({ provider, weight }) => ({ provider, weight })),
    // Stored normalized, as it will run: deduplicated and sorted lists, lowercase sites.
    filter: filterInputOf(filter),
    typoTolerance,
  };
}

// PostgreSQL text cannot hold U+0000, and the drivers would store an unpaired surrogate as U+FFFD:
// a name must come back as it was given, so both are refused rather than changed.
const NUL_OR_UNPAIRED_SURROGATE = /\u0000|\p{Surrogate}/u;

/** A name: trimmed, 1 to 200 characters, not only whitespace. */
export function validateSavedSearchName(raw: string, field: string): string {
  const name = raw.trim();
  if (name.length === 0) throw badUserInput(field, "must not be empty or only whitespace");
  if (name.length > MAX_SAVED_SEARCH_NAME_LENGTH) throw badUserInput(field, `must be at most ${MAX_SAVED_SEARCH_NAME_LENGTH} characters, got ${name.length}`);
  const bad = NUL_OR_UNPAIRED_SURROGATE.exec(name);
  if (bad) {
    const code = bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
    throw badUserInput(field, `must be valid Unicode text without NUL: found U+${code} at index ${bad.index}`);
  }
  return name;
}

/** The page size of a run: 1 to 100, like `search`'s limit. */
export function validateRunLimit(limit: number | null | undefined): number {
  const size = limit ?? 20;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) throw badUserInput("limit", `must be between 1 and ${MAX_PAGE_SIZE}, got ${size}`);
  return size;
}
