/**
 * How a search without an alpha is weighted: the embedder's measured default, the deployment's
 * override (SEARCH_DEFAULT_ALPHA), an explicit alpha (unchanged meaning), and semantic providers
 * with models of their own (the `knowledge-bases` case), which the default must not silence.
 * Providers here are in-process lists, so weights, calls and skip reasons can be checked exactly;
 * the real providers over a database are in test/integration/default-alpha.test.ts.
 */
import { describe, expect, it } from "@jest/globals";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { MemoryResultCache } from "../../lib/cache/result-cache.js";
import { CachedEmbedder, type EmbeddingCacheStore } from "../../lib/retrieval/embeddings/cached-embedder.js";
import { CONVENTIONAL_ALPHA, resolveDefaultAlpha } from "../../lib/retrieval/embeddings/default-alpha.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { OpenAIEmbedder } from "../../lib/retrieval/embeddings/openai.js";
import { UniversalSentenceEncoderEmbedder } from "../../lib/retrieval/embeddings/universal-sentence-encoder.js";
import type { ProviderHit, ProviderRequest, SearchProvider } from "../../lib/retrieval/search-provider.js";
import { SearchService } from "../../subgraphs/search/search-service.js";

const tenant = { organizationId: "org", userId: "user", teamIds: [], role: "member" as const, userName: null, userEmail: null };

class ListProvider implements SearchProvider {
  readonly latency = "LOCAL" as const;
  calls = 0;
  readonly description = "fixed list";
  constructor(
    readonly name: string,
    readonly kind: "KEYWORD" | "SEMANTIC",
    private readonly ids: string[],
    readonly embeddingModel?: string,
  ) {}
  async search(request: ProviderRequest): Promise<ProviderHit[]> {
    this.calls++;
    return this.ids.slice(0, request.window).map((id, index) => ({ ref: { typename: "Conversation", id }, nativeScore: 1 / (index + 1) }));
  }
}

const hashing = new FeatureHashingEmbedder();

/** Our keyword and semantic providers, and one semantic provider with its own model (like knowledge-bases). */
function stack(override: number | null = null) {
  const keyword = new ListProvider("kw", "KEYWORD", ["a", "b", "c"]);
  const semantic = new ListProvider("sem", "SEMANTIC", ["c", "d"], hashing.model);
  const remote = new ListProvider("knowledge-bases", "SEMANTIC", ["e", "a"]);
  const service = new SearchService({
    providers: [keyword, semantic, remote],
    cache: new MemoryResultCache(),
    cacheTtlSeconds: 0,
    providerTimeoutMs: 1_000,
    queryLog: null,
    defaultAlpha: resolveDefaultAlpha(hashing, override),
  });
  return { service, keyword, semantic, remote };
}

const weightsOf = (result: Awaited<ReturnType<SearchService["search"]>>) =>
  Object.fromEntries(result.hits.flatMap((hit) => hit.explanation.map((part) => [part.provider, part.weight] as const)));

describe("each embedder's default alpha", () => {
  it("is measured keyword only for the bundled models, citing the evaluation file", () => {
    for (const embedder of [hashing, new UniversalSentenceEncoderEmbedder()]) {
      const resolved = resolveDefaultAlpha(embedder, null);
      expect(resolved).toMatchObject({ alpha: 1, embedder: embedder.model, overridden: false, embedderAlpha: { alpha: 1, basis: "MEASURED" } });
      expect(resolved.embedderAlpha.source).toContain(`docs/evaluation/scifact-train-${embedder.model}`);
    }
  });

  it("is the conventional 0.5 for OpenAI-compatible embedders, which are not measured here", () => {
    const openai = new OpenAIEmbedder({ apiKey: "unused", baseURL: "http://127.0.0.1:9/v1", model: "nomic-embed-text", nativeDimensions: 768 });
    expect(resolveDefaultAlpha(openai, null)).toMatchObject({ alpha: CONVENTIONAL_ALPHA, overridden: false, embedderAlpha: { basis: "CONVENTIONAL" } });
  });

  it("passes through the embedding cache, and an embedder that says nothing gets the conventional default", () => {
    const store: EmbeddingCacheStore = { get: async () => new Map(), put: async () => {} };
    expect(resolveDefaultAlpha(new CachedEmbedder(hashing, store), null).embedderAlpha).toEqual(hashing.defaultAlpha);
    const silent = { model: "custom", dimensions: 3, embed: async () => [] };
    expect(resolveDefaultAlpha(silent, null)).toMatchObject({ alpha: 0.5, embedderAlpha: { basis: "CONVENTIONAL", source: expect.stringContaining("custom") } });
  });

  it("gives way to the deployment's override, keeping the embedder's own for display", () => {
    expect(resolveDefaultAlpha(hashing, 0.5)).toMatchObject({ alpha: 0.5, overridden: true, embedderAlpha: { alpha: 1 } });
    expect(resolveDefaultAlpha(hashing, 0)).toMatchObject({ alpha: 0, overridden: true });
    expect(() => resolveDefaultAlpha(hashing, 1.5)).toThrow(RangeError);
  });
});

describe("SEARCH_DEFAULT_ALPHA", () => {
  it("is read as a plain decimal from 0 to 1, and unset means the embedder's", () => {
    expect(loadConfig({}).search.defaultAlpha).toBeNull();
    expect(loadConfig({ SEARCH_DEFAULT_ALPHA: "0.75" }).search.defaultAlpha).toBe(0.75);
    expect(loadConfig({ SEARCH_DEFAULT_ALPHA: "1" }).search.defaultAlpha).toBe(1);
    expect(loadConfig({ SEARCH_DEFAULT_ALPHA: ".5" }).search.defaultAlpha).toBe(0.5);
  });

  it.each(["1.5", "-0.1", "abc", "0x1", "1e0", "Infinity", "0.5.5", "0".repeat(30)])("refuses %j with a ConfigError naming the variable", (value) => {
    expect(() => loadConfig({ SEARCH_DEFAULT_ALPHA: value })).toThrow(ConfigError);
    expect(() => loadConfig({ SEARCH_DEFAULT_ALPHA: value })).toThrow(/SEARCH_DEFAULT_ALPHA must be a number from 0/);
  });
});

describe("a search without an alpha", () => {
  it("uses the embedder's default: keyword only with feature hashing, its semantic provider SKIPPED with the reason", async () => {
    const { service, keyword, semantic } = stack();
    const result = await service.search(tenant, { query: "q" });
    expect(keyword.calls).toBe(1);
    expect(semantic.calls).toBe(0);
    const report = result.providers.find((provider) => provider.name === "sem")!;
    expect(report).toMatchObject({ status: "SKIPPED", returned: 0 });
    expect(report.error).toBe("the default alpha 1 (measured for feature-hashing-256) gives semantic providers no weight: pass alpha to ask them");
    expect(weightsOf(result).kw).toBe(1);
  });

  it("does not silence a semantic provider with its own model: it is weighted as at alpha 0.5", async () => {
    const { service, remote } = stack();
    const result = await service.search(tenant, { query: "q" });
    expect(remote.calls).toBe(1);
    expect(result.providers.find((provider) => provider.name === "knowledge-bases")).toMatchObject({ status: "OK", returned: 2 });
    expect(weightsOf(result)["knowledge-bases"]).toBe(0.5);
    expect(service.followsDefaultAlpha(remote)).toBe(false);
    expect(service.defaultWeight(remote)).toBe(0.5);
    expect(service.defaultWeight(stack().semantic)).toBe(0);
  });

  it("follows the override: SEARCH_DEFAULT_ALPHA 0.5 restores the hybrid", async () => {
    const { service, semantic } = stack(0.5);
    const result = await service.search(tenant, { query: "q" });
    expect(semantic.calls).toBe(1);
    expect(weightsOf(result)).toEqual({ kw: 0.5, sem: 0.5, "knowledge-bases": 0.5 });
  });

  it("reports an override that silences keyword providers as set by the deployment", async () => {
    const { service } = stack(0);
    const result = await service.search(tenant, { query: "q" });
    expect(result.providers.find((provider) => provider.name === "kw")!.error).toBe("the default alpha 0 (set by SEARCH_DEFAULT_ALPHA) gives keyword providers no weight: pass alpha to ask them");
  });
});

describe("an explicit alpha", () => {
  it("keeps its meaning for every provider, the ones with their own models included", async () => {
    const { service, remote } = stack();
    const half = await service.search(tenant, { query: "q", alpha: 0.5 });
    expect(weightsOf(half)).toEqual({ kw: 0.5, sem: 0.5, "knowledge-bases": 0.5 });
    const one = await service.search(tenant, { query: "q", alpha: 1 });
    expect(remote.calls).toBe(1);
    expect(one.providers.find((provider) => provider.name === "knowledge-bases")).toMatchObject({ status: "SKIPPED", error: "alpha 1 gives semantic providers no weight" });
  });

  it("makes a different list from the default of the same value, so their cursors are not interchangeable", async () => {
    const { service } = stack();
    const byDefault = await service.search(tenant, { query: "q", limit: 1 });
    await expect(service.search(tenant, { query: "q", alpha: 1, limit: 1, after: byDefault.pageInfo.endCursor })).rejects.toThrow(/different search/);
    const next = await service.search(tenant, { query: "q", limit: 1, after: byDefault.pageInfo.endCursor });
    expect(next.hits).toHaveLength(1);
  });

  it("refuses a cursor once the deployment's default changed", async () => {
    const before = await stack(0.5).service.search(tenant, { query: "q", limit: 1 });
    await expect(stack(0.75).service.search(tenant, { query: "q", limit: 1, after: before.pageInfo.endCursor })).rejects.toThrow(/default alpha/);
  });
});
