/** A list of queries with how often each was asked, each linking to the search page for it. */
import { Link } from "react-router";
import type { QueryCount } from "./knowledge-analytics-query";

export function QueryTable({ caption, queries, empty }: { caption: string; queries: QueryCount[]; empty: string }) {
  if (queries.length === 0) return <p className="hint">{empty}</p>;
  return (
    <table className="analytics-table">
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Query</th>
          <th scope="col" className="numeric">
            Times asked
          </th>
        </tr>
      </thead>
      <tbody>
        {queries.map((entry) => (
          <tr key={entry.query}>
            <td>
              <Link to={{ pathname: "/", search: `?${new URLSearchParams({ q: entry.query })}` }}>{entry.query}</Link>
            </td>
            <td className="numeric">{entry.count.toLocaleString("en")}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
