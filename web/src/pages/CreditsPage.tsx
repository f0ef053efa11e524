/**
 * Credits (/credits): the organization's monthly budget, what it spent this month and the
 * balance; then, for admins, the usage by day and provider in a period (default: this month,
 * two date fields to change it) as a stacked bar chart and as a table with the same numbers.
 * Members may read the budget but not the usage: the page shows what they may see and says why
 * the rest is missing. A period with nothing spent says "No data yet" instead of drawing an empty
 * chart; with the gateway out of reach the page says so (ErrorMessage) where the figures would be.
 * Loaded on first visit (App.tsx), so recharts stays out of the search
 * page's chunk. Sends: Credits (credits/operations.ts).
 */
import { useId, useMemo, useState } from "react";
import { useQuery } from "@apollo/client/react";
import { CombinedGraphQLErrors } from "@apollo/client/errors";
import { ErrorMessage } from "../components/ErrorMessage";
import { checkPeriod, MAX_PERIOD_DAYS, thisMonth } from "../credits/dateRange";
import { formatCredits } from "../credits/format";
import { CREDITS } from "../credits/operations";
import { summarizeUsage } from "../credits/usageByDay";
import { UsageChart } from "../credits/UsageChart";
import { UsageTable } from "../credits/UsageTable";
import "./CreditsPage.css";

/** Whether every error is the usage's FORBIDDEN (a member's token): the rest of the answer stands. */
function onlyUsageForbidden(error: unknown): { message: string } | null {
  if (!CombinedGraphQLErrors.is(error)) return null;
  const forbidden = error.errors.every((entry) => entry.extensions?.code === "FORBIDDEN" && entry.path?.[0] === "period");
  return forbidden && error.errors[0] ? { message: error.errors[0].message } : null;
}

export default function CreditsPage() {
  const [draft, setDraft] = useState(thisMonth);
  const [shown, setShown] = useState(thisMonth);
  const fromId = useId();
  const toId = useId();
  const problemId = useId();
  const draftCheck = checkPeriod(draft.from, draft.to);
  const period = checkPeriod(shown.from, shown.to);
  const { data, loading, error, refetch } = useQuery(CREDITS, {
    variables: period.ok ? { from: period.from, to: period.to } : { from: "", to: "" },
    skip: !period.ok,
    errorPolicy: "all",
  });
  const usageForbidden = error ? onlyUsageForbidden(error) : null;
  const usage = data?.period?.usage;
  const summary = useMemo(() => (usage && period.ok ? summarizeUsage(usage, period.days) : null), [usage, period.ok && period.days.join()]);
  const month = data?.month;

  return (
    <section className="credits-page" aria-labelledby="page-title">
      <h1 id="page-title">Credits</h1>
      <p className="hint">Web search, research and Slack calls spend credits from your organization's monthly budget (UTC calendar month). An answer from the cache is free.</p>

      {error && !usageForbidden ? <ErrorMessage error={error} onRetry={() => void refetch().catch(() => undefined)} /> : null}

      <section aria-labelledby="month-title">
        <h2 id="month-title">This month</h2>
        {loading && !data ? <p role="status">Loading credits…</p> : null}
        {!month && error && !usageForbidden && !loading ? <p className="hint">The figures appear once the service answers.</p> : null}
        {month ? (
          <dl className="credit-figures">
            <div className="card">
              <dt>Monthly budget</dt>
              <dd>{month.monthlyBudget === null ? "No budget" : formatCredits(month.monthlyBudget)}</dd>
              {month.monthlyBudget === null ? <dd className="hint">Spending is not capped.</dd> : null}
            </div>
            <div className="card">
              <dt>Spent this month</dt>
              <dd>{formatCredits(month.spentThisMonth)}</dd>
            </div>
            <div className="card">
              <dt>Balance</dt>
              <dd>{month.balance === null ? "Not capped" : formatCredits(month.balance)}</dd>
              {month.balance !== null && month.balance <= 0 ? <dd className="over-budget">Budget spent: paid calls are skipped until next month.</dd> : null}
            </div>
          </dl>
        ) : null}
      </section>

      <section aria-labelledby="usage-title">
        <h2 id="usage-title">Usage by provider and day</h2>
        <form
          className="period-form"
          aria-label="Period"
          onSubmit={(event) => {
            event.preventDefault();
            if (draftCheck.ok) setShown(draft);
          }}
        >
          <div className="field">
            <label htmlFor={fromId}>From (UTC)</label>
            <input id={fromId} type="date" value={draft.from} required aria-describedby={draftCheck.ok ? undefined : problemId} onChange={(event) => setDraft({ ...draft, from: event.target.value })} />
          </div>
          <div className="field">
            <label htmlFor={toId}>To (UTC, included)</label>
            <input id={toId} type="date" value={draft.to} required aria-describedby={draftCheck.ok ? undefined : problemId} onChange={(event) => setDraft({ ...draft, to: event.target.value })} />
          </div>
          <button type="submit" className="primary" disabled={!draftCheck.ok}>
            Show
          </button>
          <button
            type="button"
            onClick={() => {
              setDraft(thisMonth());
              setShown(thisMonth());
            }}
          >
            This month
          </button>
          {!draftCheck.ok ? (
            <p id={problemId} className="period-problem" role="alert">
              {draftCheck.problem}
            </p>
          ) : (
            <p className="hint">At most {MAX_PERIOD_DAYS} days.</p>
          )}
        </form>

        <p role="status" className="usage-status">
          {loading ? "Loading usage…" : summary ? `Showing ${shown.from} to ${shown.to}: ${formatCredits(summary.totalCredits)} credits in ${summary.totalCalls} calls.` : ""}
        </p>

        {usageForbidden ? (
          <div className="card forbidden-note">
            <strong>Usage by day and provider is for administrators.</strong>
            <p>
              {usageForbidden.message} <code className="error-code">FORBIDDEN</code>
            </p>
            <p className="hint">The budget, spending and balance above are yours to see.</p>
          </div>
        ) : null}

        {summary && period.ok && usage && summary.totalCalls === 0 && summary.totalCredits === 0 ? (
          <div className="card empty-usage" data-testid="credits-no-data">
            <strong>No data yet</strong>
            <p>
              Nothing was spent from {shown.from} to {shown.to}. Credits are spent by web search, research and Slack calls that are not answered from the cache; they appear here by day and provider.
            </p>
          </div>
        ) : summary && period.ok && usage ? (
          <>
            <UsageChart summary={summary} from={shown.from} to={shown.to} />
            <UsageTable usage={usage} summary={summary} caption={`Credits spent by day and provider, ${shown.from} to ${shown.to} (UTC)`} />
          </>
        ) : null}
      </section>
    </section>
  );
}
