/**
 * Resolvers of the search subgraph (schema.graphql beside this file). Hits carry entity
 * references (`{ __typename, id }`); the gateway loads each entity's fields from the subgraph
 * that owns it, in one batched `_entities` call per type. The exceptions are a Conversation's
 * title and where a DocumentChunk sits (its heading path, page and document's file name), which
 * this subgraph answers itself (provided-fields.ts), read live per
 * request, so a page of hits that asks only those needs no second hop.
 */
import type { GraphQLResolverMap } from "@apollo/subgraph/dist/schema-helper/index.js";
import type DataLoader from "dataloader";
import { GraphQLError, type GraphQLResolveInfo } from "graphql";
import { selectsField } from "./selection.js";
import { badUserInput } from "../../lib/graphql/errors.js";
import { writeOnceFor } from "../../lib/graphql/idempotency-key.js";
import { DateTime } from "../../lib/graphql/date-time.js";
import { resolveEntityReferences } from "../../lib/graphql/entity-references.js";
import { decodeCursor, encodeCursor, requireUuid, toConnection, validatePageSize } from "../../lib/graphql/pagination.js";
import type { RequestContext } from "../../lib/graphql/subgraph-server.js";
import type { SearchIndexStatus } from "../conversations/index.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import type { ChunkPlace } from "../knowledge-base/index.js";
import { selectsProvidedField } from "./provided-fields.js";
import { highlightQuery, validateHighlightLimit, type HighlightRequest } from "./highlights.js";
import type { HighlightPassage } from "../../lib/retrieval/highlights.js";
import type { SearchHitData, SearchInput, SearchResultData, SearchService } from "./search-service.js";
import type { EntityRef } from "../../lib/retrieval/search-provider.js";
import { validateRunLimit, validateSavedSearchName, validateSaveSearchInput, type SaveSearchInput } from "./saved-search-input.js";
import type { SavedSearch, SavedSearchPageCursor, SavedSearchStore } from "./saved-search-store.js";
import type { SearchSuggestionData, SearchSuggestions } from "./suggestions.js";
import { answerResolvers, type AnswerService } from "./answers/index.js";
import type { PrismaClient } from "../../generated/prisma/client.js";
import { requireAdmin } from "../../lib/tenancy/roles.js";
import type { RecordSearchClickInput, SearchClickStore } from "./search-clicks.js";
import { resolveRange, searchAnalytics, searchesOfQuery, validateDrillDown, type AnalyticsRangeInput, type SearchAnalyticsData } from "./search-analytics.js";

export interface SearchContext extends RequestContext {
  search: SearchService;
  /** How far the conversations domain's index is behind for the caller. */
  indexStatus(tenant: TenantContext): Promise<SearchIndexStatus>;
  savedSearches: SavedSearchStore;
  suggestions: SearchSuggestions;
  /** The caller's saved searches by id, for this request only (created on first use, after the tenant is known). */
  savedSearchLoader(): DataLoader<string, SavedSearch | null>;
  /** Live titles of the caller's conversations by id, for this request only (null: deleted or not theirs). */
  conversationTitleLoader(): DataLoader<string, string | null>;
  /** Where the caller's document chunks sit, by id, for this request only (null: gone or not theirs to see). */
  chunkPlaceLoader(): DataLoader<string, ChunkPlace | null>;
  /** Highlights of this request's hits, batched per page (one statement per domain). */
  highlightLoader(): DataLoader<HighlightRequest, HighlightPassage[], string>;
  /** `Query.answer` (answers/). */
  answers: AnswerService;
  /** `recordSearchClick` (search-clicks.ts). */
  searchClicks: SearchClickStore;
  /** For `searchAnalytics` (search-analytics.ts), which reads the log in the caller's tenant scope. */
  prisma: PrismaClient;
}

const savedSearchCursor = (row: SavedSearch) => encodeCursor("ss", [row.createdAt.toISOString(), row.id]);

function decodeSavedSearchCursor(after: string): SavedSearchPageCursor {
  return decodeCursor(after, "ss", "after", ([createdAt, id]) => {
    const date = typeof createdAt === "string" ? new Date(createdAt) : null;
    return date && !Number.isNaN(date.getTime()) && typeof id === "string" && /^[0-9a-f-]{36}$/i.test(id) ? { createdAt: date, id } : null;
  });
}

/** A hit as its resolvers see it: with the query it was found by, which its highlights match. */
type ResolvedHit = SearchHitData & { query?: string };

const withQuery = (hits: readonly SearchHitData[], query: string): ResolvedHit[] => hits.map((hit) => ({ ...hit, query }));

/** What identifies a hit across runs: the entity it names. */
const hitKey = (hit: SearchHitData) => `${hit.ref.typename}:${hit.ref.id}`;

/**
 * A reference for the gateway to load from the owner. When the client asked for a field this
 * subgraph provides (a conversation's title, where a document chunk sits), it answers it (one
 * statement per type for the whole page), and an entity that is gone or no longer the caller's
 * to see (deleted or unshared since a cached page was stored, or since the providers answered)
 * is null, exactly as the owner's `_entities` answer would make it.
 */
async function searchItem(ref: EntityRef, context: SearchContext, info: GraphQLResolveInfo) {
  const reference = { __typename: ref.typename, id: ref.id };
  if (ref.typename === "Conversation" && selectsProvidedField(info, "Conversation")) {
    const title = await context.conversationTitleLoader().load(ref.id);
    return title === null ? null : { ...reference, title };
  }
  if (ref.typename === "DocumentChunk" && selectsProvidedField(info, "DocumentChunk")) {
    const place = await context.chunkPlaceLoader().load(ref.id);
    return place === null ? null : { ...reference, ...place };
  }
  return reference;
}

/**
 * Runs a saved search's first page. Its input was valid when saved; if the deployment changed
 * since (a provider it names was removed), the search's complaint is about the saved search,
 * so it is reported on `id` with what to do about it.
 */
async function runAsSaved(service: SearchService, tenant: TenantContext, saved: SavedSearch, limit: number, facets: boolean): Promise<SearchResultData> {
  try {
    return await service.search(tenant, { query: saved.query, alpha: saved.alpha, providers: saved.providers, weights: saved.weights, filter: saved.filter, typoTolerance: saved.typoTolerance, limit }, { facets });
  } catch (error) {
    if (error instanceof GraphQLError && error.extensions?.code === "BAD_USER_INPUT") {
      throw badUserInput("id", `this saved search no longer runs as saved (${error.message}): save it again with valid settings`);
    }
    throw error;
  }
}

export const resolvers: GraphQLResolverMap<SearchContext> = {
  DateTime,
  Query: {
    // The gateway never asks this subgraph for entities (Conversation is `resolvable: false`
    // here), but anyone who reaches it can: malformed references are their mistake, not ours.
    _entities: resolveEntityReferences,
    search(_source, args: { input: SearchInput }, context, info) {
      return context.search.search(context.requireTenant(), args.input, { facets: selectsField(info, "facets") });
    },
    answer: answerResolvers.Query.answer,
    answerSettings: answerResolvers.Query.answerSettings,
    searchProviders(_source, _args, context) {
      context.requireTenant();
      const service = context.search;
      return service.providerList.map((provider) => ({
        name: provider.name,
        kind: provider.kind,
        latency: provider.latency,
        description: provider.description,
        embeddingModel: provider.embeddingModel ?? null,
        followsDefaultAlpha: service.followsDefaultAlpha(provider),
        defaultWeight: service.defaultWeight(provider),
      }));
    },
    async searchIndexStatus(_source, _args, context) {
      const status = await context.indexStatus(context.requireTenant());
      const { alpha, embedder, embedderAlpha, overridden } = context.search.defaultAlpha;
      return { ...status, defaultAlpha: { alpha, overridden, embedder, embedderAlpha: embedderAlpha.alpha, basis: embedderAlpha.basis, source: embedderAlpha.source } };
    },
    async savedSearches(_source, args: { first?: number | null; after?: string | null }, context) {
      const tenant = context.requireTenant();
      const first = validatePageSize(args.first, "first", 20);
      const after = args.after ? decodeSavedSearchCursor(args.after) : null;
      const rows = await context.savedSearches.listPage(tenant, first + 1, after);
      const loader = context.savedSearchLoader();
      for (const row of rows.slice(0, first)) loader.prime(row.id, row);
      const { nodes, pageInfo } = toConnection(rows, first, after !== null, savedSearchCursor);
      return { nodes, pageInfo };
    },
    savedSearch(_source, args: { id: string }, context) {
      context.requireTenant();
      return context.savedSearchLoader().load(requireUuid(args.id, "id"));
    },
    searchSuggestions(_source, args: { prefix: string; limit?: number | null }, context) {
      return context.suggestions.suggest(context.requireTenant(), args);
    },
    searchAnalytics(_source, args: { range: AnalyticsRangeInput }, context) {
      const tenant = context.requireTenant();
      // Everyone's searches, other members' included: the organization's, not the caller's.
      requireAdmin(tenant, "Reading the organization's search analytics");
      return searchAnalytics(context.prisma, tenant, resolveRange(args.range));
    },
  },
  Mutation: {
    saveSearch(_source, args: { input: SaveSearchInput }, context, info) {
      const tenant = context.requireTenant();
      const once = writeOnceFor(context.writes, tenant, info, args);
      return context.savedSearches.create(tenant, validateSaveSearchInput(context.search, tenant, args.input), once);
    },
    renameSavedSearch(_source, args: { id: string; name: string }, context) {
      const tenant = context.requireTenant();
      const id = requireUuid(args.id, "id");
      return context.savedSearches.rename(tenant, id, validateSavedSearchName(args.name, "name"));
    },
    async deleteSavedSearch(_source, args: { id: string }, context) {
      const tenant = context.requireTenant();
      const id = requireUuid(args.id, "id");
      await context.savedSearches.delete(tenant, id);
      return { id };
    },
    /**
     * The search runs between two statements: the saved input is read, the search runs, and one
     * UPDATE stores this page's keys while returning the previous run's, which decide `newHits`.
     */
    async runSavedSearch(_source, args: { id: string; limit?: number | null }, context, info) {
      const tenant = context.requireTenant();
      const id = requireUuid(args.id, "id");
      const limit = validateRunLimit(args.limit);
      const saved = await context.savedSearches.require(tenant, id);
      const result = await runAsSaved(context.search, tenant, saved, limit, selectsField(info, "result", "facets"));
      const { savedSearch, previousHitKeys } = await context.savedSearches.recordRun(tenant, id, result.hits.map(hitKey));
      const previous = new Set(previousHitKeys ?? []);
      const newHits = previousHitKeys === null ? result.hits : result.hits.filter((hit) => !previous.has(hitKey(hit)));
      return { savedSearch, result, newHits: withQuery(newHits, highlightQuery(result)) };
    },
    recordSearchClick(_source, args: { input: RecordSearchClickInput }, context) {
      return context.searchClicks.record(context.requireTenant(), args.input);
    },
  },
  SearchAnalytics: {
    /** Drill-down, read only when selected; the parent was already checked for the admin role. */
    searches(analytics: SearchAnalyticsData, args: { query: string; first?: number | null }, context: SearchContext) {
      const tenant = context.requireTenant();
      requireAdmin(tenant, "Reading the organization's search analytics");
      const { query, first } = validateDrillDown(args.query, args.first);
      return searchesOfQuery(context.prisma, tenant, analytics, query, first);
    },
  },
  SavedSearch: {
    /**
     * Only the caller's own saved searches resolve; any other id (a colleague's, another
     * organization's, one that is not a UUID) is null, and the answer does not tell them apart.
     */
    __resolveReference(reference: { id?: unknown }, context: SearchContext) {
      if (typeof reference.id !== "string") throw badUserInput("id", `must be a UUID string, got ${reference.id === undefined ? "no id" : typeof reference.id}`);
      context.requireTenant();
      return context.savedSearchLoader().load(reference.id);
    },
  },
  Conversation: {
    /** Only echoes the reference back (this subgraph owns no Conversation field but `id`; `title` it provides on hits only). */
    __resolveReference(reference: { __typename: string; id?: unknown }) {
      if (typeof reference.id !== "string" || reference.id.length === 0) throw badUserInput("id", "must be a non-empty string");
      return reference;
    },
    /**
     * Set by SearchHit.item when the client asked for it. Anyone calling `_entities` here directly
     * (the gateway never does) gets the live title too, or an error if the conversation is gone.
     */
    async title(conversation: { id: string; title?: string }, _args: unknown, context: SearchContext) {
      if (conversation.title !== undefined) return conversation.title;
      context.requireTenant();
      const title = await context.conversationTitleLoader().load(conversation.id);
      if (title === null) throw new GraphQLError("This conversation no longer exists.", { extensions: { code: "NOT_FOUND" } });
      return title;
    },
  },
  SearchResult: {
    hits: (result: SearchResultData) => withQuery(result.hits, highlightQuery(result)),
  },
  SearchHit: {
    /** Batched over the page (highlights.ts); a hit whose entity is gone has none. */
    highlights(hit: ResolvedHit, args: { limit?: number | null }, context: SearchContext) {
      const limit = validateHighlightLimit(args.limit);
      if (hit.query === undefined) return [];
      context.requireTenant();
      return context.highlightLoader().load({ ref: hit.ref, query: hit.query, limit });
    },
    /** See searchItem. */
    item(hit: SearchHitData, _args: unknown, context: SearchContext, info: GraphQLResolveInfo) {
      return searchItem(hit.ref, context, info);
    },
    /** The same references as `item`, answered the same way (the loaders batch them with the page's items). */
    moreMatches(hit: SearchHitData, _args: unknown, context: SearchContext, info: GraphQLResolveInfo) {
      return Promise.all(hit.moreMatches.map((ref) => searchItem(ref, context, info)));
    },
  },
  ...answerResolvers.types,
  SearchHighlight: {
    matches: (passage: HighlightPassage) => passage.ranges,
    messageId: (passage: HighlightPassage) => passage.messageId ?? null,
    role: (passage: HighlightPassage) => passage.role ?? null,
  },
  SearchItem: {
    __resolveType: (item: { __typename: string }) => item.__typename,
  },
  SearchSuggestion: {
    /** A reference for the gateway to load from the owner, if the client asks more than its id. */
    item: (suggestion: SearchSuggestionData) => (suggestion.ref ? { __typename: suggestion.ref.typename, id: suggestion.ref.id } : null),
  },
  SuggestionItem: {
    __resolveType: (item: { __typename: string }) => item.__typename,
  },
};
