/**
 * `@defer` on fragments of the query's root, answered by the planner that answers whole
 * operations (the Rust planner), each part an operation of its own.
 *
 * Why: a fragment deferred at the root depends on nothing the rest of the operation returns, so
 * it is an independent query. The stitching runtime (the only Hive planner that streams) pays for
 * its generality on every request: measured on a LOCAL-only search at 2,000 conversations on
 * PostgreSQL, the JavaScript planner alone took the first part from 1.00× to 1.27× of the same
 * search on the Rust plan, most of the 1.36× the whole streamed operation cost (docs/search.md,
 * "Slow providers streamed"). Splitting the operation keeps every part on the Rust plan: the
 * first part costs what the same operation without the deferred fragments costs, and the
 * deferred ones run beside it and arrive when they are done, in the order they finish.
 *
 * Only the shape our clients send is split: a query whose `@defer`s all sit on inline fragments
 * directly under the root, unconditional (no `if:`, no other directive on the fragment), with at
 * least one field outside them, and no `@defer` or `@stream` anywhere else. Everything else
 * (nested `@defer`, `@stream`, mutations, whose root fields run in order) goes to the stitching
 * runtime as before (incremental-planner.ts).
 */
import { GraphQLError, Kind, visit, type DefinitionNode, type DocumentNode, type FragmentDefinitionNode, type InlineFragmentNode, type OperationDefinitionNode, type SelectionSetNode } from "graphql";
import type { Executor } from "@graphql-mesh/transport-common";

// The gateway executor's single-result type (graphql-tools', through the transport package we
// depend on), its data of any type: the executor's caller picks it (TReturn).
declare const gatewayExecutor: Executor;
type ExecutionResult = Exclude<Awaited<ReturnType<typeof gatewayExecutor<any>>>, AsyncIterable<unknown>>;

/** The operations one streamed request becomes: the first part's, and one per deferred fragment. */
export interface RootDeferSplit {
  initial: DocumentNode;
  deferred: Array<{ label: string | undefined; document: DocumentNode }>;
}

/** What a part's request needs of the gateway's execution request; the rest is passed on as it is. */
interface PartRequest {
  document: DocumentNode;
  context?: object | undefined;
}


const splits = new WeakMap<DocumentNode, Map<string, RootDeferSplit | null>>();

/**
 * The split of this document's operation, or null when it is not of the shape split here.
 * Cached per parsed document (Yoga parses a document once and reuses it) and operation name.
 */
export function splitRootDefer(document: DocumentNode, operationName: string | null | undefined): RootDeferSplit | null {
  let byName = splits.get(document);
  if (!byName) splits.set(document, (byName = new Map()));
  const key = operationName ?? "";
  if (byName.has(key)) return byName.get(key)!;
  const split = computeSplit(document, operationName);
  byName.set(key, split);
  return split;
}

function computeSplit(document: DocumentNode, operationName: string | null | undefined): RootDeferSplit | null {
  const operations = document.definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((candidate) => candidate.name?.value === operationName) : operations.length === 1 ? operations[0] : undefined;
  if (!operation || operation.operation !== "query") return null;
  const kept: OperationDefinitionNode["selectionSet"]["selections"][number][] = [];
  const deferred: InlineFragmentNode[] = [];
  for (const selection of operation.selectionSet.selections) {
    const defer = selection.directives?.find((directive) => directive.name.value === "defer");
    if (!defer) {
      kept.push(selection);
      continue;
    }
    if (selection.kind !== Kind.INLINE_FRAGMENT || selection.directives!.length !== 1) return null;
    if (defer.arguments?.some((argument) => argument.name.value === "if")) return null;
    deferred.push(selection);
  }
  if (deferred.length === 0 || kept.length === 0) return null;
  const fragments = document.definitions.filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION);
  const build = (selectionSet: SelectionSetNode): DocumentNode | null => {
    const document = operationDocument(operation, selectionSet, fragments);
    // A @defer or @stream left anywhere (nested, in a named fragment) is the stitching runtime's to stream.
    return hasIncrementalDirective(document) ? null : document;
  };
  const initial = build({ kind: Kind.SELECTION_SET, selections: kept });
  if (!initial) return null;
  const parts: RootDeferSplit["deferred"] = [];
  for (const fragment of deferred) {
    const document = build({ kind: Kind.SELECTION_SET, selections: [{ ...fragment, directives: [] }] });
    if (!document) return null;
    const label = fragment.directives![0]!.arguments?.find((argument) => argument.name.value === "label")?.value;
    // The label is a literal String by the spec's validation rule (DeferStreamDirectiveLabel).
    parts.push({ label: label?.kind === Kind.STRING ? label.value : undefined, document });
  }
  return { initial, deferred: parts };
}

/** An operation of these root selections, with the variables and named fragments they use and no others. */
function operationDocument(operation: OperationDefinitionNode, selectionSet: SelectionSetNode, fragments: FragmentDefinitionNode[]): DocumentNode {
  const byName = new Map(fragments.map((fragment) => [fragment.name.value, fragment]));
  const usedFragments = new Set<string>();
  const usedVariables = new Set<string>();
  const collect = (node: SelectionSetNode | FragmentDefinitionNode) =>
    visit(node, {
      Variable(variable) {
        usedVariables.add(variable.name.value);
      },
      FragmentSpread(spread) {
        const name = spread.name.value;
        if (usedFragments.has(name)) return;
        usedFragments.add(name);
        const fragment = byName.get(name);
        if (fragment) collect(fragment);
      },
    });
  collect(selectionSet);
  // Variables in the operation's own directives count too.
  for (const directive of operation.directives ?? []) visit(directive, { Variable: (variable) => void usedVariables.add(variable.name.value) });
  const definitions: DefinitionNode[] = [
    { ...operation, selectionSet, variableDefinitions: (operation.variableDefinitions ?? []).filter((definition) => usedVariables.has(definition.variable.name.value)) },
    ...fragments.filter((fragment) => usedFragments.has(fragment.name.value)),
  ];
  return { kind: Kind.DOCUMENT, definitions };
}

function hasIncrementalDirective(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Directive(node) {
      if (node.name.value !== "defer" && node.name.value !== "stream") return undefined;
      found = true;
      return false;
    },
  });
  return found;
}

/**
 * Runs the split operation: every part starts now, the first part is yielded as soon as it is
 * done, then each deferred one as it finishes, in the stitching runtime's shape (graphql-js's
 * 2022 @defer format, what Apollo Client and Relay read). A part's errors travel in its own payload. If the
 * first part has no data (the operation failed as a whole), nothing more is sent, as graphql-js
 * sends no deferred part under a null parent.
 */
export async function* executeRootDefer<Request extends PartRequest>(split: RootDeferSplit, request: Request, execute: (request: Request) => unknown): AsyncGenerator<ExecutionResult> {
  // A context of its own per part (reading through to the request's, so headers, signing and
  // limits see the same values): Hive batches the subgraph requests made in the same tick under
  // one context into one HTTP request, which would hold the first part back until the slowest
  // deferred search answered.
  const run = (document: DocumentNode) =>
    Promise.resolve(execute({ ...request, document, ...(request.context ? { context: Object.create(request.context) } : {}) })).then(singleResult);
  const initial = run(split.initial);
  // A deferred part that throws (rather than answering with errors) becomes its payload's error;
  // one still running when the first part failed is left to finish unobserved.
  const pending = new Map(
    split.deferred.map((part, index) => [index, run(part.document).then((result) => ({ index, result }), (error: unknown) => ({ index, result: { data: null, errors: [asGraphQLError(error)] } as ExecutionResult }))]),
  );
  const first = await initial;
  if (first.data == null) {
    yield first;
    return;
  }
  yield { ...first, hasNext: true };
  while (pending.size > 0) {
    const { index, result } = await Promise.race(pending.values());
    pending.delete(index);
    const label = split.deferred[index]!.label;
    yield {
      incremental: [{ data: result.data ?? null, path: [], ...(label !== undefined ? { label } : {}), ...(result.errors?.length ? { errors: result.errors } : {}) }],
      hasNext: pending.size > 0,
    };
  }
}

/** A whole-answer planner returns one result; anything streamed from it would be a bug of ours. */
function singleResult(result: unknown): ExecutionResult {
  if (result && typeof result === "object" && Symbol.asyncIterator in result) throw new Error("the whole-answer planner streamed a split @defer part");
  return result as ExecutionResult;
}

function asGraphQLError(error: unknown): GraphQLError {
  return error instanceof GraphQLError ? error : new GraphQLError(error instanceof Error ? error.message : String(error), error instanceof Error ? { originalError: error } : {});
}
