/**
 * Suggestions as the caller types (`searchSuggestions`): completions of a prefix from the
 * caller's own past queries, the organization's widely asked ones (past-queries.ts), and the
 * names of entities the caller may see, asked of every domain that offers them (its public
 * search module's `suggest`, one statement each, all at once).
 *
 * Ranked in tiers: the caller's own queries (most recent first), then the organization's
 * (most widely asked first), then names that start with the prefix (in key order, so shorter
 * completions of a common stem come first), then names with a later word that does (most
 * recently changed first). Deduplicated on the text, ignoring case
 * and whitespace: the first (highest-ranked) wins.
 */
import { badUserInput } from "../../lib/graphql/errors.js";
import type { PrismaClient } from "../../generated/prisma/client.js";
import type { Logger } from "../../lib/logger.js";
import type { MatchRange } from "../../lib/retrieval/highlights.js";
import type { DomainSearch, EntityRef, EntitySuggestion } from "../../lib/retrieval/search-provider.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { pastQuerySuggestions } from "./past-queries.js";
import { toPlainText } from "./plain-text.js";

export const MAX_PREFIX_LENGTH = 200;
export const MAX_SUGGESTIONS = 20;
export const DEFAULT_SUGGESTIONS = 8;

export type SearchSuggestionSource = "MY_QUERY" | "ORGANIZATION_QUERY" | "CONVERSATION_TITLE" | "DOCUMENT_NAME";

export interface SearchSuggestionData {
  text: string;
  source: SearchSuggestionSource;
  /** The entity a title or name belongs to; null for past queries. */
  ref: EntityRef | null;
  /** Where the prefix is in `text` (suggestionMatches). */
  matches: MatchRange[];
}

/** Which source an entity's name is, by its type; a domain added later needs a line here and in the schema's enum. */
const SOURCE_OF_TYPE: Record<string, SearchSuggestionSource> = { Conversation: "CONVERSATION_TITLE", Document: "DOCUMENT_NAME" };

/** The prefix as search sees text (control characters as spaces), trimmed and bounded; the limit 1 to 20. */
export function validateSuggestionInput(prefix: string, limit: number | null | undefined): { prefix: string; limit: number } {
  const trimmed = toPlainText(prefix).trim();
  if (trimmed.length === 0) throw badUserInput("prefix", "must contain at least one character other than whitespace: send what the user has typed so far");
  // Counted in characters (code points); more than 2 × the limit in UTF-16 units is over it in any case.
  const length = trimmed.length > 2 * MAX_PREFIX_LENGTH ? trimmed.length : [...trimmed].length;
  if (length > MAX_PREFIX_LENGTH) throw badUserInput("prefix", `must be at most ${MAX_PREFIX_LENGTH} characters, got ${length}: send a shorter prefix`);
  const size = limit ?? DEFAULT_SUGGESTIONS;
  if (!Number.isInteger(size) || size < 1 || size > MAX_SUGGESTIONS) throw badUserInput("limit", `must be between 1 and ${MAX_SUGGESTIONS}, got ${size}`);
  return { prefix: trimmed, limit: size };
}

/** Characters of a text its suggestion key keeps (search_suggestion_key: `left(…, 200)`). */
const KEY_LENGTH = 200;
const WHITESPACE = /\s/u;
/** UTF-16 units of a suggestion's text walked at most: a key's 200 characters lie well within. */
const MAX_TEXT_WALKED = 4_096;

/**
 * A text as search_suggestion_key reads it (lower-cased, whitespace runs as one space, trimmed,
 * 200 characters), with where each of the key's UTF-16 units came from in the text: a space
 * stands for its whole run, and a letter that lower-cases to two units maps both to itself.
 */
function keyWithOrigins(text: string): { key: string; from: number[]; to: number[] } {
  let key = "";
  const from: number[] = [];
  const to: number[] = [];
  let characters = 0;
  let index = 0;
  let space: [number, number] | null = null;
  for (const char of text) {
    // Titles and names are bounded where they are written; this bounds the walk whatever a text holds.
    if (index >= MAX_TEXT_WALKED) break;
    const at = index;
    index += char.length;
    if (WHITESPACE.test(char)) {
      if (key.length > 0) space = space ? [space[0], index] : [at, index];
      continue;
    }
    if (characters >= KEY_LENGTH) break;
    if (space) {
      key += " ";
      from.push(space[0]);
      to.push(space[1]);
      characters++;
      space = null;
      if (characters >= KEY_LENGTH) break;
    }
    const lower = char.toLowerCase();
    for (let unit = 0; unit < lower.length; unit++) {
      from.push(at);
      to.push(index);
    }
    key += lower;
    characters++;
  }
  return { key, from, to };
}

/**
 * Where a suggestion's text matched the prefix, as `SearchSuggestion.matches`: the first place
 * the statement's rule holds (the key starts with the prefix's key, or a later word of it does),
 * mapped back to the text in UTF-16 units. Empty where JavaScript and PostgreSQL lower-case or
 * split whitespace differently (a few characters outside ASCII), rather than a wrong range.
 */
export function suggestionMatches(text: string, prefix: string): MatchRange[] {
  const wanted = keyWithOrigins(prefix).key;
  if (wanted === "") return [];
  const { key, from, to } = keyWithOrigins(text);
  // The space before a later word that starts with the prefix, or -1.
  const later = key.indexOf(` ${wanted}`);
  const at = key.startsWith(wanted) ? 0 : later < 0 ? -1 : later + 1;
  if (at < 0) return [];
  const last = at + wanted.length - 1;
  if (last >= from.length) return [];
  return [{ start: from[at]!, end: to[last]! }];
}

const dedupKey = (text: string) => text.replace(/\s+/g, " ").trim().toLowerCase();

export class SearchSuggestions {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly domains: readonly DomainSearch[],
    private readonly logger: Logger,
  ) {}

  async suggest(tenant: TenantContext, args: { prefix: string; limit?: number | null }): Promise<SearchSuggestionData[]> {
    const { prefix, limit } = validateSuggestionInput(args.prefix, args.limit);
    const suggesters = this.domains.filter((domain) => domain.suggest);
    const [pastQueries, ...names] = await Promise.allSettled([
      pastQuerySuggestions(this.prisma, tenant, prefix, limit),
      ...suggesters.map((domain) => domain.suggest!({ tenant, prefix, limit })),
    ]);
    // One source that fails costs its suggestions, not the others' (as a failing provider in search).
    const failures = [pastQueries!, ...names].flatMap((outcome) => (outcome.status === "rejected" ? [outcome.reason as unknown] : []));
    if (failures.length === names.length + 1) throw failures[0];
    for (const failure of failures) this.logger.warn(`search suggestions: a source failed: ${failure instanceof Error ? failure.message : String(failure)}`);

    const entities: EntitySuggestion[] = names.flatMap((outcome) => (outcome.status === "fulfilled" ? outcome.value : []));
    entities.sort((a, b) => {
      if (a.atStart !== b.atStart) return a.atStart ? -1 : 1;
      if (!a.atStart) return b.updatedAt.getTime() - a.updatedAt.getTime();
      const [keyA, keyB] = [dedupKey(a.text), dedupKey(b.text)];
      return keyA < keyB ? -1 : keyA > keyB ? 1 : 0;
    });
    const ranked: Omit<SearchSuggestionData, "matches">[] = [
      ...(pastQueries!.status === "fulfilled" ? pastQueries!.value.map((row) => ({ text: row.text, source: row.source, ref: null })) : []),
      ...entities.flatMap((entity) => {
        const source = SOURCE_OF_TYPE[entity.ref.typename];
        return source ? [{ text: entity.text, source, ref: entity.ref }] : [];
      }),
    ];
    const seen = new Set<string>();
    const suggestions: SearchSuggestionData[] = [];
    for (const suggestion of ranked) {
      const key = dedupKey(suggestion.text);
      if (seen.has(key)) continue;
      seen.add(key);
      // Only for the suggestions returned: at most `limit` texts.
      suggestions.push({ ...suggestion, matches: suggestionMatches(suggestion.text, prefix) });
      if (suggestions.length === limit) break;
    }
    return suggestions;
  }
}
