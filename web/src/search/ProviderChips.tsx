/**
 * How each provider did for the search shown: its name, its status in words (OK, timed out,
 * failed, skipped; colour only repeats it) and, when it did not answer, the reason it reported.
 * Providers that were asked come first, as chips; those that were skipped (not configured, no
 * weight at this alpha, excluded by a filter) are folded into one line that opens on their
 * reasons: a deployment with every web source unconfigured otherwise pushed the results below
 * the fold with a paragraph per source. A timeout or a failure always stays in view.
 */
import type { ProviderReport, ProviderStatus } from "./operations";

const STATUS_LABELS: Record<ProviderStatus, string> = {
  OK: "OK",
  TIMEOUT: "Timed out",
  ERROR: "Failed",
  SKIPPED: "Skipped",
};

function ProviderChip({ provider }: { provider: ProviderReport }) {
  return (
    <li className={`provider-chip status-${provider.status.toLowerCase()}`} title={provider.error ?? undefined}>
      <span className="provider-name">{provider.name}</span>: <strong>{STATUS_LABELS[provider.status] ?? provider.status}</strong>
      {provider.status === "OK" ? (
        <span className="provider-detail">
          {" "}
          ({provider.returned} in {Math.round(provider.tookMs)} ms)
        </span>
      ) : null}
      {provider.error ? <span className="provider-detail"> — {provider.error}</span> : null}
    </li>
  );
}

export function ProviderChips({ providers }: { providers: ProviderReport[] }) {
  if (!providers.length) return null;
  const asked = providers.filter((provider) => provider.status !== "SKIPPED");
  const skipped = providers.filter((provider) => provider.status === "SKIPPED");
  return (
    <div className="provider-report">
      {asked.length > 0 ? (
        <ul className="provider-chips" aria-label="Search providers">
          {asked.map((provider) => (
            <ProviderChip key={provider.name} provider={provider} />
          ))}
        </ul>
      ) : null}
      {skipped.length > 0 ? (
        <details className="provider-skipped">
          <summary>
            {skipped.length} {skipped.length === 1 ? "provider" : "providers"} skipped: {skipped.map((provider) => provider.name).join(", ")}
          </summary>
          <ul className="provider-chips" aria-label="Skipped providers">
            {skipped.map((provider) => (
              <ProviderChip key={provider.name} provider={provider} />
            ))}
          </ul>
        </details>
      ) : null}
    </div>
  );
}
