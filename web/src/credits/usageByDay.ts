/**
 * The usage rows (one per day and provider that spent) turned into what the chart, the table and
 * the summary read: one entry per day of the period, zeros included, with a column per provider.
 */
import type { CreditUsage } from "./operations";

export interface DayUsage {
  day: string;
  total: number;
  /** Credits by provider name. */
  [provider: string]: number | string;
}

export interface UsageSummary {
  days: DayUsage[];
  /** Providers that spent in the period, in a stable order (largest spender first). */
  providers: string[];
  byProvider: Map<string, { calls: number; credits: number }>;
  totalCredits: number;
  totalCalls: number;
}

/** Sums in thousandths, as the ledger keeps them, so 0.1 + 0.2 shows 0.3. */
const round3 = (value: number) => Math.round(value * 1000) / 1000;

export function summarizeUsage(usage: readonly CreditUsage[], periodDays: readonly string[]): UsageSummary {
  const byProvider = new Map<string, { calls: number; credits: number }>();
  const byDay = new Map<string, DayUsage>(periodDays.map((day) => [day, { day, total: 0 }]));
  for (const row of usage) {
    const provider = byProvider.get(row.provider) ?? { calls: 0, credits: 0 };
    provider.calls += row.calls;
    provider.credits = round3(provider.credits + row.credits);
    byProvider.set(row.provider, provider);
    let day = byDay.get(row.day);
    if (!day) {
      day = { day: row.day, total: 0 };
      byDay.set(row.day, day);
    }
    day[row.provider] = round3(Number(day[row.provider] ?? 0) + row.credits);
    day.total = round3(day.total + row.credits);
  }
  const providers = [...byProvider.entries()].sort((a, b) => b[1].credits - a[1].credits || a[0].localeCompare(b[0])).map(([name]) => name);
  // Every provider has a value on every day, so the stacked bars and their tooltips read 0, not nothing.
  const days = [...byDay.values()].sort((a, b) => a.day.localeCompare(b.day));
  for (const day of days) for (const provider of providers) day[provider] ??= 0;
  const totals = [...byProvider.values()];
  return {
    days,
    providers,
    byProvider,
    totalCredits: round3(totals.reduce((sum, provider) => sum + provider.credits, 0)),
    totalCalls: totals.reduce((sum, provider) => sum + provider.calls, 0),
  };
}
