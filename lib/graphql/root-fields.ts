/**
 * The root fields an operation selects, through inline fragments and fragment spreads. Several
 * gates decide on these alone (does this need a token, is this a search, does it ask for
 * `_service`), before any planner or executor looks at the document. Each fragment is visited
 * once, so the cost is linear in the document whatever its fragments spread.
 */
import { getOperationAST, Kind, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode } from "graphql";

export function rootFieldNames(document: DocumentNode, operation: OperationDefinitionNode): Set<string> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const names = new Set<string>();
  const seen = new Set<string>();
  const visit = (selectionSet: SelectionSetNode) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) names.add(selection.name.value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) visit(fragment.selectionSet);
      }
    }
  };
  visit(operation.selectionSet);
  return names;
}

/** The operation a request runs, or null when the document has no such operation (validation will say so). */
export function selectedOperation(document: DocumentNode, operationName: string | null | undefined): OperationDefinitionNode | null {
  try {
    return getOperationAST(document, operationName ?? undefined) ?? null;
  } catch {
    return null;
  }
}

/** The fields every GraphQL schema answers about itself. */
export const META_FIELDS: ReadonlySet<string> = new Set(["__typename", "__schema", "__type"]);
