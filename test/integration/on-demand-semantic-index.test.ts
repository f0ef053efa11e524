/**
 * Indexing only what is used (issue 38): with the bundled local embedder at its default alpha of
 * 1, the search subgraph does not embed conversations at start; the first search that gives
 * semantic results a weight (alpha 0.5) starts the conversations indexer, and the semantic
 * provider says its index is being built (SKIPPED, INDEXING in its reason, not a TIMEOUT) until
 * the queue is empty, then answers. Counted work: the embedder's calls. The embedder here is the
 * feature-hashing one (instant) standing in for the local model, with the local model's default
 * alpha of 1; the configuration names the bundled model, as `npm start`'s does.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { NoResultCache } from "../../lib/cache/result-cache.js";
import { loadConfig } from "../../lib/config.js";
import { startSubgraph, type RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import type { Embedder } from "../../lib/retrieval/embeddings/embedder.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { semanticInUseAtStart } from "../../lib/retrieval/on-demand-index.js";
import { ConversationStore } from "../../subgraphs/conversations/conversation-store.js";
import { searchSubgraph, type SearchSubgraph } from "../../subgraphs/search/index.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let search: SearchSubgraph;
let server: RunningSubgraph;
let token: string;
const acme = { organizationId: "acme", userId: "ann", teamIds: [], role: "member" as const, userName: null, userEmail: null };

/** Counts the texts it is asked to embed. */
const counted = Object.assign(Object.create(new FeatureHashingEmbedder()) as Embedder & { texts: number }, {
  texts: 0,
  defaultAlpha: { alpha: 1, basis: "MEASURED" as const, source: "as the bundled local model's" },
  async embed(texts: readonly string[]) {
    counted.texts += texts.length;
    return FeatureHashingEmbedder.prototype.embed.call(Object.getPrototypeOf(counted), texts);
  },
});

beforeAll(async () => {
  db = await createTestDatabase();
  const store = new ConversationStore(db.database.prisma);
  await store.create(acme, "Lisbon itinerary", [{ role: "user", content: "Four days in Lisbon: trams, the castle and pastries", tokenCount: 1 }]);
  await store.create(acme, "Tram timetable", [{ role: "user", content: "Which tram goes up to the castle, and how many days does a pass last?", tokenCount: 1 }]);
  await store.create(acme, "Porto weekend", [{ role: "user", content: "Two days in Porto by the river", tokenCount: 1 }]);
  search = await searchSubgraph({ database: db.database, config: loadConfig({ EMBEDDER: "local", SEARCH_INDEXER: "true" }), logger: silentLogger, embedder: counted, cache: new NoResultCache() });
  server = await startSubgraph(search, { host: "127.0.0.1", port: 0, auth: TEST_AUTH, production: false, logger: silentLogger });
  token = await tokenFor("acme", "ann");
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await db?.dispose();
});

const SEARCH = `query($input: SearchInput!) { search(input: $input) {
  hits { item { ... on Conversation { id } } explanation { provider } }
  providers { name status error }
} }`;

async function semanticStatus(input: Record<string, unknown>) {
  const response = await graphql(server.url, SEARCH, { input: { query: "Lisbon tram days", limit: 10, ...input } }, { token });
  expect(response.errors).toBeUndefined();
  const result = response.data!.search as { hits: { explanation: { provider: string }[] }[]; providers: { name: string; status: string; error: string | null }[] };
  return { result, semantic: result.providers.find((provider) => provider.name === "conversations.semantic")! };
}

describe("the conversations' semantic index, built on demand", () => {
  it("is in use at start only with a default alpha below 1 or an embedder other than the bundled one", () => {
    expect(semanticInUseAtStart("local", 1)).toBe(false);
    expect(semanticInUseAtStart("local", 0.5)).toBe(true);
    expect(semanticInUseAtStart("openai", 1)).toBe(true);
    expect(semanticInUseAtStart("hashing", 1)).toBe(true);
  });

  it("embeds nothing at start, nor for a search at the default alpha", async () => {
    const { result, semantic } = await semanticStatus({});
    expect(result.hits.length).toBeGreaterThan(0);
    expect(semantic.status).toBe("SKIPPED");
    expect(search.onDemand!.state).toBe("WAITING");
    // Three conversations wait in the queue, and the model was asked for nothing.
    expect((await search.indexer.queues!()[0]!.status()).due).toBe(3);
    expect(counted.texts).toBe(0);
  });

  it("starts indexing on the first search with alpha 0.5, says INDEXING until done, then answers", async () => {
    const first = await semanticStatus({ alpha: 0.5 });
    expect(first.semantic).toEqual({ name: "conversations.semantic", status: "SKIPPED", error: expect.stringMatching(/^its index is being built \(INDEXING/) });
    expect(first.result.hits.length).toBeGreaterThan(0);
    expect(search.onDemand!.state).not.toBe("WAITING");
    // Bounded wait for the background indexer (a ceiling against a hang, not a timing).
    for (let tries = 0; search.onDemand!.state !== "READY" && tries < 600; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(search.onDemand!.state).toBe("READY");
    expect(counted.texts).toBeGreaterThanOrEqual(3);
    const after = await semanticStatus({ alpha: 0.5 });
    expect(after.semantic).toEqual({ name: "conversations.semantic", status: "OK", error: null });
    expect(after.result.hits.some((hit) => hit.explanation.some((part) => part.provider === "conversations.semantic"))).toBe(true);
  }, 120_000);
});
