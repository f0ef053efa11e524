import { KIND_LABELS } from "../search/FacetSidebar";
import { urlSearchOfSaved, writeUrlSearch, type SavedSearchSettings } from "../search/search-url";

export { formatDateTime } from "../dates";

/** The search page's address for a saved search: `/?q=…&alpha=…` and the filters the page can hold. */
export function searchPageHref(saved: SavedSearchSettings): string {
  return `/?${writeUrlSearch(urlSearchOfSaved(saved).search)}`;
}

function rangeInWords(range: { from: string | null; to: string | null }): string {
  const day = (iso: string) => iso.slice(0, 10);
  if (range.from && range.to) return `${day(range.from)} to ${day(range.to)}`;
  return range.from ? `from ${day(range.from)}` : `until ${day(range.to!)}`;
}

/**
 * What a saved search narrows to besides its query and alpha, in words, one entry per setting:
 * what a person checks before running it or opening it on the search page.
 */
export function savedSettingsInWords(saved: Pick<SavedSearchSettings, "providers" | "typoTolerance" | "filter">): { label: string; value: string }[] {
  const filter = saved.filter ?? {};
  const settings: { label: string; value: string }[] = [];
  const list = (label: string, values: readonly string[] | null | undefined) => {
    if (values && values.length > 0) settings.push({ label, value: values.join(", ") });
  };
  list("Kinds", filter.kinds?.map((kind) => KIND_LABELS[kind] ?? kind));
  list("Providers", saved.providers);
  if (filter.created) settings.push({ label: "Created", value: rangeInWords(filter.created) });
  if (filter.updated) settings.push({ label: "Updated", value: rangeInWords(filter.updated) });
  if (filter.owner) settings.push({ label: "Owner", value: filter.owner });
  list("Teams", filter.teams);
  list("Categories", filter.categories);
  list("Knowledge bases", filter.knowledgeBases);
  list("Formats", filter.formats);
  list("Sites", filter.sites);
  if (!saved.typoTolerance) settings.push({ label: "Words", value: "only as typed (no typo tolerance)" });
  return settings;
}

/** The filter fields the search page cannot show, in words, or null when it shows them all. */
export function unshownInWords(saved: SavedSearchSettings): string | null {
  const { unshown } = urlSearchOfSaved(saved);
  return unshown.length > 0 ? unshown.join(", ") : null;
}
