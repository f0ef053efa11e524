/**
 * `/mcp` on the gateway's port: MCP's Streamable HTTP transport, stateless (each POST carries
 * its own JSON-RPC messages and gets a JSON answer; there is no session to keep or to lose
 * between gateway replicas).
 *
 * In order, before any MCP work:
 * 1. a browser origin not on the gateway's CORS list is refused (403): MCP asks servers to check
 *    Origin so a web page cannot drive a local agent's server (DNS rebinding); preflights of
 *    listed origins are answered here;
 * 2. the bearer token is verified with the gateway's own verifier (lib/tenancy/token.ts): without
 *    a valid one, 401 with `WWW-Authenticate: Bearer` (RFC 6750), which is how MCP clients learn
 *    they must authenticate;
 * 3. only POST is served (GET's server-to-client stream and DELETE's session end need sessions);
 * 4. the body is bounded (`maxRequestBytes`, 1 MiB by default: tool arguments are small), and a
 *    JSON-RPC batch to `maxBatchMessages` (10 by default);
 * 5. the caller's rate-limit budget is charged for the MCP work itself (`charge`): one point per
 *    JSON-RPC message of a batch, and what `resources/read` returns by the byte, like a GraphQL
 *    body (the schema resource is the whole SDL: 300 unmetered batches of reads once sent 1.84 GB).
 *
 * Tools then run through the gateway runtime in-process with the same Authorization header, so
 * each tool call of a batch is also limited, rate-limited and charged exactly like the GraphQL
 * request it is.
 */
import type http from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { bodyPoints, type CallerIdentity, rateLimitBody, type RateLimitRejection, remoteAddressOf } from "../../lib/graphql/rate-limit.js";
import { declaresAtMost, declaresMoreThan, readBoundedBody, refuseOversizedBody } from "../../lib/http-body.js";
import type { Logger } from "../../lib/logger.js";
import { verifyBearerToken, type TokenSettings } from "../../lib/tenancy/token.js";
import { apiSchemaOf } from "./api-schema.js";
import { graphqlExecutor } from "./graphql-executor.js";
import { createMcpServer } from "./mcp-server.js";
import { DEFAULT_TOOLS_DIRECTORY, loadToolCatalog } from "./tool-catalog.js";
import { DEFAULT_OUTPUT_BOUNDS, type OutputBounds } from "./tool-result.js";

export const MCP_PATH = "/mcp";

/** What `startGateway`'s `mcp` option sets; every field has a default. */
export interface McpEndpointOptions {
  /** Largest request body accepted (default 1 MiB). */
  maxRequestBytes?: number;
  /** Most JSON-RPC messages in one batch (default 10; the SDK's own bound is 100). */
  maxBatchMessages?: number;
  /** Where the tools' .graphql files are (default gateway/mcp/tools/). */
  toolsDirectory?: string;
  /** How much text and structured content one tool result may carry. */
  bounds?: OutputBounds;
}

export interface McpEndpointContext {
  supergraphSdl: string;
  auth: TokenSettings;
  /** The runtime's GraphQL endpoint, as a URL the runtime accepts (e.g. http://gateway/graphql). */
  graphqlUrl: string;
  /** The Hive runtime's fetch: runs a GraphQL request in-process. */
  execute(request: Request): Promise<Response>;
  allowedOrigins: ReadonlySet<string>;
  corsMaxAgeSeconds: number;
  logger: Logger;
  /** Spends `points` of the caller's rate-limit budgets (absent: no rate limits); null when the request may go on. */
  charge?(caller: CallerIdentity | null, clientAddress: string, points: number): Promise<RateLimitRejection | null>;
}

const DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024;
/**
 * MCP 2025-06-18 dropped JSON-RPC batches; older clients still send them, but no agent needs 100
 * messages in one POST. A batch of 100 schema reads (5.6 MB of answer) took the gateway's event
 * loop for long enough that another organization's queries got no answer while four were in flight,
 * at 100 points each; ten per POST bound what one request can hold the loop for.
 */
const DEFAULT_MAX_BATCH_MESSAGES = 10;
const REALM = "context-search";

/**
 * The `/mcp` handler. Loads and validates the tools now, so a broken tool file stops the gateway's
 * start; a tool this supergraph cannot serve is left out with one warning.
 */
export function mcpEndpoint(options: McpEndpointOptions, context: McpEndpointContext) {
  const apiSchema = apiSchemaOf(context.supergraphSdl);
  const { tools, unsupported } = loadToolCatalog(apiSchema.schema, options.toolsDirectory ?? DEFAULT_TOOLS_DIRECTORY);
  for (const problem of unsupported) context.logger.warn(`${problem.message}; the tool is left out of ${MCP_PATH}`);
  const maxRequestBytes = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  const bounds = options.bounds ?? DEFAULT_OUTPUT_BOUNDS;

  const corsHeaders = (origin: string | undefined): Record<string, string> =>
    origin
      ? {
          "access-control-allow-origin": origin,
          "access-control-allow-credentials": "true",
          "access-control-allow-headers": "authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id, x-request-id",
          "access-control-expose-headers": "mcp-session-id, mcp-protocol-version, www-authenticate",
          "access-control-allow-methods": "POST, OPTIONS",
          "access-control-max-age": String(context.corsMaxAgeSeconds),
          vary: "Origin",
        }
      : {};

  const handle = async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const origin = request.headers.origin;
    if (origin && !context.allowedOrigins.has(origin)) {
      return refuse(response, 403, { error: "forbidden_origin", error_description: `Origin ${origin} may not call ${MCP_PATH}: add it to CORS_ORIGINS.` });
    }
    const cors = corsHeaders(origin);
    if (request.method === "OPTIONS") {
      response.writeHead(204, { ...cors, "content-length": "0" });
      return void response.end();
    }
    let authorization: string;
    let caller: CallerIdentity;
    try {
      caller = await verifyBearerToken(request.headers.authorization, context.auth);
      authorization = request.headers.authorization!;
    } catch (error) {
      // Without a verified caller, the address's anonymous budget pays (as for /readyz and
      // uploads), so a flood of refusals becomes 429s; a body that is not declared within bounds
      // is cut after the answer rather than read to its end.
      const address = remoteAddressOf(request);
      const limited = (await context.charge?.(null, address, 1)) ?? null;
      if (!declaresAtMost(request, maxRequestBytes)) response.shouldKeepAlive = false;
      request.resume();
      if (limited) {
        const { message, extensions } = rateLimitBody(limited).errors[0]!;
        return refuse(response, 429, { jsonrpc: "2.0", error: { code: -32000, message, data: extensions }, id: null }, { ...cors, "retry-after": String(limited.retryAfterSeconds) });
      }
      const reason = (error as Error).message;
      // RFC 6750: a request without credentials gets the bare challenge; a bad token also says why.
      const challenge = request.headers.authorization ? `Bearer realm="${REALM}", error="invalid_token", error_description="${reason.replace(/["\\]/g, "'")}"` : `Bearer realm="${REALM}"`;
      return refuse(response, 401, { error: "invalid_token", error_description: reason }, { ...cors, "www-authenticate": challenge });
    }
    if (request.method !== "POST") {
      request.resume();
      return refuse(response, 405, { error: "method_not_allowed", error_description: `${MCP_PATH} is stateless: send JSON-RPC messages with POST.` }, { ...cors, allow: "POST, OPTIONS" });
    }

    if (declaresMoreThan(request, maxRequestBytes)) return refuseOversizedBody(response, maxRequestBytes, cors);
    const body = await readBoundedBody(request, maxRequestBytes);
    if (body === null) return refuseOversizedBody(response, maxRequestBytes, cors);
    let messages: unknown;
    try {
      messages = JSON.parse(body.toString("utf8"));
    } catch {
      return refuse(response, 400, { jsonrpc: "2.0", error: { code: -32700, message: "Parse error: the body is not JSON." }, id: null }, cors);
    }
    const maxBatch = options.maxBatchMessages ?? DEFAULT_MAX_BATCH_MESSAGES;
    if (Array.isArray(messages) && messages.length > maxBatch) {
      return refuse(response, 400, { jsonrpc: "2.0", error: { code: -32600, message: `Invalid Request: a batch may hold at most ${maxBatch} messages, this one has ${messages.length}. Send them in several requests.` }, id: null }, cors);
    }
    const rejection = (await context.charge?.(caller, remoteAddressOf(request), pointsOf(messages, apiSchema.sdl.length))) ?? null;
    if (rejection) {
      const { message, extensions } = rateLimitBody(rejection).errors[0]!;
      return refuse(response, 429, { jsonrpc: "2.0", error: { code: -32000, message, data: extensions }, id: null }, { ...cors, "retry-after": String(rejection.retryAfterSeconds) });
    }

    const server = createMcpServer({ tools, apiSchema, bounds, execute: graphqlExecutor(context.graphqlUrl, authorization, context.execute) });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: maxRequestBytes });
    // The client's own mistakes (unparsable JSON, a wrong Accept header) arrive here too: the transport has already answered them.
    transport.onerror = (error) => context.logger.debug(`mcp request: ${error.message}`);
    response.on("close", () => {
      void transport.close();
      void server.close();
    });
    for (const [name, value] of Object.entries(cors)) response.setHeader(name, value);
    await server.connect(transport);
    await transport.handleRequest(request, response, messages);
  };
  return Object.assign(handle, { tools });
}

/** One point per message, and a schema read by the bytes it returns; tool calls are charged again as the GraphQL requests they make. */
function pointsOf(messages: unknown, schemaBytes: number): number {
  const batch = Array.isArray(messages) ? messages : [messages];
  let points = 0;
  for (const message of batch) {
    points += 1;
    if ((message as { method?: unknown } | null)?.method === "resources/read") points += bodyPoints(schemaBytes);
  }
  return Math.max(1, points);
}

function refuse(response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers });
  response.end(JSON.stringify(body));
}
