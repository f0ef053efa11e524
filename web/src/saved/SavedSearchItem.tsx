/**
 * One saved search in the list: its name, query, when it was saved and last run, and what can be
 * done with it: run it (RunSavedSearch, its hits shown below), open it on the search page,
 * rename it in place (RenameSavedSearch), and delete it after a confirmation step
 * (DeleteSavedSearch, which drops it from the cached list).
 */
import { useEffect, useId, useRef, useState } from "react";
import { Link } from "react-router";
import { useMutation } from "@apollo/client/react";
import { ErrorMessage } from "../components/ErrorMessage";
import { removeSavedSearchFromCache } from "./cache";
import { formatDateTime, savedSettingsInWords, searchPageHref, unshownInWords } from "./format";
import { DELETE_SAVED_SEARCH, RENAME_SAVED_SEARCH, RUN_SAVED_SEARCH, type SavedSearchFields } from "./operations";
import { SavedSearchRunResult } from "./SavedSearchRunResult";
import { MAX_NAME_LENGTH } from "./useSaveSearch";

/** Hits per run: the first page, as the search page shows it. */
const RUN_LIMIT = 20;

type Mode = "view" | "rename" | "confirm-delete";

export function SavedSearchItem({ savedSearch, onDeleted }: { savedSearch: SavedSearchFields; onDeleted(name: string): void }) {
  const [mode, setMode] = useState<Mode>("view");
  const [newName, setNewName] = useState(savedSearch.name);
  // lastRunAt as it was before this page's run: the run itself moves it.
  const [previousRunAt, setPreviousRunAt] = useState<string | null>(null);
  const headingId = useId();
  const nameId = useId();
  const runHeadingId = useId();
  const renameField = useRef<HTMLInputElement>(null);
  const renameButton = useRef<HTMLButtonElement>(null);
  const cancelDelete = useRef<HTMLButtonElement>(null);
  const deleteButton = useRef<HTMLButtonElement>(null);

  const [rename, renameState] = useMutation(RENAME_SAVED_SEARCH);
  const [remove, removeState] = useMutation(DELETE_SAVED_SEARCH, {
    update(cache, { data }) {
      if (data?.deleteSavedSearch) removeSavedSearchFromCache(cache, data.deleteSavedSearch.id);
    },
  });
  const [run, runState] = useMutation(RUN_SAVED_SEARCH, { errorPolicy: "all" });

  // Focus follows the step the person is on, so keyboard users never lose their place.
  useEffect(() => {
    if (mode === "rename") renameField.current?.select();
    if (mode === "confirm-delete") cancelDelete.current?.focus();
  }, [mode]);

  function backToView(focus: React.RefObject<HTMLButtonElement | null>) {
    setMode("view");
    renameState.reset();
    removeState.reset();
    // After React renders the view again.
    requestAnimationFrame(() => focus.current?.focus());
  }

  async function submitRename(event: React.FormEvent) {
    event.preventDefault();
    if (renameState.loading) return;
    const { data } = await rename({ variables: { id: savedSearch.id, name: newName.trim() } }).catch(() => ({ data: undefined }));
    if (data?.renameSavedSearch) backToView(renameButton);
  }

  // Busy buttons stay enabled (aria-disabled): disabling the focused button would drop keyboard focus.
  async function confirmDelete() {
    if (removeState.loading) return;
    const name = savedSearch.name;
    const { data } = await remove({ variables: { id: savedSearch.id } }).catch(() => ({ data: undefined }));
    if (data?.deleteSavedSearch) onDeleted(name);
  }

  async function runNow() {
    if (runState.loading) return;
    setPreviousRunAt(savedSearch.lastRunAt);
    await run({ variables: { id: savedSearch.id, limit: RUN_LIMIT } }).catch(() => undefined);
  }

  const runResult = runState.data?.runSavedSearch ?? null;
  const settings = savedSettingsInWords(savedSearch);
  const unshown = unshownInWords(savedSearch);

  return (
    <li className="saved-search card">
      <h2 id={headingId} className="saved-search-name">
        {savedSearch.name}
      </h2>
      <dl className="saved-search-facts">
        <div>
          <dt>Query</dt>
          <dd className="saved-search-query">{savedSearch.query}</dd>
        </div>
        <div>
          <dt>Keyword/semantic balance (alpha)</dt>
          <dd>{savedSearch.alpha}</dd>
        </div>
        {settings.map((setting) => (
          <div key={setting.label}>
            <dt>{setting.label}</dt>
            <dd>{setting.value}</dd>
          </div>
        ))}
        <div>
          <dt>Saved</dt>
          <dd>
            <time dateTime={savedSearch.createdAt}>{formatDateTime(savedSearch.createdAt)}</time>
          </dd>
        </div>
        <div>
          <dt>Last run</dt>
          <dd>{savedSearch.lastRunAt ? <time dateTime={savedSearch.lastRunAt}>{formatDateTime(savedSearch.lastRunAt)}</time> : "Never"}</dd>
        </div>
      </dl>

      {mode === "rename" ? (
        <form className="inline-form" aria-label={`Rename ${savedSearch.name}`} onSubmit={submitRename}>
          <label htmlFor={nameId}>New name</label>
          <input
            id={nameId}
            ref={renameField}
            value={newName}
            maxLength={MAX_NAME_LENGTH}
            required
            onChange={(event) => setNewName(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === "Escape") backToView(renameButton);
            }}
          />
          <button type="submit" className="primary" disabled={newName.trim() === ""} aria-disabled={renameState.loading}>
            {renameState.loading ? "Renaming…" : "Save name"}
          </button>
          <button type="button" onClick={() => backToView(renameButton)}>
            Cancel
          </button>
          {renameState.error ? <ErrorMessage error={renameState.error} /> : null}
        </form>
      ) : mode === "confirm-delete" ? (
        <div className="confirm-delete" role="group" aria-label={`Delete ${savedSearch.name}?`}>
          <p>
            Delete “{savedSearch.name}”? This cannot be undone.
          </p>
          <button type="button" className="danger" aria-disabled={removeState.loading} onClick={confirmDelete}>
            {removeState.loading ? "Deleting…" : "Delete"}
          </button>
          <button type="button" ref={cancelDelete} onClick={() => backToView(deleteButton)}>
            Keep it
          </button>
          {removeState.error ? <ErrorMessage error={removeState.error} /> : null}
        </div>
      ) : (
        <div className="saved-search-actions">
          <button type="button" className="primary" aria-disabled={runState.loading} onClick={runNow} aria-describedby={headingId}>
            {runState.loading ? "Running…" : "Run"}
          </button>
          <Link to={searchPageHref(savedSearch)} aria-describedby={headingId} title={unshown ? `The search page cannot show its ${unshown} filter: it opens without it` : undefined}>
            Open on the search page{unshown ? ` (without its ${unshown} filter)` : ""}
          </Link>
          <button
            type="button"
            ref={renameButton}
            aria-describedby={headingId}
            onClick={() => {
              setNewName(savedSearch.name);
              setMode("rename");
            }}
          >
            Rename
          </button>
          <button type="button" ref={deleteButton} aria-describedby={headingId} onClick={() => setMode("confirm-delete")}>
            Delete
          </button>
        </div>
      )}

      <div role="status" aria-live="polite" className="run-status">
        {runState.loading ? "Running…" : runResult ? `Found ${runResult.result.hits.length} hits, ${runResult.newHits.length} new since the last run.` : null}
      </div>
      {runState.error ? <ErrorMessage error={runState.error} /> : null}
      {runResult ? <SavedSearchRunResult run={runResult} previousRunAt={previousRunAt} headingId={runHeadingId} /> : null}
    </li>
  );
}
