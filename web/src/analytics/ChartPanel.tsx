/**
 * One chart of the dashboard as everyone can read it: a heading, the chart as an image whose
 * label sums it up in words (the SVG itself says nothing to a screen reader), and the same
 * numbers as a table — visually hidden until "Show table" is pressed, always there for
 * assistive technology.
 */
import { useId, useState, type ReactNode } from "react";

export function ChartPanel({ title, summary, table, children, wide = false }: { title: string; summary: string; table: ReactNode; children: ReactNode; wide?: boolean }) {
  const [tableShown, setTableShown] = useState(false);
  const headingId = useId();
  const tableId = useId();
  return (
    <section className={`analytics-panel${wide ? " analytics-panel-wide" : ""}`} aria-labelledby={headingId}>
      <div className="analytics-panel-header">
        <h2 id={headingId}>{title}</h2>
        <button type="button" className="analytics-table-toggle" aria-expanded={tableShown} aria-controls={tableId} onClick={() => setTableShown(!tableShown)}>
          {tableShown ? "Hide table" : "Show table"}
        </button>
      </div>
      <div role="img" aria-label={summary} className="analytics-chart">
        {children}
      </div>
      <div id={tableId} className={tableShown ? "analytics-chart-table" : "visually-hidden"}>
        {table}
      </div>
    </section>
  );
}
