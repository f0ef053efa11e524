/**
 * The period the credits page shows, as the person picks it: two calendar days (UTC, as the
 * ledger counts days), both included. The API takes `from` inclusive and `to` exclusive, at most
 * 92 days apart, so the last day is sent as the start of the day after it.
 */
export const MAX_PERIOD_DAYS = 92;
const DAY_MS = 86_400_000;

/** YYYY-MM-DD of a date, in UTC. */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** This month so far: the first of the UTC month to today. */
export function thisMonth(now = new Date()): { from: string; to: string } {
  return { from: `${utcDay(now).slice(0, 8)}01`, to: utcDay(now) };
}

function parseDay(day: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return null;
  const time = Date.parse(`${day}T00:00:00Z`);
  return Number.isNaN(time) ? null : time;
}

export type PeriodCheck = { ok: true; from: string; to: string; days: string[] } | { ok: false; problem: string };

/** Checks a picked period and turns it into the API's variables and the list of its days. */
export function checkPeriod(fromDay: string, toDay: string): PeriodCheck {
  const from = parseDay(fromDay);
  const to = parseDay(toDay);
  if (from === null) return { ok: false, problem: "Enter a start date." };
  if (to === null) return { ok: false, problem: "Enter an end date." };
  if (to < from) return { ok: false, problem: "The end date is before the start date." };
  const end = to + DAY_MS;
  if (end - from > MAX_PERIOD_DAYS * DAY_MS) return { ok: false, problem: `Pick at most ${MAX_PERIOD_DAYS} days.` };
  const days: string[] = [];
  for (let time = from; time < end; time += DAY_MS) days.push(utcDay(new Date(time)));
  return { ok: true, from: new Date(from).toISOString(), to: new Date(end).toISOString(), days };
}
