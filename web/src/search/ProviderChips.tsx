/**
 * How each provider did for the search shown: its name, its status in words (OK, timed out,
 * failed, skipped; colour only repeats it) and, when it did not answer, the reason it reported.
 */
import type { ProviderReport, ProviderStatus } from "./operations";

const STATUS_LABELS: Record<ProviderStatus, string> = {
  OK: "OK",
  TIMEOUT: "Timed out",
  ERROR: "Failed",
  SKIPPED: "Skipped",
};

export function ProviderChips({ providers }: { providers: ProviderReport[] }) {
  if (!providers.length) return null;
  return (
    <ul className="provider-chips" aria-label="Search providers">
      {providers.map((provider) => (
        <li key={provider.name} className={`provider-chip status-${provider.status.toLowerCase()}`} title={provider.error ?? undefined}>
          <span className="provider-name">{provider.name}</span>: <strong>{STATUS_LABELS[provider.status] ?? provider.status}</strong>
          {provider.status === "OK" ? (
            <span className="provider-detail">
              {" "}
              ({provider.returned} in {Math.round(provider.tookMs)} ms)
            </span>
          ) : null}
          {provider.error ? <span className="provider-detail"> — {provider.error}</span> : null}
        </li>
      ))}
    </ul>
  );
}
