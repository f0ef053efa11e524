/**
 * The dashboard's date range: two UTC days, both included, as the URL carries them
 * (`?from=2026-11-03&to=2026-12-02`), and the [from, to) DateTimes `knowledgeAnalytics` asks for.
 * Days are UTC days because the server groups queries per UTC day.
 */

/** The server refuses ranges longer than this (KnowledgeAnalytics' MAX_ANALYTICS_RANGE_DAYS). */
export const MAX_RANGE_DAYS = 92;
/** The range shown when the URL names none. */
export const DEFAULT_RANGE_DAYS = 30;

const DAY_MS = 86_400_000;
const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

export interface DayRange {
  /** First day shown, `YYYY-MM-DD`. */
  from: string;
  /** Last day shown (included), `YYYY-MM-DD`. */
  to: string;
}

export function dayOf(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** Milliseconds at the start of a UTC day, or NaN when `day` is not a real `YYYY-MM-DD` date. */
export function startOfDay(day: string): number {
  if (!DAY_PATTERN.test(day)) return Number.NaN;
  const time = Date.parse(`${day}T00:00:00Z`);
  return Number.isFinite(time) && dayOf(new Date(time)) === day ? time : Number.NaN;
}

export function defaultRange(now: Date = new Date()): DayRange {
  const today = startOfDay(dayOf(now));
  return { from: dayOf(new Date(today - (DEFAULT_RANGE_DAYS - 1) * DAY_MS)), to: dayOf(new Date(today)) };
}

/** The range in the URL, each missing day taken from the default range. */
export function rangeFromSearchParams(params: URLSearchParams, now: Date = new Date()): DayRange {
  const fallback = defaultRange(now);
  return { from: params.get("from") || fallback.from, to: params.get("to") || fallback.to };
}

/** Why a range cannot be asked for, in words a person can act on; null when it can. */
export function rangeProblem(range: DayRange): string | null {
  const from = startOfDay(range.from);
  const to = startOfDay(range.to);
  if (Number.isNaN(from)) return `“${range.from}” is not a date: use the From field's calendar.`;
  if (Number.isNaN(to)) return `“${range.to}” is not a date: use the To field's calendar.`;
  if (to < from) return "The To day is before the From day: choose a To day on or after it.";
  const days = Math.round((to - from) / DAY_MS) + 1;
  if (days > MAX_RANGE_DAYS) return `The range spans ${days} days; it may span at most ${MAX_RANGE_DAYS}. Choose a shorter one.`;
  return null;
}

/** The query's variables: [start of `from`, start of the day after `to`). */
export function rangeVariables(range: DayRange): { from: string; to: string } {
  return { from: new Date(startOfDay(range.from)).toISOString(), to: new Date(startOfDay(range.to) + DAY_MS).toISOString() };
}

/** Every day of the range, oldest first (a chart shows the days without a query as zero). */
export function daysOf(range: DayRange): string[] {
  const days: string[] = [];
  for (let time = startOfDay(range.from); time <= startOfDay(range.to); time += DAY_MS) days.push(dayOf(new Date(time)));
  return days;
}

/** "3 Nov 2026", for people (the day stays UTC). */
export function formatDay(day: string): string {
  const time = startOfDay(day);
  if (Number.isNaN(time)) return day;
  return new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" }).format(new Date(time));
}
