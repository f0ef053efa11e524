/**
 * `SearchInput.latency` and shared provider calls, with in-process providers: a LOCAL page asks
 * only LOCAL providers and reports the others SKIPPED with the reason; the page of every
 * provider asked at the same time (what a `@defer`red operation does) takes the LOCAL answers
 * from the calls already running, for the same caller only; a failed call is not reused.
 */
import { describe, expect, it } from "@jest/globals";
import { GraphQLError } from "graphql";
import { MemoryResultCache } from "../../lib/cache/result-cache.js";
import type { ProviderHit, ProviderLatency, ProviderRequest, SearchProvider } from "../../lib/retrieval/search-provider.js";
import { SearchService } from "../../subgraphs/search/search-service.js";

const ada = { organizationId: "org-a", userId: "ada", teamIds: [], role: "member" as const, userName: null, userEmail: null };
const bob = { ...ada, organizationId: "org-b", userId: "bob" };

class CountingProvider implements SearchProvider {
  readonly kind = "KEYWORD" as const;
  readonly description = "fixed list, counts its calls";
  calls = 0;
  failNext = false;
  constructor(
    readonly name: string,
    readonly latency: ProviderLatency,
    private readonly ids: string[],
    private readonly delayMs = 0,
  ) {}
  async search(request: ProviderRequest): Promise<ProviderHit[]> {
    this.calls += 1;
    if (this.delayMs) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    if (this.failNext) {
      this.failNext = false;
      throw new Error("the index is being rebuilt");
    }
    return this.ids.slice(0, request.window).map((id, index) => ({ ref: { typename: "Conversation", id }, nativeScore: 1 / (index + 1) }));
  }
}

function setup(options: { cacheTtlSeconds?: number; sharedCallKeepMs?: number } = {}) {
  const local = new CountingProvider("local.keyword", "LOCAL", ["l1", "l2", "l3"], 20);
  const remote = new CountingProvider("remote.web", "REMOTE", ["r1", "r2"], 60);
  const service = new SearchService({ providers: [local, remote], cache: new MemoryResultCache(), cacheTtlSeconds: options.cacheTtlSeconds ?? 0, providerTimeoutMs: 2_000, queryLog: null, ...(options.sharedCallKeepMs !== undefined ? { sharedCallKeepMs: options.sharedCallKeepMs } : {}) });
  return { local, remote, service };
}

describe("SearchInput.latency", () => {
  it("asks only the providers of that latency and says why the others were skipped", async () => {
    const { local, remote, service } = setup();
    const page = await service.search(ada, { query: "q", latency: "LOCAL" });
    expect(page.hits.map((hit) => hit.ref.id)).toEqual(["l1", "l2", "l3"]);
    expect(page.providers).toEqual([
      expect.objectContaining({ name: "local.keyword", status: "OK" }),
      expect.objectContaining({ name: "remote.web", status: "SKIPPED", error: "its latency is REMOTE; input.latency asks LOCAL providers only" }),
    ]);
    expect([local.calls, remote.calls]).toEqual([1, 0]);
  });

  it("refuses a latency that is not LOCAL or REMOTE, naming the field", async () => {
    const { service } = setup();
    const refusal = await service.search(ada, { query: "q", latency: "SOON" as ProviderLatency }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(GraphQLError);
    expect((refusal as GraphQLError).extensions.code).toBe("BAD_USER_INPUT");
    expect((refusal as GraphQLError).message).toMatch(/input\.latency.*LOCAL or REMOTE/);
  });
});

describe("shared provider calls", () => {
  it("gives the page of every provider the LOCAL answers of the LOCAL page asked at the same time", async () => {
    const { local, remote, service } = setup();
    const [fast, all] = await Promise.all([service.search(ada, { query: "q", latency: "LOCAL" }), service.search(ada, { query: "q" })]);
    expect(fast.hits.map((hit) => hit.ref.id)).toEqual(["l1", "l2", "l3"]);
    expect(new Set(all.hits.map((hit) => hit.ref.id))).toEqual(new Set(["l1", "l2", "l3", "r1", "r2"]));
    expect([local.calls, remote.calls]).toEqual([1, 1]);
  });

  it("by default shares only calls in flight: a finished answer is never served again (it would skip a cached page's checks)", async () => {
    const fresh = setup({ cacheTtlSeconds: 60 });
    await fresh.service.search(ada, { query: "q", latency: "LOCAL" });
    await fresh.service.search(ada, { query: "q" });
    expect(fresh.local.calls).toBe(2);
  });

  it("reuses a finished answer while told to keep it, and never another caller's", async () => {
    const kept = setup({ sharedCallKeepMs: 60_000 });
    await kept.service.search(ada, { query: "q", latency: "LOCAL" });
    await kept.service.search(ada, { query: "q" });
    expect(kept.local.calls).toBe(1);
    await kept.service.search(bob, { query: "q", latency: "LOCAL" });
    expect(kept.local.calls).toBe(2);
  });

  it("does not keep a failure: the next identical call asks again", async () => {
    const { local, service } = setup({ sharedCallKeepMs: 60_000 });
    local.failNext = true;
    const failed = await service.search(ada, { query: "q", latency: "LOCAL" });
    expect(failed.providers[0]).toMatchObject({ status: "ERROR" });
    const again = await service.search(ada, { query: "q", latency: "LOCAL" });
    expect(again.providers[0]).toMatchObject({ status: "OK" });
    expect(local.calls).toBe(2);
  });
});
