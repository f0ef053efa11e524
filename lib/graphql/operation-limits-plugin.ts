/**
 * The operation limits at the gateway, as a Hive Gateway (envelop/Yoga) plugin: tokens and
 * variables are checked on `onParams` (before parsing and before variable coercion), the document's
 * shape on `onValidate` (before graphql-js's validation rules and long before the Rust query planner,
 * which only runs at execution), counting what the client sent: the `__typename` fields that the
 * planner and the response cache add are free at the subgraphs instead (`GATEWAY_ADDED_TYPENAMES`).
 * Field suggestions are masked with graphql-armor's plugin.
 */
import { blockFieldSuggestionsPlugin } from "@escape.tech/graphql-armor-block-field-suggestions";
import type { GatewayPlugin } from "@graphql-hive/gateway-runtime";
import { GraphQLError } from "graphql";
import { checkDocument, checkTokens, checkVariables, OperationLimitError, type OperationLimits } from "./operation-limits.js";

export function operationLimitsPlugins(limits: OperationLimits): GatewayPlugin[] {
  const limitsPlugin: GatewayPlugin = {
    onParams({ params, setResult }) {
      try {
        if (typeof params.query === "string") checkTokens(params.query, limits);
        checkVariables(params.variables, limits);
      } catch (error) {
        if (!(error instanceof OperationLimitError)) throw error;
        setResult({ errors: [asBadRequest(error)] });
      }
    },
    onValidate({ params, context, setResult }) {
      const variables = (context as { params?: { variables?: Record<string, unknown> } }).params?.variables ?? null;
      try {
        checkDocument(params.documentAST, limits, params.schema, variables);
      } catch (error) {
        if (!(error instanceof OperationLimitError)) throw error;
        setResult([asBadRequest(error)]);
      }
    },
  };
  return [limitsPlugin, blockFieldSuggestionsPlugin() as GatewayPlugin];
}

/**
 * Yoga reads the HTTP status from `extensions.http` and leaves that key out of the response.
 * `spec: false`: Yoga answers validation errors 200 under `application/json` (as GraphQL over HTTP
 * allows) unless told otherwise; an exceeded limit is 400 whatever the client accepts.
 */
function asBadRequest(error: OperationLimitError): GraphQLError {
  return new GraphQLError(error.message, { extensions: { ...error.extensions, http: { status: 400, spec: false } } });
}
