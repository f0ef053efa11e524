/**
 * What the client selected of a result, so work only a selected field needs (facets, an
 * answer's text) is done only when asked for.
 */
import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from "graphql";

/** Fragments nest at most this deep before the search stops looking (the gateway's limits bound them long before). */
const MAX_SELECTION_DEPTH = 8;

/**
 * Whether the client selected this field of the result (directly, or inside a fragment on it),
 * or with several names, that path of fields (`selectsField(info, "result", "facets")`): work
 * only it needs (facets) is then done, and a search that does not ask pays nothing.
 */
export function selectsField(info: GraphQLResolveInfo, ...path: [string, ...string[]]): boolean {
  const within = (selectionSet: SelectionSetNode | undefined, rest: readonly string[], depth: number): boolean => {
    if (!selectionSet || depth > MAX_SELECTION_DEPTH) return false;
    const [name, ...deeper] = rest;
    return selectionSet.selections.some((selection) =>
      selection.kind === Kind.FIELD
        ? selection.name.value === name && (deeper.length === 0 || within(selection.selectionSet, deeper, depth + 1))
        : within(selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : info.fragments[selection.name.value]?.selectionSet, rest, depth + 1),
    );
  };
  return info.fieldNodes.some((node) => within(node.selectionSet, path, 0));
}

