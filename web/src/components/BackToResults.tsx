/**
 * "Back to results" on a page a search hit opened: the browser's back when the person came from
 * the results (the list comes back as it was: its pages, filters and scroll position), else a
 * link to the search for the page's `q` (a shared link to a hit). Nothing without either.
 */
import { Link, useLocation, useNavigate } from "react-router";

export function BackToResults() {
  const location = useLocation();
  const navigate = useNavigate();
  const fromResults = (location.state as { fromResults?: boolean } | null)?.fromResults === true;
  const query = new URLSearchParams(location.search).get("q");
  if (fromResults) {
    return (
      <a
        className="back-to-results"
        href={query ? `/?${new URLSearchParams({ q: query })}` : "/"}
        onClick={(event) => {
          if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
          event.preventDefault();
          navigate(-1);
        }}
      >
        ← Back to results
      </a>
    );
  }
  if (!query) return null;
  return (
    <Link className="back-to-results" to={`/?${new URLSearchParams({ q: query })}`}>
      ← Search for “{query}”
    </Link>
  );
}
