/**
 * The query planner, chosen per operation: the configured planner (by default the Rust planner
 * of @graphql-hive/router-runtime) for every operation as before, and the JavaScript planner
 * (Hive's stitching runtime) for the operations that ask for incremental delivery (`@defer` or
 * `@stream`).
 *
 * Why: the Rust planner's runtime executes a whole query plan and returns one result. Given
 * `... @defer { all: search(...) }` it neither refuses nor streams: it answers everything in
 * one part, after the slowest provider (measured here with router-runtime 1.4.23). The stitching
 * runtime executes with graphql-tools' executor, which delivers deferred fragments as later
 * parts (`multipart/mixed` or `text/event-stream`). Both share the gateway's subgraph transport,
 * so header propagation, HMAC signing, timeouts, in-flight merging and outage handling are the
 * same for either. With the Rust planner configured, `@defer` on fragments of the query's root
 * (the streamed search's shape) is split into operations the Rust planner answers one by one
 * (root-defer.ts); only the shapes a split cannot answer go to the stitching runtime. `@defer`
 * below the root and `@stream` on a root field are answered whole on either planner
 * (inline-incremental.ts). The cost is measured by `npm run bench -- --scenario defer` (docs/search.md).
 */
import { handleFederationSupergraph, type UnifiedGraphHandler } from "@graphql-mesh/fusion-runtime";
import { createDefaultExecutor } from "@graphql-mesh/transport-common";
import { unifiedGraphHandler as rustPlannerHandler } from "@graphql-hive/router-runtime";
import { BREAK, visit, type DocumentNode } from "graphql";
import { inlineIncremental } from "./inline-incremental.js";
import { executeRootDefer, splitRootDefer } from "./root-defer.js";

const INCREMENTAL_DIRECTIVES = new Set(["defer", "stream"]);

/**
 * The planner that answers whole operations ("rust" or "js"), with every operation that asks
 * for incremental delivery executed by the stitching runtime on subgraph requests of their own.
 */
export function plannerPerOperation(wholeAnswers: "rust" | "js"): UnifiedGraphHandler {
  return async (options) => {
    // Built on the first streamed operation: a gateway that never sees one never builds it.
    let streaming: Promise<ReturnType<typeof createDefaultExecutor>> | undefined;
    const streamingExecutor = () =>
      (streaming ??= Promise.resolve(
        handleFederationSupergraph({
          ...options,
          // Hive batches the subgraph requests an operation makes in the same tick into one,
          // keyed by the request's context: the deferred search would travel with the first
          // one, and the first part would wait for the slowest provider. A context of its own
          // per subgraph request (reading through to the request's, so headers, signing and
          // limits see the same values) sends each on its own.
          onSubgraphExecute: (subgraph, request) => options.onSubgraphExecute(subgraph, request.context ? { ...request, context: Object.create(request.context) } : request),
        }),
      ).then((stitched) => createDefaultExecutor(stitched.unifiedGraph)));
    const whole = wholeAnswers === "rust" ? await rustPlannerHandler(options) : await handleFederationSupergraph(options);
    const wholeExecutor = whole.executor ?? createDefaultExecutor(whole.unifiedGraph);
    return {
      // The whole-answer planner's API schema validates every operation, so an operation is
      // accepted or refused the same way whichever planner then runs it.
      unifiedGraph: whole.unifiedGraph,
      getSubgraphSchema: whole.getSubgraphSchema,
      ...(whole.overrideLabels ? { overrideLabels: whole.overrideLabels } : {}),
      executor: (asked) => {
        if (!asksForIncrementalDelivery(asked.document)) return wholeExecutor(asked);
        // @defer below the root and @stream on a root field are answered whole
        // (inline-incremental.ts): what is left may be a root @defer, or no incremental delivery
        // at all (then the whole-answer planner answers).
        const document = inlineIncremental(asked.document, whole.unifiedGraph);
        const request = document === asked.document ? asked : { ...asked, document };
        if (!asksForIncrementalDelivery(document)) return wholeExecutor(request);
        // @defer at the root stays on the Rust plan, one operation per part (root-defer.ts); the
        // JavaScript planner configured streams through its own executor, as below.
        const split = wholeAnswers === "rust" ? splitRootDefer(request.document, request.operationName) : null;
        if (split) return executeRootDefer(split, request, wholeExecutor);
        return streamingExecutor().then((execute) => execute(request));
      },
    };
  };
}

const incrementalByDocument = new WeakMap<DocumentNode, boolean>();

/** Whether any selection in the document carries `@defer` or `@stream` (a document is parsed once and cached by Yoga, so this runs once per document). */
export function asksForIncrementalDelivery(document: DocumentNode): boolean {
  let answer = incrementalByDocument.get(document);
  if (answer !== undefined) return answer;
  answer = false;
  visit(document, {
    Directive(node) {
      if (!INCREMENTAL_DIRECTIVES.has(node.name.value)) return undefined;
      answer = true;
      return BREAK;
    },
  });
  incrementalByDocument.set(document, answer);
  return answer;
}
