/**
 * Keeping the cached list of saved searches true after a change, without asking the server
 * again: a saved search is added at the top (the list is newest first), a deleted one is
 * removed from every cached page and evicted. A rename needs nothing here: its answer carries
 * the id, so the normalized cache updates the row in place.
 */
import type { ApolloCache, Reference } from "@apollo/client";

interface CachedConnection {
  nodes?: readonly Reference[];
}

/** Puts a newly saved search first in every cached `savedSearches` page that starts the list. */
export function addSavedSearchToCache(cache: ApolloCache, saved: { __typename: "SavedSearch"; id: string }): void {
  const ref = cache.identify(saved);
  if (!ref) return;
  cache.modify({
    id: "ROOT_QUERY",
    fields: {
      savedSearches(existing: unknown, { storeFieldName, toReference }) {
        const connection = existing as CachedConnection | null | undefined;
        // A later page (`after:`) does not start the list: the new one belongs on the first page only.
        if (!connection?.nodes || storeFieldName.includes('"after":"')) return existing;
        const node = toReference(ref);
        if (!node || connection.nodes.some((item) => item.__ref === node.__ref)) return existing;
        return { ...connection, nodes: [node, ...connection.nodes] };
      },
    },
  });
}

/** Drops a deleted saved search from every cached list, then from the cache itself. */
export function removeSavedSearchFromCache(cache: ApolloCache, id: string): void {
  const ref = cache.identify({ __typename: "SavedSearch", id });
  if (!ref) return;
  cache.modify({
    id: "ROOT_QUERY",
    fields: {
      savedSearches(existing: unknown) {
        const connection = existing as CachedConnection | null | undefined;
        if (!connection?.nodes) return existing;
        return { ...connection, nodes: connection.nodes.filter((item) => item.__ref !== ref) };
      },
    },
  });
  cache.evict({ id: ref });
  cache.gc();
}
