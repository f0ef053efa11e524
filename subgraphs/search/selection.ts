/**
 * What the client selected of a result, so work only a selected field needs (facets, an
 * answer's text) is done only when asked for.
 */
import { Kind, type FragmentDefinitionNode, type GraphQLResolveInfo, type SelectionSetNode } from "graphql";

/** Fragments nest at most this deep before the search stops looking (the gateway's limits bound them long before). */
const MAX_SELECTION_DEPTH = 8;

/**
 * Whether the client selected this field of the result (directly, or inside a fragment on it):
 * work only it needs (facets) is then done, and a search that does not ask pays nothing.
 */
export function selectsField(info: GraphQLResolveInfo, name: string): boolean {
  const within = (selectionSet: SelectionSetNode | undefined, fragments: Record<string, FragmentDefinitionNode>, depth: number): boolean => {
    if (!selectionSet || depth > MAX_SELECTION_DEPTH) return false;
    return selectionSet.selections.some((selection) =>
      selection.kind === Kind.FIELD
        ? selection.name.value === name
        : within(selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments[selection.name.value]?.selectionSet, fragments, depth + 1),
    );
  };
  return info.fieldNodes.some((node) => within(node.selectionSet, info.fragments, 0));
}

