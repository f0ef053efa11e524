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

export interface DayPoint {
  day: string;
  /** Short label for the axis ("3 Nov"). */
  label: string;
  queries: number;
  zeroResultQueries: number;
}

export function QueriesPerDayChart({ points }: { points: DayPoint[] }) {
  return (
    <ResponsiveContainer width="100%" height={CHART_HEIGHT} initialDimension={{ width: 800, height: CHART_HEIGHT }}>
      <AreaChart data={points} accessibilityLayer={false} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
        <CartesianGrid stroke="#d0d7de" strokeDasharray="3 3" />
        <XAxis dataKey="label" tick={AXIS} stroke="#57606a" minTickGap={24} />
        <YAxis allowDecimals={false} tick={AXIS} stroke="#57606a" width={40} />
        <Tooltip />
        <Legend />
        <Area type="linear" dataKey="queries" name="Queries" stroke={SERIES_COLOURS.queries} fill={SERIES_COLOURS.queries} fillOpacity={0.15} strokeWidth={2} isAnimationActive={false} />
        <Area type="linear" dataKey="zeroResultQueries" name="Found nothing" stroke={SERIES_COLOURS.zero} fill={SERIES_COLOURS.zero} fillOpacity={0.1} strokeWidth={2} isAnimationActive={false} />
      </AreaChart>
    </ResponsiveContainer>
  );
}

export interface SearchDayPoint {
  day: string;
  /** Short label for the axis ("3 Nov"). */
  label: string;
  searches: number;
  searchesWithClicks: number;
  noResultSearches: number;
}

export function SearchesPerDayChart({ points }: { points: SearchDayPoint[] }) {
  return (
    <ResponsiveContainer width="100%" height={CHART_HEIGHT} initialDimension={{ width: 800, height: CHART_HEIGHT }}>
      <AreaChart data={points} accessibilityLayer={false} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
        <CartesianGrid stroke="#d0d7de" strokeDasharray="3 3" />
        <XAxis dataKey="label" tick={AXIS} stroke="#57606a" minTickGap={24} />
        <YAxis allowDecimals={false} tick={AXIS} stroke="#57606a" width={40} />
        <Tooltip />
        <Legend />
        <Area type="linear" dataKey="searches" name="Searches" stroke={SERIES_COLOURS.queries} fill={SERIES_COLOURS.queries} fillOpacity={0.15} strokeWidth={2} isAnimationActive={false} />
        <Area type="linear" dataKey="searchesWithClicks" name="A hit opened" stroke={SERIES_COLOURS.clicked} fill={SERIES_COLOURS.clicked} fillOpacity={0.1} strokeWidth={2} isAnimationActive={false} />
        <Area type="linear" dataKey="noResultSearches" name="Found nothing" stroke={SERIES_COLOURS.zero} fill={SERIES_COLOURS.zero} fillOpacity={0.1} strokeWidth={2} isAnimationActive={false} />
      </AreaChart>
    </ResponsiveContainer>
  );
}

/** p50 and p95 per provider (the search log keeps no p99: too few searches per provider for it to mean much). */
export function PercentileChart({ rows }: { rows: { label: string; p50: number; p95: number }[] }) {
  return (
    <ResponsiveContainer width="100%" height={CHART_HEIGHT} initialDimension={{ width: 600, height: CHART_HEIGHT }}>
      <BarChart data={rows} accessibilityLayer={false} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
        <CartesianGrid stroke="#d0d7de" strokeDasharray="3 3" vertical={false} />
        <XAxis dataKey="label" tick={AXIS} stroke="#57606a" interval={0} />
        <YAxis tick={AXIS} stroke="#57606a" width={64} tickFormatter={(value: number) => value.toLocaleString("en")} label={{ value: "milliseconds", angle: -90, position: "insideLeft", fill: "#57606a", fontSize: 12, style: { textAnchor: "middle" } }} />
        <Tooltip formatter={(value) => `${formatMs(Number(value))}`} />
        <Legend />
        <Bar dataKey="p50" name="p50" fill={SERIES_COLOURS.p50} maxBarSize={MAX_BAR} isAnimationActive={false} />
        <Bar dataKey="p95" name="p95" fill={SERIES_COLOURS.p95} maxBarSize={MAX_BAR} isAnimationActive={false} />
      </BarChart>
    </ResponsiveContainer>
  );
}

export interface LatencyRow {
  label: string;
  p50: number;
  p95: number;
  p99: number;
}

export function LatencyChart({ rows }: { rows: LatencyRow[] }) {
  return (
    <ResponsiveContainer width="100%" height={CHART_HEIGHT} initialDimension={{ width: 600, height: CHART_HEIGHT }}>
      <BarChart data={rows} accessibilityLayer={false} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
        <CartesianGrid stroke="#d0d7de" strokeDasharray="3 3" vertical={false} />
        <XAxis dataKey="label" tick={AXIS} stroke="#57606a" interval={0} />
        {/* Plain numbers on the axis ("6,000 ms" would wrap), the unit once beside it. */}
        <YAxis tick={AXIS} stroke="#57606a" width={64} tickFormatter={(value: number) => value.toLocaleString("en")} label={{ value: "milliseconds", angle: -90, position: "insideLeft", fill: "#57606a", fontSize: 12, style: { textAnchor: "middle" } }} />
        <Tooltip formatter={(value) => `${formatMs(Number(value))}`} />
        <Legend />
        <Bar dataKey="p50" name="p50" fill={SERIES_COLOURS.p50} maxBarSize={MAX_BAR} isAnimationActive={false} />
        <Bar dataKey="p95" name="p95" fill={SERIES_COLOURS.p95} maxBarSize={MAX_BAR} isAnimationActive={false} />
        <Bar dataKey="p99" name="p99" fill={SERIES_COLOURS.p99} maxBarSize={MAX_BAR} isAnimationActive={false} />
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
