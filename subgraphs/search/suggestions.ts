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
    const ranked: SearchSuggestionData[] = [
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
      suggestions.push(suggestion);
      if (suggestions.length === limit) break;
    }
    return suggestions;
  }
}
