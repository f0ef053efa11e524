/**
 * What the GraphQL spec and GraphQL-over-HTTP promise clients, whichever query planner runs.
 * The Rust planner (@graphql-hive/router-runtime) departs from both in ways the JavaScript
 * planner does not, so the gateway restores them here:
 *
 * - Variable coercion is a request error: `$id: ID!` given `null` must be HTTP 400 under
 *   `application/graphql-response+json`, with a code the client can switch on, and no `data`.
 *   The Rust planner answers 200 with a message and no code, so variables are coerced here with
 *   graphql-js against the supergraph's API schema before the planner sees them.
 * - Once execution has started, the response has a `data` entry (`null` when an error reached
 *   the root). The Rust planner drops it when the subgraph sent `"data": null`.
 * - Errors carry what the client needs (message, path, locations, `extensions.code` and the
 *   fields our subgraphs add, such as `field`), never the subgraph's URL or the query text the
 *   gateway sent it (`extensions.request` / `extensions.response`, added for failed subgraph calls).
 */
import type { GatewayPlugin } from "@graphql-hive/gateway-runtime";
import { getOperationAST, getVariableValues, GraphQLError, type GraphQLSchema } from "graphql";

/** Extensions the gateway's HTTP executor adds to errors of failed subgraph calls: internal detail. */
const INTERNAL_EXTENSIONS = ["request", "response", "stacktrace", "exception", "originalError"];
const MAX_VARIABLE_ERRORS = 20;

export function specConformance(): GatewayPlugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.variableDefinitions?.length) {
        const coerced = getVariableValues(args.schema as GraphQLSchema, operation.variableDefinitions, (args.variableValues ?? {}) as Record<string, unknown>, {
          maxErrors: MAX_VARIABLE_ERRORS,
        });
        if (coerced.errors) {
          setResultAndStopExecution({
            errors: coerced.errors.map(
              (error) =>
                new GraphQLError(error.message, {
                  nodes: error.nodes,
                  extensions: { code: "BAD_USER_INPUT", http: { status: 400 } },
                }),
            ),
          });
          return;
        }
      }
      return {
        onExecuteDone({ result, setResult }) {
          if (!result || typeof result !== "object" || Symbol.asyncIterator in result) return;
          const single = result as { data?: unknown; errors?: readonly GraphQLError[] };
          if (!single.errors?.length && "data" in single) return;
          setResult({
            ...single,
            ...(!("data" in single) || single.data === undefined ? { data: null } : {}),
            ...(single.errors ? { errors: single.errors.map(withoutInternalDetail) } : {}),
          } as never);
        },
      };
    },
  };
}

function withoutInternalDetail(error: GraphQLError): GraphQLError {
  const extensions = error.extensions ?? {};
  if (!INTERNAL_EXTENSIONS.some((key) => key in extensions)) return error;
  const kept = Object.fromEntries(Object.entries(extensions).filter(([key]) => !INTERNAL_EXTENSIONS.includes(key)));
  // The original error stays attached: the runtime's error masking decides on it, as before.
  return new GraphQLError(error.message, { nodes: error.nodes, path: error.path, extensions: kept, originalError: error.originalError });
}
