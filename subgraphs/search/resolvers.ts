/**
 * Resolvers of the search subgraph (schema.graphql beside this file). Hits carry entity
 * references only (`{ __typename, id }`); the gateway loads each entity's fields from the
 * subgraph that owns it, in one batched `_entities` call per type.
 */
import type { GraphQLResolverMap } from "@apollo/subgraph/dist/schema-helper/index.js";
import { badUserInput } from "../../lib/graphql/errors.js";
import { resolveEntityReferences } from "../../lib/graphql/entity-references.js";
import type { RequestContext } from "../../lib/graphql/subgraph-server.js";
import type { SearchIndexStatus } from "../conversations/search.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import type { SearchHitData, SearchInput, SearchService } from "./search-service.js";

export interface SearchContext extends RequestContext {
  search: SearchService;
  /** How far the conversations domain's index is behind for the caller. */
  indexStatus(tenant: TenantContext): Promise<SearchIndexStatus>;
}

export const resolvers: GraphQLResolverMap<SearchContext> = {
  Query: {
    // The gateway never asks this subgraph for entities (Conversation is `resolvable: false`
    // here), but anyone who reaches it can: malformed references are their mistake, not ours.
    _entities: resolveEntityReferences,
    search(_source, args: { input: SearchInput }, context) {
      return context.search.search(context.requireTenant(), args.input);
    },
    searchProviders(_source, _args, context) {
      context.requireTenant();
      return context.search.providerList.map(({ name, kind, description }) => ({ name, kind, description }));
    },
    searchIndexStatus(_source, _args, context) {
      return context.indexStatus(context.requireTenant());
    },
  },
  Conversation: {
    /** Only echoes the reference back (this subgraph owns no Conversation field but `id`). */
    __resolveReference(reference: { __typename: string; id?: unknown }) {
      if (typeof reference.id !== "string" || reference.id.length === 0) throw badUserInput("id", "must be a non-empty string");
      return reference;
    },
  },
  SearchHit: {
    item: (hit: SearchHitData) => ({ __typename: hit.ref.typename, id: hit.ref.id }),
  },
  SearchItem: {
    __resolveType: (item: { __typename: string }) => item.__typename,
  },
};
