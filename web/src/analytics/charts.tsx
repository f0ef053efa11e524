/**
 * The dashboard's charts (recharts, on this page's chunk only): queries and searches per day,
 * latency percentiles, and failure rates. Animations are off: the numbers are what matter, and a chart
 * drawn at once is what a screenshot and a person with reduced motion should see.
 */
import { Area, AreaChart, Bar, BarChart, CartesianGrid, LabelList, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";

/** Colours with at least 3:1 contrast against the white panel (WCAG non-text contrast). */
export const SERIES_COLOURS = { queries: "#0b57d0", zero: "#9a6700", clicked: "#1a7f37", p50: "#0b57d0", p95: "#8250df", p99: "#b42318", failure: "#b42318" } as const;

const AXIS = { stroke: "#57606a", fontSize: 12 };
const CHART_HEIGHT = 260;
/** Bars stay bars, not slabs, when there is one provider. */
const MAX_BAR = 56;

/** One line of a chart: the field it draws, its name in the legend and its colour. */
export interface Series<Point> {
  key: keyof Point & string;
  name: string;
  colour: string;
}

/** A day of the range, with its short label for the axis ("3 Nov") and the counts drawn. */
export interface DayPoint {
  day: string;
  label: string;
}

/**
 * Counts per day, one area per series (the first filled a little more: it is the total the
 * others are parts of). The query log's queries and the search box's searches both use it.
 */
export function PerDayChart<Point extends DayPoint>({ points, series }: { points: Point[]; series: Series<Point>[] }) {
  return (
    <ResponsiveContainer width="100%" height={CHART_HEIGHT} initialDimension={{ width: 800, height: CHART_HEIGHT }}>
      <AreaChart data={points} accessibilityLayer={false} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
        <CartesianGrid stroke="#d0d7de" strokeDasharray="3 3" />
        <XAxis dataKey="label" tick={AXIS} stroke="#57606a" minTickGap={24} />
        <YAxis allowDecimals={false} tick={AXIS} stroke="#57606a" width={40} />
        <Tooltip />
        <Legend />
        {series.map((line, index) => (
          <Area key={line.key} type="linear" dataKey={line.key as string} name={line.name} stroke={line.colour} fill={line.colour} fillOpacity={index === 0 ? 0.15 : 0.1} strokeWidth={2} isAnimationActive={false} />
        ))}
      </AreaChart>
    </ResponsiveContainer>
  );
}

/** Latency percentiles of a provider or knowledge base, in milliseconds. */
export interface LatencyRow {
  label: string;
  p50: number;
  p95: number;
  /** Where the log keeps enough to tell it (the query log's providers; not the search box's). */
  p99?: number;
}

const PERCENTILES = ["p50", "p95", "p99"] as const;

/** Bars of p50, p95 and (where the rows have it) p99 per row. */
export function LatencyChart({ rows }: { rows: LatencyRow[] }) {
  const percentiles = PERCENTILES.filter((percentile) => rows.some((row) => row[percentile] !== undefined));
  return (
    <ResponsiveContainer width="100%" height={CHART_HEIGHT} initialDimension={{ width: 600, height: CHART_HEIGHT }}>
      <BarChart data={rows} accessibilityLayer={false} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
        <CartesianGrid stroke="#d0d7de" strokeDasharray="3 3" vertical={false} />
        <XAxis dataKey="label" tick={AXIS} stroke="#57606a" interval={0} />
        {/* Plain numbers on the axis ("6,000 ms" would wrap), the unit once beside it. */}
        <YAxis tick={AXIS} stroke="#57606a" width={64} tickFormatter={(value: number) => value.toLocaleString("en")} label={{ value: "milliseconds", angle: -90, position: "insideLeft", fill: "#57606a", fontSize: 12, style: { textAnchor: "middle" } }} />
        <Tooltip formatter={(value) => `${formatMs(Number(value))}`} />
        <Legend />
        {percentiles.map((percentile) => (
          <Bar key={percentile} dataKey={percentile} name={percentile} fill={SERIES_COLOURS[percentile]} maxBarSize={MAX_BAR} isAnimationActive={false} />
        ))}
      </BarChart>
    </ResponsiveContainer>
  );
}

export interface FailureRow {
  label: string;
  /** Percent of its queries that failed, 0 to 100. */
  failureRate: number;
}

export function FailureRateChart({ rows }: { rows: FailureRow[] }) {
  return (
    <ResponsiveContainer width="100%" height={CHART_HEIGHT} initialDimension={{ width: 600, height: CHART_HEIGHT }}>
      <BarChart data={rows} accessibilityLayer={false} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
        <CartesianGrid stroke="#d0d7de" strokeDasharray="3 3" vertical={false} />
        <XAxis dataKey="label" tick={AXIS} stroke="#57606a" interval={0} />
        {/* Always 0 to 100%: a small rate drawn on a stretched scale would look like an outage. */}
        <YAxis tick={AXIS} stroke="#57606a" width={48} domain={[0, 100]} ticks={[0, 25, 50, 75, 100]} tickFormatter={(value: number) => `${value}%`} />
        <Tooltip formatter={(value) => formatPercent(Number(value))} />
        <Bar dataKey="failureRate" name="Failed" fill={SERIES_COLOURS.failure} maxBarSize={MAX_BAR} isAnimationActive={false}>
          <LabelList dataKey="failureRate" position="top" fill="#1f2328" fontSize={12} formatter={(value) => formatPercent(Number(value))} />
        </Bar>
      </BarChart>
    </ResponsiveContainer>
  );
}

/** "12 ms", "1.4 ms", "1,250 ms". */
export function formatMs(value: number): string {
  return `${value.toLocaleString("en", { maximumFractionDigits: value < 10 ? 1 : 0 })} ms`;
}

/** "0%", "2.5%", "100%". */
export function formatPercent(value: number): string {
  return `${value.toLocaleString("en", { maximumFractionDigits: 1 })}%`;
}
