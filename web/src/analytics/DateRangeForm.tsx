/**
 * The dashboard's range: two labelled date inputs and a button. The range is applied on submit
 * (not on every change, so typing a date by hand sends no half-typed range), into the URL, so a
 * dashboard can be shared as a link.
 */
import { useId, useState } from "react";
import type { DayRange } from "./date-range";

export function DateRangeForm({ range, onApply, onReset }: { range: DayRange; onApply(range: DayRange): void; onReset(): void }) {
  const [from, setFrom] = useState(range.from);
  const [to, setTo] = useState(range.to);
  const fromId = useId();
  const toId = useId();
  return (
    <form
      className="analytics-range"
      aria-label="Date range"
      onSubmit={(event) => {
        event.preventDefault();
        onApply({ from, to });
      }}
    >
      <div className="analytics-field">
        <label htmlFor={fromId}>From (UTC)</label>
        <input id={fromId} name="from" type="date" value={from} max={to || undefined} required onChange={(event) => setFrom(event.target.value)} />
      </div>
      <div className="analytics-field">
        <label htmlFor={toId}>To (UTC, included)</label>
        <input id={toId} name="to" type="date" value={to} min={from || undefined} required onChange={(event) => setTo(event.target.value)} />
      </div>
      <button type="submit" className="primary">
        Show range
      </button>
      <button type="button" onClick={onReset}>
        Last 30 days
      </button>
    </form>
  );
}
