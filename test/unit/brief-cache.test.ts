/**
 * BriefCache (lib/cache/brief-cache.ts): one read per key at a time, values kept for their TTL
 * on a clock the test moves, invalidate() making a read in flight neither kept nor shared, and
 * caller-bound reads whose failure on one caller's connection does not fail those who joined it.
 */
import { describe, expect, it } from "@jest/globals";
import { BriefCache } from "../../lib/cache/brief-cache.js";

/** A read the test settles by hand, counting how often it was started. */
function gatedReads<V>() {
  const pending: { resolve: (value: V) => void; reject: (error: Error) => void }[] = [];
  return {
    pending,
    read: () => new Promise<V>((resolve, reject) => pending.push({ resolve, reject })),
  };
}

const clock = () => {
  let now = 1_000;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
};

describe("BriefCache", () => {
  it("shares one read among concurrent callers, keeps its value for the TTL, and reads again after it", async () => {
    const time = clock();
    const cache = new BriefCache<string, number>({ ttlMs: 5_000, clock: time });
    const reads = gatedReads<number>();
    const answers = Promise.all(Array.from({ length: 30 }, () => cache.get("org-a", reads.read)));
    expect(reads.pending).toHaveLength(1);
    reads.pending[0]!.resolve(7);
    expect(await answers).toEqual(Array(30).fill(7));
    expect(await cache.get("org-a", reads.read)).toBe(7);
    expect(reads.pending).toHaveLength(1);
    time.advance(5_001);
    expect(cache.peek("org-a")).toBeUndefined();
    const again = cache.get("org-a", reads.read);
    expect(reads.pending).toHaveLength(2);
    reads.pending[1]!.resolve(8);
    expect(await again).toBe(8);
  });

  it("keeps a value only as long as keepFor says, and shares even a value it does not keep", async () => {
    const cache = new BriefCache<string, number>({ ttlMs: 5_000, keepFor: (value) => (value === 0 ? 5_000 : 0) });
    const reads = gatedReads<number>();
    const both = Promise.all([cache.get("small", reads.read), cache.get("small", reads.read)]);
    reads.pending[0]!.resolve(3);
    expect(await both).toEqual([3, 3]);
    expect(reads.pending).toHaveLength(1);
    expect(cache.peek("small")).toBeUndefined();
    void cache.get("small", reads.read);
    expect(reads.pending).toHaveLength(2);
  });

  it("keeps nothing with a TTL of 0 (lru-cache's 0 would mean forever)", async () => {
    const cache = new BriefCache<string, number>({ ttlMs: 0 });
    await cache.get("k", async () => 1);
    expect(cache.peek("k")).toBeUndefined();
    expect(await cache.get("k", async () => 2)).toBe(2);
  });

  it("after invalidate(), a read in flight is neither kept nor handed to later callers; its own callers still get it", async () => {
    const cache = new BriefCache<string, string>({ ttlMs: 5_000 });
    const reads = gatedReads<string>();
    const before = cache.get("org-c", reads.read);
    cache.invalidate("org-c");
    const after = cache.get("org-c", reads.read);
    expect(reads.pending).toHaveLength(2);
    reads.pending[0]!.resolve("before the change");
    expect(await before).toBe("before the change");
    expect(cache.peek("org-c")).toBeUndefined();
    reads.pending[1]!.resolve("after the change");
    expect(await after).toBe("after the change");
    expect(cache.peek("org-c")).toBe("after the change");
  });

  it("an older read settling after a newer one started leaves the newer one shared and kept", async () => {
    const cache = new BriefCache<string, string>({ ttlMs: 5_000 });
    const reads = gatedReads<string>();
    void cache.get("k", reads.read);
    cache.invalidate("k");
    const newer = cache.get("k", reads.read);
    reads.pending[0]!.resolve("old");
    await Promise.resolve();
    const joined = cache.get("k", reads.read);
    expect(reads.pending).toHaveLength(2);
    reads.pending[1]!.resolve("new");
    expect(await Promise.all([newer, joined])).toEqual(["new", "new"]);
    expect(cache.peek("k")).toBe("new");
  });

  it("fails everyone waiting on a failed read by default, and keeps nothing", async () => {
    const cache = new BriefCache<string, number>({ ttlMs: 5_000 });
    const reads = gatedReads<number>();
    const waiting = Array.from({ length: 3 }, () => cache.get("k", reads.read));
    reads.pending[0]!.reject(new Error("database down"));
    for (const answer of waiting) await expect(answer).rejects.toThrow("database down");
    expect(reads.pending).toHaveLength(1);
    expect(cache.peek("k")).toBeUndefined();
  });

  it("caller-bound: the caller whose read failed gets its error; those who joined read again, sharing one retry", async () => {
    const cache = new BriefCache<string, number>({ ttlMs: 5_000, callerBound: true });
    const first = gatedReads<number>();
    const others = gatedReads<number>();
    const initiator = cache.get("org-a", first.read);
    const joined = Array.from({ length: 5 }, () => cache.get("org-a", others.read));
    expect(others.pending).toHaveLength(0);
    first.pending[0]!.reject(new Error("canceling statement due to statement timeout"));
    await expect(initiator).rejects.toThrow("statement timeout");
    // The joined callers' retry runs on one of their own readers, shared among them.
    await new Promise((resolve) => setImmediate(resolve));
    expect(others.pending).toHaveLength(1);
    others.pending[0]!.resolve(42);
    expect(await Promise.all(joined)).toEqual(Array(5).fill(42));
    expect(cache.peek("org-a")).toBe(42);
  });
});
