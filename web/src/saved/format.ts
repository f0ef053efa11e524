/** Dates as a person reads them, in their own locale and time zone. */
const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export function formatDateTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : DATE_TIME.format(date);
}

/** The search page's address for a saved search: `/?q=…&alpha=…`. */
export function searchPageHref(query: string, alpha: number): string {
  return `/?${new URLSearchParams({ q: query, alpha: String(alpha) })}`;
}
