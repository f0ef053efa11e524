/**
 * The search box on the dashboard: searches over a relative range ("Last 24 hours", "Last 7
 * days", "Last 30 days"), the share where someone opened a hit (click-through) and how far down,
 * searches per day, the top and the no-result queries, each provider's latency, and a drill-down
 * from a query to its searches. The range and the query drilled into are in the URL
 * (`?searches=LAST_7_DAYS&searchQuery=…`), so a view can be shared; other parameters (the
 * knowledge range) are kept. A member's token gets FORBIDDEN: this section then shows nothing and
 * the page's knowledge section says analytics are for administrators.
 */
import { useQuery } from "@apollo/client/react";
import { CombinedGraphQLErrors } from "@apollo/client/errors";
import { useSearchParams } from "react-router";
import { ErrorMessage } from "../components/ErrorMessage";
import { ChartPanel } from "./ChartPanel";
import { LatencyChart, PerDayChart, SERIES_COLOURS, formatMs, formatPercent, type DayPoint, type Series } from "./charts";
import { dayOf, daysOf, formatDay } from "./date-range";
import { RELATIVE_RANGES, SEARCH_ANALYTICS_DASHBOARD, relativeRangeLabel, relativeRangeOf, type RelativeRange, type SearchAnalytics } from "./search-analytics-query";
import { SearchDrillDown } from "./SearchDrillDown";
import { NoResultQueryTable, TopSearchTable } from "./SearchQueryTables";

const formatPosition = (position: number | null) => (position === null ? "–" : position.toLocaleString("en", { maximumFractionDigits: 1 }));

export function SearchAnalyticsSection() {
  const [searchParams, setSearchParams] = useSearchParams();
  const relative = relativeRangeOf(searchParams.get("searches"));
  const drilledQuery = searchParams.get("searchQuery");
  const { data, loading, error, refetch } = useQuery(SEARCH_ANALYTICS_DASHBOARD, { variables: { relative }, errorPolicy: "all", fetchPolicy: "cache-and-network" });
  const analytics = data?.searchAnalytics ?? null;
  if (isForbidden(error)) return null;

  const linkTo = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(searchParams);
    for (const [name, value] of Object.entries(changes)) if (value === null) next.delete(name); else next.set(name, value);
    return `?${next}`;
  };
  const choose = (range: RelativeRange) => setSearchParams((previous) => {
    const next = new URLSearchParams(previous);
    next.set("searches", range);
    return next;
  });
  const period = relativeRangeLabel(relative).toLowerCase();

  return (
    <section aria-labelledby="search-box-title" className="analytics-section">
      <h2 id="search-box-title" className="analytics-section-title">Search box</h2>
      <div role="group" aria-label="Search range" className="analytics-relative">
        {RELATIVE_RANGES.map((range) => (
          <button key={range.value} type="button" aria-pressed={range.value === relative} className={range.value === relative ? "primary" : undefined} onClick={() => choose(range.value)}>
            {range.label}
          </button>
        ))}
      </div>
      <p role="status" className="analytics-status">
        {loading && !analytics ? `Loading the searches of the ${period}…` : analytics ? `${analytics.totalSearches.toLocaleString("en")} ${analytics.totalSearches === 1 ? "search" : "searches"} in the ${period}.` : ""}
      </p>
      {error ? <ErrorMessage error={error} onRetry={() => void refetch().catch(() => undefined)} /> : null}
      {analytics && analytics.totalSearches === 0 ? (
        <div className="analytics-empty card">
          <h3>No searches in this range</h3>
          <p>Nobody in your organization searched in the {period}. Choose a longer range, or search from the Search page and come back.</p>
        </div>
      ) : null}
      {analytics && analytics.totalSearches > 0 ? <SearchFigures analytics={analytics} linkTo={linkTo} drilledQuery={drilledQuery} /> : null}
      {drilledQuery ? <SearchDrillDown relative={relative} query={drilledQuery} closeLink={linkTo({ searchQuery: null })} /> : null}
    </section>
  );
}

interface SearchDayPoint extends DayPoint {
  searches: number;
  searchesWithClicks: number;
  noResultSearches: number;
}

const SEARCH_SERIES: Series<SearchDayPoint>[] = [
  { key: "searches", name: "Searches", colour: SERIES_COLOURS.queries },
  { key: "searchesWithClicks", name: "A hit opened", colour: SERIES_COLOURS.clicked },
  { key: "noResultSearches", name: "Found nothing", colour: SERIES_COLOURS.zero },
];

function SearchFigures({ analytics, linkTo, drilledQuery }: { analytics: SearchAnalytics; linkTo(changes: Record<string, string | null>): string; drilledQuery: string | null }) {
  const counted = new Map(analytics.searchesPerDay.map((day) => [day.day, day]));
  // Days without a search are not in the answer: the chart shows them as zero.
  const points: SearchDayPoint[] = daysOf({ from: dayOf(new Date(analytics.from)), to: dayOf(new Date(analytics.to)) }).map((day) => ({
    day,
    label: formatDay(day).replace(/ \d{4}$/, ""),
    searches: counted.get(day)?.searches ?? 0,
    searchesWithClicks: counted.get(day)?.searchesWithClicks ?? 0,
    noResultSearches: counted.get(day)?.noResultSearches ?? 0,
  }));
  const latency = analytics.providers.map((provider) => ({ label: provider.provider, p50: provider.latencyP50Ms, p95: provider.latencyP95Ms }));
  const percentOf = (share: number) => formatPercent(100 * share);

  return (
    <div className="analytics-grid">
      <dl className="analytics-totals analytics-panel-wide">
        <div className="card">
          <dt>Searches</dt>
          <dd>{analytics.totalSearches.toLocaleString("en")}</dd>
        </div>
        <div className="card">
          <dt>Click-through</dt>
          <dd>{percentOf(analytics.clickThroughRate)}</dd>
        </div>
        <div className="card">
          <dt>Average position opened</dt>
          <dd>{formatPosition(analytics.averageClickPosition)}</dd>
        </div>
        <div className="card">
          <dt>Found nothing</dt>
          <dd>{percentOf(analytics.totalSearches > 0 ? analytics.noResultSearches / analytics.totalSearches : 0)}</dd>
        </div>
      </dl>

      <ChartPanel
        wide
        title="Searches per day"
        summary={`Area chart of searches per day: ${analytics.totalSearches} in all, ${analytics.searchesWithClicks} with a hit opened (${percentOf(analytics.clickThroughRate)} click-through), ${analytics.noResultSearches} found nothing.`}
        table={
          <table className="analytics-table">
            <caption className="visually-hidden">Searches per day</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col" className="numeric">Searches</th>
                <th scope="col" className="numeric">A hit opened</th>
                <th scope="col" className="numeric">Found nothing</th>
              </tr>
            </thead>
            <tbody>
              {analytics.searchesPerDay.map((day) => (
                <tr key={day.day}>
                  <th scope="row">{formatDay(day.day)}</th>
                  <td className="numeric">{day.searches}</td>
                  <td className="numeric">{day.searchesWithClicks}</td>
                  <td className="numeric">{day.noResultSearches}</td>
                </tr>
              ))}
            </tbody>
          </table>
        }
      >
        <PerDayChart points={points} series={SEARCH_SERIES} />
      </ChartPanel>

      <section className="analytics-panel" aria-labelledby="top-searches">
        <h2 id="top-searches">Top searches</h2>
        <TopSearchTable searches={analytics.topSearches} linkTo={linkTo} drilledQuery={drilledQuery} />
      </section>

      <section className="analytics-panel" aria-labelledby="no-result-searches">
        <h2 id="no-result-searches">Searches that found nothing</h2>
        <NoResultQueryTable queries={analytics.noResultQueries} linkTo={linkTo} />
      </section>

      <ChartPanel
        wide
        title="Search provider latency"
        summary={`Bar chart of answer time percentiles per search provider: ${latency.map((row) => `${row.label} p50 ${formatMs(row.p50)}, p95 ${formatMs(row.p95)}`).join("; ")}.`}
        table={
          <table className="analytics-table">
            <caption className="visually-hidden">Search latency percentiles per provider</caption>
            <thead>
              <tr>
                <th scope="col">Provider</th>
                <th scope="col" className="numeric">Calls</th>
                <th scope="col" className="numeric">Failed</th>
                <th scope="col" className="numeric">p50</th>
                <th scope="col" className="numeric">p95</th>
              </tr>
            </thead>
            <tbody>
              {analytics.providers.map((provider) => (
                <tr key={provider.provider}>
                  <th scope="row">{provider.provider}</th>
                  <td className="numeric">{provider.calls}</td>
                  <td className="numeric">{provider.failedCalls}</td>
                  <td className="numeric">{formatMs(provider.latencyP50Ms)}</td>
                  <td className="numeric">{formatMs(provider.latencyP95Ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        }
      >
        <LatencyChart rows={latency} />
      </ChartPanel>
    </div>
  );
}

function isForbidden(error: unknown): boolean {
  return CombinedGraphQLErrors.is(error) && error.errors.some((entry) => entry.extensions?.code === "FORBIDDEN");
}
