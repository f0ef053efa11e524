/**
 * Rate limits per organization and per user (and per client IP for requests without a valid
 * token, with a smaller budget of its own), with rate-limiter-flexible: RateLimiterRedis when a
 * Redis URL is configured, so every gateway replica shares one budget, RateLimiterMemory otherwise.
 * A Redis outage never turns into an error: the request goes through and a warning is logged (at
 * most once a minute), because a missing rate limit for a while is better than an outage.
 *
 * What a request costs, in points:
 * - 1, in the gateway's `onRequest` hook, before the body is read (plus its declared
 *   Content-Length's share, below): a caller over the limit costs one token verification and one
 *   counter update, nothing else;
 * - 1 per BYTES_PER_POINT of body actually read, charged once the body is in
 *   (`chargeBodyBytes`, through request-body-limit.ts): a chunked body without a Content-Length
 *   costs what the same body with one does;
 * - 1 per COST_PER_POINT of the operation's estimated cost (operation-limits.ts), before execution:
 *   each aliased `search` is a fan-out to every provider, and the query plan makes a subgraph call
 *   for each expensive root field, so 24 aliased searches cost about 24 searches, not one request.
 */
import type { IncomingMessage } from "node:http";
import type { GatewayPlugin } from "@graphql-hive/gateway-runtime";
import { Redis } from "ioredis";
import { redisReady } from "../cache/redis-ready.js";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { GraphQLError } from "graphql";
import { throttledWarning, type Logger } from "../logger.js";
import { verifyBearerToken, type TokenSettings } from "../tenancy/token.js";
import { checkDocument, type OperationLimits } from "./operation-limits.js";

export interface RateLimitSettings {
  /** Length of the window each budget refills over. */
  windowSeconds: number;
  /** Requests per window for a whole organization; 0 turns this limit off. */
  organizationPoints: number;
  /** Requests per window for one user; 0 turns this limit off. */
  userPoints: number;
  /** Requests per window from one client IP without a valid token; 0 turns this limit off. */
  anonymousPoints: number;
  /** Shared counters in Redis when set; in-process counters otherwise. */
  redisUrl: string | null;
  /** Prefix of this deployment's Redis keys (REDIS_KEY_PREFIX). */
  redisKeyPrefix?: string;
}

export interface CallerIdentity {
  organizationId: string;
  userId: string;
}

/** Who is calling, or null when the request carries no valid token (it is then limited by its IP). */
export type IdentifyCaller = (request: Request) => Promise<CallerIdentity | null>;

export const RATE_LIMITED = "RATE_LIMITED";

/** Keys of this deployment's counters; distinct from the search result cache's keys. */
const DEFAULT_REDIS_KEY_PREFIX = "context-search:";
/**
 * A request spends one point, plus one per this many bytes of body: a client that sends 10 MB
 * bodies (appendMessages allows 100 × 100,000 characters) spends its budget ~160 times faster
 * than one that sends ordinary queries, so no user's share of the gateway's parsing and
 * forwarding is larger than its budget, whatever the size of its requests.
 */
export const BYTES_PER_POINT = 64 * 1024;
/** `search` (cost 500 and its page of hits) spends about 6 points; a page of conversations 1. */
export const COST_PER_POINT = 100;
const WARNING_INTERVAL_MS = 60_000;

/** Until the gateway verifies tokens itself (issue 8, identity at the gateway), the rate limiter reads them. */
export function tokenIdentity(auth: TokenSettings): IdentifyCaller {
  return (request) => callerOf(request.headers.get("authorization") ?? undefined, auth);
}

/** Whose budgets an `Authorization` header spends: its verified caller, or null (anonymous) for none or a token that does not verify. */
export async function callerOf(authorization: string | undefined, auth: TokenSettings): Promise<CallerIdentity | null> {
  if (!authorization) return null;
  try {
    const tenant = await verifyBearerToken(authorization, auth);
    return { organizationId: tenant.organizationId, userId: tenant.userId };
  } catch {
    // Refused again, with its reason, where the request is answered; until then it is anonymous.
    return null;
  }
}

export interface RateLimitRejection {
  /** Which budget is spent: "organization", "user" or "anonymous". */
  limit: string;
  retryAfterSeconds: number;
}

export class RequestRateLimiter {
  private readonly redis: Redis | null;
  private readonly organization: RateLimiterAbstract | null;
  private readonly user: RateLimiterAbstract | null;
  private readonly anonymous: RateLimiterAbstract | null;
  private readonly warnOutage: (message: string) => void;

  constructor(
    private readonly settings: RateLimitSettings,
    logger: Logger,
  ) {
    this.warnOutage = throttledWarning(logger, WARNING_INTERVAL_MS);
    this.redis = settings.redisUrl
      ? new Redis(settings.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500, connectTimeout: 1_000, retryStrategy: (attempt) => Math.min(attempt * 200, 5_000) })
      : null;
    // ioredis emits 'error' on every failed reconnect; unhandled, that would crash the process.
    this.redis?.on("error", (error) => this.warn(error));
    this.organization = this.limiter("org", settings.organizationPoints);
    this.user = this.limiter("user", settings.userPoints);
    this.anonymous = this.limiter("ip", settings.anonymousPoints);
  }

  private limiter(kind: string, points: number): RateLimiterAbstract | null {
    if (points <= 0) return null;
    const options = { points, duration: this.settings.windowSeconds, keyPrefix: `${this.settings.redisKeyPrefix ?? DEFAULT_REDIS_KEY_PREFIX}rate-limit:${kind}` };
    // While Redis is unreachable (or not connected yet), each process counts on its own
    // (rate-limiter-flexible's insurance limiter): budgets stay enforced, per process instead of
    // shared, rather than not at all.
    return this.redis ? new RateLimiterRedis({ ...options, storeClient: this.redis, insuranceLimiter: new RateLimiterMemory(options) }) : new RateLimiterMemory(options);
  }

  /** Resolves once the shared store is connected (at once without Redis, or after `timeoutMs` regardless). */
  async ready(timeoutMs = 2_000): Promise<void> {
    if (this.redis) await redisReady(this.redis, timeoutMs);
  }

  /** Spends `points` of each budget the caller draws on; null when the request may go on. */
  async consume(identity: CallerIdentity | null, clientAddress: string, points = 1): Promise<RateLimitRejection | null> {
    const spends: [string, RateLimiterAbstract | null, string][] = identity
      ? [
          ["user", this.user, `${identity.organizationId}:${identity.userId}`],
          ["organization", this.organization, identity.organizationId],
        ]
      : [["anonymous", this.anonymous, clientAddress]];
    const results = await Promise.all(spends.map(([limit, limiter, key]) => (limiter ? this.spend(limit, limiter, key, points) : null)));
    const rejected = results.filter((result): result is RateLimitRejection => result !== null);
    if (rejected.length === 0) return null;
    return rejected.reduce((longest, candidate) => (candidate.retryAfterSeconds > longest.retryAfterSeconds ? candidate : longest));
  }

  private async spend(limit: string, limiter: RateLimiterAbstract, key: string, points: number): Promise<RateLimitRejection | null> {
    try {
      await limiter.consume(key, points);
      return null;
    } catch (error) {
      if (error instanceof RateLimiterRes) return { limit, retryAfterSeconds: Math.max(1, Math.ceil(error.msBeforeNext / 1000)) };
      // Only reached if even the per-process insurance counter failed: let the request through.
      this.warn(error);
      return null;
    }
  }

  private warn(error: unknown) {
    this.warnOutage(`Redis is unavailable: rate limits are counted per process until it is back: ${(error as Error).message}`);
  }

  async close(): Promise<void> {
    this.redis?.disconnect();
  }
}

export interface RateLimitPluginOptions {
  limiter: RequestRateLimiter;
  identify: IdentifyCaller;
}

/** The address a request came from, as a node:http server saw it: what anonymous budgets are counted by. */
export function remoteAddressOf(request: IncomingMessage | undefined): string {
  return request?.socket.remoteAddress ?? "unknown";
}

/** The client's address as the gateway's node:http server saw it. */
export function clientAddress(serverContext: unknown): string {
  return remoteAddressOf((serverContext as { req?: IncomingMessage } | undefined)?.req);
}

/** Points a body of `bytes` spends beyond the request's first point. */
export function bodyPoints(bytes: number): number {
  return Number.isFinite(bytes) && bytes > 0 ? Math.floor(bytes / BYTES_PER_POINT) : 0;
}

/** The 429 error of a spent budget, as a GraphQL error (Yoga sends its status and `Retry-After`). */
export function rateLimitError(rejection: RateLimitRejection): GraphQLError {
  const who = rejection.limit === "anonymous" ? "requests without a valid token from this address" : `this ${rejection.limit}`;
  return new GraphQLError(`Rate limit exceeded for ${who}: retry after ${rejection.retryAfterSeconds} s.`, {
    extensions: { code: RATE_LIMITED, limit: rejection.limit, retryAfterSeconds: rejection.retryAfterSeconds, http: { status: 429, headers: { "retry-after": String(rejection.retryAfterSeconds) } } },
  });
}

/** The same refusal as a whole HTTP response, for answers given before GraphQL is involved. */
export function rateLimitBody(rejection: RateLimitRejection): { errors: { message: string; extensions: Record<string, unknown> }[] } {
  const error = rateLimitError(rejection);
  const { http: _http, ...extensions } = error.extensions as Record<string, unknown>;
  return { errors: [{ message: error.message, extensions }] };
}

/**
 * For request-body-limit.ts: charges the body's bytes beyond what its Content-Length already paid
 * in `onRequest` (all of them for a chunked body).
 */
export function chargeBodyBytes({ limiter, identify }: RateLimitPluginOptions) {
  return async (request: Request, bytes: number, serverContext: unknown): Promise<void> => {
    const points = bodyPoints(bytes) - bodyPoints(Number(request.headers.get("content-length") ?? 0));
    if (points <= 0) return;
    const rejection = await limiter.consume(await identify(request), clientAddress(serverContext), points);
    if (rejection) throw rateLimitError(rejection);
  };
}

/**
 * The gateway plugin: 429 with `Retry-After` and a RATE_LIMITED GraphQL error once a budget is
 * spent, at the request's start and again before execution, charged by the operation's cost.
 */
export function rateLimitPlugin({ limiter, identify, limits }: RateLimitPluginOptions & { limits: OperationLimits }): GatewayPlugin {
  return {
    async onRequest({ request, serverContext, endResponse, fetchAPI }) {
      if (request.method === "OPTIONS") return;
      const points = 1 + bodyPoints(Number(request.headers.get("content-length") ?? 0));
      const rejection = await limiter.consume(await identify(request), clientAddress(serverContext), points);
      if (!rejection) return;
      endResponse(
        new fetchAPI.Response(JSON.stringify(rateLimitBody(rejection)), {
          status: 429,
          headers: { "content-type": "application/json; charset=utf-8", "retry-after": String(rejection.retryAfterSeconds) },
        }),
      );
    },
    async onExecute({ args, setResultAndStopExecution }) {
      // Already within the limits (checked at validation), so this second measure is cheap and bounded.
      const { cost } = checkDocument(args.document, limits, args.schema, (args.variableValues ?? null) as Record<string, unknown> | null);
      const points = Math.floor(cost / COST_PER_POINT);
      if (points <= 0) return;
      const context = args.contextValue as { request?: Request } & Record<string, unknown>;
      if (!context.request) return;
      const rejection = await limiter.consume(await identify(context.request), clientAddress(context), points);
      if (rejection) setResultAndStopExecution({ errors: [rateLimitError(rejection)] });
    },
  };
}
