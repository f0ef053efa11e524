/**
 * The results of the URL's search: the first page streamed with `@defer` (the LOCAL providers'
 * page at once, replaced by the page of every provider when the slow ones answer), then later
 * pages of the same list, fetched with its `endCursor` as `after`. Pages of a search that is no
 * longer the one shown (the query or a filter changed meanwhile) are dropped.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { ApolloClient } from "@apollo/client";
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

/** The streamed operation's variables: one place, so that startSearch's request and the page's are the same one. */
function streamedVariables(input: SearchInput) {
  return { input, local: { ...input, latency: "LOCAL" as const } };
}

/**
 * The later pages of the last few searches, kept while the app runs: coming back to the results
 * from a hit shows every page that was loaded, so the scroll position can be put back
 * (restore-scroll.ts). The first page comes back from Apollo's cache.
 */
const laterPagesKept = new Map<string, SearchResultPage[]>();
const KEEP_SEARCHES = 10;

function keepLaterPages(key: string, pages: SearchResultPage[]): void {
  laterPagesKept.delete(key);
  laterPagesKept.set(key, pages);
  while (laterPagesKept.size > KEEP_SEARCHES) laterPagesKept.delete(laterPagesKept.keys().next().value!);
}

/** The search startSearch sent, held until the page's own query for it has an answer. */
let started: { key: string; release(): void } | null = null;

/**
 * Sends the streamed first page of `input` now, from the submit handler, rather than when the
 * page has re-rendered for the new URL: React Router applies the URL in a transition, and the
 * results layout (facets, slider, chips) renders before `useQuery` sends anything, which took
 * 40-60 ms between Enter and the request leaving on the 2-core test machine (docs/web-app.md,
 * "Keystroke to first results"). The page's `useQuery` for the same input joins this request
 * rather than sending another: Apollo Client shares an operation in flight among identical
 * queries (same document, same variables) and replays what already arrived to one that joins
 * late. This request writes nothing to the cache (`no-cache`): the page's query does that, once.
 * A search whose complete answer is cached already is not sent: the page reads it from there.
 */
export function startSearch(client: ApolloClient, input: SearchInput): void {
  started?.release();
  started = null;
  const variables = streamedVariables(input);
  if (client.readQuery({ query: STREAMED_SEARCH, variables })) return;
  const subscription = client.watchQuery({ query: STREAMED_SEARCH, variables, fetchPolicy: "no-cache", errorPolicy: "all" }).subscribe({ error: () => undefined });
  started = { key: JSON.stringify(input), release: () => subscription.unsubscribe() };
}

/** Lets go of startSearch's request of `key`: the page's query holds it now (or it is no longer the search shown). */
function releaseStartedSearch(key: string): void {
  if (started?.key !== key) return;
  started.release();
  started = null;
}

export function useSearchResults(input: SearchInput | null): SearchResults {
  const client = useApolloClient();
  const key = input ? JSON.stringify(input) : "";
  // Keyed by the input's JSON: a new object for the same search (a re-render) is the same search.
  const variables = useMemo(() => (input ? streamedVariables(input) : undefined), [key]);
  const { data: streamed, error, loading, dataState, refetch } = useQuery(STREAMED_SEARCH, variables ? { variables, errorPolicy: "all" } : skipToken);
  // Apollo types streamed data as partial throughout; each part here is whole: `fast` arrives
  // complete in the first part, `all` complete in the deferred one (or not at all).
  const data = streamed as { fast?: SearchResultPage | null; all?: SearchResultPage | null } | undefined;
  // Once the page's query has its first answer, it alone keeps the request open (and cancels it when the search changes).
  const answered = Boolean(data?.fast ?? data?.all) || Boolean(error);
  useEffect(() => {
    if (answered) releaseStartedSearch(key);
  }, [answered, key]);

  const [later, setLater] = useState<LaterPages>(() => ({ key, pages: laterPagesKept.get(key) ?? [] }));
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
  const laterPages = later.key === key ? later.pages : (laterPagesKept.get(key) ?? []);

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
        if (next)
          setLater((previous) => {
            const pages = [...(previous.key === requestKey ? previous.pages : (laterPagesKept.get(requestKey) ?? [])), next];
            keepLaterPages(requestKey, pages);
            return { key: requestKey, pages };
          });
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
