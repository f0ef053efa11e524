/**
 * Fields the search subgraph answers itself on a hit's `item`, for entities other subgraphs own,
 * so a page that asks only those needs no `_entities` fetch to the owner:
 * - a Conversation's `title` (schema.graphql: `SearchHit.item @provides(...)`): the second hop
 *   cost the gateway path about a third of its throughput (issue 12);
 * - a DocumentChunk's `headingPath`, `page` and `document { id fileName }` (`@shareable` with the
 *   knowledge-base subgraph: provided, they would be external here, and a supergraph composed
 *   without that subgraph would not compose): the hop cost the search page 15-35 ms of its first
 *   results on the embedded database (docs/keystroke-latency.md).
 * The owners stay the source of truth: each value comes from the owning domain's public search
 * module (`titles`, `places`, the latter under the same visibility rule as its highlights), read
 * live for every request, even when the page itself came from the result cache, so a rename or an
 * unshare shows at once; any other field still comes from the owner through the gateway. The item
 * resolver reads them only when they are asked (`selectsProvidedField`), so a request that asks
 * none sends no statement for them.
 */
import DataLoader from "dataloader";
import { Kind, type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, type SelectionSetNode } from "graphql";
import type { TenantContext } from "../../lib/tenancy/token.js";

/** An owning domain's live read of one such field for a page's entities, by id (lowercase). */
export type OwnedFieldReader<Value> = (tenant: TenantContext, ids: readonly string[]) => Promise<Map<string, Value>>;

/**
 * One per request and field (made after the tenant is known): all the page's hits of the type
 * (and a saved search run's `newHits`, which repeat them) share one statement. null: no entity
 * the caller may see has this id.
 */
export function createOwnedFieldLoader<Value>(read: OwnedFieldReader<Value>, tenant: TenantContext): DataLoader<string, Value | null> {
  return new DataLoader<string, Value | null>(
    async (ids) => {
      const values = await read(tenant, ids);
      return ids.map((id) => values.get(id.toLowerCase()) ?? null);
    },
    // A page holds at most 100 hits, and newHits repeats them: one batch covers both.
    { maxBatchSize: 200 },
  );
}

/** The provided fields of each member of SearchItem that has any. */
export const PROVIDED_FIELDS = {
  Conversation: new Set(["title"]),
  DocumentChunk: new Set(["headingPath", "page", "document"]),
} as const;

export type ProvidingType = keyof typeof PROVIDED_FIELDS;

// Fragments nest only as deep as the operation limits let a document nest; this bounds a cycle
// the validator would have rejected anyway, so a bug cannot become a stack overflow.
const MAX_FRAGMENT_DEPTH = 32;

// graphql-js hands every hit of a page the same fieldNodes array, so the answer is worked out once per page and type.
const answered = new WeakMap<readonly FieldNode[], Map<ProvidingType, boolean>>();

/** Whether the selection on this `item` field asks for one of `type`'s provided fields (inline fragments and named fragments included). */
export function selectsProvidedField(info: GraphQLResolveInfo, type: ProvidingType): boolean {
  let byType = answered.get(info.fieldNodes);
  if (!byType) answered.set(info.fieldNodes, (byType = new Map()));
  let selects = byType.get(type);
  if (selects === undefined) {
    selects = info.fieldNodes.some((node: FieldNode) => node.selectionSet !== undefined && selectsOnUnion(node.selectionSet, info.fragments, type, 0));
    byType.set(type, selects);
  }
  return selects;
}

function selectsOnUnion(selectionSet: SelectionSetNode, fragments: Record<string, FragmentDefinitionNode>, type: ProvidingType, depth: number): boolean {
  if (depth > MAX_FRAGMENT_DEPTH) return false;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      // A field straight on the union can only be __typename.
      continue;
    }
    const typeCondition = selection.kind === Kind.INLINE_FRAGMENT ? selection.typeCondition?.name.value : fragments[selection.name.value]?.typeCondition.name.value;
    const inner = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments[selection.name.value]?.selectionSet;
    if (!inner) continue;
    // Untyped inline fragments (`... @include(if: $x) { … }`) and `... on SearchItem` hold more of the same.
    if (typeCondition === undefined || typeCondition === "SearchItem") {
      if (selectsOnUnion(inner, fragments, type, depth + 1)) return true;
    } else if (typeCondition === type && selectsOnMember(inner, fragments, PROVIDED_FIELDS[type], depth + 1)) {
      return true;
    }
  }
  return false;
}

function selectsOnMember(selectionSet: SelectionSetNode, fragments: Record<string, FragmentDefinitionNode>, fields: ReadonlySet<string>, depth: number): boolean {
  if (depth > MAX_FRAGMENT_DEPTH) return false;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (fields.has(selection.name.value)) return true;
      continue;
    }
    const inner = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments[selection.name.value]?.selectionSet;
    if (inner && selectsOnMember(inner, fragments, fields, depth + 1)) return true;
  }
  return false;
}
