/**
 * How a tool's operation reaches the supergraph. Either way it is an ordinary GraphQL-over-HTTP
 * request with the caller's `Authorization` header, so identity, operation limits, rate limits
 * and credit rules apply exactly as they do to any other client:
 *
 * - in the gateway (`/mcp`), through the Hive runtime's own `fetch`, in-process: no socket, and
 *   no second trip through the node:http server;
 * - from `npm run mcp` (stdio), over HTTP to a running gateway.
 */
export interface GraphQLRequest {
  query: string;
  operationName: string | null;
  variables: Record<string, unknown>;
}

export interface GraphQLErrorShape {
  message: string;
  path?: (string | number)[];
  extensions?: Record<string, unknown>;
}

export interface GraphQLAnswer {
  /** The HTTP status the gateway answered with (a refused token is 401, a spent rate limit 429). */
  status: number;
  data?: Record<string, unknown> | null;
  errors?: GraphQLErrorShape[];
}

export type GraphQLExecutor = (request: GraphQLRequest) => Promise<GraphQLAnswer>;

/** Runs requests through `fetch`-shaped `send` (the runtime's, or the global one) as the holder of `authorization`. */
export function graphqlExecutor(graphqlUrl: string, authorization: string, send: (request: Request) => Promise<Response>): GraphQLExecutor {
  return async ({ query, operationName, variables }) => {
    const response = await send(
      new Request(graphqlUrl, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/graphql-response+json, application/json", authorization },
        body: JSON.stringify({ query, variables, ...(operationName ? { operationName } : {}) }),
      }),
    );
    const text = await response.text();
    try {
      const body = JSON.parse(text) as Omit<GraphQLAnswer, "status">;
      return { status: response.status, data: body.data, errors: body.errors };
    } catch {
      return {
        status: response.status,
        errors: [{ message: `The gateway answered HTTP ${response.status} without a GraphQL response: ${text.slice(0, 200)}`, extensions: { code: response.status === 429 ? "RATE_LIMITED" : "GATEWAY_ERROR" } }],
      };
    }
  };
}
