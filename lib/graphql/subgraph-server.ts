/**
 * How a subgraph starts: an Apollo Server over a Federation v2 subgraph schema, behind a plain
 * `node:http` server that also answers `/readyz` (and `/health`, the same): ready when its database is. Every subgraph in subgraphs/ is started by
 * this one function, whether alone (`npm run start:subgraph -- <name>`) or all together in
 * `npm start`.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ApolloServer, HeaderMap, type BaseContext, type HTTPGraphQLRequest } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginInlineTraceDisabled } from "@apollo/server/plugin/disabled";
import { ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import { buildSubgraphSchema } from "@apollo/subgraph";
import type { GraphQLResolverMap } from "@apollo/subgraph/dist/schema-helper/index.js";
import { GraphQLError, type DocumentNode, type GraphQLFormattedError } from "graphql";
import { declaresMoreThan, MAX_REQUEST_BODY_BYTES, readBoundedBody, refuseOversizedBody } from "../http-body.js";
import { logDrainOutcome, trackForDrain } from "../http-drain.js";
import type { Logger } from "../logger.js";
import { METRICS_PATH, serveMetrics } from "../observability/metrics-endpoint.js";
import { SubgraphMetrics } from "../observability/subgraph-metrics.js";
import { startServiceTracing, traceIncomingRequest } from "../observability/tracing.js";
import type { TracingConfig } from "../observability/tracing-config.js";
import { verifyBearerToken, type TenantContext, type TokenSettings } from "../tenancy/token.js";
import { databaseFault, DATABASE_RETRY_AFTER_SECONDS } from "../database/faults.js";
import { currentReadSession, withReadSession } from "../database/read-session.js";
import { recordSessionWrites } from "../database/replica-reads.js";
import { CLIENT_ERROR_CODES, isWholeAnswerUnavailable, serviceUnavailable, unauthenticated } from "./errors.js";
import { ReadinessCheck, type ReadinessSettings } from "./readiness.js";
import { DEFAULT_OPERATION_LIMITS, operationLimitsRule, requestOverLimits, withOperationLimitCode, type OperationLimits } from "./operation-limits.js";
import { IDEMPOTENCY_KEY_HEADER, type WriteRequest } from "./idempotency-key.js";
import { listen } from "../listen.js";
import { isSignedByGateway, serviceSdlAccessPlugin, type AccessContext } from "./subgraph-access.js";
import { DirectCallBudget } from "./direct-call-budget.js";
import { rateLimitBody, type RateLimitSettings, remoteAddressOf, RequestRateLimiter } from "./rate-limit.js";

/** What every subgraph's context starts from: the verified caller, if any. */
export interface RequestContext extends BaseContext, AccessContext {
  /** The caller's organization, user and teams; throws UNAUTHENTICATED when the request has no token. */
  requireTenant(): TenantContext;
  /** The request's Idempotency-Key and liveness, for mutations that create or append (idempotency-key.ts). */
  writes: WriteRequest;
}

export interface SubgraphDefinition<TContext extends RequestContext> {
  name: string;
  typeDefs: DocumentNode;
  resolvers: GraphQLResolverMap<TContext>;
  /** Builds the per-request context (loaders live here, so nothing is cached across requests or tenants). */
  createContext(base: RequestContext): TContext;
  /** Answers the health check; throw when a dependency (the database) is down. */
  checkHealth?(): Promise<void>;
  /** Starts background work (e.g. an indexer) once the server listens. */
  start?(): Promise<void>;
  /**
   * Stops taking background work (an indexer claims no more jobs), called at once when the
   * server starts to stop, so the work in hand ends while requests drain instead of after.
   */
  beginStop?(): void;
  /**
   * Stops background work and releases connections, after the server has drained, within
   * `withinMs` (what is left of the drain deadline, at least a second): work that does not end
   * in time is left (an indexer's jobs return to the queue when their leases run out).
   */
  stop?(deadline?: { withinMs: number }): Promise<void>;
  /**
   * This subgraph's metrics, when its own code feeds them too (the search pipeline records
   * provider outcomes and cache lookups); otherwise the server makes its own.
   */
  metrics?: SubgraphMetrics;
}

export interface SubgraphServerOptions {
  host: string;
  port: number;
  /** Token verification, and the secret of the gateway's request signatures (null: none accepted). */
  auth: TokenSettings & { subgraphSigningSecret?: string | null };
  production: boolean;
  logger: Logger;
  /** How long `stop()` lets in-flight requests finish before cutting them (default 10 s). */
  drainTimeoutMs?: number;
  /** What one request may cost (default: DEFAULT_OPERATION_LIMITS): a subgraph reached directly is as guarded as the gateway. */
  operationLimits?: OperationLimits;
  /** `GET /metrics` without a token from anywhere, not only from this host (METRICS_PUBLIC). */
  metricsPublic?: boolean;
  /** OpenTelemetry traces (lib/observability/tracing.ts); absent or without an endpoint means off. */
  tracing?: TracingConfig | null;
  /** How long a write's Idempotency-Key answers retries (IDEMPOTENCY_KEY_TTL_SECONDS; default 24 h). */
  idempotencyKeyTtlSeconds?: number;
  /** How long the readiness check may take, and how long its outcome is kept (default: DEFAULT_READINESS). */
  readiness?: ReadinessSettings;
  /**
   * Budgets for calls that do not come from the gateway (no valid gateway signature): charged as
   * the gateway charges (direct-call-budget.ts). Absent or null: such calls are not rate limited.
   */
  rateLimit?: RateLimitSettings | null;
}

export interface RunningSubgraph {
  name: string;
  url: string;
  port: number;
  /** GraphQL operations this server executed: how tests and benchmarks count subgraph calls per gateway request. */
  operations: OperationLog;
  /** What `GET /metrics` serves. */
  metrics: SubgraphMetrics;
  stop(): Promise<void>;
}

export interface OperationLog {
  count: number;
  /** How many of them carried the gateway's valid signature. */
  signedByGateway: number;
  /** The most recent operations' documents (at most 100). */
  recent: string[];
  reset(): void;
}

/**
 * The gateway's body limit plus room for what its query plan adds around the client's variables
 * (the subgraph operation's text, bounded by the token limit): whatever body the gateway admits,
 * the subgraph reads.
 */
const MAX_BODY_BYTES = MAX_REQUEST_BODY_BYTES + 256 * 1024;
const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;
const DEFAULT_IDEMPOTENCY_KEY_TTL_SECONDS = 86_400;

export async function startSubgraph<TContext extends RequestContext>(
  definition: SubgraphDefinition<TContext>,
  options: SubgraphServerOptions,
): Promise<RunningSubgraph> {
  const logger = options.logger;
  const httpServer = http.createServer();
  const drain = trackForDrain(httpServer);
  const operations: OperationLog = {
    count: 0,
    signedByGateway: 0,
    recent: [],
    reset() {
      this.count = 0;
      this.signedByGateway = 0;
      this.recent = [];
    },
  };
  const limits = options.operationLimits ?? DEFAULT_OPERATION_LIMITS;
  const metrics = definition.metrics ?? new SubgraphMetrics(definition.name);
  const tracing = await startServiceTracing(options.tracing, definition.name);
  const readiness = new ReadinessCheck(async () => definition.checkHealth?.(), options.readiness);
  const schema = buildSubgraphSchema([{ typeDefs: definition.typeDefs, resolvers: definition.resolvers as GraphQLResolverMap<unknown> }]);
  const directCalls = options.rateLimit ? new DirectCallBudget(new RequestRateLimiter(options.rateLimit, logger), options.auth, limits, schema) : null;
  const apollo = new ApolloServer<TContext>({
    // Limits: tokens are counted before Apollo sees the request (handleRequest), the document's
    // shape on entering validation, and no error suggests field names.
    parseOptions: { maxTokens: limits.maxTokens },
    validationRules: [operationLimitsRule(limits)],
    hideSchemaDetailsFromClientErrors: true,
    schema,
    introspection: !options.production,
    includeStacktraceInErrorResponses: false,
    // Shutdown is ours (lib/shutdown.ts): Apollo's own handler stops the server and then re-raises
    // the signal, which would cut our drain of the gateway and the database short.
    stopOnTerminationSignals: false,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      ApolloServerPluginInlineTraceDisabled(),
      // Apollo's cache-control plugin (on unless disabled) computes a cache policy for every
      // field it resolves, only to conclude what it always concludes here: no schema carries
      // @cacheControl hints, so every answer is `cache-control: no-store` (set below, as it did).
      // Nothing reads the policy: the gateway's response cache has its own rules
      // (gateway/response-cache.ts). Measured on a page of 20 hits with 3 highlight passages
      // each (search-features' selection), in process: GraphQL execution 1.35 -> 0.70 ms.
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginLandingPageDisabled(),
      serviceSdlAccessPlugin(),
      {
        async requestDidStart({ request, contextValue }) {
          operations.count += 1;
          if (contextValue.signedByGateway) operations.signedByGateway += 1;
          operations.recent.push(request.query ?? "");
          if (operations.recent.length > 100) operations.recent.shift();
          const startedAt = performance.now();
          return {
            // A mutation's own reads stay on the primary, and its writes are recorded for the
            // caller's next reads (read-your-writes, lib/database/replica-reads.ts).
            async didResolveOperation({ operation }) {
              const session = currentReadSession();
              if (session && operation?.operation === "mutation") session.writing = true;
            },
            async willSendResponse({ operationName, response }) {
              // Before the answer leaves: the caller's next read, wherever it lands, must find the position.
              const session = currentReadSession();
              if (session) await recordSessionWrites(session);
              // What the cache-control plugin answered for every response of these schemas.
              if (!response.http.headers.has("cache-control")) response.http.headers.set("cache-control", "no-store");
              const failed = response.body.kind === "single" && (response.body.singleResult.errors?.length ?? 0) > 0;
              // Nothing but "try again later": say so in HTTP too, so clients and proxies can back off.
              if (response.body.kind === "single" && isWholeAnswerUnavailable(response.body.singleResult)) {
                response.http.status = 503;
                response.http.headers.set("retry-after", String(DATABASE_RETRY_AFTER_SECONDS));
              }
              metrics.recordRequest(operationName ?? request.operationName, failed ? "error" : "ok", (performance.now() - startedAt) / 1000);
            },
          };
        },
      },
    ],
    formatError: (formatted, error) => formatSubgraphError(withOperationLimitCode(formatted, error), error, logger),
  });
  await apollo.start();

  httpServer.on("request", (request, response) => {
    handleRequest(request, response).catch((error: unknown) => {
      logger.error("request failed outside GraphQL execution", error);
      if (!response.headersSent) sendJson(response, 500, { errors: [{ message: "Internal server error" }] });
      else response.destroy();
    });
  });

  async function handleRequest(request: http.IncomingMessage, response: http.ServerResponse) {
    const url = new URL(request.url ?? "/", "http://subgraph");
    if (url.pathname === "/readyz" || url.pathname === "/health") {
      if (drain.draining) return sendJson(response, 503, { status: "draining", subgraph: definition.name });
      const outcome = await readiness.current();
      if (outcome.ready) return sendJson(response, 200, { status: "ok", subgraph: definition.name });
      // The reason can name hosts, users or connection strings: it goes to the log only.
      logger.warn(`readiness check failed: ${oneLine(outcome.reason)}`);
      return sendJson(response, 503, { status: "unavailable", subgraph: definition.name }, { "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) });
    }
    if (url.pathname === METRICS_PATH) return serveMetrics(metrics.registry, request, response, { public: options.metricsPublic ?? false, auth: options.auth });
    // Work that arrives after the drain began is told to retry (another instance answers it).
    if (drain.refuseWhileDraining(response)) return;
    if (url.pathname !== "/graphql" && url.pathname !== "/") {
      return sendJson(response, 404, { errors: [{ message: `Not found: GraphQL is served at /graphql` }] });
    }
    const bytes = declaresMoreThan(request, MAX_BODY_BYTES) ? null : await readBoundedBody(request, MAX_BODY_BYTES);
    if (bytes === null) return refuseOversizedBody(response, MAX_BODY_BYTES);
    const body = bytes.toString("utf8");
    const headers = new HeaderMap();
    for (const [key, value] of Object.entries(request.headers)) {
      if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(", ") : value);
    }
    let parsedBody: unknown = undefined;
    if (body.length > 0 && (headers.get("content-type") ?? "").includes("json")) {
      try {
        parsedBody = JSON.parse(body);
      } catch {
        return sendJson(response, 400, { errors: [{ message: "Request body is not valid JSON", extensions: { code: "BAD_REQUEST" } }] });
      }
    }
    const overLimit = requestOverLimits(parsedBody, url.searchParams, limits);
    if (overLimit) return sendJson(response, 400, { errors: [{ message: overLimit.message, extensions: overLimit.extensions }] });
    // One HMAC check a request: it decides both the direct-call charge and the context's flag.
    const signedByGateway = isSignedByGateway(parsedBody, options.auth.subgraphSigningSecret);
    if (directCalls && !signedByGateway) {
      const rejection = await directCalls.charge({ body: parsedBody, searchParams: url.searchParams, bodyBytes: bytes.length, authorization: headers.get("authorization"), clientAddress: remoteAddressOf(request) });
      if (rejection) return sendJson(response, 429, rateLimitBody(rejection), { "retry-after": String(rejection.retryAfterSeconds) });
    }
    // Only GraphQL requests are traced (not health checks or scrapes), continuing the gateway's trace.
    return traceIncomingRequest(tracing, request.headers, `${(request.method ?? "GET").toUpperCase()} /graphql`, { "http.request.method": request.method ?? "GET", "http.route": "/graphql", "graphql.subgraph": definition.name }, async (span) => {
      await executeGraphQL(request, response, url, headers, parsedBody, signedByGateway);
      span?.setAttribute("http.response.status_code", response.statusCode);
    });
  }

  async function executeGraphQL(request: http.IncomingMessage, response: http.ServerResponse, url: URL, headers: HeaderMap, parsedBody: unknown, signedByGateway: boolean) {
    const graphQLRequest: HTTPGraphQLRequest = {
      method: (request.method ?? "GET").toUpperCase(),
      headers,
      search: url.search,
      body: parsedBody,
    };
    // A caller that closes the connection before the answer (the gateway past its upstream
    // timeout) will never learn whether a write committed: writes check this and roll back.
    const callerGone = new AbortController();
    const onClose = () => {
      if (!response.writableFinished) callerGone.abort();
    };
    response.once("close", onClose);
    const writes: WriteRequest = {
      idempotencyKey: headers.get(IDEMPOTENCY_KEY_HEADER),
      idempotencyKeyTtlSeconds: options.idempotencyKeyTtlSeconds ?? DEFAULT_IDEMPOTENCY_KEY_TTL_SECONDS,
      signal: callerGone.signal,
    };
    // The request's read session (lib/database/read-session.ts) learns its caller with the context.
    const result = await withReadSession(null, (session) =>
      apollo.executeHTTPGraphQLRequest({
        httpGraphQLRequest: graphQLRequest,
        context: async () => {
          const base = await createRequestContext(headers.get("authorization"), options.auth, signedByGateway, writes);
          if (base.authenticated) {
            const tenant = base.requireTenant();
            session.caller = { organizationId: tenant.organizationId, userId: tenant.userId };
          }
          return definition.createContext(base);
        },
      }),
    );
    for (const [key, value] of result.headers) response.setHeader(key, value);
    response.statusCode = result.status ?? 200;
    if (result.body.kind === "complete") {
      response.end(result.body.string);
    } else {
      for await (const chunk of result.body.asyncIterator) response.write(chunk);
      response.end();
    }
  }

  // Until Redis connects, each instance counts direct calls on its own (the limiter's insurance):
  // two instances started together would each admit a whole budget in their first moments.
  await directCalls?.ready();
  try {
    await listen(httpServer, options.port, options.host, `${definition.name.toUpperCase().replace(/-/g, "_")}_PORT`);
  } catch (error) {
    // A port in use, say: the caller gets the error, and neither Apollo nor a tracer provider
    // (with its exporter's timer) stays behind in a process that may go on running.
    await apollo.stop().catch(() => undefined);
    await tracing?.shutdown().catch(() => undefined);
    throw error;
  }
  // Worker pools belong to the process: the first subgraph server listening in it reports them.
  const workerPools = metrics.reportWorkerPools();
  const port = (httpServer.address() as AddressInfo).port;
  const url = `http://${displayHost(options.host)}:${port}/graphql`;
  await definition.start?.();
  logger.info(`${definition.name} subgraph listening on ${url}`);
  let stopped: Promise<void> | null = null;

  return {
    name: definition.name,
    url,
    port,
    operations,
    metrics,
    stop() {
      stopped ??= (async () => {
        // Background work stops taking more at once; requests drain (they still use the
        // database), then Apollo stops, then background work ends within what is left of the
        // deadline. The caller closes the database after this resolves.
        const deadlineMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
        const startedAt = performance.now();
        definition.beginStop?.();
        logDrainOutcome(await drain.drain(deadlineMs), logger);
        await apollo.stop();
        await directCalls?.close();
        await definition.stop?.({ withinMs: Math.max(1_000, deadlineMs - (performance.now() - startedAt)) });
        await tracing?.shutdown();
        workerPools.release();
      })();
      return stopped;
    },
  };
}

/**
 * A request without a token still reaches the schema (so `__typename` and, outside production,
 * introspection work for health probes and schema explorers; `_service` only for the gateway's
 * signed requests, see subgraph-access.ts), but every field that touches data calls
 * `requireTenant()`. A request with a token that does not verify is refused outright.
 */
async function createRequestContext(authorization: string | undefined, auth: TokenSettings, signedByGateway: boolean, writes: WriteRequest): Promise<RequestContext> {
  if (!authorization) {
    return {
      signedByGateway,
      writes,
      authenticated: false,
      requireTenant() {
        throw unauthenticated("Missing Authorization header: send `Authorization: Bearer <token>`.");
      },
    };
  }
  const tenant = await verifyBearerToken(authorization, auth);
  return { signedByGateway, writes, authenticated: true, requireTenant: () => tenant };
}

/**
 * Expected errors (bad input, auth) go to the client as they are and are not logged as server
 * errors. A database that is unreachable, restarting or gone is SERVICE_UNAVAILABLE with a retry
 * hint (lib/database/faults.ts); the log gets the driver's words. Anything else is a bug: it is
 * logged with its stack here and reaches the client as a generic INTERNAL_SERVER_ERROR, so no
 * SQL or stack trace ever leaks.
 */
function formatSubgraphError(formatted: GraphQLFormattedError, error: unknown, logger: Logger): GraphQLFormattedError {
  const code = formatted.extensions?.code;
  if (typeof code === "string" && CLIENT_ERROR_CODES.has(code)) return formatted;
  const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  if (original instanceof GraphQLError && original.extensions?.code && original.extensions.code !== "INTERNAL_SERVER_ERROR") {
    return formatted;
  }
  const fault = databaseFault(original);
  if (fault) {
    logger.warn(`database unavailable at ${formatted.path?.join(".") ?? "(request)"} (${fault.reason}): ${oneLine(original instanceof Error ? original.message : String(original))}`);
    const unavailable = serviceUnavailable(`The database is unavailable right now; try again in ${DATABASE_RETRY_AFTER_SECONDS} s.`, DATABASE_RETRY_AFTER_SECONDS);
    return {
      message: unavailable.message,
      ...(formatted.path ? { path: formatted.path } : {}),
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      extensions: unavailable.extensions,
    };
  }
  logger.error(`unexpected error at ${formatted.path?.join(".") ?? "(request)"}`, original);
  return {
    message: "Internal server error",
    ...(formatted.path ? { path: formatted.path } : {}),
    ...(formatted.locations ? { locations: formatted.locations } : {}),
    extensions: { code: "INTERNAL_SERVER_ERROR" },
  };
}

function sendJson(response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  response.end(JSON.stringify(body));
}

/** A driver's message (Prisma's spans lines and quotes the call) as one line of bounded length, for the log. */
function oneLine(message: string): string {
  const line = message.replace(/\s+/g, " ").trim();
  return line.length > 500 ? `${line.slice(0, 499)}…` : line;
}

export function displayHost(host: string): string {
  return host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host;
}
