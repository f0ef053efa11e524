/**
 * The search result cache against a real Redis (REDIS_URL; CI runs one on 127.0.0.1:6379),
 * and the promise that a Redis outage means "no cache", never an error or a stall.
 */
import net from "node:net";
import { afterAll, describe, expect, it } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { MemoryResultCache, RedisResultCache } from "../../lib/cache/result-cache.js";

const redisUrl = loadConfig().search.redisUrl;
const describeWithRedis = redisUrl ? describe : describe.skip;
const caches: RedisResultCache[] = [];
afterAll(async () => Promise.all(caches.map((cache) => cache.close())));

describeWithRedis("RedisResultCache (real Redis at REDIS_URL)", () => {
  it("stores, reads back and expires entries", async () => {
    const cache = new RedisResultCache(redisUrl!, silentLogger);
    caches.push(cache);
    await new Promise((resolve) => setTimeout(resolve, 200)); // connect
    const key = `test:${Date.now()}:${Math.random()}`;
    await cache.set(key, "value", 1);
    expect(await cache.get(key)).toBe("value");
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(await cache.get(key)).toBeNull();
  });
});

describe("RedisResultCache when Redis is down", () => {
  it("answers misses quickly and swallows write failures", async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const cache = new RedisResultCache(`redis://127.0.0.1:${closedPort}`, silentLogger);
    caches.push(cache);
    // Commands fail at once instead of queueing until Redis comes back (enableOfflineQueue off).
    expect(await cache.get("anything")).toBeNull();
    await expect(cache.set("anything", "v", 60)).resolves.toBeUndefined();
  });
});

describe("MemoryResultCache", () => {
  it("expires entries after their TTL", async () => {
    const cache = new MemoryResultCache();
    await cache.set("k", "v", 0.05);
    expect(await cache.get("k")).toBe("v");
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await cache.get("k")).toBeNull();
  });
});
