/**
 * Search analytics through the gateway, on the real stack: every search answers with a fresh
 * `searchId` (a page from the result cache too), `recordSearchClick` ties a hit opened to it
 * (once per search and item, inputs bounded, another organization's search unknown), and
 * `searchAnalytics` sums known searches and clicks exactly, for admins only, never across
 * organizations.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { TestStack } from "../support/stack.js";
import { startTestStack } from "../support/stack.js";
import { errorCodes, graphql, type GraphQLResponse } from "../support/graphql.js";
import { tokenFor } from "../support/tenants.js";

const ORG = "org-analytics";
const OTHER_ORG = "org-analytics-other";

let test: TestStack;
const tokens = {} as Record<"ann" | "bob" | "eve", string>;

const SEARCH = `query Search($input: SearchInput!) { search(input: $input) { searchId cached hits { item { __typename ... on Conversation { id } } } pageInfo { endCursor } } }`;
const CLICK = `mutation Click($input: RecordSearchClickInput!) { recordSearchClick(input: $input) { searchId itemId itemKind position firstClick at } }`;
const ANALYTICS = `query Analytics($range: AnalyticsRangeInput!) { searchAnalytics(range: $range) {
  totalSearches noResultSearches searchesWithClicks clicks clickThroughRate averageClickPosition
  topSearches { query searches searchesWithClicks clicks clickThroughRate averageClickPosition noResultSearches }
  noResultQueries { query searches }
  searchesPerDay { day searches noResultSearches searchesWithClicks }
  providers { provider calls failedCalls latencyP50Ms latencyP95Ms }
} }`;
const DRILL_DOWN = `query DrillDown($query: String!) { searchAnalytics(range: { relative: LAST_24_HOURS }) {
  searches(query: $query) { searchId query user { id name } results cached clicks { position itemKind itemId } }
} }`;

const call = (token: string, document: string, variables: Record<string, unknown> = {}) => graphql(test.stack.gateway.url, document, variables, { token });

async function search(token: string, input: Record<string, unknown>) {
  const response = await call(token, SEARCH, { input: { alpha: 1, ...input } });
  expect(response.errors).toBeUndefined();
  return response.data!.search as { searchId: string; cached: boolean; hits: { item: { id: string } }[]; pageInfo: { endCursor: string | null } };
}

/** The log is written in batches off the request path: waits until `count` of the organization's searches are in (10 s at most). */
async function searchesLogged(organizationId: string, count: number): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if ((await test.db.database.prisma.searchQuery.count({ where: { organizationId } })) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const click = (token: string, input: Record<string, unknown>) => call(token, CLICK, { input: { itemKind: "CONVERSATION", ...input } });

const searches = {} as Record<"first" | "cached" | "capitalized" | "bobs" | "nothing", Awaited<ReturnType<typeof search>>>;
const conversationIds: string[] = [];

beforeAll(async () => {
  // The gateway's response cache is off: each search here must reach the search subgraph (and its
  // own result cache, which is on).
  test = await startTestStack({ SEARCH_CACHE_TTL_SECONDS: "60", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" });
  tokens.ann = await tokenFor(ORG, "ann", [], "admin");
  tokens.bob = await tokenFor(ORG, "bob", [], "member");
  tokens.eve = await tokenFor(OTHER_ORG, "eve", [], "admin");
  for (let index = 1; index <= 3; index++) {
    const created = await call(tokens.ann, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, {
      input: { title: `Lisbon trip planning ${index}`, messages: [{ role: "USER", content: `lisbon trip day ${index}: trams, tiles and pasteis`, tokenCount: 9 }] },
    });
    expect(created.errors).toBeUndefined();
    conversationIds.push(created.data!.createConversation.id);
  }
  // Eve's organization searches too: none of it may show up in ann's figures, nor ann's in hers.
  await search(tokens.eve, { query: "lisbon trip" });

  searches.first = await search(tokens.ann, { query: "lisbon trip", limit: 2 });
  searches.cached = await search(tokens.ann, { query: "lisbon trip", limit: 2 });
  searches.capitalized = await search(tokens.ann, { query: "  Lisbon Trip" });
  searches.bobs = await search(tokens.bob, { query: "lisbon trip" });
  searches.nothing = await search(tokens.ann, { query: "xylophone quartz", typoTolerance: false });
  // The same search read further, and the quick LOCAL page a client shows first: logged, not counted as searches.
  await search(tokens.ann, { query: "lisbon trip", limit: 2, after: searches.first.pageInfo.endCursor });
  await search(tokens.ann, { query: "lisbon trip", latency: "LOCAL" });
}, 120_000);

afterAll(async () => test?.stop());

describe("searchId", () => {
  it("is a fresh UUID per request, a page from the result cache included", () => {
    const ids = Object.values(searches).map((result) => result.searchId);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(searches.first.cached).toBe(false);
    expect(searches.cached.cached).toBe(true);
    expect(searches.first.hits.length).toBe(2);
    expect(searches.nothing.hits).toEqual([]);
  });
});

describe("recordSearchClick", () => {
  it("records a hit once per search and item: a double click counts once and keeps the first position", async () => {
    const [first, second] = searches.first.hits.map((hit) => hit.item.id);
    const opened = await click(tokens.ann, { searchId: searches.first.searchId, position: 1, itemId: first });
    expect(opened.errors).toBeUndefined();
    expect(opened.data!.recordSearchClick).toMatchObject({ searchId: searches.first.searchId, itemId: first, itemKind: "CONVERSATION", position: 1, firstClick: true });
    const again = await click(tokens.ann, { searchId: searches.first.searchId, position: 2, itemId: first });
    expect(again.data!.recordSearchClick).toMatchObject({ position: 1, firstClick: false, at: opened.data!.recordSearchClick.at });
    expect((await click(tokens.ann, { searchId: searches.first.searchId, position: 2, itemId: second })).data!.recordSearchClick.firstClick).toBe(true);
    // A colleague of the same organization may record on it (a shared screen); the page from the cache has its own id.
    expect((await click(tokens.bob, { searchId: searches.cached.searchId.toUpperCase(), position: 3, itemId: conversationIds[2] })).data!.recordSearchClick).toMatchObject({ searchId: searches.cached.searchId, firstClick: true });
    const rows = await test.db.database.prisma.searchClick.findMany({ where: { organizationId: ORG }, orderBy: { position: "asc" } });
    expect(rows.map((row) => [row.searchId, row.position, row.userId])).toEqual([
      [searches.first.searchId, 1, "ann"],
      [searches.first.searchId, 2, "ann"],
      [searches.cached.searchId, 3, "bob"],
    ]);
  });

  it.each([
    ["position 0", { position: 0 }, "input.position"],
    ["position 1001", { position: 1001 }, "input.position"],
    ["an empty item id", { itemId: "" }, "input.itemId"],
    ["an item id of 513 characters", { itemId: "x".repeat(513) }, "input.itemId"],
    ["a search id that is not a UUID", { searchId: "search-1" }, "input.searchId"],
  ])("refuses %s with BAD_USER_INPUT naming the field", async (_name, change, field) => {
    const response = await click(tokens.ann, { searchId: searches.bobs.searchId, position: 1, itemId: conversationIds[0], ...change });
    expect(response.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field });
  });

  it("answers another organization's search exactly as an unknown one (NOT_FOUND), and records nothing", async () => {
    const unknown = randomUUID();
    const stranger = await click(tokens.eve, { searchId: searches.bobs.searchId, position: 1, itemId: conversationIds[0] });
    const missing = await click(tokens.eve, { searchId: unknown, position: 1, itemId: conversationIds[0] });
    expect(errorCodes(stranger)).toEqual(["NOT_FOUND"]);
    expect(errorCodes(missing)).toEqual(["NOT_FOUND"]);
    expect(stranger.errors![0]!.message.replace(searches.bobs.searchId, "ID")).toBe(missing.errors![0]!.message.replace(unknown, "ID"));
    expect(await test.db.database.prisma.searchClick.count({ where: { searchId: searches.bobs.searchId } })).toBe(0);
    expect(await test.db.database.prisma.searchClick.count({ where: { organizationId: OTHER_ORG } })).toBe(0);
  });

  it("refuses a search older than 24 hours", async () => {
    const old = await test.db.database.prisma.searchQuery.create({
      data: { organizationId: ORG, userId: "ann", query: "last week's search", alpha: 1, providers: [], results: 3, topScore: 0.5, cacheHit: false, tookMs: 4, createdAt: new Date(Date.now() - 2 * 86_400_000) },
    });
    expect(errorCodes(await click(tokens.ann, { searchId: old.id, position: 1, itemId: conversationIds[0] }))).toEqual(["NOT_FOUND"]);
  });
});

describe("searchAnalytics", () => {
  async function analyticsOf(token: string): Promise<GraphQLResponse> {
    return call(token, ANALYTICS, { range: { relative: "LAST_24_HOURS" } });
  }

  it("sums the known searches and clicks exactly: later pages and LOCAL pages are not searches", async () => {
    // The log is written in batches off the request path: wait until all five searches are in.
    let analytics: Record<string, any> | undefined;
    for (let attempt = 0; attempt < 200; attempt++) {
      const response = await analyticsOf(tokens.ann);
      expect(response.errors).toBeUndefined();
      analytics = response.data!.searchAnalytics;
      if (analytics!.totalSearches >= 5) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(analytics).toMatchObject({ totalSearches: 5, noResultSearches: 1, searchesWithClicks: 2, clicks: 3, clickThroughRate: 0.4, averageClickPosition: 2 });
    expect(analytics!.topSearches).toHaveLength(2);
    expect(analytics!.topSearches[0].query.toLowerCase().trim()).toBe("lisbon trip");
    expect(analytics!.topSearches[0]).toMatchObject({ searches: 4, searchesWithClicks: 2, clicks: 3, clickThroughRate: 0.5, averageClickPosition: 2, noResultSearches: 0 });
    expect(analytics!.topSearches[1]).toEqual({ query: "xylophone quartz", searches: 1, searchesWithClicks: 0, clicks: 0, clickThroughRate: 0, averageClickPosition: null, noResultSearches: 1 });
    expect(analytics!.noResultQueries).toEqual([{ query: "xylophone quartz", searches: 1 }]);
    expect(analytics!.searchesPerDay.reduce((sum: number, day: { searches: number }) => sum + day.searches, 0)).toBe(5);
    expect(analytics!.searchesPerDay.reduce((sum: number, day: { searchesWithClicks: number }) => sum + day.searchesWithClicks, 0)).toBe(2);
    // Every search that reached the providers asked conversations.keyword (cached pages do not count for latency).
    const keyword = analytics!.providers.find((provider: { provider: string }) => provider.provider === "conversations.keyword");
    expect(keyword.calls).toBe(6);
    expect(keyword.failedCalls).toBe(0);
    expect(keyword.latencyP95Ms).toBeGreaterThanOrEqual(keyword.latencyP50Ms);
  });

  it("drills down from a query to its searches: who asked, how many hits, what they opened", async () => {
    const response = await call(tokens.ann, DRILL_DOWN, { query: "LISBON TRIP" });
    expect(response.errors).toBeUndefined();
    const rows = response.data!.searchAnalytics.searches as { searchId: string; user: { id: string; name: string | null }; results: number; cached: boolean; clicks: { position: number }[] }[];
    expect(rows.map((row) => row.searchId).sort()).toEqual([searches.first.searchId, searches.cached.searchId, searches.capitalized.searchId, searches.bobs.searchId].sort());
    const byId = new Map(rows.map((row) => [row.searchId, row]));
    expect(byId.get(searches.first.searchId)!.clicks.map((entry) => entry.position)).toEqual([1, 2]);
    expect(byId.get(searches.first.searchId)!.user).toEqual({ id: "ann", name: "ann name" });
    expect(byId.get(searches.first.searchId)!.results).toBe(2);
    expect(byId.get(searches.cached.searchId)).toMatchObject({ cached: true, clicks: [{ position: 3 }] });
    // Bob never wrote anything, so the organization has no name on record for him.
    expect(byId.get(searches.bobs.searchId)).toMatchObject({ user: { id: "bob", name: null }, clicks: [] });
  });

  it("is the admin's: a member gets FORBIDDEN", async () => {
    const response = await analyticsOf(tokens.bob);
    expect(errorCodes(response)).toEqual(["FORBIDDEN"]);
    expect(response.errors![0]!.message).toMatch(/requires the admin role/);
  });

  it("never crosses organizations: the other admin sees only their own search", async () => {
    const response = await analyticsOf(tokens.eve);
    expect(response.errors).toBeUndefined();
    expect(response.data!.searchAnalytics).toMatchObject({ totalSearches: 1, clicks: 0, searchesWithClicks: 0 });
    const drill = await call(tokens.eve, DRILL_DOWN, { query: "lisbon trip" });
    expect(drill.data!.searchAnalytics.searches.map((row: { user: { id: string } }) => row.user.id)).toEqual(["eve"]);
  });

  it.each([
    ["both a relative range and instants", { relative: "LAST_7_DAYS", from: "2026-01-01T00:00:00Z" }, "range"],
    ["neither", {}, "range"],
    ["to before from", { from: "2026-02-01T00:00:00Z", to: "2026-01-01T00:00:00Z" }, "range.to"],
    ["more than 92 days", { from: "2026-01-01T00:00:00Z", to: "2026-06-01T00:00:00Z" }, "range.to"],
  ])("refuses %s with BAD_USER_INPUT", async (_name, range, field) => {
    const response = await call(tokens.ann, ANALYTICS, { range });
    expect(response.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field });
  });

  it("bounds the drill-down", async () => {
    const tooMany = await call(tokens.ann, `{ searchAnalytics(range: { relative: LAST_24_HOURS }) { searches(query: "lisbon trip", first: 101) { searchId } } }`);
    expect(tooMany.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "first" });
    const blank = await call(tokens.ann, `{ searchAnalytics(range: { relative: LAST_24_HOURS }) { searches(query: "   ") { searchId } } }`);
    expect(blank.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "query" });
  });
});

describe("searches typed on", () => {
  const TYPING_ORG = "org-analytics-typing";

  it("counts the last words of a typing sequence, and an earlier step only when something of it was opened", async () => {
    const tina = await tokenFor(TYPING_ORG, "tina", [], "admin");
    const created = await call(tina, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, {
      input: { title: "Kafka lag and redis cache", messages: [{ role: "USER", content: "kafka consumer lag grew; the redis cache hit rate fell" }] },
    });
    expect(created.errors).toBeUndefined();
    // As the web app searches while the typing rests: each step extends the one before, seconds apart at most.
    for (const query of ["kaf", "kafka", "kafka lag"]) await search(tina, { query });
    const redis = await search(tina, { query: "redis" });
    expect((await click(tina, { searchId: redis.searchId, position: 1, itemId: created.data!.createConversation.id })).errors).toBeUndefined();
    await search(tina, { query: "redis cache" });
    // A shorter query after a longer one is a new question, not a step of typing.
    await search(tina, { query: "kafka" });

    await searchesLogged(TYPING_ORG, 6);
    const response = await call(tina, ANALYTICS, { range: { relative: "LAST_24_HOURS" } });
    expect(response.errors).toBeUndefined();
    const analytics = response.data!.searchAnalytics as Record<string, any>;
    expect(analytics.totalSearches).toBe(4);
    const counted = analytics.topSearches.map((row: { query: string; searches: number }) => [row.query, row.searches]) as [string, number][];
    expect(counted.sort(([a], [b]) => (a < b ? -1 : 1))).toEqual([
      ["kafka", 1],
      ["kafka lag", 1],
      ["redis", 1],
      ["redis cache", 1],
    ]);
    const drill = await call(tina, DRILL_DOWN, { query: "kaf" });
    expect(drill.data!.searchAnalytics.searches).toEqual([]);
  });
});

describe("a hit opened before the full page arrived", () => {
  const STREAM_ORG = "org-analytics-streamed";

  it("counts for the full search of that quick LOCAL page, once per hit; a quick page of other settings stays uncounted", async () => {
    const sam = await tokenFor(STREAM_ORG, "sam", [], "admin");
    const created = await call(sam, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, {
      input: { title: "Porto tiles", messages: [{ role: "USER", content: "porto azulejo tiles and the douro river" }] },
    });
    expect(created.errors).toBeUndefined();
    const id = created.data!.createConversation.id as string;
    // As the web app streams a search: the quick LOCAL page, then the page of every provider.
    const streamedSearch = async (query: string, quickAlpha = 1) => ({ quick: await search(sam, { query, latency: "LOCAL", alpha: quickAlpha }), full: await search(sam, { query }) });
    // Opened while only the quick page was on screen.
    const porto = await streamedSearch("porto tiles");
    expect((await click(sam, { searchId: porto.quick.searchId, position: 1, itemId: id })).errors).toBeUndefined();
    // Opened from the quick page, then again from the full one: one click.
    const azulejo = await streamedSearch("azulejo tiles");
    expect((await click(sam, { searchId: azulejo.quick.searchId, position: 1, itemId: id })).errors).toBeUndefined();
    expect((await click(sam, { searchId: azulejo.full.searchId, position: 1, itemId: id })).errors).toBeUndefined();
    // A quick page of another alpha is not that full search's: its click stays uncounted.
    const douro = await streamedSearch("douro river", 0.5);
    expect((await click(sam, { searchId: douro.quick.searchId, position: 1, itemId: id })).errors).toBeUndefined();

    await searchesLogged(STREAM_ORG, 6);
    const response = await call(sam, ANALYTICS, { range: { relative: "LAST_24_HOURS" } });
    expect(response.errors).toBeUndefined();
    const analytics = response.data!.searchAnalytics as Record<string, any>;
    expect(analytics).toMatchObject({ totalSearches: 3, searchesWithClicks: 2, clicks: 2, averageClickPosition: 1 });
    const byQuery = Object.fromEntries(analytics.topSearches.map((row: { query: string }) => [row.query, row]));
    expect(byQuery["porto tiles"]).toMatchObject({ searches: 1, searchesWithClicks: 1, clicks: 1 });
    expect(byQuery["azulejo tiles"]).toMatchObject({ searches: 1, searchesWithClicks: 1, clicks: 1 });
    expect(byQuery["douro river"]).toMatchObject({ searches: 1, searchesWithClicks: 0, clicks: 0 });
    expect(analytics.searchesPerDay.reduce((sum: number, day: { searchesWithClicks: number }) => sum + day.searchesWithClicks, 0)).toBe(2);
    const drill = await call(sam, DRILL_DOWN, { query: "porto tiles" });
    expect(drill.data!.searchAnalytics.searches).toEqual([expect.objectContaining({ searchId: porto.full.searchId, clicks: [{ position: 1, itemKind: "CONVERSATION", itemId: id }] })]);
  });
});
