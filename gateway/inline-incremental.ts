/**
 * The `@defer` and `@stream` our subgraphs would have to carry out themselves, removed before
 * planning: their fields are fetched with their parent and arrive in the part that holds it.
 *
 * Why `@defer` below the query's root: Hive's stitching runtime (the only Hive planner that
 * streams; @graphql-tools/delegate 12.3) leaves a deferred fragment out of the subgraph request
 * and fills it in afterwards by type merging, which only an entity can have. Inside a search
 * result (a `SearchResult`, a `SearchHit`: values of the search subgraph, with no key) there is
 * nothing to merge, so the deferred fields were never fetched at all: `providers` came back as
 * an error part ("Cannot return null for non-nullable field SearchResult.providers"),
 * `highlights` and `item` as null without an error, and a `@defer` inside
 * `item { ... on Conversation }` was sent on to the search subgraph, which refused the whole
 * search ("Unknown directive @defer"). Measured here on both planner settings; reported upstream
 * as graphql-hive/gateway#1675 (value-type fields null) and ardatan/schema-stitching#927 (the
 * maintainer: only root fields can be deferred).
 *
 * Why `@stream` on a root type's list field: the stitching runtime sends it on to the subgraph
 * (it streams only lists below the root itself), and the subgraph refuses the whole operation
 * ("Unknown directive @stream").
 *
 * Without the directive the same fields are fetched in the same subgraph request and arrive
 * complete. Our subgraphs (Apollo Server 5 on graphql 16) cannot stream a part of their own
 * answer, so such a directive could save nothing anyway: the search subgraph computes
 * `highlights` before it answers either way. The incremental delivery proposal lets a server
 * deliver deferred or streamed data early, and clients that read them (Apollo Client, Relay)
 * accept it. Kept: `@defer` on a fragment of a root type (directly under the root, or in a
 * fragment spread there), since each root field is a subgraph request of its own, which
 * root-defer.ts and the stitching runtime both stream correctly; and `@stream` below the root,
 * which the stitching runtime streams from the list it received.
 */
import { GraphQLSchema, TypeInfo, visit, visitWithTypeInfo, type DirectiveNode, type DocumentNode, type FieldNode, type FragmentSpreadNode, type GraphQLCompositeType, type InlineFragmentNode } from "graphql";

// Per schema too: a supergraph reloaded under the same parsed document plans on the new one.
const inlined = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, DocumentNode>>();

/**
 * The document without `@defer` on fragments whose parent type is not a root operation type
 * and without `@stream` on a root type's fields; the same document object when it has neither
 * (so that per-document caches keep working). Cached per parsed document, which Yoga parses
 * once and reuses.
 */
export function inlineIncremental(document: DocumentNode, schema: GraphQLSchema): DocumentNode {
  let bySchema = inlined.get(schema);
  if (!bySchema) inlined.set(schema, (bySchema = new WeakMap()));
  let answer = bySchema.get(document);
  if (answer) return answer;
  const roots = new Set<GraphQLCompositeType>([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter((type) => type != null));
  const typeInfo = new TypeInfo(schema);
  let changed = false;
  // The type the selection sits in; unknown (an invalid document, refused before planning)
  // counts as nested, since only a root type's fragments are known to stream correctly.
  const atRoot = () => {
    const parent = typeInfo.getParentType();
    return parent != null && roots.has(parent);
  };
  const without = <Node extends InlineFragmentNode | FragmentSpreadNode | FieldNode>(node: Node, name: "defer" | "stream"): Node => {
    changed = true;
    return { ...node, directives: node.directives!.filter((directive) => !named(directive, name)) };
  };
  const fragment = (node: InlineFragmentNode | FragmentSpreadNode) => (node.directives?.some((directive) => named(directive, "defer")) && !atRoot() ? without(node, "defer") : undefined);
  const rewritten = visit(
    document,
    visitWithTypeInfo(typeInfo, {
      InlineFragment: fragment,
      FragmentSpread: fragment,
      Field: (node) => (node.directives?.some((directive) => named(directive, "stream")) && atRoot() ? without(node, "stream") : undefined),
    }),
  );
  answer = changed ? rewritten : document;
  bySchema.set(document, answer);
  return answer;
}

function named(directive: DirectiveNode, name: string): boolean {
  return directive.name.value === name;
}
