/**
 * What a search may be narrowed to (`SearchInput.filter`), once checked and normalized by the
 * search subgraph. Providers receive it in `ProviderRequest.filter` and apply it inside their
 * own statement or API call, so that a filtered page is as full as an unfiltered one; a
 * provider that cannot apply a field it is given declares so (`SearchProvider.filters`) and the
 * search skips it, rather than let it return hits the filter excludes.
 *
 * Fields are ANDed; the values of one list are ORed. Date ranges are inclusive at both ends.
 */

/** The typenames search hits carry (`SearchItem`'s members), by their SearchItemKind name. */
export const ITEM_KINDS = {
  CONVERSATION: "Conversation",
  DOCUMENT_CHUNK: "DocumentChunk",
  KNOWLEDGE_BASE_PASSAGE: "KnowledgeBasePassage",
  WEB_RESULT: "WebResult",
  SLACK_MESSAGE: "SlackMessage",
  LINKEDIN_POST: "LinkedInPost",
} as const;
export type ItemKind = keyof typeof ITEM_KINDS;
export type ItemTypename = (typeof ITEM_KINDS)[ItemKind];

export const kindOfTypename = (typename: string): ItemKind | undefined =>
  (Object.keys(ITEM_KINDS) as ItemKind[]).find((kind) => ITEM_KINDS[kind] === typename);

export interface DateRange {
  from: Date | null;
  to: Date | null;
}

/** The filter fields a provider may or may not apply (`kinds` every provider answers by its item types). */
export type FilterField = "created" | "updated" | "owner" | "teams" | "knowledgeBases" | "categories" | "formats" | "sites";

export interface SearchFilter {
  /** Typenames of the items wanted; null: every kind. */
  kinds: ReadonlySet<string> | null;
  created: DateRange | null;
  updated: DateRange | null;
  /** The user id items must belong to. */
  owner: string | null;
  teams: readonly string[] | null;
  knowledgeBases: readonly string[] | null;
  categories: readonly string[] | null;
  /** Document formats, as stored (`text`, `markdown`, `pdf`, `docx`). */
  formats: readonly string[] | null;
  /** Lowercase host names; a result on a host or any of its subdomains matches. */
  sites: readonly string[] | null;
}

export const NO_FILTER: SearchFilter = {
  kinds: null,
  created: null,
  updated: null,
  owner: null,
  teams: null,
  knowledgeBases: null,
  categories: null,
  formats: null,
  sites: null,
};

/** The fields a filter sets, besides `kinds`, in a stable order (for skip reasons). */
export function filterFieldsSet(filter: SearchFilter): FilterField[] {
  const fields: FilterField[] = [];
  for (const field of ["created", "updated", "owner", "teams", "knowledgeBases", "categories", "formats", "sites"] as const) {
    if (filter[field] !== null) fields.push(field);
  }
  return fields;
}

/**
 * What a hit says about its item, for facets (and for checking a filter against a hit). Every
 * provider returns what it knows with the hit, from the statement or call that found it, so
 * facets cost no extra round trip. Absent: the item has no such attribute (a web result has
 * no creation date).
 */
export interface HitAttributes {
  /** ISO-8601. */
  createdAt?: string;
  updatedAt?: string;
  ownerId?: string;
  category?: string | null;
  format?: string;
  knowledgeBaseId?: string | null;
  /** A web result's host name, lowercase. */
  site?: string;
}

/** The month (`YYYY-MM`, UTC) an instant falls in. */
export const monthOf = (iso: string) => iso.slice(0, 7);

/** The inclusive range a month facet value selects: its first and its last millisecond (UTC). */
export function monthRange(month: string): { from: Date; to: Date } {
  const [year, monthNumber] = month.split("-").map(Number) as [number, number];
  const from = new Date(Date.UTC(year, monthNumber - 1, 1));
  const to = new Date(Date.UTC(year, monthNumber, 1) - 1);
  return { from, to };
}

/** Whether a host is one of the sites or a subdomain of one. */
export function hostMatchesSites(host: string, sites: readonly string[]): boolean {
  const lower = host.toLowerCase();
  return sites.some((site) => lower === site || lower.endsWith(`.${site}`));
}
