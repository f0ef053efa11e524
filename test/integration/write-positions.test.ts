/**
 * Users' last write positions in a real Redis (REDIS_URL; CI runs one on 127.0.0.1:6379): what
 * every instance reads for read-your-writes (lib/database/write-positions.ts), and what a Redis
 * outage does to it (the caller learns it, so reads go to the primary).
 */
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { RedisWritePositions } from "../../lib/database/write-positions.js";

const redisUrl = loadConfig().search.redisUrl;
const describeWithRedis = redisUrl ? describe : describe.skip;
const stores: RedisWritePositions[] = [];
afterAll(async () => Promise.all(stores.map((store) => store.close())));

function open(url: string, prefix: string, ttlMs = 60_000): RedisWritePositions {
  const store = new RedisWritePositions(url, prefix, ttlMs, silentLogger);
  stores.push(store);
  return store;
}

describeWithRedis("RedisWritePositions (real Redis at REDIS_URL)", () => {
  it("shares positions between instances and keeps the larger of two out-of-order records", async () => {
    const prefix = `test-positions-${randomBytes(4).toString("hex")}:`;
    const [a, b] = [open(redisUrl!, prefix), open(redisUrl!, prefix)];
    expect(await a.ready(5_000)).toBe(true);
    expect(await b.ready(5_000)).toBe(true);
    const ann = { organizationId: "acme", userId: "ann" };
    expect(await b.get(ann)).toBeNull();
    // Past 2^53 and across the 32-bit halves: compared as positions, not as numbers or short strings.
    await a.record(ann, 0x1_0000_0000n);
    await b.record(ann, 0xffff_ffffn);
    expect(await b.get(ann)).toBe(0x1_0000_0000n);
    await b.record(ann, 0x20_0000_0000_0001n);
    expect(await a.get(ann)).toBe(0x20_0000_0000_0001n);
    expect(await a.get({ organizationId: "acme", userId: "bob" })).toBeNull();
  });

  it("lets a position expire after its time to live", async () => {
    const store = open(redisUrl!, `test-positions-${randomBytes(4).toString("hex")}:`, 50);
    expect(await store.ready(5_000)).toBe(true);
    await store.record({ organizationId: "acme", userId: "ann" }, 9n);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await store.get({ organizationId: "acme", userId: "ann" })).toBeNull();
  });
});

describe("RedisWritePositions when Redis is unreachable", () => {
  it("fails lookups and records instead of answering 'no write', so the caller reads from the primary", async () => {
    // A port of this helper's range where nothing listens.
    const store = open("redis://127.0.0.1:23998", "test-positions-down:");
    await expect(store.get({ organizationId: "acme", userId: "ann" })).rejects.toThrow();
    await expect(store.record({ organizationId: "acme", userId: "ann" }, 1n)).rejects.toThrow();
  });
});
