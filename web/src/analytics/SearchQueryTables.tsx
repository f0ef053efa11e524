/**
 * The search box's query tables: the top searches with their click-through and the average
 * position opened, and the searches that found nothing. Each query links to its drill-down (its
 * searches, SearchDrillDown), which links to the search page for it.
 */
import { Link } from "react-router";
import { formatPercent } from "./charts";
import type { SearchAnalytics } from "./search-analytics-query";

type LinkTo = (changes: Record<string, string | null>) => string;

const formatPosition = (position: number | null) => (position === null ? "–" : position.toLocaleString("en", { maximumFractionDigits: 1 }));

export function TopSearchTable({ searches, linkTo, drilledQuery }: { searches: SearchAnalytics["topSearches"]; linkTo: LinkTo; drilledQuery: string | null }) {
  if (searches.length === 0) return <p className="hint">No searches in this range.</p>;
  return (
    <table className="analytics-table">
      <caption className="visually-hidden">The most searched queries, with the share of their searches where a hit was opened</caption>
      <thead>
        <tr>
          <th scope="col">Query</th>
          <th scope="col" className="numeric">Searches</th>
          <th scope="col" className="numeric">Click-through</th>
          <th scope="col" className="numeric">Average position</th>
        </tr>
      </thead>
      <tbody>
        {searches.map((entry) => (
          <tr key={entry.query}>
            <td>
              <Link to={linkTo({ searchQuery: entry.query })} aria-current={drilledQuery?.toLowerCase() === entry.query.toLowerCase() ? "true" : undefined}>
                {entry.query}
              </Link>
            </td>
            <td className="numeric">{entry.searches.toLocaleString("en")}</td>
            <td className="numeric">{formatPercent(100 * entry.clickThroughRate)}</td>
            <td className="numeric">{formatPosition(entry.averageClickPosition)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function NoResultQueryTable({ queries, linkTo }: { queries: SearchAnalytics["noResultQueries"]; linkTo: LinkTo }) {
  if (queries.length === 0) return <p className="hint">Every search found something.</p>;
  return (
    <table className="analytics-table">
      <caption className="visually-hidden">The queries that most often found nothing</caption>
      <thead>
        <tr>
          <th scope="col">Query</th>
          <th scope="col" className="numeric">Searches that found nothing</th>
        </tr>
      </thead>
      <tbody>
        {queries.map((entry) => (
          <tr key={entry.query}>
            <td>
              <Link to={linkTo({ searchQuery: entry.query })}>{entry.query}</Link>
            </td>
            <td className="numeric">{entry.searches.toLocaleString("en")}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
