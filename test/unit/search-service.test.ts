/**
 * The search pipeline with in-process providers (implementations of the SearchProvider
 * interface that return fixed lists), so fan-out, timeouts, fusion, paging and caching can be
 * checked exactly. The real providers are tested against a database in the integration suite.
 */
import { describe, expect, it } from "@jest/globals";
import type { ProviderHit, ProviderRequest, SearchProvider } from "../../lib/retrieval/search-provider.js";
import { MemoryResultCache, type ResultCache } from "../../lib/cache/result-cache.js";
import { FUSION_METHODS } from "../../subgraphs/search/fusion.js";
import { FairShareQueue } from "../../lib/workers/fair-share.js";
import { MIN_WINDOW, SearchService, searchTurns, type SearchInput } from "../../subgraphs/search/search-service.js";

const tenant = { organizationId: "org", userId: "user", teamIds: [], role: "member" as const, userName: null, userEmail: null };

class ListProvider implements SearchProvider {
  readonly latency = "LOCAL" as const;
  calls: ProviderRequest[] = [];
  readonly description = "fixed list";
  constructor(
    readonly name: string,
    readonly kind: "KEYWORD" | "SEMANTIC",
    private readonly ids: string[],
    private readonly behaviour: { delayMs?: number; fail?: string; groupOf?: (id: string) => string } = {},
  ) {}
  async search(request: ProviderRequest): Promise<ProviderHit[]> {
    this.calls.push(request);
    if (this.behaviour.delayMs) await new Promise((resolve) => setTimeout(resolve, this.behaviour.delayMs));
    if (this.behaviour.fail) throw new Error(this.behaviour.fail);
    const groupOf = this.behaviour.groupOf;
    return this.ids.slice(0, request.window).map((id, index) => ({ ref: { typename: groupOf ? "DocumentChunk" : "Conversation", id }, nativeScore: 1 / (index + 1), ...(groupOf ? { group: groupOf(id) } : {}) }));
  }
}

function service(providers: SearchProvider[], options: { ttl?: number; timeoutMs?: number } = {}) {
  return new SearchService({ providers, cache: new MemoryResultCache(), cacheTtlSeconds: options.ttl ?? 0, providerTimeoutMs: options.timeoutMs ?? 500, queryLog: null });
}

/** A seeded shuffle, so the "random" lists are the same on every run. */
function shuffled(ids: string[], seed: number): string[] {
  const out = [...ids];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

async function pageThrough(search: SearchService, input: SearchInput): Promise<string[]> {
  const seen: string[] = [];
  let after: string | null = null;
  for (let page = 0; page < 100; page++) {
    const result = await search.search(tenant, { ...input, after });
    seen.push(...result.hits.map((hit) => hit.ref.id));
    if (!result.pageInfo.hasNextPage) break;
    after = result.pageInfo.endCursor;
  }
  return seen;
}

describe("SearchService paging", () => {
  it.each([1, 2, 3, 4, 5])("pages through fused results with no duplicates and no gaps (seed %i)", async (seed) => {
    const universe = Array.from({ length: 120 }, (_, i) => `c${String(i).padStart(3, "0")}`);
    const keyword = new ListProvider("kw", "KEYWORD", shuffled(universe, seed).slice(0, 90));
    const semantic = new ListProvider("sem", "SEMANTIC", shuffled(universe, seed * 7 + 1).slice(0, 80));
    const seen = await pageThrough(service([keyword, semantic]), { query: "q", limit: 7 });
    expect(new Set(seen).size).toBe(seen.length);
    // Every entity any provider returned is reached (the union of both lists).
    expect(new Set(seen)).toEqual(new Set([...shuffled(universe, seed).slice(0, 90), ...shuffled(universe, seed * 7 + 1).slice(0, 80)]));
  });

  it("asks providers for 2 × (offset + limit), at least MIN_WINDOW, doubling as pages go deeper", async () => {
    const keyword = new ListProvider("kw", "KEYWORD", Array.from({ length: 500 }, (_, i) => `k${i}`));
    const search = service([keyword]);
    const first = await search.search(tenant, { query: "q", limit: 30 });
    await search.search(tenant, { query: "q", limit: 30, after: first.pageInfo.endCursor });
    expect(keyword.calls.map((call) => call.window)).toEqual([60, 120]);
    // A small page still asks for MIN_WINDOW, and its next page needs no deeper one.
    const small = await search.search(tenant, { query: "q", limit: 1 });
    await search.search(tenant, { query: "q", limit: 1, after: small.pageInfo.endCursor });
    expect(keyword.calls.slice(2).map((call) => call.window)).toEqual([MIN_WINDOW, MIN_WINDOW]);
  });

  it("ranks a page of 1 as the first hit of a page of 20, whatever the fusion method", async () => {
    const keyword = new ListProvider("kw", "KEYWORD", Array.from({ length: 60 }, (_, i) => `k${i}`));
    const semantic = new ListProvider("sem", "SEMANTIC", shuffled(Array.from({ length: 60 }, (_, i) => `k${i}`), 7));
    const search = service([keyword, semantic]);
    for (const fusion of FUSION_METHODS) {
      const [one] = (await search.search(tenant, { query: "q", alpha: 0.5, fusion, limit: 1 })).hits;
      const [first] = (await search.search(tenant, { query: "q", alpha: 0.5, fusion, limit: 20 })).hits;
      expect(one!.ref).toEqual(first!.ref);
    }
  });

  it("refuses a cursor from a different search", async () => {
    const search = service([new ListProvider("kw", "KEYWORD", ["a", "b", "c"])]);
    const first = await search.search(tenant, { query: "deadlock", limit: 1 });
    await expect(search.search(tenant, { query: "lisbon", limit: 1, after: first.pageInfo.endCursor })).rejects.toMatchObject({
      extensions: { code: "BAD_USER_INPUT", field: "input.after" },
    });
    await expect(search.search(tenant, { query: "deadlock", alpha: 0.9, limit: 1, after: first.pageInfo.endCursor })).rejects.toThrow(/different search/);
    // Another fusion is another list; naming the default one is the same list.
    const another = FUSION_METHODS.find((method) => method !== search.defaultFusion)!;
    await expect(search.search(tenant, { query: "deadlock", fusion: another, limit: 1, after: first.pageInfo.endCursor })).rejects.toThrow(/different search/);
    expect((await search.search(tenant, { query: "deadlock", fusion: search.defaultFusion, limit: 1, after: first.pageInfo.endCursor })).hits.map((hit) => hit.ref.id)).toEqual(["b"]);
  });
});

describe("SearchService providers", () => {
  it("reports a slow provider as TIMEOUT and answers with the others", async () => {
    const fast = new ListProvider("kw", "KEYWORD", ["a", "b"]);
    const slow = new ListProvider("sem", "SEMANTIC", ["z"], { delayMs: 300 });
    const result = await service([fast, slow], { timeoutMs: 50 }).search(tenant, { query: "q" });
    expect(result.hits.map((hit) => hit.ref.id)).toEqual(["a", "b"]);
    expect(result.providers).toEqual([
      expect.objectContaining({ name: "kw", status: "OK", returned: 2, error: null }),
      expect.objectContaining({ name: "sem", status: "TIMEOUT", returned: 0, error: "no answer within 50 ms" }),
    ]);
    expect(slow.calls[0]!.signal.aborted).toBe(true);
  });

  it("reports a failing provider as ERROR with the first line of its message only", async () => {
    const failing = new ListProvider("sem", "SEMANTIC", [], { fail: "connection refused\n    at Socket.connect (net.js:1:1)" });
    const result = await service([new ListProvider("kw", "KEYWORD", ["a"]), failing]).search(tenant, { query: "q" });
    expect(result.hits).toHaveLength(1);
    expect(result.providers[1]).toMatchObject({ status: "ERROR", error: "connection refused" });
  });

  it("does not call providers whose weight is 0 or that were not asked for", async () => {
    const keyword = new ListProvider("kw", "KEYWORD", ["a"]);
    const semantic = new ListProvider("sem", "SEMANTIC", ["b"]);
    const other = new ListProvider("web", "KEYWORD", ["c"]);
    const search = service([keyword, semantic, other]);
    const keywordOnly = await search.search(tenant, { query: "q", alpha: 1, providers: ["kw", "sem"] });
    expect(keywordOnly.hits.map((hit) => hit.ref.id)).toEqual(["a"]);
    expect(keywordOnly.providers.map((report) => report.status)).toEqual(["OK", "SKIPPED", "SKIPPED"]);
    const weightedOut = await search.search(tenant, { query: "q", alpha: 0.5, weights: [{ provider: "kw", weight: 0 }] });
    expect(weightedOut.providers.map((report) => report.status)).toEqual(["SKIPPED", "OK", "OK"]);
    expect(semantic.calls).toHaveLength(1);
    expect(keyword.calls).toHaveLength(1);
    expect(other.calls).toHaveLength(1);
  });
});

describe("SearchService cache", () => {
  it("serves a repeated search from the cache, and never caches a degraded answer", async () => {
    const keyword = new ListProvider("kw", "KEYWORD", ["a", "b"]);
    const search = service([keyword], { ttl: 60 });
    expect((await search.search(tenant, { query: "q" })).cached).toBe(false);
    const again = await search.search(tenant, { query: "  q " });
    expect(again.cached).toBe(true);
    expect(again.hits.map((hit) => hit.ref.id)).toEqual(["a", "b"]);
    expect(keyword.calls).toHaveLength(1);
    // Another user of the same organization does not share the entry.
    expect((await search.search({ ...tenant, userId: "someone-else" }, { query: "q" })).cached).toBe(false);

    const flaky = new ListProvider("sem", "SEMANTIC", [], { fail: "down" });
    const degraded = service([keyword, flaky], { ttl: 60 });
    await degraded.search(tenant, { query: "q" });
    expect((await degraded.search(tenant, { query: "q" })).cached).toBe(false);
  });

  it("answers without waiting for its page to be cached", async () => {
    // A cache whose writes never finish (Redis stalled until its command timeout, say).
    const writes: string[] = [];
    const stalled: ResultCache = { kind: "redis", get: async () => null, set: (key) => (writes.push(key), new Promise<void>(() => {})), close: async () => {} };
    const search = new SearchService({ providers: [new ListProvider("kw", "KEYWORD", ["a"])], cache: stalled, cacheTtlSeconds: 60, providerTimeoutMs: 500, queryLog: null });
    const result = await search.search(tenant, { query: "q" });
    expect(result.hits.map((hit) => hit.ref.id)).toEqual(["a"]);
    expect(writes).toHaveLength(1);
  });
});

describe("SearchService distinct pages", () => {
  // 40 chunks of document A first, then one chunk each of B, C and D.
  const chunks = [...Array.from({ length: 40 }, (_, index) => `A-${index}`), "B-0", "C-0", "D-0"];
  const groupOf = (id: string) => `Document:${id.split("-")[0]}`;

  it("deepens the window until the page holds as many documents as it asks for, and pages on without gaps", async () => {
    const provider = new ListProvider("documents.keyword", "KEYWORD", chunks, { groupOf });
    const search = service([provider]);
    const first = await search.search(tenant, { query: "q", limit: 2 });
    expect(first.hits.map((hit) => [hit.ref.id, hit.moreMatches?.length])).toEqual([["A-0", 39], ["B-0", 0]]);
    // The first window (MIN_WINDOW, 40) held only A's chunks; it doubled until B came into it.
    expect(provider.calls.map((call) => call.window)).toEqual([40, 80]);
    const second = await search.search(tenant, { query: "q", limit: 2, after: first.pageInfo.endCursor });
    expect(second.hits.map((hit) => hit.ref.id)).toEqual(["C-0", "D-0"]);
    expect(second.pageInfo.hasNextPage).toBe(false);
  });

  it("asks once when the page fills at the first window, and shows every chunk without distinct", async () => {
    const provider = new ListProvider("documents.keyword", "KEYWORD", chunks, { groupOf });
    const search = service([provider]);
    expect((await search.search(tenant, { query: "q", limit: 1 })).hits.map((hit) => hit.ref.id)).toEqual(["A-0"]);
    expect((await search.search(tenant, { query: "q", limit: 3, distinct: false })).hits.map((hit) => hit.ref.id)).toEqual(["A-0", "A-1", "A-2"]);
    expect(provider.calls.map((call) => call.window)).toEqual([MIN_WINDOW, MIN_WINDOW]);
  });
});

describe("SearchService bad input", () => {
  const search = service([new ListProvider("kw", "KEYWORD", ["a"])]);
  it.each<[string, SearchInput, string]>([
    ["alpha above 1", { query: "q", alpha: 1.5 }, "input.alpha"],
    ["alpha below 0", { query: "q", alpha: -0.1 }, "input.alpha"],
    ["alpha NaN", { query: "q", alpha: Number.NaN }, "input.alpha"],
    ["limit 0", { query: "q", limit: 0 }, "input.limit"],
    ["limit 101", { query: "q", limit: 101 }, "input.limit"],
    ["rrfK 0", { query: "q", rrfK: 0 }, "input.rrfK"],
    ["an unknown fusion method", { query: "q", fusion: "LINEAR" as never }, "input.fusion"],
    ["an empty query", { query: "" }, "input.query"],
    ["a whitespace query", { query: " \n\t " }, "input.query"],
    ["a 1,001-character query", { query: "x".repeat(1001) }, "input.query"],
    ["an unknown provider", { query: "q", providers: ["web.bing"] }, "input.providers"],
    ["an empty provider list", { query: "q", providers: [] }, "input.providers"],
    ["a negative weight", { query: "q", weights: [{ provider: "kw", weight: -1 }] }, "input.weights"],
    ["a weight for an unknown provider", { query: "q", weights: [{ provider: "nope", weight: 1 }] }, "input.weights"],
    ["a garbage cursor", { query: "q", after: "%%%" }, "input.after"],
  ])("rejects %s as BAD_USER_INPUT naming the field", async (_name, input, field) => {
    await expect(search.search(tenant, input)).rejects.toMatchObject({ extensions: { code: "BAD_USER_INPUT", field } });
  });
});

describe("SearchService turns by organization", () => {
  /** A provider whose calls wait until the test lets each go, recording which organization asked. */
  class HeldProvider implements SearchProvider {
    readonly latency = "LOCAL" as const;
    readonly kind = "KEYWORD" as const;
    readonly name = "held";
    readonly description = "held until released";
    readonly asked: string[] = [];
    private readonly releases: (() => void)[] = [];
    async search(request: ProviderRequest): Promise<ProviderHit[]> {
      this.asked.push(request.tenant.organizationId);
      await new Promise<void>((resolve) => this.releases.push(resolve));
      return [];
    }
    /** Lets the oldest held call go. */
    releaseOne(): void {
      this.releases.shift()?.();
    }
    get held(): number {
      return this.releases.length;
    }
  }

  const of = (organizationId: string) => ({ ...tenant, organizationId });
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it("starts another organization's search in the slot one organization may not take, and runs the flood two at a time", async () => {
    const provider = new HeldProvider();
    const search = new SearchService({ providers: [provider], cache: new MemoryResultCache(), cacheTtlSeconds: 0, providerTimeoutMs: 60_000, queryLog: null, turns: searchTurns({ running: 3, perOrganization: 2 }) });
    const flood = Array.from({ length: 10 }, (_, i) => search.search(of("attacker"), { query: `flood ${i}` }));
    await settle();
    // Two of the flood's ten run; the third slot is kept for someone else.
    expect(provider.asked).toEqual(["attacker", "attacker"]);
    const victim = search.search(of("victim"), { query: "mine" });
    await settle();
    expect(provider.asked).toEqual(["attacker", "attacker", "victim"]);
    // As slots free, the flood goes on two at a time; the victim's search was never behind it.
    for (let i = 0; i < 11; i += 1) {
      provider.releaseOne();
      await settle();
      await settle();
      expect(provider.held).toBeLessThanOrEqual(3);
    }
    await Promise.all([...flood, victim]);
    expect(provider.asked.filter((organization) => organization === "attacker")).toHaveLength(10);
  });

  it("refuses a search that cannot wait with OVERLOADED, and answers bad input before any turn", async () => {
    const provider = new HeldProvider();
    const turns = new FairShareQueue({ name: "search", maxRunning: 1, maxRunningPerKey: 1, maxQueuedPerKey: 1, maxQueued: 10, maxWaitMs: 60_000 });
    const search = new SearchService({ providers: [provider], cache: new MemoryResultCache(), cacheTtlSeconds: 0, providerTimeoutMs: 60_000, queryLog: null, turns });
    const running = search.search(of("attacker"), { query: "one" });
    const waiting = search.search(of("attacker"), { query: "two" });
    await expect(search.search(of("attacker"), { query: "three" })).rejects.toMatchObject({ extensions: { code: "OVERLOADED" } });
    await expect(search.search(of("attacker"), { query: "" })).rejects.toMatchObject({ extensions: { code: "BAD_USER_INPUT" } });
    provider.releaseOne();
    await settle();
    await settle();
    provider.releaseOne();
    await Promise.all([running, waiting]);
  });
});
