/**
 * Credits by day as stacked bars, one colour per provider (recharts). The chart is a picture for
 * sighted readers: it is one `role="img"` with a summary as its label, and the same numbers are
 * in UsageTable for screen readers and anyone who wants them exact. Recharts' own keyboard layer
 * is off, because focusable parts inside an image would be unreachable by assistive technology.
 */
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatCredits, providerLabel } from "./format";
import type { UsageSummary } from "./usageByDay";

/** Colours with at least 3:1 contrast against white and against each other's neighbours. */
const PROVIDER_COLOUR: Record<string, string> = {
  SERPER: "#0b57d0",
  DATAFORSEO: "#b3261e",
  PERPLEXITY: "#1a7f37",
  SLACK: "#7b3fa0",
  LINKEDIN: "#005f73",
};
const FALLBACK_COLOURS = ["#8a4b08", "#005f73", "#57606a"];

function colour(provider: string, index: number): string {
  return PROVIDER_COLOUR[provider] ?? FALLBACK_COLOURS[index % FALLBACK_COLOURS.length]!;
}

export function chartSummary(summary: UsageSummary, from: string, to: string): string {
  const period = from === to ? `on ${from}` : `from ${from} to ${to}`;
  if (summary.totalCredits === 0 && summary.totalCalls === 0) return `Credits spent by day ${period}: none.`;
  const busiest = summary.days.reduce((best, day) => (day.total > best.total ? day : best));
  const parts = summary.providers.map((provider) => `${providerLabel(provider)} ${formatCredits(summary.byProvider.get(provider)!.credits)}`);
  return `Credits spent by day ${period}, stacked by provider: ${formatCredits(summary.totalCredits)} in total (${parts.join(", ")}); the most on ${busiest.day}, ${formatCredits(busiest.total)}. The table below has every day.`;
}

export function UsageChart({ summary, from, to }: { summary: UsageSummary; from: string; to: string }) {
  return (
    <div className="usage-chart" role="img" aria-label={chartSummary(summary, from, to)}>
      <ResponsiveContainer width="100%" height={320}>
        <BarChart data={summary.days} accessibilityLayer={false} margin={{ top: 8, right: 16, bottom: 8, left: 8 }}>
          <CartesianGrid stroke="#d0d7de" vertical={false} />
          <XAxis dataKey="day" tick={{ fill: "#57606a", fontSize: 12 }} tickFormatter={(day: string) => day.slice(5)} />
          <YAxis tick={{ fill: "#57606a", fontSize: 12 }} allowDecimals width={56} />
          <Tooltip formatter={(value, name) => [formatCredits(Number(value)), providerLabel(String(name))]} />
          <Legend formatter={(name) => providerLabel(String(name))} />
          {summary.providers.map((provider, index) => (
            <Bar key={provider} dataKey={provider} name={provider} stackId="credits" fill={colour(provider, index)} isAnimationActive={false} />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
