/**
 * The budgets behind the gateway's rate limits: size-weighted spending, and deployments that
 * share a Redis kept apart by their key prefix (against the real Redis when REDIS_URL is set).
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";
import { RequestRateLimiter, type RateLimitSettings } from "../../lib/graphql/rate-limit.js";
import { silentLogger } from "../../lib/logger.js";

const redisUrl = loadConfig().search.redisUrl;
const settings = (overrides: Partial<RateLimitSettings> = {}): RateLimitSettings => ({
  windowSeconds: 60,
  organizationPoints: 0,
  userPoints: 200,
  anonymousPoints: 0,
  redisUrl: null,
  ...overrides,
});

describe("RequestRateLimiter", () => {
  it("charges a request by its size: one 10 MB body spends what ~160 small requests would", async () => {
    const limiter = new RequestRateLimiter(settings(), silentLogger);
    const caller = { organizationId: "acme", userId: `u-${randomUUID()}` };
    // 10 MB at one point per 64 KiB, plus the request itself: 161 points of 200.
    expect(await limiter.consume(caller, "127.0.0.1", 161)).toBeNull();
    const second = await limiter.consume(caller, "127.0.0.1", 161);
    expect(second).toMatchObject({ limit: "user" });
    expect(second!.retryAfterSeconds).toBeGreaterThan(0);
    // Small requests of another user are untouched.
    expect(await limiter.consume({ organizationId: "acme", userId: `u-${randomUUID()}` }, "127.0.0.1", 1)).toBeNull();
    await limiter.close();
  });

  (redisUrl ? it : it.skip)("keeps two deployments on one Redis apart by their key prefix", async () => {
    const caller = { organizationId: "acme", userId: `u-${randomUUID()}` };
    const staging = new RequestRateLimiter(settings({ userPoints: 2, redisUrl, redisKeyPrefix: `staging-${randomUUID()}:` }), silentLogger);
    const production = new RequestRateLimiter(settings({ userPoints: 2, redisUrl, redisKeyPrefix: `production-${randomUUID()}:` }), silentLogger);
    try {
      await Promise.all([staging.ready(), production.ready()]);
      expect(await staging.consume(caller, "127.0.0.1", 2)).toBeNull();
      expect(await staging.consume(caller, "127.0.0.1", 1)).not.toBeNull();
      // The same user in the other deployment still has its whole budget.
      expect(await production.consume(caller, "127.0.0.1", 2)).toBeNull();
    } finally {
      await staging.close();
      await production.close();
    }
  });
});
