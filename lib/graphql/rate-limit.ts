/**
 * Rate limits per organization and per user (and per client IP for requests without a valid
 * token, with a smaller budget of its own), with rate-limiter-flexible: RateLimiterRedis when a
 * Redis URL is configured, so every gateway replica shares one budget, RateLimiterMemory otherwise.
 * A Redis outage never turns into an error: the request goes through and a warning is logged (at
 * most once a minute), because a missing rate limit for a while is better than an outage.
 *
 * Runs in the gateway's `onRequest` hook, before the body is parsed: a caller over the limit costs
 * one token verification and one counter update, nothing else.
 */
import type { IncomingMessage } from "node:http";
import type { GatewayPlugin } from "@graphql-hive/gateway-runtime";
import { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Logger } from "../logger.js";
import { verifyBearerToken, type TokenSettings } from "../tenancy/token.js";

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
}

export interface CallerIdentity {
  organizationId: string;
  userId: string;
}

/** Who is calling, or null when the request carries no valid token (it is then limited by its IP). */
export type IdentifyCaller = (request: Request) => Promise<CallerIdentity | null>;

export const RATE_LIMITED = "RATE_LIMITED";

/** Keys of this deployment's counters; distinct from the search result cache's keys. */
const REDIS_KEY_PREFIX = "context-search:rate-limit";
const WARNING_INTERVAL_MS = 60_000;

/** Until the gateway verifies tokens itself (issue 8, identity at the gateway), the rate limiter reads them. */
export function tokenIdentity(auth: TokenSettings): IdentifyCaller {
  return async (request) => {
    const authorization = request.headers.get("authorization");
    if (!authorization) return null;
    try {
      const tenant = await verifyBearerToken(authorization, auth);
      return { organizationId: tenant.organizationId, userId: tenant.userId };
    } catch {
      return null;
    }
  };
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
  private lastWarning = 0;

  constructor(
    private readonly settings: RateLimitSettings,
    private readonly logger: Logger,
  ) {
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
    const options = { points, duration: this.settings.windowSeconds, keyPrefix: `${REDIS_KEY_PREFIX}:${kind}` };
    return this.redis ? new RateLimiterRedis({ ...options, storeClient: this.redis }) : new RateLimiterMemory(options);
  }

  /** Spends one point of each budget the caller draws on; null when the request may go on. */
  async consume(identity: CallerIdentity | null, clientAddress: string): Promise<RateLimitRejection | null> {
    const spends: [string, RateLimiterAbstract | null, string][] = identity
      ? [
          ["user", this.user, `${identity.organizationId}:${identity.userId}`],
          ["organization", this.organization, identity.organizationId],
        ]
      : [["anonymous", this.anonymous, clientAddress]];
    const results = await Promise.all(spends.map(([limit, limiter, key]) => (limiter ? this.spend(limit, limiter, key) : null)));
    const rejected = results.filter((result): result is RateLimitRejection => result !== null);
    if (rejected.length === 0) return null;
    return rejected.reduce((longest, candidate) => (candidate.retryAfterSeconds > longest.retryAfterSeconds ? candidate : longest));
  }

  private async spend(limit: string, limiter: RateLimiterAbstract, key: string): Promise<RateLimitRejection | null> {
    try {
      await limiter.consume(key);
      return null;
    } catch (error) {
      if (error instanceof RateLimiterRes) return { limit, retryAfterSeconds: Math.max(1, Math.ceil(error.msBeforeNext / 1000)) };
      // The store failed (Redis down): let the request through.
      this.warn(error);
      return null;
    }
  }

  private warn(error: unknown) {
    const now = Date.now();
    if (now - this.lastWarning < WARNING_INTERVAL_MS) return;
    this.lastWarning = now;
    this.logger.warn(`rate limits are not enforced while Redis is unavailable: ${(error as Error).message}`);
  }

  async close(): Promise<void> {
    this.redis?.disconnect();
  }
}

export interface RateLimitPluginOptions {
  limiter: RequestRateLimiter;
  identify: IdentifyCaller;
}

/** The gateway plugin: 429 with `Retry-After` and a RATE_LIMITED GraphQL error once a budget is spent. */
export function rateLimitPlugin({ limiter, identify }: RateLimitPluginOptions): GatewayPlugin {
  return {
    async onRequest({ request, serverContext, endResponse, fetchAPI }) {
      if (request.method === "OPTIONS") return;
      const identity = await identify(request);
      const address = (serverContext as { req?: IncomingMessage }).req?.socket.remoteAddress ?? "unknown";
      const rejection = await limiter.consume(identity, address);
      if (!rejection) return;
      const who = rejection.limit === "anonymous" ? "requests without a valid token from this address" : `this ${rejection.limit}`;
      const body = {
        errors: [
          {
            message: `Rate limit exceeded for ${who}: retry after ${rejection.retryAfterSeconds} s.`,
            extensions: { code: RATE_LIMITED, limit: rejection.limit, retryAfterSeconds: rejection.retryAfterSeconds },
          },
        ],
      };
      endResponse(
        new fetchAPI.Response(JSON.stringify(body), {
          status: 429,
          headers: { "content-type": "application/json; charset=utf-8", "retry-after": String(rejection.retryAfterSeconds) },
        }),
      );
    },
  };
}
