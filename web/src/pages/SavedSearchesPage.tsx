/**
 * Saved searches (/saved): the caller's own saved searches, newest first, each with its query,
 * when it was saved and last run, and Run / Open on the search page / Rename / Delete
 * (saved/SavedSearchItem.tsx); a form to save a new one; an empty state that says how.
 * Sends: SavedSearches, SearchDefaultAlpha, SaveSearch, RenameSavedSearch, DeleteSavedSearch,
 * RunSavedSearch.
 */
import { useRef, useState } from "react";
import { Link } from "react-router";
import { useQuery } from "@apollo/client/react";
import { ErrorMessage } from "../components/ErrorMessage";
import { NewSavedSearchForm } from "../saved/NewSavedSearchForm";
import { SAVED_SEARCHES, SAVED_SEARCHES_PAGE_SIZE } from "../saved/operations";
import { SavedSearchItem } from "../saved/SavedSearchItem";
import "./SavedSearchesPage.css";

export default function SavedSearchesPage() {
  const { data, loading, error, refetch } = useQuery(SAVED_SEARCHES, { variables: { first: SAVED_SEARCHES_PAGE_SIZE }, errorPolicy: "all" });
  // What just changed, announced to screen readers (a deleted row takes its own messages with it).
  const [announcement, setAnnouncement] = useState("");
  const title = useRef<HTMLHeadingElement>(null);
  const savedSearches = data?.savedSearches?.nodes ?? [];

  return (
    <section className="saved-searches-page" aria-labelledby="page-title">
      <h1 id="page-title" ref={title} tabIndex={-1}>
        Saved searches
      </h1>
      <p className="hint">Your own saved searches: nobody else in your organization sees them. Run one to see its hits and what is new since its last run.</p>
      <p className="hint">A run asks every source the search was saved with; web sources spend credits unless their answer is cached (see Credits).</p>
      <p role="status" className="page-status">
        {announcement}
      </p>
      {error ? <ErrorMessage error={error} onRetry={() => void refetch().catch(() => undefined)} /> : null}
      {loading && !data ? <p role="status">Loading saved searches…</p> : null}
      {!loading && data?.savedSearches && savedSearches.length === 0 ? (
        <div className="empty-state card">
          <h2>No saved searches yet</h2>
          <p>
            Search on the <Link to="/">search page</Link> and choose <strong>Save this search</strong>, or save one with the form below.
          </p>
        </div>
      ) : null}
      {savedSearches.length > 0 ? (
        <ul className="saved-search-list" aria-label="Your saved searches">
          {savedSearches.map((savedSearch) => (
            <SavedSearchItem key={savedSearch.id} savedSearch={savedSearch} onDeleted={(name) => {
                setAnnouncement(`Deleted “${name}”.`);
                // Its row, and the button that had focus, are gone: the page's start is the next place to be.
                title.current?.focus();
              }}
            />
          ))}
        </ul>
      ) : null}
      <NewSavedSearchForm onSaved={(name) => setAnnouncement(`Saved “${name}”.`)} />
    </section>
  );
}
