/**
 * A subgraph whose database is unavailable answers SERVICE_UNAVAILABLE with a retry hint
 * (lib/database/faults.ts); the code passes through the gateway as it is. When that is all the
 * answer holds (no root field with a value), the gateway's HTTP status says it too: 503 with
 * `Retry-After`, as the subgraph's own was, which the gateway's HTTP executor does not carry over.
 * An answer with some data stays 200, the code at each field it could not fill.
 *
 * Likewise an answer that is only OVERLOADED with a retry hint (an organization past its backlog
 * of documents waiting to be indexed): 429 with `Retry-After`, as an upload refused at admission is.
 */
import type { GatewayPlugin } from "@graphql-hive/gateway-runtime";
import { GraphQLError } from "graphql";
import { isWholeAnswerOverloaded, isWholeAnswerUnavailable } from "../lib/graphql/errors.js";

export function serviceUnavailableStatus(): GatewayPlugin {
  return {
    onExecute() {
      return {
        onExecuteDone({ result, setResult }) {
          if (!result || typeof result !== "object" || Symbol.asyncIterator in result) return;
          const single = result as { data?: Record<string, unknown> | null; errors?: readonly GraphQLError[] };
          const status = isWholeAnswerUnavailable(single) ? 503 : isWholeAnswerOverloaded(single) ? 429 : null;
          if (status === null) return;
          const retryAfterSeconds = Math.max(1, ...single.errors!.map((error) => Number(error.extensions?.retryAfterSeconds) || 1));
          // Yoga answers with the status and headers of `extensions.http` and leaves `http` out of the body.
          const http = { status, headers: { "retry-after": String(retryAfterSeconds) } };
          const errors = single.errors!.map(
            (error) => new GraphQLError(error.message, { nodes: error.nodes, path: error.path, extensions: { ...error.extensions, http }, originalError: error.originalError }),
          );
          setResult({ ...single, errors } as never);
        },
      };
    },
  };
}
