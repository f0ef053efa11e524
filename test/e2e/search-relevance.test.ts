/**
 * The relevance floor through the whole stack's gateway: every keyword hit carries
 * `relevance` (its BM25 as a share of what the query asks for, 0 to 1, the same number for the
 * same text in a conversation and in a document chunk), and `weakMatches` says when nothing
 * reaches the floor: a query about something the organization does not hold ("refund timing"
 * where nothing mentions refunds) is weak although one of its words matches well; a query whose
 * words all match is not; a misspelled word counts as its correction. Bad floors are refused with
 * BAD_USER_INPUT, and the floor moves `weakMatches` only, never the list.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { RunningStack } from "../../app/stack.js";
import { BM25_K1, bm25Idf } from "../../lib/retrieval/bm25.js";
import { uploadReadyDocument } from "../support/documents.js";
import { graphql } from "../support/graphql.js";
import { startTestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

let stack: RunningStack;
let ada: string;

const SEARCH = `query($input: SearchInput!) {
  search(input: $input) {
    hits { score relevance item { __typename ... on Conversation { title } ... on DocumentChunk { document { fileName } } } }
    weakMatches
    relevanceFloor
    suggestion
  }
}`;

interface Page {
  hits: { score: number; relevance: number | null; item: { __typename: string; title?: string; document?: { fileName: string } } }[];
  weakMatches: boolean;
  relevanceFloor: number;
  suggestion: string | null;
}

async function search(input: Record<string, unknown>): Promise<Page> {
  const response = await graphql(stack.gateway.url, SEARCH, { input: { alpha: 1, ...input } }, { token: ada });
  expect(response.errors).toBeUndefined();
  return response.data!.search as Page;
}

// One text, as a conversation's only message (with a title of other words) and as a document.
const TIMING = "Settlement timing for the payment batch depends on the acquirer's cut-off.";
const TOPICS = [
  ["Order service deadlock", "The order service deadlocked when two workers locked rows in opposite order."],
  ["Kafka consumer lag", "Consumer lag grew on the orders topic after a rebalance."],
  ["Release checklist", "Tag the release, run the migrations, then roll out the canary."],
  ["Batch settlement", TIMING],
] as const;

beforeAll(async () => {
  ({ stack } = await startTestStack({ GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0", SEARCH_CACHE_TTL_SECONDS: "0", SEARCH_PROVIDER_TIMEOUT_MS: "30000", UPSTREAM_TIMEOUT_MS: "120000" }));
  ada = await tokenFor("org-relevance", "ada", [], "admin");
  for (const [title, content] of TOPICS) {
    const response = await graphql(stack.gateway.url, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, { input: { title, messages: [{ role: "USER", content }] } }, { token: ada });
    expect(response.errors).toBeUndefined();
  }
  await uploadReadyDocument(stack.gateway.url, ada, "settlement.txt", `${TIMING}\n`);
}, 180_000);

afterAll(async () => stack?.stop());

describe("relevance and weak matches", () => {
  it("a query whose words all match covers the query, above the floor: not weak", async () => {
    const page = await search({ query: "order service deadlock" });
    expect(page.hits[0]!.item.title).toBe("Order service deadlock");
    // Each word in the title and again in the message: saturated beyond one occurrence's 0.45.
    expect(page.hits[0]!.relevance).toBeGreaterThan(0.5);
    expect(page.weakMatches).toBe(false);
    expect(page.relevanceFloor).toBe(0.4);
    // Every keyword hit is measured, within 0..1, in the order of its score.
    for (const hit of page.hits) expect(hit.relevance).toBeGreaterThanOrEqual(0);
    for (const hit of page.hits) expect(hit.relevance).toBeLessThanOrEqual(1);
  });

  it("a query about something nobody wrote about is weak, though one of its words matches well", async () => {
    const page = await search({ query: "refund timing", typoTolerance: false });
    expect(page.hits.length).toBeGreaterThan(0);
    expect(page.hits.map((hit) => hit.item.title ?? hit.item.document!.fileName)).toContain("Batch settlement");
    // "timing" is matched, "refund" found nowhere: it weighs as a word in no document.
    expect(page.hits[0]!.relevance).toBeLessThan(0.25);
    expect(page.weakMatches).toBe(true);
  });

  it("weighs a word found nowhere as a term in no document, and one match as its idf", async () => {
    // Conversations: 4 documents; "refund" in none, "timing" in one (its title words are others).
    // A word once in a text of average length scores its idf, out of (k1 + 1) · idf for each word.
    const expected = bm25Idf(1, 4) / ((BM25_K1 + 1) * (bm25Idf(1, 4) + bm25Idf(0, 4)));
    const page = await search({ query: "refund timing", typoTolerance: false, providers: ["conversations.keyword"] });
    expect(page.hits).toHaveLength(1);
    // One posting of tf 1 scores its idf exactly when its text is of average length; this one is
    // not, so the share is the same within the length factor of BM25, not to the last digit.
    expect(page.hits[0]!.relevance).toBeGreaterThan(expected * 0.6);
    expect(page.hits[0]!.relevance).toBeLessThan(expected * 1.4);
  });

  it("counts a misspelled word as its correction, so a typo of a good query is still strong", async () => {
    const page = await search({ query: "order service deadlcok" });
    expect(page.suggestion).toBe("order service deadlock");
    expect(page.hits[0]!.item.title).toBe("Order service deadlock");
    const exact = await search({ query: "order service deadlock" });
    // The correction's boost weighs its match and its share of the query's information alike,
    // so the typo reads about as the query as meant (not as a word found nowhere: far lower).
    expect(Math.abs(page.hits[0]!.relevance! - exact.hits[0]!.relevance!)).toBeLessThan(0.05);
    expect(page.hits[0]!.relevance).toBeGreaterThan(page.relevanceFloor);
    expect(page.weakMatches).toBe(false);
  });

  it("is weak with no hit at all, and the floor moves weakMatches only, never the list", async () => {
    const none = await search({ query: "zeppelin", typoTolerance: false });
    expect(none.hits).toEqual([]);
    expect(none.weakMatches).toBe(true);
    const strict = await search({ query: "order service deadlock", relevanceFloor: 1 });
    const lenient = await search({ query: "order service deadlock", relevanceFloor: 0 });
    expect(strict.hits).toEqual(lenient.hits);
    expect(lenient.weakMatches).toBe(false);
    expect(strict.relevanceFloor).toBe(1);
  });

  it("hits found by meaning only carry no relevance, and then weakMatches cannot say weak", async () => {
    const page = await search({ query: "settlement timing", typoTolerance: false, alpha: 0, providers: ["conversations.semantic"] });
    expect(page.hits.length).toBeGreaterThan(0);
    expect(page.hits.every((hit) => hit.relevance === null)).toBe(true);
    expect(page.weakMatches).toBe(false);
  });

  it("refuses a floor outside 0..1 with BAD_USER_INPUT naming the field", async () => {
    for (const relevanceFloor of [-0.1, 1.5]) {
      const response = await graphql(stack.gateway.url, SEARCH, { input: { query: "deadlock", relevanceFloor } }, { token: ada });
      expect(response.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
      expect(response.errors![0]!.message).toMatch(/relevanceFloor.*between 0 and 1/);
    }
  });
});
