/**
 * What a developer wants to see and a reader does not: behind a "Search details" disclosure, how
 * each source (provider) did — its id, status, how many results and how long — the alpha the
 * search ran with and a slider for any mix, and what the facet counts are over. Outside it, in
 * plain words, only what changes what a person sees: a source that failed or timed out
 * ("Web results are unavailable right now"), which always stays in view.
 */
import type { ReactNode } from "react";
import type { ProviderReport, ProviderStatus } from "./operations";
import { sourceLabel, sourceNoun } from "./source-labels";

const STATUS_LABELS: Record<ProviderStatus, string> = {
  OK: "Answered",
  TIMEOUT: "Timed out",
  ERROR: "Failed",
  SKIPPED: "Not asked",
};

/** Sources that did not answer this search, said in words; nothing when every asked source answered. */
export function SourceNotices({ providers }: { providers: ProviderReport[] }) {
  const failed = providers.filter((provider) => provider.status === "TIMEOUT" || provider.status === "ERROR");
  if (!failed.length) return null;
  // Two providers of one source (words and meaning) make one sentence.
  const nouns = [...new Set(failed.map((provider) => sourceNoun(provider.name)))];
  return (
    <ul className="source-notices" aria-label="Sources that did not answer">
      {nouns.map((noun) => (
        <li key={noun}>{noun} are unavailable right now; the other results are shown. Try again in a moment.</li>
      ))}
    </ul>
  );
}

export interface SearchDetailsProps {
  providers: ProviderReport[];
  /** The alpha the search ran with, and whether it was the deployment's default. */
  alpha: { value: number | null; isDefault: boolean };
  /** How many candidates the facet counts are over. */
  facetWindow: number | null;
  /** The slider for a custom mix. */
  children?: ReactNode;
}

export function SearchDetails({ providers, alpha, facetWindow, children }: SearchDetailsProps) {
  const asked = providers.filter((provider) => provider.status !== "SKIPPED");
  const skipped = providers.filter((provider) => provider.status === "SKIPPED");
  return (
    <details className="search-details">
      <summary>Search details</summary>
      <dl className="search-details-facts">
        <dt>Keyword weight (alpha)</dt>
        <dd>{alpha.value === null ? "–" : `${alpha.value.toFixed(2)}${alpha.isDefault ? " (the deployment's default)" : ""}`}</dd>
        {facetWindow !== null ? (
          <>
            <dt>Filter counts</dt>
            <dd>over the best {facetWindow} candidates the sources returned, not over everything you can see</dd>
          </>
        ) : null}
      </dl>
      {children}
      {providers.length ? (
        <table className="provider-table">
          <caption>Sources asked for this search</caption>
          <thead>
            <tr>
              <th scope="col">Source</th>
              <th scope="col">Provider</th>
              <th scope="col">Status</th>
              <th scope="col">Results</th>
              <th scope="col">Time</th>
            </tr>
          </thead>
          <tbody>
            {[...asked, ...skipped].map((provider) => (
              <tr key={provider.name} className={`status-${provider.status.toLowerCase()}`}>
                <td>{sourceLabel(provider.name)}</td>
                <td>
                  <code>{provider.name}</code>
                </td>
                <td>
                  {STATUS_LABELS[provider.status] ?? provider.status}
                  {provider.error ? <span className="provider-detail"> — {provider.error}</span> : null}
                </td>
                <td>{provider.status === "OK" ? provider.returned : "–"}</td>
                <td>{provider.status === "SKIPPED" ? "–" : `${Math.round(provider.tookMs)} ms`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </details>
  );
}
