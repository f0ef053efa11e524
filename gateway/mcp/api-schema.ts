/**
 * The supergraph's API schema: what a client of the gateway sees, without the federation
 * machinery (`join__*`, `link__*`, `@inaccessible` fields). Tools are validated against it and
 * agents read it as the `schema://supergraph` resource.
 */
import { transformSupergraphToPublicSchema } from "@theguild/federation-composition";
import { buildASTSchema, lexicographicSortSchema, parse, printSchema, type GraphQLSchema } from "graphql";

export interface ApiSchema {
  schema: GraphQLSchema;
  /** The schema as SDL, types in name order. */
  sdl: string;
}

/** From a supergraph's SDL; an API schema's own SDL (e.g. printed from introspection) loads unchanged. */
export function apiSchemaOf(supergraphSdl: string): ApiSchema {
  const schema = buildASTSchema(transformSupergraphToPublicSchema(parse(supergraphSdl)), { assumeValidSDL: true });
  return { schema, sdl: printSchema(lexicographicSortSchema(schema)) };
}
