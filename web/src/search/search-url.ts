/**
 * The search as the URL holds it, so a search can be shared, reloaded and walked with back and
 * forward: `/?q=deadlock&alpha=0.5&kind=CONVERSATION&provider=…&month=2026-10&category=…&kb=…`, and
 * `exact=1` when the person chose to search only the words as typed (no typo tolerance), and
 * `sort=newest` for the best results newest first.
 * Every facet a person ticks is a `SearchInput.filter` field (or `providers`), as docs/search.md's
 * "Filters and facets" maps them.
 */
import type { SearchInput, SearchItemKind } from "./operations";

export const PAGE_SIZE = 20;

const KINDS: readonly SearchItemKind[] = ["CONVERSATION", "DOCUMENT_CHUNK", "KNOWLEDGE_BASE_PASSAGE", "WEB_RESULT", "SLACK_MESSAGE", "LINKEDIN_POST"];

export interface SearchFilters {
  kinds: SearchItemKind[];
  providers: string[];
  /** One creation month, `YYYY-MM` (UTC): `filter.created` is a single range. */
  month: string | null;
  categories: string[];
  knowledgeBases: string[];
}

export interface UrlSearch {
  query: string;
  /** Null: the deployment's default alpha. */
  alpha: number | null;
  filters: SearchFilters;
  /** Search the words only as typed (`typoTolerance: false`): the "Search only for …" link. */
  exact: boolean;
  /** "newest": the best results newest first (`sort: NEWEST`); "relevance" (no parameter): best first. */
  sort: ResultOrder;
}

export type ResultOrder = "relevance" | "newest";

/** The URL parameter of each list filter. */
export const FILTER_PARAMETERS = { kinds: "kind", providers: "provider", categories: "category", knowledgeBases: "kb" } as const;
export type ListFilter = keyof typeof FILTER_PARAMETERS;

/**
 * URLs are shared and pasted, so anything may be in one: a value the app would not write is
 * dropped, never thrown over or sent on. Alpha is a plain decimal in [0, 1] ("0x1", "1e0",
 * "Infinity" are not); a list filter keeps at most MAX_FILTER_VALUES distinct values of at most
 * MAX_FILTER_VALUE_LENGTH characters without control characters. The query is sent as typed
 * (the server refuses one that is too long, with a message the page shows).
 */
export const MAX_FILTER_VALUES = 50;
export const MAX_FILTER_VALUE_LENGTH = 200;
const ALPHA_PATTERN = /^(?:0(?:\.\d{1,20})?|1(?:\.0{1,20})?|\.\d{1,20})$/;
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;
/** A month as the URL and the month facet write it: `YYYY-MM`. */
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

function listOf(params: URLSearchParams, name: string): string[] {
  const values = params.getAll(name).filter((value) => value !== "" && value.length <= MAX_FILTER_VALUE_LENGTH && !CONTROL_CHARACTERS.test(value));
  return [...new Set(values)].slice(0, MAX_FILTER_VALUES);
}

export function readUrlSearch(params: URLSearchParams): UrlSearch {
  const alphaText = params.get("alpha");
  const alpha = alphaText !== null && ALPHA_PATTERN.test(alphaText) ? Number(alphaText) : null;
  const month = params.get("month");
  return {
    query: (params.get("q") ?? "").trim(),
    alpha,
    filters: {
      kinds: listOf(params, "kind").filter((kind): kind is SearchItemKind => (KINDS as readonly string[]).includes(kind)),
      providers: listOf(params, "provider"),
      month: month && MONTH.test(month) ? month : null,
      categories: listOf(params, "category"),
      knowledgeBases: listOf(params, "kb"),
    },
    exact: params.get("exact") === "1",
    sort: params.get("sort") === "newest" ? "newest" : "relevance",
  };
}

export function writeUrlSearch(search: UrlSearch): URLSearchParams {
  const params = new URLSearchParams();
  if (search.query) params.set("q", search.query);
  if (search.alpha !== null) params.set("alpha", String(search.alpha));
  for (const [filter, parameter] of Object.entries(FILTER_PARAMETERS) as [ListFilter, string][]) {
    for (const value of search.filters[filter]) params.append(parameter, value);
  }
  if (search.filters.month) params.set("month", search.filters.month);
  if (search.exact) params.set("exact", "1");
  if (search.sort === "newest") params.set("sort", "newest");
  return params;
}

export const NO_FILTERS: SearchFilters = { kinds: [], providers: [], month: null, categories: [], knowledgeBases: [] };

export function filterCount(filters: SearchFilters): number {
  return filters.kinds.length + filters.providers.length + (filters.month ? 1 : 0) + filters.categories.length + filters.knowledgeBases.length;
}

/** The first and last millisecond of a UTC month, as the month facet's `from` and `to` give them. */
export function monthRange(month: string): { from: string; to: string } {
  const [year, monthNumber] = month.split("-").map(Number) as [number, number];
  const from = new Date(Date.UTC(year, monthNumber - 1, 1));
  const to = new Date(Date.UTC(year, monthNumber, 1) - 1);
  return { from: from.toISOString(), to: to.toISOString() };
}

/** The `SearchInput` of the URL's search (first page). */
export function searchInputOf(search: UrlSearch): SearchInput {
  const { filters } = search;
  const filter: NonNullable<SearchInput["filter"]> = {};
  if (filters.kinds.length) filter.kinds = filters.kinds;
  if (filters.month) filter.created = monthRange(filters.month);
  if (filters.categories.length) filter.categories = filters.categories;
  if (filters.knowledgeBases.length) filter.knowledgeBases = filters.knowledgeBases;
  return {
    query: search.query,
    limit: PAGE_SIZE,
    ...(search.alpha !== null ? { alpha: search.alpha } : {}),
    ...(filters.providers.length ? { providers: filters.providers } : {}),
    ...(Object.keys(filter).length ? { filter } : {}),
    ...(search.exact ? { typoTolerance: false } : {}),
    ...(search.sort === "newest" ? { sort: "NEWEST" as const } : {}),
  };
}

/** A facet group a person can tick several values of (values of one group are OR'ed). */
export type FacetGroup = ListFilter | "month";

/**
 * Disjunctive faceting, as Algolia's helper does it: the counts of a group with a selection come
 * from the same search without that group's selection (every other group's kept), so ticking
 * "Documents" keeps "Conversations" listed with its count, and ticking it too widens the list.
 * One input per group that has a selection; groups without one read the page's own counts.
 */
export function facetInputsOf(search: UrlSearch): Partial<Record<FacetGroup, SearchInput>> {
  const inputs: Partial<Record<FacetGroup, SearchInput>> = {};
  const { filters } = search;
  const without = (next: SearchFilters) => {
    // Facet counts do not depend on the order or the page: the relevance order shares its cached answer.
    const { sort: _sort, ...input } = searchInputOf({ ...search, filters: next, sort: "relevance" });
    return input;
  };
  for (const group of Object.keys(FILTER_PARAMETERS) as ListFilter[]) if (filters[group].length) inputs[group] = without({ ...filters, [group]: [] });
  if (filters.month) inputs.month = without({ ...filters, month: null });
  return inputs;
}

/** A saved search's settings, as SavedSearch answers them (the fields the page can hold and the rest). */
export interface SavedSearchSettings {
  query: string;
  alpha: number;
  providers: string[] | null;
  typoTolerance: boolean;
  filter: SavedFilter | null;
}

/** SavedSearch.filter: every SearchFilter field, null when it does not narrow by it. */
export interface SavedFilter {
  kinds?: SearchItemKind[] | null;
  created?: { from: string | null; to: string | null } | null;
  updated?: { from: string | null; to: string | null } | null;
  owner?: string | null;
  teams?: string[] | null;
  knowledgeBases?: string[] | null;
  categories?: string[] | null;
  formats?: string[] | null;
  sites?: string[] | null;
}

/** The `YYYY-MM` month a range covers exactly (as the month facet sets it), or null. */
function monthOf(range: { from: string | null; to: string | null }): string | null {
  if (!range.from || !range.to) return null;
  const month = range.from.slice(0, 7);
  if (!MONTH.test(month)) return null;
  const exact = monthRange(month);
  return Date.parse(range.from) === Date.parse(exact.from) && Date.parse(range.to) === Date.parse(exact.to) ? month : null;
}

/**
 * A saved search as the search page's URL: everything the page can show (kinds, providers, a
 * month, categories, knowledge bases, exact words), and in `unshown` the filter fields it cannot
 * (the page would search without them, so the saved-search list says so next to the link).
 */
export function urlSearchOfSaved(saved: SavedSearchSettings): { search: UrlSearch; unshown: string[] } {
  const filter = saved.filter ?? {};
  const unshown: string[] = [];
  let month: string | null = null;
  if (filter.created) {
    month = monthOf(filter.created);
    if (month === null) unshown.push("created");
  }
  for (const field of ["updated", "owner", "teams", "formats", "sites"] as const) if (filter[field] != null) unshown.push(field);
  const search: UrlSearch = {
    query: saved.query,
    alpha: saved.alpha,
    filters: {
      kinds: filter.kinds ?? [],
      providers: saved.providers ?? [],
      month,
      categories: filter.categories ?? [],
      knowledgeBases: filter.knowledgeBases ?? [],
    },
    exact: !saved.typoTolerance,
    sort: "relevance",
  };
  return { search, unshown };
}

/** What a `SaveSearchInput` holds besides its name. */
export type SearchInputToSave = Omit<SearchInput, "limit" | "after" | "latency" | "sort">;

/** The page's search as `saveSearch` stores it: what it runs with, without the page size or the order it is read in. */
export function saveInputOf(search: UrlSearch): SearchInputToSave {
  const { limit: _limit, sort: _sort, ...input } = searchInputOf(search);
  return input;
}
