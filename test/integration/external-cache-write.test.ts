/**
 * A paid call's answer is returned without waiting for the answer cache's write: with a cache
 * whose writes never finish (a stalled Redis), a web search through the external-search runtime
 * and the real Serper client against the Serper stand-in still answers, with its results, and
 * the write was sent once, with the provider's TTL. Before, the call awaited the write, and this
 * test hung until Jest's timeout. The cache's reads still count: an answer the cache holds is
 * served from it, and the vendor is not called again.
 */
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import type { ResultCache } from "../../lib/cache/result-cache.js";
import { loadConfig } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { createExternalSearchRuntime, type ExternalSearchRuntime } from "../../subgraphs/external-search/runtime.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { SerperStandIn } from "../support/external/serper-stand-in.js";

const tenant: TenantContext = { organizationId: "acme", userId: "ann", teamIds: [], role: "member", userName: null, userEmail: null };

/** Serves what it was given to hold; its writes are recorded and never finish. */
class StalledWritesCache implements ResultCache {
  readonly kind = "redis" as const;
  readonly held = new Map<string, string>();
  readonly writes: { key: string; value: string; ttlSeconds: number }[] = [];
  async get(key: string): Promise<string | null> {
    return this.held.get(key) ?? null;
  }
  set(key: string, value: string, ttlSeconds: number): Promise<void> {
    this.writes.push({ key, value, ttlSeconds });
    return new Promise<void>(() => undefined);
  }
  async close(): Promise<void> {}
}

let db: TestDatabase;
let serper: SerperStandIn;
let cache: StalledWritesCache;
let runtime: ExternalSearchRuntime;

beforeAll(async () => {
  db = await createTestDatabase();
  serper = await SerperStandIn.start();
  cache = new StalledWritesCache();
  const config = loadConfig({ SERPER_API_KEY: serper.apiKey, SERPER_BASE_URL: serper.baseUrl });
  runtime = createExternalSearchRuntime({ database: db.database, config, logger: silentLogger, cache });
});

afterAll(async () => {
  await runtime?.close();
  await serper?.close();
  await db?.dispose();
});

it("answers a paid call without waiting for its cache write, and serves what the cache holds", async () => {
  const answer = await runtime.service.webSearch(tenant, "espresso descaling", ["SERPER"], 5, false);
  expect(answer.calls.map((call) => call.status)).toEqual(["OK"]);
  expect(answer.results.length).toBeGreaterThan(0);
  expect(serper.requests).toHaveLength(1);
  expect(cache.writes).toHaveLength(1);
  expect(cache.writes[0]!.ttlSeconds).toBe(3_600);

  // Had the write landed, the next identical call is served from the cache, not the vendor.
  cache.held.set(cache.writes[0]!.key, cache.writes[0]!.value);
  const again = await runtime.service.webSearch(tenant, "espresso descaling", ["SERPER"], 5, false);
  expect(again.calls.map((call) => call.status)).toEqual(["CACHED"]);
  expect(again.results.map((result) => result.url)).toEqual(answer.results.map((result) => result.url));
  expect(serper.requests).toHaveLength(1);
});
