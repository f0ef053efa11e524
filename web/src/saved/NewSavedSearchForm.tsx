/**
 * Saving a search from the saved-searches page itself (the search page has its own "Save this
 * search"): a name, the query, the keyword/semantic balance, which starts at the deployment's
 * default alpha so the saved search ranks as a search without one does, and whether misspelled
 * words are also searched as their likely corrections. Filters and sources are set on the search
 * page, whose "Save this search" keeps them: the form says so rather than repeat its controls.
 */
import { useId, useRef, useState } from "react";
import { Link } from "react-router";
import { ErrorMessage } from "../components/ErrorMessage";
import { MAX_NAME_LENGTH, nameFromQuery, useDefaultAlpha, useSaveSearch } from "./useSaveSearch";

export function NewSavedSearchForm({ onSaved }: { onSaved(name: string): void }) {
  const [query, setQuery] = useState("");
  const [name, setName] = useState("");
  const [alpha, setAlpha] = useState<string | null>(null);
  const [typoTolerance, setTypoTolerance] = useState(true);
  const { defaultAlpha } = useDefaultAlpha(false);
  const [save, { loading, error, reset }] = useSaveSearch();
  const queryField = useRef<HTMLInputElement>(null);
  const queryId = useId();
  const nameId = useId();
  const alphaId = useId();
  const alphaHintId = useId();
  const typoId = useId();
  const shownAlpha = alpha ?? (defaultAlpha !== null ? String(defaultAlpha) : "");

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    if (loading) return;
    const parsedAlpha = shownAlpha === "" ? undefined : Number(shownAlpha);
    const { data } = await save({
      variables: { input: { name: (name.trim() || nameFromQuery(query)).trim(), query, typoTolerance, ...(parsedAlpha !== undefined ? { alpha: parsedAlpha } : {}) } },
    }).catch(() => ({ data: undefined }));
    if (data?.saveSearch) {
      onSaved(data.saveSearch.name);
      setQuery("");
      setName("");
      setAlpha(null);
      setTypoTolerance(true);
      // The emptied form disables its button: focus goes back to the start of the form, for the next one.
      queryField.current?.focus();
    }
  }

  return (
    <form className="new-saved-search card" aria-labelledby={`${nameId}-title`} onSubmit={submit}>
      <h2 id={`${nameId}-title`}>New saved search</h2>
      <p className="hint">
        To save one with filters or chosen sources, set them on the <Link to="/">search page</Link> and choose <strong>Save this search</strong> there.
      </p>
      <div className="field">
        <label htmlFor={queryId}>Query</label>
        <input
          id={queryId}
          ref={queryField}
          value={query}
          required
          maxLength={1000}
          onChange={(event) => {
            setQuery(event.target.value);
            reset();
          }}
        />
      </div>
      <div className="field">
        <label htmlFor={nameId}>Name</label>
        <input id={nameId} value={name} maxLength={MAX_NAME_LENGTH} placeholder={nameFromQuery(query) || "The query, if left empty"} onChange={(event) => setName(event.target.value)} />
      </div>
      <div className="field">
        <label htmlFor={alphaId}>Keyword/semantic balance (alpha)</label>
        <input id={alphaId} type="number" min={0} max={1} step={0.05} value={shownAlpha} aria-describedby={alphaHintId} onChange={(event) => setAlpha(event.target.value)} />
        <p id={alphaHintId} className="hint">
          1 is keyword only, 0 meaning only.{defaultAlpha !== null ? ` This deployment's default is ${defaultAlpha}.` : ""}
        </p>
      </div>
      <div className="field checkbox-field">
        <input id={typoId} type="checkbox" checked={typoTolerance} onChange={(event) => setTypoTolerance(event.target.checked)} />
        <label htmlFor={typoId}>Also search for likely corrections of misspelled words</label>
      </div>
      <div>
        <button type="submit" className="primary" disabled={query.trim() === ""} aria-disabled={loading}>
          {loading ? "Saving…" : "Save search"}
        </button>
      </div>
      {error ? <ErrorMessage error={error} /> : null}
    </form>
  );
}
