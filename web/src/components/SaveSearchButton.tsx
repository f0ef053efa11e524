/**
 * "Save this search" on the search page: a button that opens a small form (the name, prefilled
 * from the query), saves with `saveSearch` the search as the page runs it (its alpha, providers,
 * filters and typo tolerance), then confirms with a link to /saved. The server's
 * refusals (a duplicate name, the 100-per-user limit, a bad query) are shown with their code.
 * Sends: SaveSearch, and SearchDefaultAlpha when the page's search has no alpha of its own.
 */
import { useEffect, useId, useMemo, useRef, useState } from "react";
import { Link } from "react-router";
import { ErrorMessage } from "./ErrorMessage";
import { MAX_NAME_LENGTH, nameFromQuery, useDefaultAlpha, useSaveSearch } from "../saved/useSaveSearch";
import { savedSettingsInWords } from "../saved/format";
import { saveInputOf, type UrlSearch } from "../search/search-url";
import "./SaveSearchButton.css";

export interface SaveSearchButtonProps {
  /** The page's search: what is saved. */
  search: UrlSearch;
}

export function SaveSearchButton({ search }: SaveSearchButtonProps) {
  const { query, alpha } = search;
  const toSave = useMemo(() => saveInputOf(search), [search]);
  // What the form says it saves besides the query and alpha (filters, providers, exact words).
  const settings = useMemo(() => savedSettingsInWords({ providers: toSave.providers ?? null, typoTolerance: toSave.typoTolerance ?? true, filter: toSave.filter ?? null }), [toSave]);
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const [savedName, setSavedName] = useState<string | null>(null);
  const nameId = useId();
  const nameField = useRef<HTMLInputElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  const [save, { loading, error, reset }] = useSaveSearch();
  const hasAlpha = typeof alpha === "number";
  // Saving waits for the default alpha, so a search without one is not saved with the server's 0.5.
  const { defaultAlpha, loading: defaultAlphaLoading } = useDefaultAlpha(!open || hasAlpha);
  const savable = query.trim().length > 0;

  // A new search on the page (query, alpha or a filter) is a new thing to save: forget the last confirmation.
  useEffect(() => {
    setSavedName(null);
  }, [toSave]);

  // Focus follows the form: into the name when it opens, back to the button when it closes
  // (after the render that brings the button back), so keyboard users keep their place.
  const wasOpen = useRef(false);
  useEffect(() => {
    if (open) nameField.current?.focus();
    else if (wasOpen.current) opener.current?.focus();
    wasOpen.current = open;
  }, [open]);

  function close() {
    setOpen(false);
    reset();
  }

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    if (loading) return;
    const effectiveAlpha = hasAlpha ? alpha : defaultAlpha;
    const { data } = await save({
      variables: { input: { ...toSave, name: name.trim(), ...(effectiveAlpha !== null && effectiveAlpha !== undefined ? { alpha: effectiveAlpha } : {}) } },
    }).catch(() => ({ data: undefined }));
    if (data?.saveSearch) {
      setSavedName(data.saveSearch.name);
      close();
    }
  }

  return (
    <div className="save-search">
      {!open ? (
        <button
          ref={opener}
          type="button"
          disabled={!savable}
          onClick={() => {
            setName(nameFromQuery(query));
            setSavedName(null);
            setOpen(true);
          }}
        >
          Save this search
        </button>
      ) : (
        <form
          className="save-search-form"
          aria-label="Save this search"
          onSubmit={submit}
          onKeyDown={(event) => {
            if (event.key === "Escape") close();
          }}
        >
          <label htmlFor={nameId}>Name</label>
          <input
            id={nameId}
            ref={nameField}
            value={name}
            maxLength={MAX_NAME_LENGTH}
            required
            onChange={(event) => setName(event.target.value)}
          />
          {settings.length > 0 ? (
            <p className="save-search-settings">
              Saved with {settings.map((setting) => `${setting.label.toLowerCase()}: ${setting.value}`).join("; ")}.
            </p>
          ) : null}
          <div className="save-search-actions">
            <button type="submit" className="primary" disabled={defaultAlphaLoading || name.trim() === ""} aria-disabled={loading}>
              {loading ? "Saving…" : "Save"}
            </button>
            <button type="button" onClick={close}>
              Cancel
            </button>
          </div>
          {error ? <ErrorMessage error={error} /> : null}
        </form>
      )}
      <p role="status" className="save-search-status">
        {savedName !== null ? (
          <>
            Saved as “{savedName}”. <Link to="/saved">See your saved searches</Link>
          </>
        ) : null}
      </p>
    </div>
  );
}
