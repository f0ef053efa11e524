/**
 * The dashboard's figures for one range, once they arrived: the totals, queries per day, top and
 * zero-result queries, latency percentiles per provider and per knowledge base, and providers'
 * failure rates. Every chart carries its numbers as a table too (ChartPanel).
 */
import { ChartPanel } from "./ChartPanel";
import { FailureRateChart, LatencyChart, PerDayChart, SERIES_COLOURS, formatMs, formatPercent, type DayPoint, type LatencyRow, type Series } from "./charts";
import { daysOf, formatDay, type DayRange } from "./date-range";
import { knowledgeBaseLabel, type KnowledgeAnalytics } from "./knowledge-analytics-query";
import { QueryTable } from "./QueryTable";

const percentOf = (part: number, whole: number) => (whole > 0 ? (100 * part) / whole : 0);

/** The query log keeps enough per provider and knowledge base for a p99. */
type QueryLatencyRow = LatencyRow & { p99: number };

interface QueryDayPoint extends DayPoint {
  queries: number;
  zeroResultQueries: number;
}

const QUERY_SERIES: Series<QueryDayPoint>[] = [
  { key: "queries", name: "Queries", colour: SERIES_COLOURS.queries },
  { key: "zeroResultQueries", name: "Found nothing", colour: SERIES_COLOURS.zero },
];

export function AnalyticsDashboard({ analytics, range }: { analytics: KnowledgeAnalytics; range: DayRange }) {
  const counted = new Map(analytics.queriesPerDay.map((day) => [day.day, day]));
  // Days without a query are not in the answer: the chart shows them as zero.
  const points: QueryDayPoint[] = daysOf(range).map((day) => ({
    day,
    label: formatDay(day).replace(/ \d{4}$/, ""),
    queries: counted.get(day)?.queries ?? 0,
    zeroResultQueries: counted.get(day)?.zeroResultQueries ?? 0,
  }));
  const busiest = points.reduce<QueryDayPoint | null>((best, point) => (best === null || point.queries > best.queries ? point : best), null);
  const zeroResults = analytics.queriesPerDay.reduce((sum, day) => sum + day.zeroResultQueries, 0);
  const failed = analytics.providers.reduce((sum, provider) => sum + provider.failedQueries, 0);

  const providerLatency: QueryLatencyRow[] = analytics.providers.map((provider) => ({ label: provider.provider, p50: provider.latencyP50Ms, p95: provider.latencyP95Ms, p99: provider.latencyP99Ms }));
  const baseLatency: QueryLatencyRow[] = analytics.knowledgeBases.map((base) => ({ label: knowledgeBaseLabel(base), p50: base.latencyP50Ms, p95: base.latencyP95Ms, p99: base.latencyP99Ms }));
  const failureRows = analytics.providers.map((provider) => ({ label: provider.provider, failureRate: percentOf(provider.failedQueries, provider.queries) }));

  return (
    <div className="analytics-grid">
      <dl className="analytics-totals analytics-panel-wide">
        <div className="card">
          <dt>Knowledge queries</dt>
          <dd>{analytics.totalQueries.toLocaleString("en")}</dd>
        </div>
        <div className="card">
          <dt>Found nothing</dt>
          <dd>{formatPercent(percentOf(zeroResults, analytics.totalQueries))}</dd>
        </div>
        <div className="card">
          <dt>Failed</dt>
          <dd>{formatPercent(percentOf(failed, analytics.totalQueries))}</dd>
        </div>
        <div className="card">
          <dt>Busiest day</dt>
          <dd>{busiest && busiest.queries > 0 ? `${busiest.label} (${busiest.queries.toLocaleString("en")})` : "–"}</dd>
        </div>
      </dl>

      <ChartPanel
        wide
        title="Queries per day"
        summary={`Area chart of knowledge queries per day from ${formatDay(range.from)} to ${formatDay(range.to)}: ${analytics.totalQueries} in all, ${zeroResults} of them found nothing${busiest && busiest.queries > 0 ? `; the busiest day was ${formatDay(busiest.day)} with ${busiest.queries}` : ""}.`}
        table={
          <table className="analytics-table">
            <caption className="visually-hidden">Knowledge queries per day</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col" className="numeric">Queries</th>
                <th scope="col" className="numeric">Found nothing</th>
                <th scope="col" className="numeric">Failed</th>
              </tr>
            </thead>
            <tbody>
              {analytics.queriesPerDay.map((day) => (
                <tr key={day.day}>
                  <th scope="row">{formatDay(day.day)}</th>
                  <td className="numeric">{day.queries}</td>
                  <td className="numeric">{day.zeroResultQueries}</td>
                  <td className="numeric">{day.failedQueries}</td>
                </tr>
              ))}
            </tbody>
          </table>
        }
      >
        <PerDayChart points={points} series={QUERY_SERIES} />
      </ChartPanel>

      <section className="analytics-panel" aria-labelledby="top-queries">
        <h2 id="top-queries">Top queries</h2>
        <QueryTable caption="The most asked queries" queries={analytics.topQueries} empty="No queries in this range." />
      </section>

      <section className="analytics-panel" aria-labelledby="zero-result-queries">
        <h2 id="zero-result-queries">Queries that found nothing</h2>
        <QueryTable caption="The most asked queries that found nothing" queries={analytics.zeroResultQueries} empty="Every query found something." />
      </section>

      <ChartPanel title="Latency per provider" summary={latencySummary("provider", providerLatency)} table={<LatencyTable caption="Latency percentiles per provider" subject="Provider" rows={providerLatency} queries={analytics.providers.map((provider) => provider.queries)} />}>
        <LatencyChart rows={providerLatency} />
      </ChartPanel>

      <ChartPanel
        title="Provider failure rate"
        summary={`Bar chart of the share of each provider's queries that failed: ${analytics.providers.map((provider) => `${provider.provider} ${formatPercent(percentOf(provider.failedQueries, provider.queries))} (${provider.failedQueries} of ${provider.queries})`).join(", ")}.`}
        table={
          <table className="analytics-table">
            <caption className="visually-hidden">Failure rate per provider</caption>
            <thead>
              <tr>
                <th scope="col">Provider</th>
                <th scope="col" className="numeric">Queries</th>
                <th scope="col" className="numeric">Failed</th>
                <th scope="col" className="numeric">Failure rate</th>
              </tr>
            </thead>
            <tbody>
              {analytics.providers.map((provider) => (
                <tr key={provider.provider}>
                  <th scope="row">{provider.provider}</th>
                  <td className="numeric">{provider.queries}</td>
                  <td className="numeric">{provider.failedQueries}</td>
                  <td className="numeric">{formatPercent(percentOf(provider.failedQueries, provider.queries))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        }
      >
        <FailureRateChart rows={failureRows} />
      </ChartPanel>

      <ChartPanel
        wide
        title="Latency per knowledge base"
        summary={latencySummary("knowledge base", baseLatency)}
        table={<LatencyTable caption="Latency percentiles per knowledge base" subject="Knowledge base" rows={baseLatency} queries={analytics.knowledgeBases.map((base) => base.queries)} />}
      >
        <LatencyChart rows={baseLatency} />
      </ChartPanel>
    </div>
  );
}

function latencySummary(subject: string, rows: QueryLatencyRow[]): string {
  return `Bar chart of answer time percentiles per ${subject}: ${rows.map((row) => `${row.label} p50 ${formatMs(row.p50)}, p95 ${formatMs(row.p95)}, p99 ${formatMs(row.p99)}`).join("; ")}.`;
}

function LatencyTable({ caption, subject, rows, queries }: { caption: string; subject: string; rows: QueryLatencyRow[]; queries: number[] }) {
  return (
    <table className="analytics-table">
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{subject}</th>
          <th scope="col" className="numeric">Queries</th>
          <th scope="col" className="numeric">p50</th>
          <th scope="col" className="numeric">p95</th>
          <th scope="col" className="numeric">p99</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row, index) => (
          <tr key={`${row.label}-${index}`}>
            <th scope="row">{row.label}</th>
            <td className="numeric">{queries[index] ?? 0}</td>
            <td className="numeric">{formatMs(row.p50)}</td>
            <td className="numeric">{formatMs(row.p95)}</td>
            <td className="numeric">{formatMs(row.p99)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
