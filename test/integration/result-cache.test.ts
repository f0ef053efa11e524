/**
 * The search result cache against a real Redis (REDIS_URL; CI runs one on 127.0.0.1:6379),
 * and the promise that a Redis outage means "no cache", never an error or a stall.
 */
import net from "node:net";
import { afterAll, describe, expect, it, jest } from "@jest/globals";
import { Redis } from "ioredis";
import { loadConfig } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { MemoryResultCache, RedisResultCache } from "../../lib/cache/result-cache.js";
import { useFakeClock } from "../support/fake-clock.js";

const redisUrl = loadConfig().search.redisUrl;
const describeWithRedis = redisUrl ? describe : describe.skip;
const caches: RedisResultCache[] = [];
afterAll(async () => Promise.all(caches.map((cache) => cache.close())));

describeWithRedis("RedisResultCache (real Redis at REDIS_URL)", () => {
  it("stores, reads back and expires entries", async () => {
    const cache = new RedisResultCache(redisUrl!, silentLogger);
    caches.push(cache);
    // Connected once a write reads back: commands fail at once while it connects (no offline
    // queue), and a fixed wait for the connection was a guess at the machine's speed.
    const key = `test:${Date.now()}:${Math.random()}`;
    for (;;) {
      await cache.set(key, "value", 60);
      if ((await cache.get(key)) === "value") break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The TTL reaches Redis (read with a client of our own)...
    const raw = new Redis(redisUrl!);
    try {
      const remainingMs = await raw.pttl(`context-search:${key}`);
      expect(remainingMs).toBeGreaterThan(0);
      expect(remainingMs).toBeLessThanOrEqual(60_000);
    } finally {
      raw.disconnect();
    }
    // ...and Redis expires by it. Only a lower bound of time is waited for, which load can only
    // lengthen; reading a 1 s entry back before it expires would race the machine.
    const brief = `${key}:brief`;
    await cache.set(brief, "value", 1);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(await cache.get(brief)).toBeNull();
    expect(await cache.get(key)).toBe("value");
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
  // On Jest's fake clock: a 50 ms entry read back on a real one expired first under load.
  it("expires entries after their TTL", async () => {
    useFakeClock();
    try {
      // lru-cache keeps the `performance` it found at import, before the fake clock: given this
      // one, it reads the fake clock (and its cached "now" is reset by a fake timer too).
      const cache = new MemoryResultCache(undefined, { now: () => Date.now() });
      await cache.set("k", "v", 0.05);
      expect(await cache.get("k")).toBe("v");
      jest.advanceTimersByTime(49);
      expect(await cache.get("k")).toBe("v");
      jest.advanceTimersByTime(31);
      expect(await cache.get("k")).toBeNull();
    } finally {
      jest.useRealTimers();
    }
  });
});
