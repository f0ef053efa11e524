/**
 * The default alpha through the search subgraph's HTTP endpoint, against a real database and the
 * real providers: with the feature-hashing embedder (measured keyword only on SciFact) a search
 * without an alpha ranks exactly as `alpha: 1`, its semantic providers say why they were skipped,
 * and `knowledge-bases` (models of its own) is still asked. A second subgraph over the same
 * database with SEARCH_DEFAULT_ALPHA=0.5 ranks exactly as `alpha: 0.5`: the override restores
 * the hybrid.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";
import { startSubgraph, type RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import { NoResultCache } from "../../lib/cache/result-cache.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { ConversationStore } from "../../subgraphs/conversations/conversation-store.js";
import { searchSubgraph, type SearchSubgraph } from "../../subgraphs/search/index.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let measured: { search: SearchSubgraph; server: RunningSubgraph };
let overridden: { search: SearchSubgraph; server: RunningSubgraph };
let token: string;
const acme = { organizationId: "acme", userId: "ann", teamIds: [], role: "member" as const, userName: null, userEmail: null };

async function serve(env: Record<string, string>) {
  const search = await searchSubgraph({ database: db.database, config: loadConfig({ SEARCH_INDEXER: "false", ...env }), logger: silentLogger, embedder: new FeatureHashingEmbedder(), cache: new NoResultCache() });
  const server = await startSubgraph(search, { host: "127.0.0.1", port: 0, auth: TEST_AUTH, production: false, logger: silentLogger });
  return { search, server };
}

beforeAll(async () => {
  db = await createTestDatabase();
  const store = new ConversationStore(db.database.prisma);
  await store.create(acme, "Lisbon itinerary", [{ role: "user", content: "Four days in Lisbon: trams, the castle and pastries", tokenCount: 1 }]);
  await store.create(acme, "Tram timetable", [{ role: "user", content: "Which tram goes up to the castle, and how many days does a pass last?", tokenCount: 1 }]);
  await store.create(acme, "Porto weekend", [{ role: "user", content: "Two days in Porto by the river", tokenCount: 1 }]);
  await store.create(acme, "Order service deadlock", [{ role: "user", content: "Our order service deadlocks under load", tokenCount: 1 }]);
  measured = await serve({});
  overridden = await serve({ SEARCH_DEFAULT_ALPHA: "0.5" });
  await measured.search.indexer.drain();
  token = await tokenFor("acme", "ann");
});

afterAll(async () => {
  await measured?.server.stop();
  await overridden?.server.stop();
  await db?.dispose();
});

const SEARCH = `query($input: SearchInput!) { search(input: $input) {
  hits { score item { ... on Conversation { id } } explanation { provider rank weight } }
  providers { name status error }
} }`;
const STATUS = `{
  searchIndexStatus { model defaultAlpha { alpha overridden embedder embedderAlpha basis source } }
  searchProviders { name kind embeddingModel followsDefaultAlpha defaultWeight }
}`;
const QUERY = "Lisbon tram days";

async function search(url: string, input: Record<string, unknown>) {
  const response = await graphql(url, SEARCH, { input: { query: QUERY, limit: 10, ...input } }, { token });
  expect(response.errors).toBeUndefined();
  return response.data!.search as { hits: { score: number; item: { id: string }; explanation: { provider: string }[] }[]; providers: { name: string; status: string; error: string | null }[] };
}

const statusOf = (result: Awaited<ReturnType<typeof search>>, name: string) => result.providers.find((provider) => provider.name === name);

describe("with the feature-hashing embedder's measured default (keyword only)", () => {
  it("ranks a search without alpha exactly as alpha 1, skipping the semantic providers that rank with it and saying why", async () => {
    const byDefault = await search(measured.server.url, {});
    const keywordOnly = await search(measured.server.url, { alpha: 1 });
    expect(byDefault.hits.length).toBeGreaterThan(1);
    expect(byDefault.hits).toEqual(keywordOnly.hits);
    for (const name of ["conversations.semantic", "documents.semantic"]) {
      expect(statusOf(byDefault, name)).toEqual({ name, status: "SKIPPED", error: "the default alpha 1 (measured for feature-hashing-256) gives semantic providers no weight: pass alpha to ask them" });
    }
    expect(statusOf(byDefault, "conversations.keyword")!.status).toBe("OK");
  });

  it("still asks knowledge-bases, which ranks with its own models (an explicit alpha 1 skips it, as it always did)", async () => {
    expect(statusOf(await search(measured.server.url, {}), "knowledge-bases")).toMatchObject({ status: "OK", error: null });
    expect(statusOf(await search(measured.server.url, { alpha: 1 }), "knowledge-bases")).toMatchObject({ status: "SKIPPED", error: "alpha 1 gives semantic providers no weight" });
  });

  it("differs from the old default: alpha 0.5 lets the semantic provider vote", async () => {
    const hybrid = await search(measured.server.url, { alpha: 0.5 });
    expect(statusOf(hybrid, "conversations.semantic")!.status).toBe("OK");
    expect(hybrid.hits.flatMap((hit) => hit.explanation.map((part) => part.provider))).toContain("conversations.semantic");
  });

  it("says which default is in effect and where it comes from, and which providers follow it", async () => {
    const response = await graphql(measured.server.url, STATUS, {}, { token });
    expect(response.errors).toBeUndefined();
    expect(response.data!.searchIndexStatus.defaultAlpha).toEqual({
      alpha: 1,
      overridden: false,
      embedder: "feature-hashing-256",
      embedderAlpha: 1,
      basis: "MEASURED",
      source: expect.stringContaining("docs/evaluation/scifact-train-feature-hashing-256.json"),
    });
    const providers = Object.fromEntries((response.data!.searchProviders as { name: string }[]).map((provider) => [provider.name, provider]));
    expect(providers["conversations.keyword"]).toMatchObject({ kind: "KEYWORD", embeddingModel: null, followsDefaultAlpha: true, defaultWeight: 1 });
    expect(providers["conversations.semantic"]).toMatchObject({ kind: "SEMANTIC", embeddingModel: "feature-hashing-256", followsDefaultAlpha: true, defaultWeight: 0 });
    expect(providers["documents.semantic"]).toMatchObject({ embeddingModel: "feature-hashing-256", defaultWeight: 0 });
    expect(providers["knowledge-bases"]).toMatchObject({ kind: "SEMANTIC", embeddingModel: null, followsDefaultAlpha: false, defaultWeight: 0.5 });
  });
});

describe("with SEARCH_DEFAULT_ALPHA=0.5", () => {
  it("ranks a search without alpha exactly as alpha 0.5: the hybrid is back", async () => {
    const byDefault = await search(overridden.server.url, {});
    const hybrid = await search(overridden.server.url, { alpha: 0.5 });
    expect(byDefault.hits).toEqual(hybrid.hits);
    expect(statusOf(byDefault, "conversations.semantic")).toMatchObject({ status: "OK", error: null });
    expect(byDefault.hits.flatMap((hit) => hit.explanation.map((part) => part.provider))).toContain("conversations.semantic");
    // Not the keyword-only ranking of the measured default.
    expect(byDefault.hits).not.toEqual((await search(overridden.server.url, { alpha: 1 })).hits);
  });

  it("reports the override beside the embedder's own default", async () => {
    const response = await graphql(overridden.server.url, STATUS, {}, { token });
    expect(response.data!.searchIndexStatus.defaultAlpha).toMatchObject({ alpha: 0.5, overridden: true, embedderAlpha: 1, basis: "MEASURED" });
  });
});
