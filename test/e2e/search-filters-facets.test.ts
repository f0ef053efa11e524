/**
 * `SearchInput.filter` and `SearchResult.facets` through the gateway, on a real database with
 * two organizations: filters are applied inside each provider's statement (a filtered page is
 * full even when the unfiltered top is all other items), providers that cannot apply a filter
 * are skipped and say why, facet values select exactly what they count, facets cost no SQL
 * statement, bad filters are BAD_USER_INPUT naming the field, and nothing of the other
 * organization shows or is revealed.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { DocumentStore } from "../../subgraphs/knowledge-base/document-store.js";
import { KnowledgeBaseStore } from "../../subgraphs/knowledge-base/knowledge-base-store.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { startTestStack, type TestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

let test: TestStack;
let url: string;
const tokens: Record<string, string> = {};
let knowledgeBaseId: string;
let globexKnowledgeBaseId: string;

const tenant = (organizationId: string, userId: string, teamIds: string[]): TenantContext => ({ organizationId, userId, teamIds, role: "member", userName: null, userEmail: null });
const ann = tenant("acme", "ann", ["blue"]);
const bob = tenant("acme", "bob", ["red"]);
const gus = tenant("globex", "gus", ["blue"]);

const SEARCH = `query Search($input: SearchInput!) {
  search(input: $input) {
    hits { item { __typename ... on Conversation { id } ... on DocumentChunk { id } } }
    providers { name status error }
    pageInfo { hasNextPage endCursor }
    cached
  }
}`;
const FACETS = `query Facets($input: SearchInput!) {
  search(input: $input) {
    hits { item { __typename } }
    facets {
      window
      kinds { kind count }
      providers { provider count }
      months { month from to count }
      categories { value count }
      knowledgeBases { value count }
    }
  }
}`;

type Hit = { item: { __typename: string; id?: string } };

async function search(token: string, input: Record<string, unknown>, query = SEARCH) {
  const response = await graphql(url, query, { input }, { token });
  return response;
}

/** Every hit of a search, page after page (limit 100). */
async function allHits(token: string, input: Record<string, unknown>): Promise<Hit[]> {
  const hits: Hit[] = [];
  let after: string | null = null;
  for (let page = 0; page < 20; page++) {
    const response = await search(token, { ...input, limit: 100, ...(after ? { after } : {}) });
    expect(response.errors).toBeUndefined();
    hits.push(...response.data!.search.hits);
    if (!response.data!.search.pageInfo.hasNextPage) return hits;
    after = response.data!.search.pageInfo.endCursor;
  }
  throw new Error("more than 20 pages");
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

interface NewConversation {
  who: TenantContext;
  title: string;
  content: string;
  createdAt: string;
}

/**
 * Conversations written straight into the database, in three statements for all of them: the
 * migrations' triggers keep the keyword postings and the indexing queue exactly as the
 * conversations subgraph's writes do, and only this way can a test date them.
 */
async function seedConversations(rows: NewConversation[]): Promise<void> {
  const prisma = test.db.database.prisma;
  for (const who of new Set(rows.map((row) => row.who))) {
    await prisma.$executeRawUnsafe(`INSERT INTO organizations (id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, who.organizationId);
    await prisma.$executeRawUnsafe(`INSERT INTO users (organization_id, id) VALUES ($1, $2) ON CONFLICT (organization_id, id) DO NOTHING`, who.organizationId, who.userId);
  }
  const ids = await prisma.$queryRawUnsafe<{ id: string }[]>(
    `INSERT INTO conversations (id, organization_id, user_id, title, created_at, updated_at)
     SELECT gen_random_uuid(), o, u, t, d, d FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS r(o, u, t, d)
     RETURNING id::text AS id`,
    rows.map((row) => row.who.organizationId),
    rows.map((row) => row.who.userId),
    rows.map((row) => row.title),
    rows.map((row) => row.createdAt),
  );
  expect(ids).toHaveLength(rows.length);
  // RETURNING keeps no order promise: match rows back by title (titles are unique here).
  const byTitle = new Map<string, string>();
  const titled = await prisma.$queryRawUnsafe<{ id: string; title: string }[]>(`SELECT id::text AS id, title FROM conversations WHERE id = ANY($1::uuid[])`, ids.map((row) => row.id));
  for (const row of titled) byTitle.set(row.title, row.id);
  await prisma.$executeRawUnsafe(
    `INSERT INTO messages (id, conversation_id, organization_id, position, role, content, token_count, created_at)
     SELECT gen_random_uuid(), c, o, 0, 'user', m, 9, d FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[]) AS r(c, o, m, d)`,
    rows.map((row) => byTitle.get(row.title)!),
    rows.map((row) => row.who.organizationId),
    rows.map((row) => row.content),
    rows.map((row) => row.createdAt),
  );
}

async function createDocument(documents: DocumentStore, who: TenantContext, text: string, options: { category: string | null; format?: "text" | "markdown"; createdAt: string; knowledgeBaseId?: string; teamId?: string }) {
  const contentHash = sha256(text);
  const { document } = await documents.create(who, {
    fileName: `${sha256(text).slice(0, 8)}.txt`,
    mediaType: "text/plain",
    format: options.format ?? "text",
    category: options.category,
    sizeBytes: Buffer.byteLength(text),
    contentHash,
    teamId: options.teamId ?? null,
    ...(options.knowledgeBaseId ? { knowledgeBaseId: options.knowledgeBaseId } : {}),
  });
  await documents.saveContent(who.organizationId, contentHash, text);
  await test.db.database.prisma.$executeRawUnsafe(`UPDATE documents SET created_at = $1::timestamptz, updated_at = $1::timestamptz WHERE id = $2::uuid`, options.createdAt, document.id);
}

/** Up to 100 s: alone it takes a few seconds, but a slow CI machine once took over 60 s. */
async function waitForIndexers() {
  for (let i = 0; i < 1_000; i++) {
    const [row] = await test.db.database.prisma.$queryRawUnsafe<{ waiting: number }[]>(
      `SELECT ((SELECT count(*) FROM documents WHERE status <> 'READY') + (SELECT count(*) FROM search_index_jobs))::int AS waiting`,
    );
    if (row!.waiting === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // Say what was left, so a failure tells a stuck indexer from a failed item.
  const left = await test.db.database.prisma.$queryRawUnsafe<unknown[]>(
    `SELECT 'document' AS item, status::text AS state, count(*)::int AS count, max(failure_reason) AS detail FROM documents WHERE status <> 'READY' GROUP BY status
     UNION ALL SELECT 'conversation job', 'attempts ' || attempts, count(*)::int, max(last_error) FROM search_index_jobs GROUP BY attempts
     UNION ALL SELECT 'document job', 'attempts ' || attempts, count(*)::int, max(last_error) FROM document_index_jobs GROUP BY attempts`,
  );
  throw new Error(`indexers did not finish in 100 s: ${JSON.stringify(left)}`);
}

beforeAll(async () => {
  test = await startTestStack({ SEARCH_CACHE_TTL_SECONDS: "60", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" });
  url = test.stack.gateway.url;
  for (const who of [ann, bob, gus]) tokens[who.userId] = await tokenFor(who.organizationId, who.userId, who.teamIds);
  const documents = new DocumentStore(test.db.database.prisma);
  const knowledgeBases = new KnowledgeBaseStore(test.db.database.prisma);
  knowledgeBaseId = (await knowledgeBases.create(ann, { name: "Streaming", description: null, scope: "COMPANY", category: null, backend: "LOCAL" })).id;
  globexKnowledgeBaseId = (await knowledgeBases.create(gus, { name: "Globex streaming", description: null, scope: "COMPANY", category: null, backend: "LOCAL" })).id;

  const times = <T,>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));
  await seedConversations([
    // A small topic every provider window holds whole (facets over the window are then exact counts).
    ...times(6, (i) => ({ who: ann, title: `Kafka rebalance storm ${i}`, content: "consumers rebalance over and over", createdAt: "2026-10-05T10:00:00.000Z" })),
    ...times(5, (i) => ({ who: ann, title: `Kafka rebalance timeout ${i}`, content: "rebalance took too long", createdAt: "2026-11-20T10:00:00.000Z" })),
    ...times(4, (i) => ({ who: bob, title: `Kafka rebalance after deploy ${i}`, content: "the rebalance followed a deploy", createdAt: "2026-10-31T23:59:59.999Z" })),
    // A topic where the unfiltered top 40 (a page of 20's window) is all other items: 41 strong matches, 21 weak ones to filter to.
    ...times(41, (i) => ({ who: ann, title: `Pipeline deploy pipeline deploy ${i}`, content: "deploy pipeline deploy pipeline deploy pipeline", createdAt: "2026-11-25T00:00:00.000Z" })),
    ...times(21, (i) => ({ who: bob, title: `Old quarter review ${i}`, content: `we talked about the pipeline once among many other subjects like hiring budgets offsites and roadmaps ${i}`, createdAt: "2025-03-10T00:00:00.000Z" })),
    // The other organization: the same words.
    ...times(3, (i) => ({ who: gus, title: `Kafka rebalance at globex ${i}`, content: "rebalance rebalance", createdAt: "2026-10-05T10:00:00.000Z" })),
  ]);
  // Documents go through the store and the stack's own indexer (chunks, postings, vectors).
  const uploads = [
    ...times(5, (i) => () => createDocument(documents, ann, `Kafka rebalance runbook ${i}: stop the consumers, then restart them one by one.`, { category: "runbook", createdAt: "2026-09-01T00:00:00.000Z" })),
    ...times(3, (i) => () => createDocument(documents, ann, `Kafka rebalance notes ${i}: partitions moved.`, { category: "notes", format: "markdown", createdAt: "2026-11-01T00:00:00.000Z", knowledgeBaseId })),
    () => createDocument(documents, bob, `Kafka rebalance team page: shared with red.`, { category: "runbook", createdAt: "2026-11-02T00:00:00.000Z", teamId: "red" }),
    // As the conversations' deploy topic, for a page of 5 (window 10): 11 strong matches, 6 weak ones.
    ...times(11, (i) => () => createDocument(documents, ann, `Pipeline notes ${i}: deploy pipeline deploy pipeline deploy pipeline.`, { category: "notes", createdAt: "2026-11-25T00:00:00.000Z" })),
    ...times(6, (i) => () => createDocument(documents, ann, `Handbook ${i}: the pipeline is one of many subjects here, besides hiring, budgets, offsites and roadmaps.`, { category: "handbook", createdAt: "2026-11-25T00:00:00.000Z" })),
    ...times(2, (i) => () => createDocument(documents, gus, `Kafka rebalance globex secret ${i}`, { category: "globex-only", createdAt: "2026-10-01T00:00:00.000Z", knowledgeBaseId: globexKnowledgeBaseId })),
  ];
  for (const upload of uploads) await upload();
  await waitForIndexers();
}, 180_000);

afterAll(async () => {
  await test?.stop();
});

const statusOf = (response: Awaited<ReturnType<typeof search>>) =>
  Object.fromEntries(response.data!.search.providers.map((p: { name: string; status: string; error: string | null }) => [p.name, [p.status, p.error]]));

describe("filters pushed into the providers", () => {
  it("fills a filtered page from items the unfiltered window does not hold", async () => {
    const query = "deploy pipeline";
    const unfiltered = await search(tokens.ann!, { query, alpha: 1, limit: 20, filter: { kinds: ["CONVERSATION"] } });
    const strongIds = new Set(unfiltered.data!.search.hits.map((hit: Hit) => hit.item.id));
    expect(unfiltered.data!.search.hits).toHaveLength(20);
    const oldOnes = await search(tokens.ann!, { query, alpha: 1, limit: 20, filter: { created: { from: "2025-03-01T00:00:00.000Z", to: "2025-03-31T23:59:59.999Z" } } });
    expect(oldOnes.errors).toBeUndefined();
    expect(oldOnes.data!.search.hits).toHaveLength(20);
    expect(oldOnes.data!.search.hits.every((hit: Hit) => hit.item.__typename === "Conversation" && !strongIds.has(hit.item.id))).toBe(true);
    // Documents have creation dates too: none in March 2025 here; web and Slack cannot apply dates.
    expect(statusOf(oldOnes)["documents.keyword"]).toEqual(["OK", null]);
    expect(statusOf(oldOnes)["web.serper"]![0]).toBe("SKIPPED");
    expect(statusOf(oldOnes)["web.serper"]![1]).toMatch(/filter\.created/);

    const byBob = await search(tokens.ann!, { query, alpha: 1, limit: 20, filter: { owner: "bob", kinds: ["CONVERSATION"] } });
    expect(byBob.data!.search.hits).toHaveLength(20);
    expect(byBob.data!.search.hits.every((hit: Hit) => !strongIds.has(hit.item.id))).toBe(true);

    const topDocuments = await allHits(tokens.ann!, { query, alpha: 1, filter: { kinds: ["DOCUMENT_CHUNK"] } });
    const handbook = await search(tokens.ann!, { query, alpha: 1, limit: 5, filter: { categories: ["handbook"] } });
    expect(handbook.data!.search.hits).toHaveLength(5);
    expect(handbook.data!.search.hits.every((hit: Hit) => hit.item.__typename === "DocumentChunk")).toBe(true);
    // The unfiltered list's first 10 documents (a page of 5's window) are all notes: the handbook chunks come from deeper.
    const firstTen = new Set(topDocuments.slice(0, 10).map((hit) => hit.item.id));
    expect(handbook.data!.search.hits.some((hit: Hit) => firstTen.has(hit.item.id))).toBe(false);
    // Conversations have no category: skipped, saying which filter.
    expect(statusOf(handbook)["conversations.keyword"]).toEqual(["SKIPPED", expect.stringMatching(/cannot apply filter\.categories/)]);
  });

  it("does not call providers whose items are none of the kinds asked", async () => {
    const response = await search(tokens.ann!, { query: "kafka rebalance", alpha: 0.5, filter: { kinds: ["DOCUMENT_CHUNK"] } });
    const status = statusOf(response);
    expect(status["conversations.keyword"]).toEqual(["SKIPPED", expect.stringMatching(/filter\.kinds asks for DocumentChunk/)]);
    expect(status["conversations.semantic"]![0]).toBe("SKIPPED");
    expect(status["documents.keyword"]).toEqual(["OK", null]);
    expect(status["documents.semantic"]).toEqual(["OK", null]);
    expect(response.data!.search.hits.length).toBeGreaterThan(0);
    expect(response.data!.search.hits.every((hit: Hit) => hit.item.__typename === "DocumentChunk")).toBe(true);
  });

  it("applies the filter in the semantic providers too (pgvector), never returning what it excludes", async () => {
    const all = await allHits(tokens.ann!, { query: "kafka rebalance", alpha: 0, filter: { owner: "bob" } });
    const bobs = await allHits(tokens.ann!, { query: "kafka rebalance", alpha: 1, filter: { owner: "bob" } });
    expect(all.length).toBeGreaterThan(0);
    const [row] = await test.db.database.prisma.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM conversations WHERE organization_id = 'acme' AND user_id <> 'bob' AND id = ANY($1::uuid[])`,
      all.filter((hit) => hit.item.__typename === "Conversation").map((hit) => hit.item.id),
    );
    expect(row!.n).toBe(0);
    expect(bobs.length).toBeGreaterThan(0);
  });

  it("makes the filter part of the search's identity: cache key and cursors", async () => {
    const input = { query: "deploy pipeline", alpha: 1, limit: 5 };
    const plain = await search(tokens.ann!, input);
    expect((await search(tokens.ann!, input)).data!.search.cached).toBe(true);
    // Not run before with this filter: a miss, not the unfiltered page.
    const filtered = await search(tokens.ann!, { ...input, filter: { categories: ["notes"] } });
    expect(filtered.data!.search.cached).toBe(false);
    expect(filtered.data!.search.hits.every((hit: Hit) => hit.item.__typename === "DocumentChunk")).toBe(true);
    const foreignCursor = await search(tokens.ann!, { ...input, filter: { categories: ["notes"] }, after: plain.data!.search.pageInfo.endCursor });
    expect(errorCodes(foreignCursor)).toEqual(["BAD_USER_INPUT"]);
    expect(foreignCursor.errors![0]!.message).toMatch(/^input\.after: .*filter/);
  });
});

describe("facets", () => {
  it("count the fused window, and each value's filter selects exactly what it counts", async () => {
    const base = { query: "kafka rebalance", alpha: 1 };
    const response = await search(tokens.ann!, { ...base, limit: 20 }, FACETS);
    expect(response.errors).toBeUndefined();
    const facets = response.data!.search.facets;
    // Every match fits in the window here (each keyword provider window holds 40), so window counts are exact.
    const total = await allHits(tokens.ann!, base);
    expect(facets.window).toBe(total.length);
    expect(facets.kinds).toEqual([
      { kind: "CONVERSATION", count: 15 },
      { kind: "DOCUMENT_CHUNK", count: 8 },
    ]);
    expect(facets.months.map((m: { month: string; count: number }) => [m.month, m.count])).toEqual([
      ["2026-11", 5 + 3],
      ["2026-10", 6 + 4],
      ["2026-09", 5],
    ]);
    expect(facets.categories).toEqual([
      { value: "runbook", count: 5 },
      { value: "notes", count: 3 },
    ]);
    expect(facets.knowledgeBases).toEqual([{ value: knowledgeBaseId, count: 3 }]);

    const selections: [string, number, Record<string, unknown>][] = [
      ...facets.kinds.map((f: { kind: string; count: number }) => [`kind ${f.kind}`, f.count, { filter: { kinds: [f.kind] } }]),
      ...facets.providers.map((f: { provider: string; count: number }) => [`provider ${f.provider}`, f.count, { providers: [f.provider] }]),
      ...facets.months.map((f: { month: string; from: string; to: string; count: number }) => [`month ${f.month}`, f.count, { filter: { created: { from: f.from, to: f.to } } }]),
      ...facets.categories.map((f: { value: string; count: number }) => [`category ${f.value}`, f.count, { filter: { categories: [f.value] } }]),
      ...facets.knowledgeBases.map((f: { value: string; count: number }) => [`knowledge base ${f.value}`, f.count, { filter: { knowledgeBases: [f.value] } }]),
    ];
    expect(selections.length).toBeGreaterThanOrEqual(10);
    for (const [label, count, selection] of selections) {
      const hits = await allHits(tokens.ann!, { ...base, ...selection });
      expect([label, hits.length]).toEqual([label, count]);
    }
  });

  it("cost no SQL statement: a search with facets sends as many as one without", async () => {
    await waitForIndexers();
    const searchStatements = () => test.db.database.statements.log.filter((sql) => !/index_jobs|FROM "public"\."(documents|document_index_jobs)" WHERE "public"\."documents"\."status"/.test(sql));
    const count = async (query: string, document: string) => {
      test.db.database.statements.reset();
      const response = await search(tokens.ann!, { query, alpha: 0.5, limit: 20 }, document);
      expect(response.errors).toBeUndefined();
      return searchStatements();
    };
    // The log is the whole process's: a statement of the stack's own background work (a poll, a
    // batched write) can land in either window (CI once counted 21 against 20). Noise only ever
    // adds, so a pair with facets at or under the plain search proves they cost nothing; facets
    // that cost a statement would be over in every pair. Fresh words per pair: no cached page.
    const pairs = [
      ["rebalance storm", "rebalance timeout"],
      ["consumers rebalance", "rebalance took"],
      ["kafka deploy", "kafka partitions"],
    ];
    const tried: { without: string[]; withFacets: string[] }[] = [];
    for (const [plain, faceted] of pairs) {
      const without = await count(plain!, SEARCH);
      const withFacets = await count(faceted!, FACETS);
      expect(without.length).toBeGreaterThan(0);
      tried.push({ without, withFacets });
      if (withFacets.length <= without.length) break;
    }
    const last = tried.at(-1)!;
    const extra = last.withFacets.filter((sql) => !last.without.includes(sql));
    const over = last.withFacets.length - last.without.length;
    // On failure the statements the faceted search sent that the plain one did not are printed.
    expect({ over: Math.max(0, over), extra: over > 0 ? extra : [] }).toEqual({ over: 0, extra: [] });
  });

  it("are null for a search that does not select them, and a page cached without them is not reused for one that does", async () => {
    const input = { query: "kafka rebalance storm", alpha: 1, limit: 3 };
    const plain = await search(tokens.ann!, input, `query($input: SearchInput!) { search(input: $input) { cached facets { window } } }`);
    expect(plain.data!.search).toEqual({ cached: false, facets: { window: expect.any(Number) } });
    const without = await search(tokens.ann!, { ...input, limit: 4 });
    expect(without.data!.search.cached).toBe(false);
    const withFacets = await search(tokens.ann!, { ...input, limit: 4 }, FACETS);
    expect(withFacets.data!.search.facets.window).toBeGreaterThan(0);
  });
});

describe("bad filters and other organizations", () => {
  it.each([
    [{ created: { from: "2026-12-01T00:00:00.000Z", to: "2026-11-01T00:00:00.000Z" } }, /^input\.filter\.created: `from`.*is after `to`/],
    [{ updated: {} }, /^input\.filter\.updated: give `from`, `to` or both/],
    [{ teams: ["red"] }, /^input\.filter\.teams: you are not a member of team "red"/],
    [{ knowledgeBases: ["not-a-uuid"] }, /^input\.filter\.knowledgeBases: "not-a-uuid" is not a knowledge base id/],
    [{ categories: Array.from({ length: 51 }, (_, i) => `c${i}`) }, /^input\.filter\.categories: may name at most 50 values, got 51/],
    [{ categories: ["x".repeat(201)] }, /^input\.filter\.categories: values must be 1 to 200 characters, got 201/],
    [{ sites: ["https://example.com/path"] }, /^input\.filter\.sites: .* is not a host name/],
    [{ kinds: [] }, /^input\.filter\.kinds: must name at least one kind/],
    [{ owner: "o".repeat(201) }, /^input\.filter\.owner: must be a user id of 1 to 200 characters/],
  ])("refuses %j with BAD_USER_INPUT naming the field", async (filter, message) => {
    const response = await search(tokens.ann!, { query: "kafka", filter });
    expect(errorCodes(response)).toEqual(["BAD_USER_INPUT"]);
    expect(response.errors![0]!.message).toMatch(message);
  });

  it("gives an empty page for another organization's knowledge base, exactly as for one that does not exist", async () => {
    const foreign = await search(tokens.ann!, { query: "kafka rebalance", alpha: 0.5, filter: { knowledgeBases: [globexKnowledgeBaseId] } });
    const missing = await search(tokens.ann!, { query: "kafka rebalance", alpha: 0.5, filter: { knowledgeBases: ["00000000-0000-4000-8000-000000000000"] } });
    expect(foreign.errors).toBeUndefined();
    expect(foreign.data!.search.hits).toEqual([]);
    expect(missing.data!.search.hits).toEqual([]);
    expect(statusOf(foreign)).toEqual(statusOf(missing));
  });

  it("never shows the other organization's items, categories or knowledge bases in hits or facets", async () => {
    const response = await search(tokens.ann!, { query: "kafka rebalance globex secret", alpha: 0.5, limit: 100 }, FACETS);
    const facets = response.data!.search.facets;
    expect(facets.categories.map((f: { value: string }) => f.value)).not.toContain("globex-only");
    expect(facets.knowledgeBases.map((f: { value: string }) => f.value)).not.toContain(globexKnowledgeBaseId);
    const filtered = await search(tokens.ann!, { query: "kafka rebalance", alpha: 0.5, filter: { categories: ["globex-only"] } });
    expect(filtered.data!.search.hits).toEqual([]);
    // And the other way round: gus sees his own, none of acme's.
    const theirs = await search(tokens.gus!, { query: "kafka rebalance", alpha: 1, limit: 100 }, FACETS);
    expect(theirs.data!.search.facets.kinds).toEqual([
      { kind: "CONVERSATION", count: 3 },
      { kind: "DOCUMENT_CHUNK", count: 2 },
    ]);
    expect(theirs.data!.search.facets.categories).toEqual([{ value: "globex-only", count: 2 }]);
  });
});
