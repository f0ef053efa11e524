/**
 * Saving a search, for both the search page's "Save this search" and the saved-searches page's
 * own form: the `saveSearch` mutation with the new row added to the cached list.
 */
import { useMutation, useQuery } from "@apollo/client/react";
import { addSavedSearchToCache } from "./cache";
import { DEFAULT_ALPHA, SAVE_SEARCH } from "./operations";

/** The longest name the server takes (SaveSearchInput.name). */
export const MAX_NAME_LENGTH = 200;

/** A name to start from: the query itself, cut to what a name may hold. */
export function nameFromQuery(query: string): string {
  return query.trim().replace(/\s+/g, " ").slice(0, MAX_NAME_LENGTH);
}

export function useSaveSearch() {
  return useMutation(SAVE_SEARCH, {
    update(cache, { data }) {
      if (data?.saveSearch) addSavedSearchToCache(cache, data.saveSearch);
    },
  });
}

/**
 * The deployment's default alpha. A search run without an alpha ranks with it, while a saved
 * search always stores one (0.5 when left out): saving with the default keeps the ranking the
 * person saw. Null while loading, or when the search service cannot say (the server's 0.5 then).
 */
export function useDefaultAlpha(skip: boolean): { defaultAlpha: number | null; loading: boolean } {
  const { data, loading } = useQuery(DEFAULT_ALPHA, { skip, errorPolicy: "all" });
  return { defaultAlpha: data?.searchIndexStatus?.defaultAlpha.alpha ?? null, loading };
}
