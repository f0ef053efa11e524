/**
 * The results of the URL's search: the first page streamed with `@defer` (the LOCAL providers'
 * page at once, replaced by the page of every provider when the slow ones answer), then later
 * pages of the same list, fetched with its `endCursor` as `after`. Pages of a search that is no
 * longer the one shown (the query or a filter changed meanwhile) are dropped.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { skipToken, useApolloClient, useQuery } from "@apollo/client/react";
import { NEXT_SEARCH_PAGE, STREAMED_SEARCH, type SearchHit, type SearchInput, type SearchResultPage } from "./operations";

export interface SearchResults {
  /** The hits of every page loaded so far, best first. */
  hits: SearchHit[];
  /** The first page ("did you mean" is read from it). */
  first: SearchResultPage | null;
  /** The latest page: provider reports and facets (over the deepest window) are read from it. */
  page: SearchResultPage | null;
  /** The first page came from the LOCAL providers; the page of every provider is on its way. */
  streaming: boolean;
  /** The first page is being fetched and nothing is shown yet. */
  loading: boolean;
  error: unknown;
  hasNextPage: boolean;
  loadingMore: boolean;
  loadMoreError: unknown;
  loadMore(): void;
  /** Asks for the first page again (after an error: the gateway was down, a rate limit passed). */
  retry(): void;
}

interface LaterPages {
  /** The search these pages continue (its input, as JSON). */
  key: string;
  pages: SearchResultPage[];
}

export function useSearchResults(input: SearchInput | null): SearchResults {
  const client = useApolloClient();
  const key = input ? JSON.stringify(input) : "";
  // Keyed by the input's JSON: a new object for the same search (a re-render) is the same search.
  const variables = useMemo(() => (input ? { input, local: { ...input, latency: "LOCAL" as const } } : undefined), [key]);
  const { data: streamed, error, loading, dataState, refetch } = useQuery(STREAMED_SEARCH, variables ? { variables, errorPolicy: "all" } : skipToken);
  // Apollo types streamed data as partial throughout; each part here is whole: `fast` arrives
  // complete in the first part, `all` complete in the deferred one (or not at all).
  const data = streamed as { fast?: SearchResultPage | null; all?: SearchResultPage | null } | undefined;

  const [later, setLater] = useState<LaterPages>({ key, pages: [] });
  const [loadingMore, setLoadingMore] = useState(false);
  const [loadMoreError, setLoadMoreError] = useState<unknown>(null);
  const cursorAsked = useRef<string | null>(null);
  const currentKey = useRef(key);
  currentKey.current = key;
  useEffect(() => {
    cursorAsked.current = null;
    setLoadingMore(false);
    setLoadMoreError(null);
  }, [key]);
  const laterPages = later.key === key ? later.pages : [];

  const streaming = dataState === "streaming";
  // The first page: every provider's once it arrived; the LOCAL one until then (or if the
  // deferred part failed, which `error` reports). Later pages continue the list shown.
  const all = data?.all ?? null;
  const first = all ?? data?.fast ?? null;
  const list: "all" | "fast" = all ? "all" : "fast";
  const last = laterPages[laterPages.length - 1] ?? first;
  const hasNextPage = Boolean(last?.pageInfo.hasNextPage && last.pageInfo.endCursor) && !streaming;

  const loadMore = useCallback(() => {
    if (!variables || !hasNextPage || loadingMore || !last?.pageInfo.endCursor) return;
    // The button and the scroll sentinel can both ask in the same tick, before `loadingMore`
    // re-renders: a cursor already asked for is not asked again (the page would repeat).
    if (cursorAsked.current === last.pageInfo.endCursor) return;
    const cursor = last.pageInfo.endCursor;
    cursorAsked.current = cursor;
    // A page that failed may be asked for again (the button after the error).
    const mayRetry = () => {
      if (cursorAsked.current === cursor) cursorAsked.current = null;
    };
    const requestKey = key;
    const base = list === "all" ? variables.input : variables.local;
    setLoadingMore(true);
    setLoadMoreError(null);
    client
      .query({ query: NEXT_SEARCH_PAGE, variables: { input: { ...base, after: cursor } }, errorPolicy: "all" })
      .then((result) => {
        if (currentKey.current !== requestKey) return;
        const next = result.data?.search;
        if (next) setLater((previous) => ({ key: requestKey, pages: [...(previous.key === requestKey ? previous.pages : []), next] }));
        if (!next) mayRetry();
        if (result.error) setLoadMoreError(result.error);
        else if (!next) setLoadMoreError(new Error("The next page could not be read."));
      })
      .catch((failure: unknown) => {
        mayRetry();
        if (currentKey.current === requestKey) setLoadMoreError(failure);
      })
      .finally(() => {
        if (currentKey.current === requestKey) setLoadingMore(false);
      });
  }, [client, variables, key, list, last, hasNextPage, loadingMore]);

  const hits = useMemo(() => [...(first?.hits ?? []), ...laterPages.flatMap((page) => page.hits)], [first, laterPages]);
  return {
    hits,
    first,
    page: last,
    streaming,
    loading: loading && !first,
    error,
    hasNextPage,
    loadingMore,
    loadMoreError,
    loadMore,
    retry: useCallback(() => {
      // A refetch that fails again reports through `error`, as the first attempt did.
      refetch().catch(() => undefined);
    }, [refetch]),
  };
}
