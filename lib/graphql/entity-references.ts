/**
 * `Query._entities` that judges each entity reference on its own. Apollo's own resolver throws
 * a plain Error for a reference without `__typename` or with a type it does not know, and
 * throws synchronously for the whole list, so one malformed reference turns every reference of
 * the batch into null and is reported (and logged) as an internal error. Anyone who can reach a
 * subgraph can send such references, with or without a token: they are the caller's mistake.
 *
 * A subgraph opts in with `Query: { _entities: resolveEntityReferences }` in its resolvers
 * (they are applied after Apollo's, so this one wins). Each reference is checked (an object
 * whose `__typename` names an entity of this subgraph), then resolved by Apollo's resolver on
 * its own, so a failure stays at `_entities.<index>`. BAD_USER_INPUT thrown by a type's
 * `__resolveReference` for one of its key fields (`field: "id"`) is reported as
 * `representations[<index>].id`, so the caller can find the reference to fix.
 */
import { entitiesResolver } from "@apollo/subgraph/dist/types.js";
import { GraphQLError, isInterfaceType, isUnionType, type GraphQLResolveInfo } from "graphql";
import { badUserInput } from "./errors.js";

export function resolveEntityReferences(_source: unknown, args: { representations: readonly unknown[] }, context: unknown, info: GraphQLResolveInfo): Promise<unknown>[] {
  const union = info.schema.getType("_Entity");
  const entityTypes = new Set(isUnionType(union) ? union.getTypes().map((type) => type.name) : []);
  return args.representations.map((reference, index) => {
    const field = `representations[${index}]`;
    const problem = malformedReference(reference, entityTypes, info);
    if (problem) return Promise.reject(badUserInput(field, problem));
    // Deferred by a microtask so a synchronous throw stays with its reference; every reference
    // still reaches its DataLoader in the same tick, so the batch is one query as before.
    return Promise.resolve()
      .then(() => entitiesResolver({ representations: [reference], context, info })[0])
      .catch((error: unknown) => {
        throw scopedToReference(error, field);
      });
  });
}

function malformedReference(reference: unknown, entityTypes: Set<string>, info: GraphQLResolveInfo): string | null {
  if (typeof reference !== "object" || reference === null || Array.isArray(reference)) {
    return `must be an object with __typename and the type's key fields, e.g. {"__typename": "${[...entityTypes][0] ?? "Type"}", "id": "…"}`;
  }
  const typename = (reference as { __typename?: unknown }).__typename;
  if (typeof typename !== "string") return "must have a __typename naming the entity type";
  if (entityTypes.has(typename) || isInterfaceType(info.schema.getType(typename))) return null;
  const known = entityTypes.size > 0 ? [...entityTypes].join(", ") : "none";
  return `__typename "${typename.length > 60 ? `${typename.slice(0, 60)}…` : typename}" is not an entity of this subgraph (entities: ${known})`;
}

function scopedToReference(error: unknown, field: string): unknown {
  if (!(error instanceof GraphQLError) || error.extensions?.code !== "BAD_USER_INPUT") return error;
  const keyField = typeof error.extensions.field === "string" ? error.extensions.field : null;
  if (!keyField) return badUserInput(field, error.message);
  const prefix = `${keyField}: `;
  return badUserInput(`${field}.${keyField}`, error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message);
}
