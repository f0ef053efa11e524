/** Credits as the ledger keeps them: up to 3 decimals. */
const CREDITS = new Intl.NumberFormat(undefined, { maximumFractionDigits: 3 });

export function formatCredits(value: number): string {
  return CREDITS.format(value);
}

/** Providers as people name them. */
export const PROVIDER_LABEL: Record<string, string> = {
  SERPER: "Serper",
  DATAFORSEO: "DataForSEO",
  PERPLEXITY: "Perplexity",
  SLACK: "Slack",
  LINKEDIN: "LinkedIn",
};

export function providerLabel(provider: string): string {
  return PROVIDER_LABEL[provider] ?? provider;
}
