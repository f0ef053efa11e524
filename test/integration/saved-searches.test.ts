/**
 * Saved searches over real HTTP through the search subgraph, against a real database (PGlite,
 * or PostgreSQL when DATABASE_URL is set): save, list and page, rename, delete, every bad
 * input, privacy (a colleague and another organization see nothing and change nothing), runs
 * and their new hits, `_entities` in one statement, and the 100-per-user limit.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { NoResultCache } from "../../lib/cache/result-cache.js";
import { loadConfig } from "../../lib/config.js";
import { startSubgraph, type RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { ConversationStore } from "../../subgraphs/conversations/conversation-store.js";
import { searchSubgraph, type SearchSubgraph } from "../../subgraphs/search/index.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { errorCodes, graphql, type GraphQLResponse } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let search: SearchSubgraph;
let subgraph: RunningSubgraph;
let conversations: ConversationStore;
let ann: string; // acme, the owner of the saved searches below
let bea: string; // acme, ann's colleague
let gus: string; // globex
const acmeAnn = { organizationId: "acme", userId: "ann", teamIds: [], role: "member" as const, userName: null, userEmail: null };

const FILTER = `filter { kinds created { from to } updated { from to } owner teams knowledgeBases categories formats sites }`;
const FIELDS = `id name query alpha providers weights { provider weight } ${FILTER} typoTolerance createdAt updatedAt lastRunAt`;
const SAVE = `mutation($input: SaveSearchInput!) { saveSearch(input: $input) { ${FIELDS} } }`;
const RENAME = `mutation($id: ID!, $name: String!) { renameSavedSearch(id: $id, name: $name) { ${FIELDS} } }`;
const DELETE = `mutation($id: ID!) { deleteSavedSearch(id: $id) { id } }`;
const GET = `query($id: ID!) { savedSearch(id: $id) { ${FIELDS} } }`;
const LIST = `query($first: Int, $after: String) { savedSearches(first: $first, after: $after) { nodes { id name } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`;
const RUN = `mutation($id: ID!, $limit: Int) {
  runSavedSearch(id: $id, limit: $limit) {
    savedSearch { id lastRunAt }
    result { hits { score item { __typename ... on Conversation { id } } } providers { name status } corrections { word searchedAs } }
    newHits { score item { __typename ... on Conversation { id } } }
  }
}`;

interface SavedSearchFields {
  id: string;
  name: string;
  query: string;
  alpha: number;
  providers: string[] | null;
  weights: { provider: string; weight: number }[];
  filter: Record<string, unknown> | null;
  typoTolerance: boolean;
  createdAt: string;
  updatedAt: string;
  lastRunAt: string | null;
}

const call = (token: string, query: string, variables: Record<string, unknown> = {}) => graphql(subgraph.url, query, variables, { token });

async function save(token: string, input: Record<string, unknown>): Promise<SavedSearchFields> {
  const response = await call(token, SAVE, { input });
  expect(response.errors).toBeUndefined();
  return response.data!.saveSearch as SavedSearchFields;
}

/** The one error of a response: its code and the field it names. */
function failure(response: GraphQLResponse) {
  expect(response.errors).toHaveLength(1);
  const error = response.errors![0]!;
  return { code: error.extensions?.code, field: error.extensions?.field, message: error.message };
}

async function addConversation(title: string, content: string): Promise<string> {
  const conversation = await conversations.create(acmeAnn, title, [{ role: "user", content, tokenCount: 1 }]);
  return conversation.id;
}

beforeAll(async () => {
  db = await createTestDatabase();
  conversations = new ConversationStore(db.database.prisma);
  search = await searchSubgraph({ database: db.database, config: loadConfig({ SEARCH_INDEXER: "false" }), logger: silentLogger, embedder: new FeatureHashingEmbedder(), cache: new NoResultCache() });
  await search.start!();
  subgraph = await startSubgraph(search, { host: "127.0.0.1", port: 0, auth: TEST_AUTH, production: false, logger: silentLogger });
  [ann, bea, gus] = await Promise.all([tokenFor("acme", "ann"), tokenFor("acme", "bea"), tokenFor("globex", "gus")]);
});

afterAll(async () => {
  await subgraph?.stop();
  await search?.stop?.();
  await db?.dispose();
});

describe("saving, listing, renaming and deleting", () => {
  it("saves a search as `search` would run it: name trimmed, query made plain, defaults filled in", async () => {
    const saved = await save(ann, { name: "  Deadlocks  ", query: "  order\u0000service deadlock\n" });
    expect(saved).toMatchObject({ name: "Deadlocks", query: "order service deadlock", alpha: 0.5, providers: null, weights: [], filter: null, typoTolerance: true, lastRunAt: null });
    expect(saved.createdAt).toBe(saved.updatedAt);

    const weighted = await save(ann, { name: "Keyword only", query: "deadlock", alpha: 1, providers: ["conversations.keyword", "conversations.keyword"], weights: [{ provider: "conversations.keyword", weight: 2.5 }] });
    expect(weighted).toMatchObject({ alpha: 1, providers: ["conversations.keyword"], weights: [{ provider: "conversations.keyword", weight: 2.5 }] });

    const read = await call(ann, GET, { id: weighted.id });
    expect(read.data!.savedSearch).toEqual(weighted);
  });

  it("saves a filter and typo tolerance as the search will run them: lists deduplicated and sorted, sites in lowercase", async () => {
    const saved = await save(ann, {
      name: "Filtered",
      query: "deadlock",
      typoTolerance: false,
      filter: {
        kinds: ["DOCUMENT_CHUNK", "CONVERSATION", "CONVERSATION"],
        created: { from: "2026-01-01T00:00:00.000Z" },
        categories: ["runbooks", "incidents", "runbooks"],
        formats: ["PDF", "MARKDOWN"],
        sites: ["Docs.Example.com."],
      },
    });
    expect(saved.typoTolerance).toBe(false);
    expect(saved.filter).toEqual({
      kinds: ["CONVERSATION", "DOCUMENT_CHUNK"],
      created: { from: "2026-01-01T00:00:00.000Z", to: null },
      updated: null,
      owner: null,
      teams: null,
      knowledgeBases: null,
      categories: ["incidents", "runbooks"],
      formats: ["MARKDOWN", "PDF"],
      sites: ["docs.example.com"],
    });
    const read = await call(ann, GET, { id: saved.id });
    expect(read.data!.savedSearch).toEqual(saved);
    // A filter that sets nothing is no filter.
    expect((await save(ann, { name: "Empty filter", query: "deadlock", filter: {} })).filter).toBeNull();
  });

  it("lists the caller's saved searches newest first, in pages that neither overlap nor skip", async () => {
    const owner = await tokenFor("acme", "pia");
    const names: string[] = [];
    for (let i = 0; i < 5; i++) names.push((await save(owner, { name: `Search ${i}`, query: `topic ${i}` })).name);
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const response = await call(owner, LIST, { first: 2, after });
      expect(response.errors).toBeUndefined();
      const page = response.data!.savedSearches;
      seen.push(...page.nodes.map((node: { name: string }) => node.name));
      expect(page.pageInfo.hasPreviousPage).toBe(after !== null);
      pages += 1;
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([...names].reverse());
  });

  it("renames, keeping the saved search otherwise as it was, and deletes", async () => {
    const saved = await save(ann, { name: "To rename", query: "kubernetes autoscaling" });
    const renamed = await call(ann, RENAME, { id: saved.id, name: " Renamed " });
    expect(renamed.errors).toBeUndefined();
    const after = renamed.data!.renameSavedSearch as SavedSearchFields;
    expect(after).toMatchObject({ id: saved.id, name: "Renamed", query: saved.query, createdAt: saved.createdAt });
    expect(Date.parse(after.updatedAt)).toBeGreaterThanOrEqual(Date.parse(saved.updatedAt));
    // Renaming to its own name is no conflict.
    expect((await call(ann, RENAME, { id: saved.id, name: "Renamed" })).errors).toBeUndefined();

    const deleted = await call(ann, DELETE, { id: saved.id });
    expect(deleted.data!.deleteSavedSearch).toEqual({ id: saved.id });
    expect((await call(ann, GET, { id: saved.id })).data!.savedSearch).toBeNull();
    expect(failure(await call(ann, DELETE, { id: saved.id })).code).toBe("NOT_FOUND");
    expect(failure(await call(ann, RENAME, { id: saved.id, name: "Gone" })).code).toBe("NOT_FOUND");
    expect(failure(await call(ann, RUN, { id: saved.id })).code).toBe("NOT_FOUND");
    // Its name is free again.
    await save(ann, { name: "Renamed", query: "again" });
  });
});

describe("bad input", () => {
  const valid = { name: "Valid", query: "deadlock" };

  it.each([
    ["an empty name", "input.name", { name: "" }],
    ["a blank name", "input.name", { name: " \t " }],
    ["a name of 201 characters", "input.name", { name: "n".repeat(201) }],
    ["a name with NUL", "input.name", { name: "bad\u0000name" }],
    ["a name with an unpaired surrogate", "input.name", { name: "bad\ud800name" }],
    ["an empty query", "input.query", { query: "" }],
    ["a query of only whitespace and controls", "input.query", { query: " \u0001\n " }],
    ["a query of 1,001 characters", "input.query", { query: "q".repeat(1001) }],
    ["alpha below 0", "input.alpha", { alpha: -0.1 }],
    ["alpha above 1", "input.alpha", { alpha: 1.5 }],
    ["no providers", "input.providers", { providers: [] }],
    ["an unknown provider", "input.providers", { providers: ["conversations.keyword", "nope"] }],
    ["a weight for an unknown provider", "input.weights", { weights: [{ provider: "nope", weight: 1 }] }],
    ["a negative weight", "input.weights", { weights: [{ provider: "conversations.keyword", weight: -1 }] }],
    ["two weights for one provider", "input.weights", { weights: [{ provider: "conversations.keyword", weight: 1 }, { provider: "conversations.keyword", weight: 2 }] }],
    ["a filter with an empty list of kinds", "input.filter.kinds", { filter: { kinds: [] } }],
    ["a filter on a team the caller is not in", "input.filter.teams", { filter: { teams: ["someone-elses-team"] } }],
    ["a filter whose range ends before it starts", "input.filter.created", { filter: { created: { from: "2026-02-01T00:00:00Z", to: "2026-01-01T00:00:00Z" } } }],
    ["a filter on a site that is not a host name", "input.filter.sites", { filter: { sites: ["https://example.com/path"] } }],
    ["a filter with 51 categories", "input.filter.categories", { filter: { categories: Array.from({ length: 51 }, (_, i) => `c${i}`) } }],
  ])("refuses %s with BAD_USER_INPUT on %s, saving nothing", async (_name, field, change) => {
    const owner = await tokenFor("acme", "bad-input");
    const response = await call(owner, SAVE, { input: { ...valid, ...change } });
    expect(failure(response)).toMatchObject({ code: "BAD_USER_INPUT", field });
    expect(response.data?.saveSearch ?? null).toBeNull();
    expect((await call(owner, LIST)).data!.savedSearches.nodes).toEqual([]);
  });

  it("refuses a name the caller already uses, on save (input.name) and on rename (name)", async () => {
    const first = await save(ann, { name: "Unique name", query: "one" });
    expect(failure(await call(ann, SAVE, { input: { name: "Unique name", query: "two" } }))).toMatchObject({ code: "BAD_USER_INPUT", field: "input.name", message: expect.stringContaining("already have a saved search named") });
    const second = await save(ann, { name: "Other name", query: "two" });
    expect(failure(await call(ann, RENAME, { id: second.id, name: " Unique name " }))).toMatchObject({ code: "BAD_USER_INPUT", field: "name" });
    expect((await call(ann, GET, { id: second.id })).data!.savedSearch.name).toBe("Other name");
    expect((await call(ann, GET, { id: first.id })).data!.savedSearch.name).toBe("Unique name");
    // Names are per user: a colleague may use the same one.
    expect((await save(bea, { name: "Unique name", query: "mine" })).name).toBe("Unique name");
    await call(bea, DELETE, { id: (await call(bea, LIST)).data!.savedSearches.nodes[0].id });
  });

  it.each([
    ["renameSavedSearch with a blank name", "name", RENAME, { name: "   " }],
    ["renameSavedSearch with a name of 201 characters", "name", RENAME, { name: "n".repeat(201) }],
    ["renameSavedSearch with an id that is not a UUID", "id", RENAME, { id: "42", name: "x" }],
    ["deleteSavedSearch with an id that is not a UUID", "id", DELETE, { id: "'; DROP TABLE saved_searches; --" }],
    ["runSavedSearch with an id that is not a UUID", "id", RUN, { id: "nope" }],
    ["runSavedSearch with limit 0", "limit", RUN, { limit: 0 }],
    ["runSavedSearch with limit 101", "limit", RUN, { limit: 101 }],
    ["savedSearch with an id that is not a UUID", "id", GET, { id: "x" }],
    ["savedSearches with first 0", "first", LIST, { first: 0 }],
    ["savedSearches with first 101", "first", LIST, { first: 101 }],
    ["savedSearches with a cursor that is not one", "after", LIST, { after: "bm90LWEtY3Vyc29y" }],
  ])("refuses %s with BAD_USER_INPUT on %s", async (_name, field, operation, variables) => {
    const saved = await save(ann, { name: `Target ${field} ${Math.random()}`, query: "target" });
    const response = await call(ann, operation, { id: saved.id, ...variables });
    expect(failure(response)).toMatchObject({ code: "BAD_USER_INPUT", field });
    expect((await call(ann, GET, { id: saved.id })).data!.savedSearch.name).toBe(saved.name);
    await call(ann, DELETE, { id: saved.id });
  });

  it("refuses every operation without a token", async () => {
    for (const [operation, variables] of [[LIST, {}], [SAVE, { input: valid }], [GET, { id: "00000000-0000-4000-8000-000000000001" }]] as const) {
      const response = await graphql(subgraph.url, operation, variables);
      expect(errorCodes(response)).toEqual(["UNAUTHENTICATED"]);
    }
  });
});

describe("privacy", () => {
  it("shows a colleague and another organization nothing, and lets them change and run nothing", async () => {
    const mine = await save(ann, { name: "Private", query: "order service deadlock" });
    for (const stranger of [bea, gus]) {
      expect((await call(stranger, LIST)).data!.savedSearches).toMatchObject({ nodes: [], pageInfo: { hasNextPage: false } });
      expect((await call(stranger, GET, { id: mine.id })).data!.savedSearch).toBeNull();
      // Exactly the answers a saved search that never existed gets.
      for (const id of [mine.id, "00000000-0000-4000-8000-000000000001"]) {
        expect(failure(await call(stranger, RENAME, { id, name: "Taken over" }))).toMatchObject({ code: "NOT_FOUND", message: `SavedSearch ${id} was not found` });
        expect(failure(await call(stranger, DELETE, { id }))).toMatchObject({ code: "NOT_FOUND", message: `SavedSearch ${id} was not found` });
        expect(failure(await call(stranger, RUN, { id }))).toMatchObject({ code: "NOT_FOUND", message: `SavedSearch ${id} was not found` });
      }
      const entities = await call(stranger, `query($r: [_Any!]!) { _entities(representations: $r) { ... on SavedSearch { id name } } }`, { r: [{ __typename: "SavedSearch", id: mine.id }] });
      expect(entities.errors).toBeUndefined();
      expect(entities.data!._entities).toEqual([null]);
    }
    const still = (await call(ann, GET, { id: mine.id })).data!.savedSearch as SavedSearchFields;
    expect(still).toEqual(mine);
  });

  it("keeps the policies' second wall: inside another organization's scope the row does not exist", async () => {
    const [row] = await db.database.prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM saved_searches WHERE organization_id = 'acme'`;
    expect(row!.n).toBeGreaterThan(0);
    const { withTenantScope } = await import("../../lib/database/tenant-scope.js");
    const seen = await withTenantScope(db.database.prisma, "globex", (tx) => tx.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM saved_searches`);
    expect(seen[0]!.n).toBe(0);
  });
});

describe("_entities", () => {
  it("resolves the caller's saved searches in one SQL statement, and anything else to null", async () => {
    const owner = await tokenFor("acme", "eli");
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await save(owner, { name: `Entity ${i}`, query: `entity ${i}` })).id);
    const annsId = (await save(ann, { name: "Ann's, not Eli's", query: "x" })).id;
    const representations = [...ids, annsId, "00000000-0000-4000-8000-000000000001", "not-a-uuid"].map((id) => ({ __typename: "SavedSearch", id }));
    db.database.statements.reset();
    const response = await call(owner, `query($r: [_Any!]!) { _entities(representations: $r) { ... on SavedSearch { id name } } }`, { r: representations });
    expect(response.errors).toBeUndefined();
    expect(db.database.statements.count).toBe(1);
    const entities = response.data!._entities as ({ id: string; name: string } | null)[];
    expect(entities.slice(0, 10).map((entity) => entity!.id)).toEqual(ids);
    expect(entities.slice(10)).toEqual([null, null, null]);
  });
});

describe("running a saved search", () => {
  it("reports every hit new on the first run, none on the next, and then exactly the conversation that appeared", async () => {
    const deadlock = await addConversation("Fixing a deadlock in the order service", "Our order service deadlocks under load; lock rows in a consistent order");
    const postmortem = await addConversation("Deadlock postmortem", "The billing service deadlocked twice last week");
    await addConversation("Lisbon itinerary", "Four days in Lisbon: Alfama, tram 28");
    // Keyword only: BM25's postings are kept by triggers, so a new conversation is searchable at once.
    const saved = await save(ann, { name: "Deadlocks, keyword", query: "deadlock", alpha: 1 });
    const run = async () => {
      const response = await call(ann, RUN, { id: saved.id });
      expect(response.errors).toBeUndefined();
      return response.data!.runSavedSearch as {
        savedSearch: { id: string; lastRunAt: string };
        result: { hits: { item: { id: string } }[]; providers: { name: string; status: string }[] };
        newHits: { item: { id: string } }[];
      };
    };

    const first = await run();
    expect(first.result.providers.find((provider) => provider.name === "conversations.keyword")!.status).toBe("OK");
    expect(first.result.hits.map((hit) => hit.item.id).sort()).toEqual([deadlock, postmortem].sort());
    expect(first.newHits).toEqual(first.result.hits);
    expect(first.savedSearch.lastRunAt).not.toBeNull();

    const second = await run();
    expect(second.result.hits).toHaveLength(2);
    expect(second.newHits).toEqual([]);
    expect(Date.parse(second.savedSearch.lastRunAt)).toBeGreaterThanOrEqual(Date.parse(first.savedSearch.lastRunAt));

    const fresh = await addConversation("Another deadlock", "Deadlock between the invoice and payment workers");
    const third = await run();
    expect(third.result.hits).toHaveLength(3);
    expect(third.newHits.map((hit) => hit.item.id)).toEqual([fresh]);
    expect(third.newHits[0]).toEqual(third.result.hits.find((hit) => hit.item.id === fresh));

    // The page it answered is the one `search` gives for the saved input.
    const direct = await search.service.search(acmeAnn, { query: "deadlock", alpha: 1, limit: 20 });
    expect(third.result.hits.map((hit) => hit.item.id)).toEqual(direct.hits.map((hit) => hit.ref.id));

    // What is remembered is this run's page, bounded by its limit.
    const [row] = await db.database.prisma.$queryRaw<{ keys: string[] }[]>`SELECT last_hit_keys AS keys FROM saved_searches WHERE id = ${saved.id}::uuid`;
    expect(row!.keys.sort()).toEqual([deadlock, postmortem, fresh].map((id) => `Conversation:${id}`).sort());
    const narrow = await call(ann, RUN, { id: saved.id, limit: 1 });
    expect(narrow.data!.runSavedSearch.result.hits).toHaveLength(1);
    expect(narrow.data!.runSavedSearch.newHits).toEqual([]);
  });

  it("runs with its filter and typo tolerance, as `search` runs the same input", async () => {
    const espresso = await addConversation("Espresso grinder calibration", "Grind finer when the espresso runs fast");
    const runOf = async (input: Record<string, unknown>) => {
      const saved = await save(ann, { query: "espresso", alpha: 1, ...input });
      const response = await call(ann, RUN, { id: saved.id });
      expect(response.errors).toBeUndefined();
      return response.data!.runSavedSearch.result as { hits: { item: { id: string } }[]; providers: { name: string; status: string }[]; corrections: { word: string; searchedAs: string[] }[] };
    };
    const ids = (result: { hits: { item: { id: string } }[] }) => result.hits.map((hit) => hit.item.id);
    expect(ids(await runOf({ name: "Espresso, recent", filter: { created: { from: "2000-01-01T00:00:00Z" } } }))).toEqual([espresso]);
    expect(ids(await runOf({ name: "Espresso, last century", filter: { created: { to: "2000-01-01T00:00:00Z" } } }))).toEqual([]);
    const documentsOnly = await runOf({ name: "Espresso, documents", filter: { kinds: ["DOCUMENT_CHUNK"] } });
    expect(ids(documentsOnly)).toEqual([]);
    expect(documentsOnly.providers.find((provider) => provider.name === "conversations.keyword")!.status).toBe("SKIPPED");

    const tolerant = await runOf({ name: "Espreso, tolerant", query: "espreso" });
    expect(ids(tolerant)).toEqual([espresso]);
    expect(tolerant.corrections).toEqual([{ word: "espreso", searchedAs: ["espresso"] }]);
    const exact = await runOf({ name: "Espreso, exact", query: "espreso", typoTolerance: false });
    expect(ids(exact)).toEqual([]);
    expect(exact.corrections).toEqual([]);
  });

  it("computes the page's facets when a run selects them, also through a fragment", async () => {
    await addConversation("Faceted frobnication", "Frobnication of the widgets, step by step");
    const saved = await save(ann, { name: "Frobnication, faceted", query: "frobnication", alpha: 1 });
    const withFacets = await call(ann, `mutation($id: ID!) { runSavedSearch(id: $id) { result { hits { score } ...Counts } } } fragment Counts on SearchResult { facets { window kinds { kind count } providers { provider count } } }`, { id: saved.id });
    expect(withFacets.errors).toBeUndefined();
    const result = withFacets.data!.runSavedSearch.result as { hits: unknown[]; facets: { window: number; kinds: { kind: string; count: number }[]; providers: { provider: string; count: number }[] } };
    expect(result.hits.length).toBeGreaterThan(0);
    // Keyword only, over conversations alone here: every candidate is one, and came from that provider.
    expect(result.facets.window).toBeGreaterThanOrEqual(result.hits.length);
    expect(result.facets.kinds).toEqual([{ kind: "CONVERSATION", count: result.facets.window }]);
    expect(result.facets.providers).toEqual(expect.arrayContaining([{ provider: "conversations.keyword", count: result.facets.window }]));
  });

  it("refuses to run on `id` once the caller has left a team its filter names", async () => {
    const member = await tokenFor("acme", "tia", ["team-red"]);
    const saved = await save(member, { name: "Red team's", query: "deadlock", filter: { teams: ["team-red"] } });
    expect(saved.filter!.teams).toEqual(["team-red"]);
    const ran = await call(member, RUN, { id: saved.id });
    expect(ran.errors).toBeUndefined();
    const left = await tokenFor("acme", "tia", []);
    const refused = await call(left, RUN, { id: saved.id });
    expect(failure(refused)).toMatchObject({ code: "BAD_USER_INPUT", field: "id", message: expect.stringContaining("team-red") });
  });

  it("says so on `id` when the saved input no longer runs on this deployment (a provider it names is gone)", async () => {
    const saved = await save(ann, { name: "Names a provider", query: "deadlock", providers: ["conversations.keyword"] });
    await db.database.prisma.$executeRaw`UPDATE saved_searches SET providers = ARRAY['retired.provider'] WHERE id = ${saved.id}::uuid`;
    const response = await call(ann, RUN, { id: saved.id });
    expect(failure(response)).toMatchObject({ code: "BAD_USER_INPUT", field: "id", message: expect.stringContaining("retired.provider") });
    expect(response.data?.runSavedSearch ?? null).toBeNull();
  });
});

describe("the limit of 100 saved searches per user", () => {
  it("refuses the 101st with a clear error, also when saves race for the last places, and frees a place on delete", async () => {
    const owner = await tokenFor("acme", "max");
    for (let i = 0; i < 97; i++) await save(owner, { name: `Saved ${i}`, query: `query ${i}` });
    // Five saves at once for the last three places: the per-user lock lets exactly three in.
    const racing = await Promise.all([0, 1, 2, 3, 4].map((i) => call(owner, SAVE, { input: { name: `Racing ${i}`, query: "race" } })));
    expect(racing.filter((response) => response.errors === undefined)).toHaveLength(3);
    for (const refused of racing.filter((response) => response.errors !== undefined)) {
      expect(failure(refused)).toMatchObject({ code: "BAD_USER_INPUT", field: "input", message: expect.stringContaining("100 saved searches") });
    }
    const [row] = await db.database.prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM saved_searches WHERE organization_id = 'acme' AND user_id = 'max'`;
    expect(row!.n).toBe(100);
    expect(failure(await call(owner, SAVE, { input: { name: "One too many", query: "more" } })).field).toBe("input");

    // The limit is per user: a colleague still saves.
    expect((await save(await tokenFor("acme", "max-colleague"), { name: "Saved 0", query: "mine" })).name).toBe("Saved 0");
    const oldest = (await call(owner, LIST, { first: 100 })).data!.savedSearches.nodes.at(-1).id;
    await call(owner, DELETE, { id: oldest });
    expect((await save(owner, { name: "One too many", query: "more" })).name).toBe("One too many");
  });
});
