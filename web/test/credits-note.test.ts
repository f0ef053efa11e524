/**
 * The search page's credits note (search/CreditsNote.tsx) in words: shown only when a paid
 * provider the unified search asks is configured and callable, naming them, the most a new query
 * may cost, what is left of the budget and how long a repeat is free; and what it says once the
 * budget is spent.
 */
import { describe, expect, it } from "vitest";
import { creditsNoteText, type CreditsNoteData } from "../src/search/CreditsNote";

const provider = (name: string, change: Partial<NonNullable<CreditsNoteData["externalProviders"]>[number]> = {}) => ({
  provider: name,
  configured: true,
  breakerOpen: false,
  creditsPerCall: 1,
  cacheTtlSeconds: 3600,
  ...change,
});

describe("creditsNoteText", () => {
  it("says nothing when no paid search provider is configured, or the gateway gave no answer", () => {
    expect(creditsNoteText(undefined)).toBeNull();
    expect(creditsNoteText({ externalProviders: null, credits: null })).toBeNull();
    expect(creditsNoteText({ externalProviders: [provider("SERPER", { configured: false }), provider("SLACK", { configured: false })], credits: { balance: 10 } })).toBeNull();
    // Perplexity answers `research`, never the search box; a provider whose breaker is open is skipped.
    expect(creditsNoteText({ externalProviders: [provider("PERPLEXITY"), provider("DATAFORSEO", { breakerOpen: true })], credits: { balance: 10 } })).toBeNull();
  });

  it("names the providers, the most a new query costs, the balance and the free repeat", () => {
    const text = creditsNoteText({ externalProviders: [provider("SERPER", { creditsPerCall: 1 }), provider("SLACK", { creditsPerCall: 0.5, cacheTtlSeconds: 600 }), provider("PERPLEXITY", { creditsPerCall: 5 })], credits: { balance: 42.5 } });
    expect(text).toBe("Searches here also ask Serper and Slack: each new query spends up to 1.5 credits of your organization's budget (42.5 left this month). Searching the same words again within 10 min is free.");
  });

  it("leaves the balance out when the budget is not capped, and says when it is spent", () => {
    expect(creditsNoteText({ externalProviders: [provider("SERPER")], credits: { balance: null } })).toBe(
      "Searches here also ask Serper: each new query spends up to 1 credit of your organization's budget. Searching the same words again within 1 h is free.",
    );
    expect(creditsNoteText({ externalProviders: [provider("SERPER"), provider("DATAFORSEO"), provider("LINKEDIN")], credits: { balance: 0 } })).toBe(
      "Searches here would also ask Serper, DataForSEO and LinkedIn, but this month's credits are spent: those results are skipped until next month.",
    );
  });
});
