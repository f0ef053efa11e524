/**
 * The response cache's write generations in Redis (gateway/response-cache-generations.ts), against
 * the real Redis at REDIS_URL: what one gateway advances, another reads; a Redis that lost its data
 * never hands out a generation seen before; an advance that could not reach Redis is made once it
 * can; and the bounds of the answers each gateway keeps (gateway/response-cache.ts).
 */
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, describe, expect, it } from "@jest/globals";
import { Redis } from "ioredis";
import { SharedGenerations } from "../../gateway/response-cache-generations.js";
import { ResponseStore } from "../../gateway/response-cache.js";
import { loadConfig } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { TcpProxy } from "../support/tcp-proxy.js";

const redisUrl = loadConfig().search.redisUrl;
// CI always has Redis (.ci/run starts it and exports REDIS_URL): there, a missing one is a failure, not a skip.
const describeWithRedis = redisUrl || process.env.CI ? describe : describe.skip;
const opened: { close(): Promise<void> }[] = [];
/** Every Redis key this file writes starts with this. */
const RUN_PREFIX = `test-generations-${randomUUID()}`;

function generations(url = redisUrl!, prefix: string, onUnreliable = () => {}) {
  const shared = new SharedGenerations(url, prefix, 60, silentLogger, onUnreliable);
  opened.push(shared);
  return shared;
}

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((resource) => resource.close()));
});

afterAll(async () => {
  if (!redisUrl) return;
  const redis = new Redis(redisUrl);
  try {
    const keys = await redis.keys(`${RUN_PREFIX}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
});

describeWithRedis("SharedGenerations (real Redis at REDIS_URL)", () => {
  it("what one gateway advances, another reads at once; other organizations keep theirs", async () => {
    if (!redisUrl) throw new Error("REDIS_URL is not set (CI runs Redis at redis://127.0.0.1:6379)");
    const prefix = `${RUN_PREFIX}-${randomUUID()}:`;
    const [a, b] = [generations(redisUrl, prefix), generations(redisUrl, prefix)];
    expect(await a.ready()).toBe(true);
    expect(await b.ready()).toBe(true);
    const before = await b.current("acme");
    const otherBefore = await b.current("globex");
    expect(before).not.toBeNull();
    await a.advance("acme");
    const after = await b.current("acme");
    expect(after).not.toBe(before);
    expect(await a.current("acme")).toBe(after);
    expect(await b.current("globex")).toBe(otherBefore);
  });

  it("after Redis lost its data (a restart without persistence), hands out no generation seen before", async () => {
    const prefix = `${RUN_PREFIX}-${randomUUID()}:`;
    const gateway = generations(redisUrl!, prefix);
    await gateway.ready();
    const seen = new Set<string>();
    for (let i = 0; i < 3; i++) {
      seen.add((await gateway.current("acme"))!);
      await gateway.advance("acme");
    }
    seen.add((await gateway.current("acme"))!);
    const admin = new Redis(redisUrl!);
    try {
      const keys = await admin.keys(`${prefix}*`);
      expect(keys.length).toBeGreaterThanOrEqual(3);
      await admin.del(...keys);
    } finally {
      admin.disconnect();
    }
    // The counter starts again from 1, but under a new epoch.
    for (let i = 0; i < 4; i++) {
      const generation = (await gateway.current("acme"))!;
      expect(seen.has(generation)).toBe(false);
      await gateway.advance("acme");
    }
  });

  it("an advance that could not reach Redis is made once it can, and the gateway that failed drops its answers", async () => {
    const prefix = `${RUN_PREFIX}-${randomUUID()}:`;
    const proxy = await TcpProxy.start(redisUrl!);
    opened.push(proxy);
    let dropped = 0;
    const cutOff = generations(proxy.urlFor(redisUrl!), prefix, () => (dropped += 1));
    const other = generations(redisUrl!, prefix);
    expect(await cutOff.ready()).toBe(true);
    await other.ready();
    const before = await other.current("acme");

    await proxy.set("cut");
    await cutOff.advance("acme");
    expect(dropped).toBeGreaterThan(0);
    expect(await cutOff.current("acme")).toBeNull();
    expect(await other.current("acme")).toBe(before);

    await proxy.set("open");
    // Reconnecting (ioredis backs off up to a few seconds); the pending advance goes out on "ready".
    expect(await cutOff.ready(10_000)).toBe(true);
    let after = await other.current("acme");
    for (let attempt = 0; attempt < 50 && after === before; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await other.current("acme");
    }
    expect(after).not.toBe(before);
  });
});

describe("ResponseStore bounds", () => {
  it("keeps no answer over 256 KiB as JSON, and ordinary ones as before", () => {
    const store = new ResponseStore();
    store.set("small", { data: { search: { hits: [] } } }, [], 60_000);
    store.set("huge", { data: { search: { text: "x".repeat(300 * 1024) } } }, [], 60_000);
    expect(store.get("small")).toEqual({ data: { search: { hits: [] } } });
    expect(store.get("huge")).toBeUndefined();
    expect(store.size).toBe(1);
  });

  it("never stores or serves the empty key of a request that must not use the cache", () => {
    const store = new ResponseStore();
    store.set("", { data: {} }, [], 60_000);
    expect(store.get("")).toBeUndefined();
    expect(store.size).toBe(0);
  });
});
