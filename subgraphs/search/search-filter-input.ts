/**
 * `SearchInput.filter` as a client sends it, checked and normalized before any provider (and so
 * any SQL or API call) sees it. Every list and every string is bounded here: a filter is part of
 * the cache key and the cursor's hash, and each value becomes a statement parameter or a query
 * operator.
 */
import { isUuid } from "../../lib/graphql/pagination.js";
import { badUserInput } from "../../lib/graphql/errors.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { ITEM_KINDS, NO_FILTER, type DateRange, type ItemKind, type SearchFilter } from "../../lib/retrieval/search-filter.js";

export const MAX_FILTER_VALUES = 50;
export const MAX_FILTER_VALUE_LENGTH = 200;
/** Sites become `site:` operators in a web query of at most 400 characters. */
export const MAX_FILTER_SITES = 10;

export interface DateRangeInput {
  from?: Date | null;
  to?: Date | null;
}

export interface SearchFilterInput {
  kinds?: ItemKind[] | null;
  created?: DateRangeInput | null;
  updated?: DateRangeInput | null;
  owner?: string | null;
  teams?: string[] | null;
  knowledgeBases?: string[] | null;
  categories?: string[] | null;
  formats?: string[] | null;
  sites?: string[] | null;
}

/** A host name: labels of letters, digits and hyphens (what `site:` takes), no scheme, path or port. */
const HOST = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const FORMATS = new Set(["TEXT", "MARKDOWN", "PDF", "DOCX"]);

/**
 * Checks a filter and returns it normalized (deduplicated lists, lowercase sites and formats as
 * stored). Teams must be the caller's own (their token names them): a team filter can narrow
 * what the caller sees, never name a team they do not belong to, and the message is the same
 * whether such a team exists or not.
 */
export function normalizeFilter(raw: SearchFilterInput | null | undefined, tenant: TenantContext): SearchFilter {
  if (raw == null) return NO_FILTER;
  const field = (name: string) => `input.filter.${name}`;

  const list = (name: string, values: readonly string[] | null | undefined, check?: (value: string) => string | null): string[] | null => {
    if (values == null) return null;
    if (values.length === 0) throw badUserInput(field(name), "must name at least one value, or be left out to not filter by it");
    if (values.length > MAX_FILTER_VALUES) throw badUserInput(field(name), `may name at most ${MAX_FILTER_VALUES} values, got ${values.length}`);
    const seen = new Set<string>();
    for (const value of values) {
      if (value.length === 0 || value.length > MAX_FILTER_VALUE_LENGTH) throw badUserInput(field(name), `values must be 1 to ${MAX_FILTER_VALUE_LENGTH} characters, got ${value.length}`);
      const problem = check?.(value);
      if (problem) throw badUserInput(field(name), problem);
      seen.add(value);
    }
    return [...seen].sort();
  };

  const range = (name: string, value: DateRangeInput | null | undefined): DateRange | null => {
    if (value == null) return null;
    const from = value.from ?? null;
    const to = value.to ?? null;
    if (from === null && to === null) throw badUserInput(field(name), "give `from`, `to` or both, or leave the range out");
    if (from !== null && to !== null && from.getTime() > to.getTime()) {
      throw badUserInput(field(name), `\`from\` (${from.toISOString()}) is after \`to\` (${to.toISOString()}): swap them or widen the range`);
    }
    return { from, to };
  };

  let kinds: Set<string> | null = null;
  if (raw.kinds != null) {
    if (raw.kinds.length === 0) throw badUserInput(field("kinds"), "must name at least one kind, or be left out to search every kind");
    kinds = new Set(raw.kinds.map((kind) => {
      if (!(kind in ITEM_KINDS)) throw badUserInput(field("kinds"), `unknown kind "${kind}"; available: ${Object.keys(ITEM_KINDS).join(", ")}`);
      return ITEM_KINDS[kind];
    }));
  }

  let owner: string | null = null;
  if (raw.owner != null) {
    if (raw.owner.length === 0 || raw.owner.length > MAX_FILTER_VALUE_LENGTH) throw badUserInput(field("owner"), `must be a user id of 1 to ${MAX_FILTER_VALUE_LENGTH} characters`);
    owner = raw.owner;
  }

  const teams = list("teams", raw.teams, (team) => (tenant.teamIds.includes(team) ? null : `you are not a member of team "${team}": filter by your own teams (${tenant.teamIds.length > 0 ? tenant.teamIds.join(", ") : "your token names none"})`));
  const knowledgeBases = list("knowledgeBases", raw.knowledgeBases, (id) => (isUuid(id) ? null : `"${id}" is not a knowledge base id (a UUID)`));
  const categories = list("categories", raw.categories);
  const formats = list("formats", raw.formats, (format) => (FORMATS.has(format) ? null : `unknown format "${format}"; available: ${[...FORMATS].join(", ")}`))?.map((format) => format.toLowerCase()) ?? null;
  const siteValues = raw.sites?.map((site) => site.trim().toLowerCase().replace(/\.$/, "")) ?? null;
  if (siteValues && siteValues.length > MAX_FILTER_SITES) throw badUserInput(field("sites"), `may name at most ${MAX_FILTER_SITES} sites, got ${siteValues.length}`);
  const sites = list("sites", siteValues, (site) => (HOST.test(site) ? null : `"${site.slice(0, 80)}" is not a host name: give a domain such as "example.com", without scheme, path or port`));

  return {
    kinds,
    created: range("created", raw.created),
    updated: range("updated", raw.updated),
    owner,
    teams,
    knowledgeBases: knowledgeBases?.map((id) => id.toLowerCase()) ?? null,
    categories,
    formats,
    sites,
  };
}

/** The filter as plain JSON in a fixed order: what the cursor hash and the cache key see. */
export function filterIdentity(filter: SearchFilter): unknown {
  const range = (value: DateRange | null) => (value ? [value.from?.toISOString() ?? null, value.to?.toISOString() ?? null] : null);
  return [
    filter.kinds ? [...filter.kinds].sort() : null,
    range(filter.created),
    range(filter.updated),
    filter.owner,
    filter.teams,
    filter.knowledgeBases,
    filter.categories,
    filter.formats,
    filter.sites,
  ];
}

/**
 * A normalized filter back in the shape a client sends (enum names, sorted lists), fields not
 * set left out: what a saved search stores and shows, and gives `search` again when it runs.
 * Null for a filter that sets nothing. normalizeFilter(filterInputOf(f)) is f again.
 */
export function filterInputOf(filter: SearchFilter): SearchFilterInput | null {
  const input: SearchFilterInput = {};
  if (filter.kinds) input.kinds = (Object.keys(ITEM_KINDS) as ItemKind[]).filter((kind) => filter.kinds!.has(ITEM_KINDS[kind]));
  if (filter.created) input.created = { from: filter.created.from, to: filter.created.to };
  if (filter.updated) input.updated = { from: filter.updated.from, to: filter.updated.to };
  if (filter.owner !== null) input.owner = filter.owner;
  if (filter.teams) input.teams = [...filter.teams];
  if (filter.knowledgeBases) input.knowledgeBases = [...filter.knowledgeBases];
  if (filter.categories) input.categories = [...filter.categories];
  if (filter.formats) input.formats = filter.formats.map((format) => format.toUpperCase());
  if (filter.sites) input.sites = [...filter.sites];
  return Object.keys(input).length > 0 ? input : null;
}
