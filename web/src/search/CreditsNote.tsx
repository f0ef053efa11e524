/**
 * A note on the search page, shown only when a search here will spend credits: when at least one
 * of the paid providers the unified search asks (web results through Serper or DataForSEO, Slack,
 * LinkedIn) is configured for the caller's organization (`externalProviders.configured`, a
 * platform key or the organization's own) and its breaker is not open. It says which, what a new
 * query may cost at most, what is left of the month's budget, and that a repeated query is free
 * while its answer is cached. Offline or with nothing configured it shows nothing: it is a hint,
 * and the page's own errors speak for the gateway. Sends `SearchCreditsNote` once per visit.
 */
import { gql } from "@apollo/client";
import type { TypedDocumentNode } from "@apollo/client";
import { useQuery } from "@apollo/client/react";
import { Link } from "react-router";
import { formatCredits, providerLabel } from "../credits/format";
import "./CreditsNote.css";

/** The paid providers the unified search asks (external-search/search.ts); Perplexity answers `research` only. */
const SEARCH_PROVIDERS = new Set(["SERPER", "DATAFORSEO", "SLACK", "LINKEDIN"]);

export interface CreditsNoteData {
  externalProviders: { provider: string; configured: boolean; breakerOpen: boolean; creditsPerCall: number; cacheTtlSeconds: number }[] | null;
  credits: { balance: number | null } | null;
}

export const SEARCH_CREDITS_NOTE: TypedDocumentNode<CreditsNoteData, Record<string, never>> = gql`
  query SearchCreditsNote {
    externalProviders {
      provider
      configured
      breakerOpen
      creditsPerCall
      cacheTtlSeconds
    }
    credits {
      balance
    }
  }
`;

/** What the note says, or null when a search here spends nothing. */
export function creditsNoteText(data: CreditsNoteData | undefined): string | null {
  const paid = (data?.externalProviders ?? []).filter((provider) => SEARCH_PROVIDERS.has(provider.provider) && provider.configured && !provider.breakerOpen && provider.creditsPerCall > 0);
  if (paid.length === 0) return null;
  const names = paid.map((provider) => providerLabel(provider.provider));
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
  const most = paid.reduce((sum, provider) => sum + provider.creditsPerCall, 0);
  const balance = data?.credits?.balance ?? null;
  if (balance !== null && balance <= 0) return `Searches here would also ask ${list}, but this month's credits are spent: those results are skipped until next month.`;
  const cached = Math.min(...paid.map((provider) => provider.cacheTtlSeconds));
  const free = cached >= 60 ? ` Searching the same words again within ${cached >= 3600 ? `${Math.round(cached / 3600)} h` : `${Math.round(cached / 60)} min`} is free.` : "";
  const left = balance === null ? "" : ` (${formatCredits(balance)} left this month)`;
  return `Searches here also ask ${list}: each new query spends up to ${formatCredits(most)} ${most === 1 ? "credit" : "credits"} of your organization's budget${left}.${free}`;
}

export function CreditsNote() {
  const { data } = useQuery(SEARCH_CREDITS_NOTE, { errorPolicy: "all" });
  const text = creditsNoteText(data);
  if (!text) return null;
  return (
    <p className="credits-note hint" data-testid="credits-note">
      {text} <Link to="/credits">See credits</Link>
    </p>
  );
}
