/**
 * /analytics, for admins: first the search box (SearchAnalyticsSection: searches, click-through,
 * top and no-result queries, latency per provider, drill-down, over a relative range), then what
 * the organization asked its knowledge over a range of days (default: the last 30). It shows top and zero-result queries (each a link to search for it), queries
 * per day, latency percentiles (p50/p95/p99) per provider and per knowledge base, and providers'
 * failure rates, as charts with tables beside them.
 *
 * Operations: `KnowledgeAnalyticsDashboard` (knowledgeAnalytics(from, to)), once per range. The
 * range is in the URL (`?from=YYYY-MM-DD&to=YYYY-MM-DD`, UTC days, both included), so a view can
 * be shared. A member's token gets FORBIDDEN, shown as a message about the admin role.
 */
import { useQuery } from "@apollo/client/react";
import { CombinedGraphQLErrors } from "@apollo/client/errors";
import { useSearchParams } from "react-router";
import { ErrorMessage } from "../components/ErrorMessage";
import { AnalyticsDashboard } from "../analytics/AnalyticsDashboard";
import { DateRangeForm } from "../analytics/DateRangeForm";
import { defaultRange, formatDay, rangeFromSearchParams, rangeProblem, rangeVariables, type DayRange } from "../analytics/date-range";
import { KNOWLEDGE_ANALYTICS_DASHBOARD } from "../analytics/knowledge-analytics-query";
import { SearchAnalyticsSection } from "../analytics/SearchAnalyticsSection";
import "./AnalyticsPage.css";

export default function AnalyticsPage() {
  const [searchParams, setSearchParams] = useSearchParams();
  const range = rangeFromSearchParams(searchParams);
  const problem = rangeProblem(range);
  // The search box's parameters (its range and drill-down) stay when the knowledge range changes.
  const show = (next: DayRange) =>
    setSearchParams((previous) => {
      const kept = new URLSearchParams(previous);
      kept.set("from", next.from);
      kept.set("to", next.to);
      return kept;
    });

  return (
    <section aria-labelledby="page-title" className="analytics-page">
      <h1 id="page-title">Analytics</h1>
      <p className="hint">What your organization searched for and asked its knowledge: the queries, what people opened, how fast each provider answered, and how often it failed. Only administrators see this page.</p>
      <SearchAnalyticsSection />
      <h2 className="analytics-section-title">Knowledge queries</h2>
      {/* Keyed by the range: going back or following a shared link resets the fields to the URL's range. */}
      <DateRangeForm key={`${range.from}|${range.to}`} range={range} onApply={show} onReset={() => show(defaultRange())} />
      {problem ? (
        <div role="alert" className="error-box">
          <strong>This range cannot be shown</strong>
          <p>{problem}</p>
        </div>
      ) : (
        <AnalyticsForRange range={range} />
      )}
    </section>
  );
}

function AnalyticsForRange({ range }: { range: DayRange }) {
  const { data, loading, error, refetch } = useQuery(KNOWLEDGE_ANALYTICS_DASHBOARD, { variables: rangeVariables(range), errorPolicy: "all" });
  const analytics = data?.knowledgeAnalytics ?? null;
  const period = `${formatDay(range.from)} to ${formatDay(range.to)}`;

  if (isForbidden(error)) {
    return (
      <div role="alert" className="error-box">
        <strong>Analytics are for administrators</strong>
        <p>They report every member's queries, so only your organization's administrators may read them. Ask one of them, or enter an administrator's token (Token, at the top right).</p>
      </div>
    );
  }
  return (
    <>
      <p role="status" className="analytics-status">
        {loading ? `Loading the queries from ${period}…` : analytics ? `${analytics.totalQueries.toLocaleString("en")} knowledge ${analytics.totalQueries === 1 ? "query" : "queries"} from ${period}.` : ""}
      </p>
      {error ? <ErrorMessage error={error} onRetry={() => void refetch().catch(() => undefined)} /> : null}
      {!loading && analytics && analytics.totalQueries === 0 ? (
        <div className="analytics-empty card">
          <h2>No queries in this range</h2>
          <p>Nobody in your organization asked a knowledge query from {period}. Choose another range, or ask something through the API (queryKnowledgeBase) and come back.</p>
        </div>
      ) : null}
      {analytics && analytics.totalQueries > 0 ? <AnalyticsDashboard analytics={analytics} range={range} /> : null}
    </>
  );
}

function isForbidden(error: unknown): boolean {
  return CombinedGraphQLErrors.is(error) && error.errors.some((entry) => entry.extensions?.code === "FORBIDDEN");
}
