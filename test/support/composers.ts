/**
 * Both Federation v2 composers over the same subgraph schemas: The Guild's (what `npm run compose`
 * ships) and Apollo's `@apollo/composition` (what Rover, GraphOS and Apollo Router users run).
 * Apollo's is Elastic-2.0, so it is a devDependency used only by tests, never imported by the
 * product. A platform team composes our subgraphs with either; both must accept them and agree
 * on the API schema clients see.
 */
import { buildASTSchema, lexicographicSortSchema, parse, printSchema, type GraphQLSchema } from "graphql";
import { composeServices as composeWithApollo } from "@apollo/composition";
import { transformSupergraphToPublicSchema } from "@theguild/federation-composition";
import { composeSupergraph, CompositionError, type LoadedSubgraph } from "../../lib/composition/compose.js";

export type ComposerName = "apollo" | "guild";

export interface Composition {
  composer: ComposerName;
  /** The composer's own error messages; empty when it composed. */
  errors: string[];
  supergraphSdl: string | null;
  /** The API schema clients see (join metadata and @inaccessible elements removed), or null on errors. */
  apiSchema: GraphQLSchema | null;
}

export function composeWith(composer: ComposerName, subgraphs: LoadedSubgraph[]): Composition {
  if (composer === "apollo") {
    const result = composeWithApollo(subgraphs.map((subgraph) => ({ name: subgraph.name, url: subgraph.url, typeDefs: subgraph.typeDefs })));
    if (result.errors) return { composer, errors: result.errors.map((error) => error.message), supergraphSdl: null, apiSchema: null };
    return { composer, errors: [], supergraphSdl: result.supergraphSdl, apiSchema: result.schema.toAPISchema().toGraphQLJSSchema() };
  }
  // The Guild's side is exactly what `npm run compose` runs.
  let supergraphSdl: string;
  try {
    supergraphSdl = composeSupergraph(subgraphs);
  } catch (error) {
    if (!(error instanceof CompositionError)) throw error;
    return { composer, errors: error.problems, supergraphSdl: null, apiSchema: null };
  }
  return { composer, errors: [], supergraphSdl, apiSchema: buildASTSchema(transformSupergraphToPublicSchema(parse(supergraphSdl))) };
}

/** The API schema as text in a canonical order, so two composers' schemas compare as strings (descriptions included). */
export function printApiSchema(schema: GraphQLSchema): string {
  return printSchema(lexicographicSortSchema(schema));
}

/**
 * Composes with both and says what is wrong, or null when both composed the same API schema:
 * the rule every `@provides`, `@requires`, `@override` and `@shareable` change must keep.
 */
export function compositionDisagreement(subgraphs: LoadedSubgraph[]): string | null {
  const results = (["guild", "apollo"] as const).map((composer) => composeWith(composer, subgraphs));
  const failed = results.filter((result) => result.errors.length > 0);
  if (failed.length > 0) return failed.map((result) => `${result.composer} rejects the subgraphs:\n  ${result.errors.join("\n  ")}`).join("\n");
  return apiSchemaDifference(results[0]!.apiSchema!, results[1]!.apiSchema!);
}

/** Null when the two API schemas print the same, else the first line where The Guild's (first) and Apollo's (second) differ. */
export function apiSchemaDifference(guild: GraphQLSchema, apollo: GraphQLSchema): string | null {
  const a = printApiSchema(guild).split("\n");
  const b = printApiSchema(apollo).split("\n");
  for (let line = 0; line < Math.max(a.length, b.length); line++) {
    if (a[line] !== b[line]) return `the composers' API schemas differ at line ${line + 1}: guild ${JSON.stringify(a[line] ?? "")}, apollo ${JSON.stringify(b[line] ?? "")}`;
  }
  return null;
}
