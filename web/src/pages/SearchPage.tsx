/**
 * The search page (`/`): a search box with suggestions and results as you type, results with
 * highlighted passages, who and when, and a link to where each lives; facet filters that widen
 * within a group and narrow across groups; the search mode in words ("Exact words", "Balanced",
 * "By meaning") and the order (best match, newest); "did you mean"; and more results as the list
 * scrolls. How each source did, timings and the alpha are behind "Search details". The URL holds
 * the query, filters, mode and order (search-url.ts), so a search can be shared and reloaded, and
 * coming back from a hit restores the list where it was (pages loaded and scroll position).
 *
 * Operations: `SearchPageStreamed` (the LOCAL providers' page first, every provider's page
 * deferred), `SearchPageNext` (later pages), `SearchPageWideningFacets` (the counts of groups
 * with a selection), `SearchBoxSuggestions` (as the user types) and `SearchPageDefaultAlpha`
 * (the alpha a search without one uses, fetched as the page opens). Files: web/src/search/.
 */
import { startTransition, useCallback, useEffect, useId, useMemo, useOptimistic, useRef } from "react";
import { Link, useLocation, useSearchParams } from "react-router";
import { useApolloClient, useQuery } from "@apollo/client/react";
import { AlsoSearched } from "../components/AlsoSearched";
import { ErrorMessage } from "../components/ErrorMessage";
import { SaveSearchButton } from "../components/SaveSearchButton";
import { AlphaSlider } from "../search/AlphaSlider";
import { AnswerPanel } from "../search/AnswerPanel";
import { CreditsNote } from "../search/CreditsNote";
import { useWideningFacets } from "../search/disjunctive-facets";
import { FacetSidebar } from "../search/FacetSidebar";
import { DEFAULT_ALPHA, type SearchResultPage } from "../search/operations";
import { SearchBox } from "../search/SearchBox";
import { SearchDetails, SourceNotices } from "../search/SearchDetails";
import { SearchHitCard } from "../search/SearchHitCard";
import { SearchModeControl } from "../search/SearchModeControl";
import { useRestoredScroll } from "../search/restore-scroll";
import { NO_FILTERS, readUrlSearch, searchInputOf, writeUrlSearch, type ListFilter, type ResultOrder, type UrlSearch } from "../search/search-url";
import { startSearch, useSearchResults, type SearchResults } from "../search/useSearchResults";
import "./SearchPage.css";

export function SearchPage() {
  const [params, setParams] = useSearchParams();
  const search = useMemo(() => readUrlSearch(params), [params]);
  const input = useMemo(() => (search.query ? searchInputOf(search) : null), [search]);
  const results = useSearchResults(input);
  // The slider's default alpha, asked for as the page opens rather than when the first search
  // mounts the slider: otherwise it goes out beside that search, and on the embedded database
  // (one connection) its statements wait in line with the search's. The slider reads it from the cache.
  const { data: defaults } = useQuery(DEFAULT_ALPHA, { errorPolicy: "all" });
  const defaultAlpha = defaults?.searchIndexStatus?.defaultAlpha.alpha ?? null;

  // Every change is a history entry, so back and forward walk the searches made.
  const go = useCallback((next: UrlSearch, options?: { replace: boolean }) => setParams(writeUrlSearch(next), options), [setParams]);
  const client = useApolloClient();
  // A new query starts without the facet filters of the previous one (its facets were counted
  // for another query), and with typo tolerance back on; the mode and order chosen stay.
  const nextSearch = useCallback(
    (query: string): UrlSearch => {
      const same = query === search.query;
      return { query, alpha: search.alpha, filters: same ? search.filters : NO_FILTERS, exact: same && search.exact, sort: search.sort };
    },
    [search],
  );
  const onSearch = useCallback(
    (query: string) => {
      const next = nextSearch(query);
      // The request leaves now; the page joins it once it has rendered for the new URL.
      startSearch(client, searchInputOf(next));
      go(next);
    },
    [client, go, nextSearch],
  );
  // Results while typing: the first pause of a typing adds a history entry, the later ones
  // replace it, so back goes to the search before the typing, not to each pause in it.
  const typedQuery = useRef<string | null>(null);
  const onType = useCallback(
    (query: string) => {
      const next = nextSearch(query);
      startSearch(client, searchInputOf(next));
      const continuing = typedQuery.current !== null && typedQuery.current === search.query;
      typedQuery.current = query;
      go(next, { replace: continuing });
    },
    [client, go, nextSearch, search.query],
  );
  const facets = useWideningFacets(input ? search : null, results.page?.facets ?? null);
  const location = useLocation();
  useRestoredScroll(location.key, Boolean(search.query) && !results.loading && results.hits.length > 0);
  // React Router applies a new URL in a transition, and a controlled checkbox shows its state
  // prop: without an optimistic copy, a ticked facet springs back unticked until that transition
  // commits (hundreds of ms on a busy machine), which reads as "the click did nothing".
  const [filters, showFilters] = useOptimistic(search.filters);
  const goFilters = (next: UrlSearch["filters"]) =>
    startTransition(() => {
      showFilters(next);
      go({ ...search, filters: next });
    });
  const onToggle = (filter: ListFilter, value: string, selected: boolean) => {
    const values = filters[filter] as string[];
    goFilters({ ...filters, [filter]: selected ? [...values, value] : values.filter((existing) => existing !== value) });
  };

  useEffect(() => {
    document.title = search.query ? `${search.query} – Search` : "Search";
  }, [search.query]);

  return (
    <section aria-labelledby="page-title" className="search-page">
      <h1 id="page-title">Search</h1>
      <SearchBox query={search.query} onSearch={onSearch} onType={onType} />
      <CreditsNote />
      <p role="status" className="search-status">
        {statusText(search.query, results)}
      </p>
      {search.query ? (
        <div className="search-layout">
          <FacetSidebar
            facets={facets}
            filters={filters}
            onToggle={onToggle}
            onMonth={(month) => goFilters({ ...filters, month })}
            onClear={() => goFilters(NO_FILTERS)}
          />
          <div className="search-results" aria-labelledby="results-title">
            <h2 id="results-title" className="visually-hidden">
              Results
            </h2>
            <div className="search-controls">
              <SearchModeControl alpha={search.alpha} onChange={(alpha) => go({ ...search, alpha })} meaningAvailable={Boolean(results.page?.providers.some((provider) => provider.kind === "SEMANTIC"))} />
              <OrderControl order={search.sort} onChange={(sort) => go({ ...search, sort })} />
              <SaveSearchButton search={search} />
            </div>
            {results.page ? <SourceNotices providers={results.page.providers} /> : null}
            {results.page ? (
              <SearchDetails providers={results.page.providers} alpha={{ value: search.alpha ?? defaultAlpha, isDefault: search.alpha === null }} facetWindow={results.page.facets?.window ?? null}>
                <AlphaSlider alpha={search.alpha} onChange={(alpha) => go({ ...search, alpha })} />
              </SearchDetails>
            ) : null}
            <CorrectionNotice search={search} suggestion={results.first?.suggestion ?? null} corrections={results.first?.corrections ?? []} />
            {results.first?.weakMatches && results.hits.length > 0 ? (
              <p className="weak-matches">Nothing matched “{search.query}” well. These are the closest results; try other words.</p>
            ) : null}
            {results.error ? <ErrorMessage error={results.error} onRetry={results.retry} /> : null}
            {input ? <AnswerPanel search={input} resultsShown={!results.loading} /> : null}
            <ResultList query={search.query} results={results} />
          </div>
        </div>
      ) : (
        <div className="search-empty card">
          <p>Search your organization's conversations and documents, and the web and Slack where they are configured.</p>
          <p className="hint">Suggestions appear as you type: use the arrow keys to pick one and Enter to search.</p>
        </div>
      )}
    </section>
  );
}

/**
 * Typo tolerance, said out loud: the page may hold hits found only through a correction, so the
 * person is told which words were searched in place of theirs, offered the corrected query ("Did
 * you mean"), and offered the search of their words exactly as typed, which the URL keeps
 * (`exact=1`) until they type a new query; that search says how to get the corrections back.
 */
function CorrectionNotice({ search, suggestion, corrections }: { search: UrlSearch; suggestion: string | null; corrections: SearchResultPage["corrections"] }) {
  if (search.exact) {
    return (
      <p className="did-you-mean">
        Showing results only for the words as typed.{" "}
        <Link to={`/?${writeUrlSearch({ ...search, exact: false })}`}>Include likely corrections of misspelled words</Link>
      </p>
    );
  }
  if (!suggestion && corrections.length === 0) return null;
  return (
    <div className="did-you-mean">
      {suggestion ? (
        <p>
          Did you mean{" "}
          <Link to={`/?${writeUrlSearch({ ...search, query: suggestion })}`}>
            <strong>{suggestion}</strong>
          </Link>
          ?
        </p>
      ) : null}
      {corrections.length ? (
        <p className="correction-detail">
          <AlsoSearched corrections={corrections} />{" "}
          <Link to={`/?${writeUrlSearch({ ...search, exact: true })}`}>Search only for “{search.query}”</Link>
        </p>
      ) : null}
    </div>
  );
}

/** Best match or newest first: the API's `sort` (the best candidates, newest first). */
function OrderControl({ order, onChange }: { order: ResultOrder; onChange(order: ResultOrder): void }) {
  const id = useId();
  return (
    <div className="search-order">
      <label htmlFor={id}>Sort by</label>
      <select id={id} value={order} onChange={(event) => onChange(event.target.value === "newest" ? "newest" : "relevance")}>
        <option value="relevance">Best match</option>
        <option value="newest">Newest</option>
      </select>
    </div>
  );
}

/** What the live region says: screen readers hear when results arrive, stream in and grow. */
function statusText(query: string, results: SearchResults): string {
  if (!query) return "";
  if (results.loading) return "Searching…";
  const count = results.hits.length;
  // The alert below says why; "no results" would say something untrue.
  if (results.error && count === 0) return `The search for “${query}” did not complete.`;
  const found = count === 0 ? `No results for “${query}”.` : `${count}${results.hasNextPage ? "+" : ""} result${count === 1 ? "" : "s"} for “${query}”.`;
  if (results.streaming) return `${found} Web results arriving…`;
  if (results.loadingMore) return `${found} Loading more results…`;
  return found;
}

function ResultList({ query, results }: { query: string; results: SearchResults }) {
  const sentinel = useRef<HTMLDivElement>(null);
  const { hasNextPage, loadingMore, loadMore, loadMoreError } = results;

  // Infinite scroll: the next page loads when the end of the list comes into view. The observer
  // is made again after each page, so a sentinel still in view asks for one more.
  useEffect(() => {
    const element = sentinel.current;
    if (!element || !hasNextPage || loadingMore || loadMoreError || typeof IntersectionObserver === "undefined") return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) loadMore();
    }, { rootMargin: "200px" });
    observer.observe(element);
    return () => observer.disconnect();
  }, [hasNextPage, loadingMore, loadMoreError, loadMore, results.hits.length]);

  if (results.loading) return null;
  if (!results.hits.length) {
    return results.error ? null : (
      <div className="search-zero card">
        <p>Nothing matched “{query}”.</p>
        <p className="hint">Try other words, fewer filters, or the “By meaning” mode to find related text.</p>
      </div>
    );
  }
  return (
    <>
      <ol className="hit-list" aria-label={`Results for ${query}`}>
        {results.hits.map((hit, index) => (
          <li key={`${hit.item?.__typename ?? "gone"}:${hit.item?.id ?? index}`}>
            <SearchHitCard hit={hit} query={query} searchId={results.first?.searchId} position={index + 1} />
          </li>
        ))}
      </ol>
      {loadMoreError ? <ErrorMessage error={loadMoreError} onRetry={loadMore} /> : null}
      <div ref={sentinel} className="load-more">
        {hasNextPage ? (
          <button type="button" onClick={loadMore} disabled={loadingMore}>
            {loadingMore ? "Loading more results…" : "Load more results"}
          </button>
        ) : results.streaming ? null : (
          <p className="hint">End of results.</p>
        )}
      </div>
    </>
  );
}
