/**
 * The chart's numbers as a table: each day that spent, by provider, with calls and credits, and
 * the period's totals by provider. What screen readers read instead of the chart.
 */
import { formatCredits, providerLabel } from "./format";
import type { CreditUsage } from "./operations";
import type { UsageSummary } from "./usageByDay";

export function UsageTable({ usage, summary, caption }: { usage: readonly CreditUsage[]; summary: UsageSummary; caption: string }) {
  const rows = [...usage].sort((a, b) => a.day.localeCompare(b.day) || a.provider.localeCompare(b.provider));
  return (
    <table className="usage-table">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Day (UTC)</th>
          <th scope="col">Provider</th>
          <th scope="col" className="number">
            Calls
          </th>
          <th scope="col" className="number">
            Credits
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={4}>No credits were spent in this period.</td>
          </tr>
        ) : (
          rows.map((row) => (
            <tr key={`${row.day}:${row.provider}`}>
              <td>{row.day}</td>
              <td>{providerLabel(row.provider)}</td>
              <td className="number">{row.calls}</td>
              <td className="number">{formatCredits(row.credits)}</td>
            </tr>
          ))
        )}
      </tbody>
      {rows.length > 0 ? (
        <tfoot>
          {summary.providers.map((provider) => (
            <tr key={provider}>
              <th scope="row" colSpan={2}>
                Total, {providerLabel(provider)}
              </th>
              <td className="number">{summary.byProvider.get(provider)!.calls}</td>
              <td className="number">{formatCredits(summary.byProvider.get(provider)!.credits)}</td>
            </tr>
          ))}
          <tr>
            <th scope="row" colSpan={2}>
              Total
            </th>
            <td className="number">{summary.totalCalls}</td>
            <td className="number">{formatCredits(summary.totalCredits)}</td>
          </tr>
        </tfoot>
      ) : null}
    </table>
  );
}
