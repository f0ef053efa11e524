/**
 * Whether the client's selection on a hit's `item` asks for a field this subgraph answers there
 * itself: a Conversation's `title` (schema.graphql: `SearchHit.item @provides(...)`), a
 * DocumentChunk's `headingPath`, `page` or `document` (`@shareable` with the knowledge-base
 * subgraph: provided, they would be external here, and a supergraph without that subgraph would
 * not compose). The item resolver reads those only when they are asked,
 * so a request that asks none sends no statement for them (conversation-titles.ts,
 * document-chunk-places.ts).
 */
import { Kind, type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, type SelectionSetNode } from "graphql";

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
