import { describe, expect, it } from "@jest/globals";
import { ConfigError, loadConfig } from "../../lib/config.js";

describe("loadConfig", () => {
  it("runs on the embedded database with development defaults when nothing is set", () => {
    const config = loadConfig({});
    expect(config.database.url).toBeNull();
    expect(config.database.pgliteDataDir).toMatch(/\.data[\\/]pglite$/);
    expect(config.gateway.port).toBe(4000);
    expect(config.subgraphs.conversations).toEqual({ port: 4001, url: "http://127.0.0.1:4001/graphql" });
    expect(config.host).toBe("127.0.0.1");
    expect(config.auth.usingDevSecret).toBe(true);
    expect(config.gateway.queryPlanner).toBe("rust");
    expect(config.demo.seed).toBe(true);
    expect(config.knowledgeBase.parsing).toEqual({
      threads: 2,
      perOrganization: 1,
      queuePerOrganization: 4,
      queue: 32,
      heapMb: 512,
      timeoutMs: 8_000,
      maxUnpackedBytes: 100 * 1024 * 1024,
      maxCompressionRatio: 100,
    });
  });

  it("takes an optional read replica (DATABASE_READ_URL) of the primary, with its lag bound and the shared Redis", () => {
    expect(loadConfig({ DATABASE_URL: "postgresql://db/x" }).database.replica).toBeNull();
    const config = loadConfig({ DATABASE_URL: "postgresql://db/x", DATABASE_READ_URL: "postgres://standby/x", REDIS_URL: "redis://cache:6379" });
    expect(config.database.replica).toEqual({ url: "postgres://standby/x", maxLagSeconds: 30, redisUrl: "redis://cache:6379", redisKeyPrefix: "context-search:" });
    expect(loadConfig({ DATABASE_URL: "postgresql://db/x", DATABASE_READ_URL: "postgres://standby/x", DATABASE_READ_MAX_LAG_SECONDS: "5" }).database.replica).toMatchObject({ maxLagSeconds: 5, redisUrl: null });
    expect(() => loadConfig({ DATABASE_READ_URL: "postgres://standby/x" })).toThrow(/DATABASE_READ_URL is set, but DATABASE_URL \(the primary it replicates\) is not/);
    expect(() => loadConfig({ DATABASE_URL: "postgresql://db/x", DATABASE_READ_URL: "mysql://admin:hunter2@standby/x" })).toThrow(/DATABASE_READ_URL must be a postgres:\/\/ or postgresql:\/\/ URL, got "mysql:\/\/admin:\*\*\*@standby\/x"/);
    expect(() => loadConfig({ DATABASE_URL: "postgresql://db/x", DATABASE_READ_URL: "postgres://standby/x", DATABASE_READ_MAX_LAG_SECONDS: "0" })).toThrow(/DATABASE_READ_MAX_LAG_SECONDS must be between 1 and 3600/);
  });

  it("requires a real JWT secret in production and binds all interfaces there", () => {
    expect(() => loadConfig({ NODE_ENV: "production" })).toThrow(/JWT_SECRET \(or JWT_JWKS_URL\) is required/);
    const config = loadConfig({ NODE_ENV: "production", JWT_SECRET: "s".repeat(32) });
    expect(config.host).toBe("0.0.0.0");
    expect(config.demo.seed).toBe(false);
  });

  it.each([
    [{ DATABASE_URL: "mysql://x" }, "DATABASE_URL"],
    [{ JWT_SECRET: "short" }, "JWT_SECRET"],
    [{ GATEWAY_PORT: "http" }, "GATEWAY_PORT"],
    [{ GATEWAY_PORT: "70000" }, "GATEWAY_PORT"],
    [{ QUERY_PLANNER: "python" }, "QUERY_PLANNER"],
    [{ DEMO_SEED: "maybe" }, "DEMO_SEED"],
    [{ UPSTREAM_TIMEOUT_MS: "5" }, "UPSTREAM_TIMEOUT_MS"],
    [{ GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "-1" }, "GATEWAY_RESPONSE_CACHE_TTL_SECONDS"],
    [{ GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "7200" }, "GATEWAY_RESPONSE_CACHE_TTL_SECONDS"],
    [{ JWT_CLAIM_ROLE: "role claim" }, "JWT_CLAIM_ROLE"],
    [{ DOCUMENT_PARSE_THREADS: "0" }, "DOCUMENT_PARSE_THREADS"],
    [{ DOCUMENT_PARSE_HEAP_MB: "8" }, "DOCUMENT_PARSE_HEAP_MB"],
    [{ DOCUMENT_MAX_COMPRESSION_RATIO: "1" }, "DOCUMENT_MAX_COMPRESSION_RATIO"],
  ])("rejects %j naming %s", (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^Invalid configuration: ${variable} `));
  });

  it("reads the role claim's name like the other claims' (default `role`)", () => {
    expect(loadConfig({}).auth.claims).toEqual({ user: "sub", organization: "org", teams: "teams", role: "role" });
    expect(loadConfig({ JWT_CLAIM_ROLE: "https://example.com/role" }).auth.claims?.role).toBe("https://example.com/role");
  });

  it("never echoes a database password in its errors", () => {
    expect(() => loadConfig({ DATABASE_URL: "mysql://admin:hunter2@db/x" })).toThrow(/admin:\*\*\*@/);
    expect(() => loadConfig({ DATABASE_URL: "mysql://admin:hunter2@db/x" })).not.toThrow(/hunter2/);
  });
});
