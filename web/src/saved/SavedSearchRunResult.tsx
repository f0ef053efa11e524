/**
 * What a run of a saved search found: first the hits its previous run did not return ("new
 * since last run", from `newHits`), then the whole first page with those marked New. On a first
 * run every hit is new, which the heading says rather than repeating the list. A saved search
 * with typo tolerance says which words it also searched for misspelled ones, as the search page does.
 */
import { AlsoSearched } from "../components/AlsoSearched";
import { formatDateTime } from "./format";
import { hitKey, SavedSearchHit } from "./SavedSearchHit";
import type { SavedSearchRunData } from "./operations";

type Run = NonNullable<SavedSearchRunData["runSavedSearch"]>;

export function SavedSearchRunResult({ run, previousRunAt, headingId }: { run: Run; previousRunAt: string | null; headingId: string }) {
  const newKeys = new Set(run.newHits.map(hitKey).filter((key): key is string => key !== null));
  const failed = run.result.providers.filter((provider) => provider.status !== "OK" && provider.status !== "SKIPPED");
  const firstRun = previousRunAt === null;
  return (
    <section className="run-result" aria-labelledby={headingId}>
      <h3 id={headingId}>
        Ran {formatDateTime(run.savedSearch.lastRunAt ?? new Date().toISOString())}: {run.result.hits.length} {run.result.hits.length === 1 ? "hit" : "hits"}
      </h3>
      {failed.length > 0 ? (
        <p className="hint">
          Some sources did not answer, so hits may be missing: {failed.map((provider) => `${provider.name} (${provider.status.toLowerCase()}${provider.error ? `: ${provider.error}` : ""})`).join(", ")}.
        </p>
      ) : null}
      {run.result.corrections.length > 0 ? (
        <p className="hint correction-detail">
          <AlsoSearched corrections={run.result.corrections} />
        </p>
      ) : null}
      <section className="new-hits" aria-labelledby={`${headingId}-new`}>
        <h4 id={`${headingId}-new`}>
          New since last run{previousRunAt ? ` (${formatDateTime(previousRunAt)})` : ""}: {run.newHits.length}
        </h4>
        {firstRun ? (
          <p className="hint">This is its first run, so every hit is new. The next run lists only what this one did not find.</p>
        ) : run.newHits.length === 0 ? (
          <p className="hint">Nothing new since the last run.</p>
        ) : (
          <ol className="run-hits">
            {run.newHits.map((hit, index) => (
              <SavedSearchHit key={hitKey(hit) ?? `gone-${index}`} hit={hit} isNew />
            ))}
          </ol>
        )}
      </section>
      <h4>All hits</h4>
      {run.result.hits.length === 0 ? (
        <p className="hint">No hits. Try the search with other words on the search page.</p>
      ) : (
        <ol className="run-hits">
          {run.result.hits.map((hit, index) => {
            const key = hitKey(hit);
            return <SavedSearchHit key={key ?? `gone-${index}`} hit={hit} isNew={key !== null && newKeys.has(key)} />;
          })}
        </ol>
      )}
    </section>
  );
}
