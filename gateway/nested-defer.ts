/**
 * `@defer` below the query's root, answered in the part that holds its parent instead of a part
 * of its own.
 *
 * Why: Hive's stitching runtime (the only Hive planner that streams; @graphql-tools/delegate
 * 12.3) leaves a deferred fragment out of the subgraph request and fills it in afterwards by
 * type merging, which only an entity can have. Inside a search result (a `SearchResult`, a
 * `SearchHit`: values of the search subgraph, with no key) there is nothing to merge, so the
 * deferred fields were never fetched at all: `providers` came back as an error part ("Cannot
 * return null for non-nullable field SearchResult.providers"), `highlights` and `item` as null
 * without an error, and a `@defer` inside `item { ... on Conversation }` was sent on to the
 * search subgraph, which refused the whole search ("Unknown directive @defer"). Measured here
 * on both planner settings; reported upstream as graphql-hive/gateway#1675 (value-type fields
 * null) and ardatan/schema-stitching#927 (the maintainer: only root fields can be deferred).
 *
 * Without the directive the same fields are fetched with their parent, in the same subgraph
 * request, and arrive in its part. Our subgraphs (Apollo Server 5 on graphql 16) cannot stream
 * a field of their own answer, so deferring such a field could save nothing anyway: the search
 * subgraph computes `highlights` before it answers either way. The incremental delivery
 * proposal lets a server deliver deferred data early, and clients that read `@defer` (Apollo
 * Client, Relay) accept it. `@defer` on a fragment of a root type (directly under the query's
 * root, or in a fragment spread there) is kept: each root field is a subgraph request of its
 * own, which both root-defer.ts and the stitching runtime stream correctly.
 */
import { GraphQLSchema, TypeInfo, visit, visitWithTypeInfo, type DirectiveNode, type DocumentNode, type FragmentSpreadNode, type InlineFragmentNode } from "graphql";

const inlined = new WeakMap<DocumentNode, DocumentNode>();

/**
 * The document with `@defer` removed from every fragment whose parent type is not a root
 * operation type; the same document object when it has none (so that per-document caches keep
 * working). Cached per parsed document, which Yoga parses once and reuses.
 */
export function inlineNestedDefer(document: DocumentNode, schema: GraphQLSchema): DocumentNode {
  let answer = inlined.get(document);
  if (answer) return answer;
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter((type) => type != null));
  const typeInfo = new TypeInfo(schema);
  let changed = false;
  const withoutDefer = (node: InlineFragmentNode | FragmentSpreadNode): InlineFragmentNode | FragmentSpreadNode | undefined => {
    if (!node.directives?.some(isDefer)) return undefined;
    // The type the fragment sits in; unknown (an invalid document, refused before planning)
    // counts as nested, since only a root type's fragments are known to stream correctly.
    const parent = typeInfo.getParentType();
    if (parent && roots.has(parent as never)) return undefined;
    changed = true;
    return { ...node, directives: node.directives.filter((directive) => !isDefer(directive)) };
  };
  const rewritten = visit(document, visitWithTypeInfo(typeInfo, { InlineFragment: withoutDefer, FragmentSpread: withoutDefer }));
  answer = changed ? rewritten : document;
  inlined.set(document, answer);
  return answer;
}

function isDefer(directive: DirectiveNode): boolean {
  return directive.name.value === "defer";
}
