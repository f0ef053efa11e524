/**
 * Drill-down from a query to its searches in the range: when, who (their name), how many hits,
 * and which hits were opened at which position. Read fresh each time (no-cache): it is a look at
 * the log as it is now, and its answer would otherwise be merged into the dashboard's.
 */
import { useEffect, useRef } from "react";
import { useQuery } from "@apollo/client/react";
import { Link } from "react-router";
import { ErrorMessage } from "../components/ErrorMessage";
import { SEARCH_ANALYTICS_DRILL_DOWN, relativeRangeLabel, type LoggedSearch, type RelativeRange } from "./search-analytics-query";

const KIND_LABELS: Record<string, string> = {
  CONVERSATION: "conversation",
  DOCUMENT_CHUNK: "document",
  KNOWLEDGE_BASE_PASSAGE: "knowledge base passage",
  WEB_RESULT: "web page",
  SLACK_MESSAGE: "Slack message",
  LINKEDIN_POST: "LinkedIn post",
};

const formatWhen = (at: string) => new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", timeZone: "UTC", timeZoneName: "short" }).format(new Date(at));

/** The hits opened, each a link where the app can show its item (a conversation). */
function Opened({ search }: { search: LoggedSearch }) {
  if (search.clicks.length === 0) return <>Nothing opened</>;
  return (
    <>
      {search.clicks.map((click, index) => {
        const label = `#${click.position} (${KIND_LABELS[click.itemKind] ?? click.itemKind})`;
        return (
          <span key={`${click.itemKind}:${click.itemId}`}>
            {index > 0 ? ", " : null}
            {click.itemKind === "CONVERSATION" ? <Link to={`/conversations/${encodeURIComponent(click.itemId)}`}>{label}</Link> : label}
          </span>
        );
      })}
    </>
  );
}

export function SearchDrillDown({ relative, query, closeLink }: { relative: RelativeRange; query: string; closeLink: string }) {
  const { data, loading, error, refetch } = useQuery(SEARCH_ANALYTICS_DRILL_DOWN, { variables: { relative, query }, errorPolicy: "all", fetchPolicy: "no-cache" });
  const searches = data?.searchAnalytics?.searches ?? null;
  const heading = useRef<HTMLHeadingElement>(null);
  // Following a query's link moves the reader to what it opened.
  useEffect(() => heading.current?.focus(), [query]);

  return (
    <section className="analytics-panel analytics-drill-down" aria-labelledby="search-drill-down">
      <div className="analytics-panel-header">
        <h2 id="search-drill-down" ref={heading} tabIndex={-1}>
          Searches for “{query}”
        </h2>
        <span className="analytics-drill-down-links">
          <Link to={{ pathname: "/", search: `?${new URLSearchParams({ q: query })}` }}>Search for it</Link>
          <Link to={closeLink}>Close</Link>
        </span>
      </div>
      {loading && !searches ? <p role="status">Loading the searches…</p> : null}
      {error ? <ErrorMessage error={error} onRetry={() => void refetch().catch(() => undefined)} /> : null}
      {searches && searches.length === 0 ? <p className="hint">Nobody searched for “{query}” in the {relativeRangeLabel(relative).toLowerCase()}.</p> : null}
      {searches && searches.length > 0 ? (
        <table className="analytics-table">
          <caption className="visually-hidden">Each search for “{query}”, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col" className="numeric">Hits</th>
              <th scope="col">Opened</th>
            </tr>
          </thead>
          <tbody>
            {searches.map((search) => (
              <tr key={search.searchId} data-search-id={search.searchId}>
                <th scope="row">{formatWhen(search.at)}</th>
                <td>{search.user.name ?? search.user.id}</td>
                <td className="numeric">{search.results}</td>
                <td>
                  <Opened search={search} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
