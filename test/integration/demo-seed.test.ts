/**
 * The demo organization `npm start` seeds, against a real database: documents of both formats,
 * shared and private exactly as documents.json says, an "Engineering handbook" LOCAL knowledge
 * base holding the handbook ones, every document indexable to READY by the real indexer and
 * found by keyword search only by those who may see it; and a second run changes nothing, while
 * a database whose demo documents are gone (or that was seeded before documents existed) gets
 * them back without a second handbook.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { seedDemoOrganization, type SeedResult } from "../../app/demo-seed.js";
import { demoConversations } from "../../lib/demo-data/conversations.js";
import { loadDemoLibrary } from "../../lib/demo-data/documents.js";
import { DEMO_ORGANIZATION, DEMO_TEAMS, DEMO_USERS } from "../../lib/demo-data/organization.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import type { SearchProvider } from "../../lib/retrieval/search-provider.js";
import { PgVectorStore } from "../../lib/retrieval/vector-stores/pgvector.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { countTokensOfEach } from "../../lib/text/token-count.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { demoSearchHistory } from "../../app/demo-search-history.js";
import { searchAnalytics } from "../../subgraphs/search/search-analytics.js";
import { DocumentStore } from "../../subgraphs/knowledge-base/document-store.js";
import { documentSearch, type DocumentSearch } from "../../subgraphs/knowledge-base/search.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { recordingLogger } from "../support/recording-logger.js";

const library = loadDemoLibrary();
/** More than one of the seed's batches of 50 conversations, whose messages' token counts are counted a batch at a time. */
const DEMO_CONVERSATIONS = 120;

function demoTenant(userId: string): TenantContext {
  return {
    organizationId: DEMO_ORGANIZATION.id,
    userId,
    teamIds: DEMO_TEAMS.filter((team) => (team.members as readonly string[]).includes(userId)).map((team) => team.id),
    role: "member",
    userName: null,
    userEmail: null,
  };
}

interface DocumentRow {
  id: string;
  file_name: string;
  format: string;
  owner_id: string;
  team_id: string | null;
  category: string | null;
  knowledge_base_id: string | null;
  status: string;
  chunks: number;
}

let db: TestDatabase;
let search: DocumentSearch;
let first: SeedResult;
const sql = <T,>(text: string, ...values: unknown[]) => db.database.prisma.$queryRawUnsafe<T[]>(text, ...values);

const demoDocuments = () =>
  sql<DocumentRow>(
    `SELECT d.id::text AS id, d.file_name, d.format::text AS format, d.owner_id, d.team_id, d.category, d.knowledge_base_id::text AS knowledge_base_id,
            d.status::text AS status, (SELECT count(*)::int FROM document_chunks c WHERE c.document_id = d.id) AS chunks
       FROM documents d WHERE d.organization_id = $1 ORDER BY d.file_name`,
    DEMO_ORGANIZATION.id,
  );
const handbooks = () =>
  sql<{ id: string; backend: string; scope: string }>(
    `SELECT id::text AS id, backend::text AS backend, scope::text AS scope FROM knowledge_bases WHERE organization_id = $1 AND name = 'Engineering handbook'`,
    DEMO_ORGANIZATION.id,
  );

async function keywordFileNames(provider: SearchProvider, who: TenantContext, query: string): Promise<string[]> {
  const hits = await provider.search({ tenant: who, query, window: 20, signal: new AbortController().signal, timeoutMs: 60_000 });
  if (hits.length === 0) return [];
  const rows = await sql<{ file_name: string }>(
    `SELECT DISTINCT d.file_name FROM document_chunks c JOIN documents d ON d.id = c.document_id WHERE c.id = ANY($1::uuid[])`,
    hits.map((hit) => hit.ref.id),
  );
  return rows.map((row) => row.file_name);
}

beforeAll(async () => {
  db = await createTestDatabase();
  search = documentSearch({ database: db.database, embedder: new FeatureHashingEmbedder(), vectorStore: new PgVectorStore(db.database), logger: recordingLogger() });
  first = await seedDemoOrganization(db.database, { conversations: DEMO_CONVERSATIONS });
}, 180_000);

afterAll(async () => {
  await search?.indexer.stop();
  await db?.dispose();
  await closeWorkerPools();
});

describe("the demo organization's conversations", () => {
  it("are every generated conversation, each message with its own token count", async () => {
    const generated = [...demoConversations({ count: DEMO_CONVERSATIONS, seed: 42, users: DEMO_USERS.length })];
    const messages = await sql<{ content: string; token_count: number }>(
      `SELECT m.content, m.token_count FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE c.organization_id = $1`,
      DEMO_ORGANIZATION.id,
    );
    const sorted = <T,>(values: T[]) => [...values].sort();
    expect(sorted(messages.map((message) => message.content))).toEqual(sorted(generated.flatMap((conversation) => conversation.messages.map((message) => message.content))));
    // A count written to the wrong message (batches are counted apart from their writes) would differ here.
    expect(messages.map((message) => message.token_count)).toEqual(await countTokensOfEach(messages.map((message) => message.content)));
  });
});

describe("the demo organization's documents", () => {
  it("seeds every document of documents.json beside the conversations, PENDING for the background indexer", async () => {
    expect(first).toMatchObject({ seeded: true, conversations: DEMO_CONVERSATIONS, documents: library.documents.length });
    const rows = await demoDocuments();
    expect(rows.map((row) => row.file_name)).toEqual(library.documents.map((document) => document.fileName).sort());
    expect(new Set(rows.map((row) => row.status))).toEqual(new Set(["PENDING"]));
  });

  it("has Markdown and PDF documents, shared with the owner's team or private, as the data says", async () => {
    const rows = await demoDocuments();
    const byName = new Map(rows.map((row) => [row.file_name, row]));
    for (const document of library.documents) {
      expect(byName.get(document.fileName)).toMatchObject({
        format: document.fileName.endsWith(".pdf") ? "pdf" : "markdown",
        owner_id: document.owner,
        team_id: document.sharedWithTeam,
        category: document.category,
      });
      if (document.sharedWithTeam) expect(demoTenant(document.owner).teamIds).toContain(document.sharedWithTeam);
    }
    const kinds = new Set(rows.map((row) => `${row.format}/${row.team_id ? "shared" : "private"}`));
    expect(kinds).toEqual(new Set(["markdown/shared", "markdown/private", "pdf/shared", "pdf/private"]));
    expect(rows.length).toBeGreaterThanOrEqual(24);
  });

  it("files the handbook documents, of both formats, into one LOCAL company-wide Engineering handbook", async () => {
    const [handbook, ...others] = await handbooks();
    expect(others).toEqual([]);
    expect(handbook).toMatchObject({ backend: "LOCAL", scope: "COMPANY" });
    const rows = await demoDocuments();
    const inHandbook = rows.filter((row) => row.knowledge_base_id === handbook!.id);
    expect(inHandbook.map((row) => row.file_name).sort()).toEqual(library.documents.filter((document) => document.inHandbook).map((document) => document.fileName).sort());
    expect(new Set(inHandbook.map((row) => row.format))).toEqual(new Set(["markdown", "pdf"]));
    expect(new Set(inHandbook.map((row) => (row.team_id ? "shared" : "private")))).toEqual(new Set(["shared", "private"]));
    expect(rows.filter((row) => row.knowledge_base_id !== null && row.knowledge_base_id !== handbook!.id)).toEqual([]);
  });

  it("are all indexed to READY by the real indexer, with chunks", async () => {
    expect(await search.indexer.drain()).toBe(library.documents.length);
    const rows = await demoDocuments();
    expect(rows.filter((row) => row.status !== "READY" || row.chunks === 0)).toEqual([]);
  }, 300_000);

  it("are found by keyword search on a demo topic, private ones only by their owner", async () => {
    const keyword = search.providers.find((provider) => provider.name === "documents.keyword")!;
    // Ada (Platform, Product) finds the Platform team's deadlock runbook.
    expect(await keywordFileNames(keyword, demoTenant("user_ada"), "deadlock detected in the order service")).toContain("postgres-deadlocks-runbook.md");
    // Alan's marathon plan is his alone.
    expect(await keywordFileNames(keyword, demoTenant("user_alan"), "marathon taper long run")).toContain("marathon-training-plan.pdf");
    expect(await keywordFileNames(keyword, demoTenant("user_ada"), "marathon taper long run")).not.toContain("marathon-training-plan.pdf");
    expect(await keywordFileNames(keyword, demoTenant("user_linus"), "marathon taper long run")).not.toContain("marathon-training-plan.pdf");
  }, 120_000);
});

describe("the demo organization's search history", () => {
  it("is two weeks of searches and clicks that the dashboard reads: some found nothing, most that found something had a hit opened near the top", async () => {
    expect(first.searches).toBeGreaterThan(200);
    const now = Date.now();
    const searches = await db.database.prisma.searchQuery.findMany({ where: { organizationId: DEMO_ORGANIZATION.id } });
    expect(searches).toHaveLength(first.searches);
    for (const row of searches) {
      expect(row.createdAt.getTime()).toBeLessThan(now);
      expect(row.createdAt.getTime()).toBeGreaterThan(now - 15 * 86_400_000);
    }
    const clicks = await db.database.prisma.searchClick.findMany({ where: { organizationId: DEMO_ORGANIZATION.id } });
    const byId = new Map(searches.map((row) => [row.id, row]));
    const conversations = new Set((await db.database.prisma.conversation.findMany({ where: { organizationId: DEMO_ORGANIZATION.id }, select: { id: true } })).map((row) => row.id));
    for (const click of clicks) {
      const searched = byId.get(click.searchId)!;
      expect(searched.results).toBeGreaterThanOrEqual(click.position);
      expect(conversations.has(click.itemId)).toBe(true);
      expect(click.searchedAt).toEqual(searched.createdAt);
    }
    const analytics = await searchAnalytics(db.database.prisma, { organizationId: DEMO_ORGANIZATION.id, userId: DEMO_USERS[0].id, teamIds: [], role: "admin" } as unknown as TenantContext, { from: new Date(now - 30 * 86_400_000), to: new Date(now) });
    expect(analytics.totalSearches).toBe(first.searches);
    expect(analytics.noResultSearches).toBeGreaterThan(0);
    expect(analytics.clickThroughRate).toBeGreaterThan(0.3);
    expect(analytics.clickThroughRate).toBeLessThan(0.8);
    expect(analytics.averageClickPosition).toBeLessThan(4);
    expect(analytics.searchesPerDay.length).toBeGreaterThanOrEqual(13);
    expect(analytics.providers.map((provider) => provider.provider).sort()).toEqual(["conversations.keyword", "documents.keyword", "documents.semantic"]);
  });

  it("is the same for the same seed, and another for another", () => {
    const queries = [{ query: "kafka rebalance", weight: 3, found: true, clickRate: 0.6 }, { query: "office wifi", weight: 1, found: false, clickRate: 0 }];
    const conversations = [{ id: "c1", title: "Kafka rebalance storm" }, { id: "c2", title: "Lunch plans" }];
    const now = new Date("2026-12-07T15:00:00Z");
    const once = demoSearchHistory(queries, conversations, 42, now);
    expect(demoSearchHistory(queries, conversations, 42, now)).toEqual(once);
    expect(demoSearchHistory(queries, conversations, 7, now)).not.toEqual(once);
    // A click opens a conversation whose title shares a word with the query.
    expect(new Set(once.clicks.map((click) => click.itemId))).toEqual(new Set(["c1"]));
  });
});

describe("seeding again", () => {
  it("changes nothing when the organization has its documents", async () => {
    const before = await demoDocuments();
    const again = await seedDemoOrganization(db.database, { conversations: DEMO_CONVERSATIONS });
    expect(again).toMatchObject({ seeded: false, conversations: DEMO_CONVERSATIONS, documents: library.documents.length });
    expect(await demoDocuments()).toEqual(before);
    expect(await handbooks()).toHaveLength(1);
  });

  it("gives an organization that has conversations but no documents its documents, in the handbook it already has", async () => {
    const [handbook] = await handbooks();
    const store = new DocumentStore(db.database.prisma);
    for (const row of await demoDocuments()) await store.delete(demoTenant(row.owner_id), row.id);
    expect(await demoDocuments()).toEqual([]);

    const refilled = await seedDemoOrganization(db.database, { conversations: DEMO_CONVERSATIONS });
    expect(refilled).toMatchObject({ seeded: true, conversations: DEMO_CONVERSATIONS, documents: library.documents.length });
    expect(await handbooks()).toEqual([handbook]);
    const rows = await demoDocuments();
    expect(rows.filter((row) => row.knowledge_base_id === handbook!.id)).toHaveLength(library.documents.filter((document) => document.inHandbook).length);
    const [count] = await sql<{ conversations: number }>(`SELECT count(*)::int AS conversations FROM conversations WHERE organization_id = $1`, DEMO_ORGANIZATION.id);
    expect(count).toEqual({ conversations: DEMO_CONVERSATIONS });
  }, 120_000);
});
