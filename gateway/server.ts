/**
 * The gateway: Hive Gateway's runtime (query planning, subgraph calls, CORS, GraphiQL) embedded
 * in our own `node:http` server, which adds `/healthz` (process up) and `/readyz` (every
 * subgraph answers) and drains on shutdown (the embedded runtime does not exit by itself).
 *
 * Planner: the Rust query planner from @graphql-hive/router-runtime (its native module ships
 * inside the npm package) by default, with the JavaScript planner (Hive's stitching runtime) for
 * operations that use `@defer` or `@stream` (incremental-planner.ts); the JavaScript planner for
 * everything when `queryPlanner: "js"`.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createGatewayRuntime, type GatewayRuntime } from "@graphql-hive/gateway-runtime";
import { renderGraphiQL } from "@graphql-yoga/render-graphiql";
import { Kind, parse, type ConstValueNode } from "graphql";
import { APOLLO_SANDBOX_ORIGIN, type Config, type QueryPlanner } from "../lib/config.js";
import { DEFAULT_OPERATION_LIMITS, type OperationLimits } from "../lib/graphql/operation-limits.js";
import { operationLimitsPlugins } from "../lib/graphql/operation-limits-plugin.js";
import { chargeBodyBytes, rateLimitBody, rateLimitPlugin, type RateLimitSettings, remoteAddressOf, RequestRateLimiter, tokenIdentity } from "../lib/graphql/rate-limit.js";
import { requestBodyLimit } from "../lib/graphql/request-body-limit.js";
import { declaresMoreThan, MAX_REQUEST_BODY_BYTES, refuseOversizedBody } from "../lib/http-body.js";
import { displayHost } from "../lib/graphql/subgraph-server.js";
import { logDrainOutcome, trackForDrain } from "../lib/http-drain.js";
import type { Logger } from "../lib/logger.js";
import { verifyBearerToken, type TokenSettings } from "../lib/tenancy/token.js";
import { gatewayAuthentication } from "./authentication.js";
import { documentUpload, DOCUMENT_UPLOAD_PATH } from "./document-upload.js";
import { uploadAdmission } from "./upload-admission.js";
import { isMultipartRequest, multipartRequest } from "./multipart-request.js";
import { graphiQLPage } from "./graphiql-page.js";
import { gatewayMetrics } from "./metrics.js";
import { METRICS_PATH, serveMetrics } from "../lib/observability/metrics-endpoint.js";
import { mcpEndpoint, MCP_PATH, type McpEndpointOptions } from "./mcp/http-endpoint.js";
import { searchResponseCache, type ResponseCacheOptions } from "./response-cache.js";
import { specConformance } from "./spec-conformance.js";
import { subgraphOutageErrors } from "./subgraph-outage.js";
import { serviceUnavailableStatus } from "./service-unavailable.js";
import { gatewayTracing } from "./tracing.js";
import type { TracingConfig } from "../lib/observability/tracing-config.js";
import { IDEMPOTENCY_KEY_HEADER } from "../lib/graphql/idempotency-key.js";
import { listen } from "../lib/listen.js";
import { subgraphHttpTransport } from "./subgraph-transport.js";
import { plannerPerOperation } from "./incremental-planner.js";
import { SharedAnswer } from "../lib/graphql/readiness.js";
import { apiSchemaOf } from "./mcp/api-schema.js";
import { persistedOperations, type PersistedOperationsOptions } from "./persisted-operations.js";
import { readPersistedQueryManifest, type PersistedDocumentIds } from "./persisted-query-manifest.js";
import { loadWebApp, type WebAppOptions } from "./web-app.js";

export interface GatewayOptions {
  supergraphSdl: string;
  host: string;
  port: number;
  queryPlanner: QueryPlanner;
  /** Browser origins allowed to call the gateway; Apollo Sandbox's origin is always added. */
  corsOrigins: string[];
  production: boolean;
  /**
   * How tokens are verified (the gateway verifies each once, before planning) and the secret
   * the gateway signs its subgraph calls with (null: unsigned).
   */
  auth: TokenSettings & { subgraphSigningSecret?: string | null };
  upstreamTimeoutMs: number;
  logger: Logger;
  /** Log level of the embedded Hive runtime (default "warn"; false silences it). */
  runtimeLogLevel?: "debug" | "info" | "warn" | "error" | false;
  /** Headers pre-filled in GraphiQL's header editor (npm start puts the dev token here). */
  graphiqlHeaders?: Record<string, string>;
  /** Query pre-filled in GraphiQL's editor. */
  graphiqlQuery?: string;
  /**
   * Hive merges identical in-flight subgraph requests by default; benchmarks turn it off to
   * measure the gateway's own cost. Off here means every client request reaches the subgraphs.
   */
  deduplicateInflightRequests?: boolean;
  /** How long `stop()` lets in-flight requests finish before cutting them (default 10 s). */
  drainTimeoutMs?: number;
  /** `POST /documents` (multipart upload, see document-upload.ts); absent means off. */
  documentUpload?: { maxFileBytes: number } | null;
  /** Whole-response caching of `search` (see response-cache.ts); absent or TTL 0 means off. */
  responseCache?: ResponseCacheOptions | null;
  /** What one request may cost, checked before planning (default: DEFAULT_OPERATION_LIMITS). */
  operationLimits?: OperationLimits;
  /** Per-organization, per-user and anonymous per-IP request budgets; absent means no rate limits. */
  rateLimit?: RateLimitSettings | null;
  /** The MCP server at `/mcp` (Streamable HTTP, see mcp/http-endpoint.ts); absent or null means off. */
  mcp?: McpEndpointOptions | null;
  /** `GET /metrics` without a token from anywhere, not only from this host (METRICS_PUBLIC). */
  metricsPublic?: boolean;
  /** OpenTelemetry traces (gateway/tracing.ts); absent or without an endpoint means off. */
  tracing?: TracingConfig | null;
  /**
   * Persisted operations (persisted-operations.ts): a manifest file of trusted documents, read and
   * checked at start, and automatic persisted queries; absent or null means neither.
   */
  persistedOperations?: (Omit<PersistedOperationsOptions, "manifest"> & { manifestPath: string | null; ids: PersistedDocumentIds }) | null;
  /** The web app (web/dist) at `/` (web-app.ts); absent, null or not built: `/` goes to GraphiQL. */
  webApp?: WebAppOptions | null;
}

export interface RunningGateway {
  url: string;
  port: number;
  runtime: GatewayRuntime;
  subgraphs: SubgraphLocation[];
  stop(): Promise<void>;
}

export interface SubgraphLocation {
  name: string;
  url: string;
}

const GRAPHQL_PATH = "/graphql";
const CORS_PREFLIGHT_MAX_AGE_SECONDS = 600;
const READINESS_TIMEOUT_MS = 2_000;
// Half a second, so a database outage shows at the gateway's /readyz within 2 s: this, plus a
// subgraph's own readiness cache (250 ms) and its check's timeout (1 s), is 1.75 s at worst.
const READINESS_CACHE_MS = 500;
const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;

/**
 * Everything the configuration decides about a gateway, as both ways of running one (the
 * one-process stack and `start:gateway`) pass it; they add the supergraph and the logger.
 */
export function gatewayOptionsFrom(config: Config): Omit<GatewayOptions, "supergraphSdl" | "logger"> {
  return {
    host: config.host,
    port: config.gateway.port,
    queryPlanner: config.gateway.queryPlanner,
    corsOrigins: config.gateway.corsOrigins,
    production: config.production,
    upstreamTimeoutMs: config.gateway.upstreamTimeoutMs,
    drainTimeoutMs: config.shutdown.drainTimeoutMs,
    metricsPublic: config.metrics.public,
    tracing: config.tracing,
    auth: config.auth,
    documentUpload: { maxFileBytes: config.knowledgeBase.maxDocumentBytes },
    responseCache: {
      ttlSeconds: config.gateway.responseCacheTtlSeconds,
      redis: config.search.redisUrl ? { url: config.search.redisUrl, keyPrefix: config.search.redisKeyPrefix } : null,
    },
    operationLimits: config.operationLimits,
    rateLimit: config.rateLimit,
    // The MCP server at /mcp, on by default with its defaults; MCP_ENABLED=false (`mcp: null`) turns it off.
    mcp: config.gateway.mcpEnabled ? {} : null,
    persistedOperations: {
      manifestPath: config.gateway.persistedDocuments.manifestPath,
      ids: config.gateway.persistedDocuments.ids,
      only: config.gateway.persistedDocuments.only,
      apq: config.gateway.apq.enabled
        ? { ...config.gateway.apq, redisUrl: config.search.redisUrl, redisKeyPrefix: config.search.redisKeyPrefix }
        : null,
    },
  };
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const subgraphs = subgraphLocations(options.supergraphSdl);
  const logger = options.logger;
  const allowedOrigins = new Set([...options.corsOrigins, APOLLO_SANDBOX_ORIGIN]);
  const authentication = gatewayAuthentication(options.auth);
  const responseCache = options.responseCache && options.responseCache.ttlSeconds > 0 ? searchResponseCache(options.responseCache, authentication.tenantOf, options.operationLimits ?? DEFAULT_OPERATION_LIMITS, logger.child("response-cache")) : null;
  const rateLimiter = options.rateLimit ? new RequestRateLimiter(options.rateLimit, logger) : null;
  const identify = tokenIdentity(options.auth);
  const operationLimits = options.operationLimits ?? DEFAULT_OPERATION_LIMITS;
  const metrics = gatewayMetrics();
  const tracing = await gatewayTracing(options.tracing);
  // Requests the gateway sends itself (MCP tools, uploads): their documents are ours, not a client's.
  const ownRequests = new WeakSet<Request>();
  const persisted = options.persistedOperations
    ? persistedOperations(
        {
          ...options.persistedOperations,
          ownRequest: (request) => ownRequests.has(request),
          // Read now: a manifest entry that is wrong stops the start here, naming the file and the entry.
          manifest: options.persistedOperations.manifestPath
            ? readPersistedQueryManifest(options.persistedOperations.manifestPath, apiSchemaOf(options.supergraphSdl).schema, options.persistedOperations.ids)
            : null,
        },
        logger.child("persisted-operations"),
      )
    : null;
  const runtime = createGatewayRuntime({
    supergraph: options.supergraphSdl,
    // The Rust planner cannot stream, and Hive's batching would hold a deferred part back:
    // operations with @defer or @stream run on the JavaScript one, unbatched (incremental-planner.ts).
    unifiedGraphHandler: plannerPerOperation(options.queryPlanner),
    // Passed statically: loading transports dynamically fails under some module loaders (Jest).
    transports: { http: subgraphHttpTransport },
    graphqlEndpoint: GRAPHQL_PATH,
    landingPage: false,
    logging: options.runtimeLogLevel ?? "warn",
    // An origin not on the list (including the literal `null` of sandboxed frames and file://
    // pages) gets no CORS headers at all, so the browser refuses the response; listed origins
    // get their own origin back, credentials, and a 10-minute preflight cache (Sandbox would
    // otherwise preflight every request).
    cors: (request: Request) => {
      const origin = request.headers.get("origin");
      if (!origin || !allowedOrigins.has(origin)) return false;
      return {
        origin,
        credentials: true,
        // apollo-require-preflight: GraphQL multipart uploads need it (multipart-request.ts).
        allowedHeaders: ["authorization", "content-type", "apollographql-client-name", "apollographql-client-version", "x-request-id", IDEMPOTENCY_KEY_HEADER, "apollo-require-preflight", "x-apollo-operation-name"],
        methods: ["GET", "POST", "OPTIONS"],
        maxAge: CORS_PREFLIGHT_MAX_AGE_SECONDS,
      };
    },
    // GraphiQL rendered from the npm package itself: no CDN, so it works offline.
    graphiql: options.production
      ? false
      : {
          title: "Context search supergraph",
          headers: JSON.stringify(options.graphiqlHeaders ?? {}, null, 2),
          ...(options.graphiqlQuery ? { defaultQuery: options.graphiqlQuery } : {}),
          shouldPersistHeaders: true,
        },
    renderGraphiQL,
    disableIntrospection: options.production ? { disableIf: () => true } : undefined,
    // The subgraphs verify the token themselves; the gateway only carries it.
    propagateHeaders: {
      fromClientToSubgraphs: ({ request }) => {
        const headers: Record<string, string> = {};
        const authorization = request.headers.get("authorization");
        const requestId = request.headers.get("x-request-id");
        // Each subgraph checks it and keeps its mutations' answers under it (lib/database/idempotency.ts).
        const idempotencyKey = request.headers.get(IDEMPOTENCY_KEY_HEADER);
        if (authorization) headers.authorization = authorization;
        if (requestId) headers["x-request-id"] = requestId;
        // Even empty: the subgraph refuses a malformed key rather than writing without one.
        if (idempotencyKey !== null) headers[IDEMPOTENCY_KEY_HEADER] = idempotencyKey;
        return headers;
      },
    },
    upstreamTimeout: options.upstreamTimeoutMs,
    // Resolves a persisted operation's id to its document before any plugin below reads the request.
    ...(persisted ? { persistedDocuments: persisted.runtimeOption } : {}),
    // `@defer` and `@stream`, answered as multipart/mixed or text/event-stream (Apollo Client reads the first).
    deferStream: true,
    // The merge key includes the forwarded headers, so two tenants' identical queries are never merged.
    transportEntries: {
      "*.http": { options: { deduplicateInflightRequests: options.deduplicateInflightRequests ?? true } },
    },
    // Subgraphs check this signature (lib/graphql/subgraph-access.ts) to tell the gateway from a stranger.
    ...(options.auth.subgraphSigningSecret ? { hmacSignature: { secret: options.auth.subgraphSigningSecret } } : {}),
    // Order matters: the caller is verified first; the response cache reads who it is.
    // Rate limits answer in onRequest and the operation limits before validation, so neither a
    // spent budget nor a hostile document ever reaches the planner.
    plugins: (context) => [
      // Before everything, so its request span is the parent of whatever the others do.
      ...(tracing ? [tracing.plugin(context)] : []),
      // First, so requests refused by the plugins after it are counted too.
      metrics.plugin(context.log),
      ...(rateLimiter ? [rateLimitPlugin({ limiter: rateLimiter, identify, limits: operationLimits })] : []),
      requestBodyLimit({ maxBytes: MAX_REQUEST_BODY_BYTES, ...(rateLimiter ? { afterRead: chargeBodyBytes({ limiter: rateLimiter, identify }) } : {}) }),
      ...operationLimitsPlugins(operationLimits),
      // Checks a registration's hash; stores its document once it reaches execution.
      ...(persisted ? [persisted.plugin] : []),
      authentication.plugin,
      specConformance(),
      // A subgraph that cannot be reached nulls its own fields with a coded error (subgraph-outage.ts).
      subgraphOutageErrors(logger, options.supergraphSdl),
      // A database that is down is 503 with Retry-After when nothing else answered (service-unavailable.ts).
      serviceUnavailableStatus(),
      ...(responseCache ? responseCache.plugins() : []),
    ],
  });

  // Each Redis client waits for its connection (at most a second, together), each for its own reason:
  // - persisted queries: registrations right after the start would be lost;
  // - rate limits: until Redis connects each gateway counts on its own (the limiter's insurance),
  //   so two gateways started together would each admit a whole budget in their first moments;
  // - the response cache: searches would go uncached until it connects.
  // Each works without Redis; none of them stops the start.
  const [, , generationsReady] = await Promise.all([persisted?.connected(), rateLimiter?.ready(1_000), responseCache?.generations.ready(1_000)]);
  if (generationsReady === false) logger.warn("Redis not reachable at start: the response cache is off until it is");
  const executeOwn = async (request: Request, serverContext?: { req: http.IncomingMessage }) => {
    ownRequests.add(request);
    return serverContext ? runtime.fetch(request, serverContext) : runtime.fetch(request);
  };
  const admitUpload = uploadAdmission(options.auth, rateLimiter);
  metrics.trackUploads(admitUpload.inFlight);

  const graphiql = options.production ? null : graphiQLPage(async () => runtime.fetch(new Request(`http://gateway${GRAPHQL_PATH}`, { headers: { accept: "text/html" } })));

  // The JSON endpoints of the gateway that it answers itself (uploads) send these CORS headers.
  const ownCorsHeaders = (origin: string | undefined) =>
    origin && allowedOrigins.has(origin)
      ? {
          "access-control-allow-origin": origin,
          "access-control-allow-credentials": "true",
          "access-control-allow-headers": `authorization, content-type, x-request-id, ${IDEMPOTENCY_KEY_HEADER}`,
          "access-control-allow-methods": "POST, OPTIONS",
          "access-control-max-age": String(CORS_PREFLIGHT_MAX_AGE_SECONDS),
          vary: "Origin",
        }
      : null;
  const upload = options.documentUpload
    ? documentUpload({
        maxFileBytes: options.documentUpload.maxFileBytes,
        graphqlUrl: `http://gateway${GRAPHQL_PATH}`,
        execute: executeOwn,
        admit: admitUpload,
        corsHeaders: ownCorsHeaders,
      })
    : null;
  // GraphQL multipart requests (the Upload scalar) on the GraphQL endpoint, with the same file limit.
  // Not executeOwn: the operation is the client's, so persisted-operation rules apply to it.
  const multipart = options.documentUpload
    ? multipartRequest({
        maxFileBytes: options.documentUpload.maxFileBytes,
        schema: apiSchemaOf(options.supergraphSdl).schema,
        operationLimits,
        graphqlUrl: `http://gateway${GRAPHQL_PATH}`,
        execute: async (request, serverContext) => runtime.fetch(request, serverContext),
        admit: admitUpload,
        corsHeaders: ownCorsHeaders,
      })
    : null;

  // Built now: a tool file that does not validate against the supergraph stops the start here.
  const mcp = options.mcp
    ? mcpEndpoint(options.mcp, {
        supergraphSdl: options.supergraphSdl,
        auth: options.auth,
        graphqlUrl: `http://gateway${GRAPHQL_PATH}`,
        execute: executeOwn,
        allowedOrigins,
        corsMaxAgeSeconds: CORS_PREFLIGHT_MAX_AGE_SECONDS,
        logger: logger.child("mcp"),
        ...(rateLimiter ? { charge: (caller, address, points) => rateLimiter.consume(caller, address, points) } : {}),
      })
    : null;

  const webApp = options.webApp ? loadWebApp(options.webApp) : null;
  if (options.webApp && !webApp) logger.warn(`the web app is not built (no ${options.webApp.directory}/index.html): run npm run build:web; / goes to GraphiQL until then`);

  /** Paths the gateway answers itself, whatever a browser accepts. */
  const SERVER_PATHS = new Set([GRAPHQL_PATH, MCP_PATH, METRICS_PATH, "/healthz", "/readyz"]);
  const server = http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    // Probes and scrapes keep their answers while draining; work that arrives now is told to retry.
    if (path !== "/healthz" && path !== "/readyz" && path !== METRICS_PATH && drain.refuseWhileDraining(response)) return;
    if (path === MCP_PATH && mcp) {
      return void mcp(request, response).catch((error: unknown) => {
        logger.error("MCP request failed", error);
        if (!response.headersSent) sendJson(response, 500, { jsonrpc: "2.0", error: { code: -32603, message: "Internal server error" }, id: null });
      });
    }
    // The app's pages are GETs that accept HTML; `/documents` is also the upload endpoint, which takes only POST.
    if (webApp && path && !SERVER_PATHS.has(path) && webApp.wants(request, path)) return webApp.serve(request, response, path);
    if (path === DOCUMENT_UPLOAD_PATH && upload) {
      return void upload(request, response).catch((error: unknown) => {
        logger.error("document upload failed", error);
        if (!response.headersSent) sendJson(response, 500, { errors: [{ message: "Internal server error", extensions: { code: "INTERNAL_SERVER_ERROR" } }] });
      });
    }
    if (path === GRAPHQL_PATH && multipart && isMultipartRequest(request)) {
      return void multipart(request, response).catch((error: unknown) => {
        logger.error("multipart GraphQL request failed", error);
        if (!response.headersSent) sendJson(response, 500, { errors: [{ message: "Internal server error", extensions: { code: "INTERNAL_SERVER_ERROR" } }] });
      });
    }
    if (path === GRAPHQL_PATH && graphiql?.wants(request)) {
      return void graphiql.serve(request, response).catch((error: unknown) => {
        logger.error("GraphiQL page failed", error);
        if (!response.headersSent) sendJson(response, 500, { errors: [{ message: "GraphiQL is unavailable" }] });
      });
    }
    if (path === "/healthz") return sendJson(response, 200, { status: "ok" });
    if (path === METRICS_PATH) {
      return void serveMetrics(metrics.registry, request, response, { public: options.metricsPublic ?? false, auth: options.auth }).catch((error: unknown) => {
        logger.error("metrics scrape failed", error);
        if (!response.headersSent) sendJson(response, 500, { errors: [{ message: "Internal server error" }] });
      });
    }
    if (path === "/readyz") {
      return void answerReadiness(request, response).catch((error: unknown) => {
        logger.error("readiness check failed", error);
        if (!response.headersSent) sendJson(response, 500, { status: "unavailable" });
      });
    }
    if (path === "/" && request.method === "GET") {
      response.writeHead(302, { location: GRAPHQL_PATH });
      return void response.end();
    }
    // Refused before a byte of the body is read; a chunked body is counted as it streams (request-body-limit.ts).
    if (declaresMoreThan(request, MAX_REQUEST_BODY_BYTES)) return refuseOversizedBody(response, MAX_REQUEST_BODY_BYTES);
    void runtime(request, response);
  });
  const drain = trackForDrain(server);
  // One probe of the subgraphs per READINESS_CACHE_MS, whatever the number of callers: every
  // caller of `/readyz` otherwise made a call to each subgraph, so a flood of probes (anonymous
  // ones included) cost four subgraph calls a request.
  const readiness = new SharedAnswer(() => checkSubgraphs(subgraphs), READINESS_CACHE_MS);

  /**
   * 503 at once while draining, so a load balancer stops sending before the listener goes.
   * Anyone learns ready or not; which subgraph failed, where it lives and why is internal, so
   * only a caller with a token that verifies sees it.
   */
  async function answerReadiness(request: http.IncomingMessage, response: http.ServerResponse) {
    if (drain.draining) return sendJson(response, 503, { status: "draining" });
    const trusted = await verifyBearerToken(request.headers.authorization, options.auth).then(
      () => true,
      () => false,
    );
    // Anonymous probes spend the anonymous budget of their address, like any request without a token.
    const rejection = trusted || !rateLimiter ? null : await rateLimiter.consume(null, remoteAddressOf(request));
    if (rejection) {
      response.setHeader("retry-after", String(rejection.retryAfterSeconds));
      return sendJson(response, 429, rateLimitBody(rejection));
    }
    const results = await readiness.current();
    const ready = results.every((result) => result.ok) && !drain.draining;
    const status = drain.draining ? "draining" : ready ? "ready" : "unavailable";
    sendJson(response, ready ? 200 : 503, trusted ? { status, subgraphs: results } : { status });
  }

  // The runtime loads the supergraph (parse, validate, the query planner) on its first request
  // unless asked: asked now, so that the first caller after "listening" does not wait for it
  // (1-3 s of a first request on a busy 2-core machine, issue 38).
  await runtime.getSchema();
  await listen(server, options.port, options.host, "GATEWAY_PORT");
  const port = (server.address() as AddressInfo).port;
  const url = `http://${displayHost(options.host)}:${port}${GRAPHQL_PATH}`;
  logger.info(`gateway listening on ${url} (${options.queryPlanner === "rust" ? "Rust" : "JavaScript"} query planner)`);
  let stopped: Promise<void> | null = null;

  return {
    url,
    port,
    runtime,
    subgraphs,
    async stop() {
      stopped ??= (async () => {
        logDrainOutcome(await drain.drain(options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS), logger);
        // Only now: disposing the runtime aborts whatever it is still executing.
        await runtime.dispose();
        responseCache?.store.clear();
        await responseCache?.generations.close();
        await rateLimiter?.close();
        await persisted?.close();
        // Last: the runtime's disposal ends the spans still open, and this exports them.
        await tracing?.shutdown();
      })();
      return stopped;
    },
  };
}

/** Each subgraph's name and routing URL, read from the supergraph's `join__Graph` enum. */
export function subgraphLocations(supergraphSdl: string): SubgraphLocation[] {
  const document = parse(supergraphSdl);
  const locations: SubgraphLocation[] = [];
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.ENUM_TYPE_DEFINITION || definition.name.value !== "join__Graph") continue;
    for (const value of definition.values ?? []) {
      const graph = value.directives?.find((directive) => directive.name.value === "join__graph");
      const argument = (name: string) => graph?.arguments?.find((arg) => arg.name.value === name)?.value;
      const name = stringValue(argument("name")) ?? value.name.value.toLowerCase();
      const url = stringValue(argument("url"));
      if (url) locations.push({ name, url });
    }
  }
  return locations;
}

function stringValue(node: ConstValueNode | undefined): string | null {
  return node?.kind === Kind.STRING ? node.value : null;
}

interface SubgraphReadiness {
  name: string;
  url: string;
  ok: boolean;
  error?: string;
}

/**
 * A subgraph is ready when its `/readyz` says so (ours check their database there: `{ __typename }`
 * alone answered while the database refused every statement). A subgraph without one (404, say
 * one of another team's) is ready when it executes `{ __typename }`, the one query every GraphQL
 * server answers without credentials.
 */
async function checkSubgraphs(subgraphs: SubgraphLocation[]): Promise<SubgraphReadiness[]> {
  return Promise.all(
    subgraphs.map(async ({ name, url }) => {
      try {
        const readyz = await fetch(new URL("/readyz", url), { signal: AbortSignal.timeout(READINESS_TIMEOUT_MS) });
        await readyz.body?.cancel();
        if (readyz.status !== 404) return readyz.ok ? { name, url, ok: true } : { name, url, ok: false, error: `readyz: HTTP ${readyz.status}` };
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ query: "{ __typename }" }),
          signal: AbortSignal.timeout(READINESS_TIMEOUT_MS),
        });
        const body = (await response.json()) as { data?: { __typename?: string } };
        return body.data?.__typename ? { name, url, ok: true } : { name, url, ok: false, error: `HTTP ${response.status}` };
      } catch (error) {
        return { name, url, ok: false, error: (error as Error).message };
      }
    }),
  );
}

function sendJson(response: http.ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  response.end(JSON.stringify(body));
}
