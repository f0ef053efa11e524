/**
 * What the keyword providers read of an organization before scoring, and what the documents
 * providers skip for an organization without documents, counted at the client (the database
 * handle's statement counter, fed by Prisma's query events and the tenant-read pool):
 * - when a large organization's collection statistics expire under load, the searches in
 *   flight share one statistics read (documents.keyword and conversations.keyword) instead of
 *   each sending its own; the TTL runs on a clock the test moves. (A stampede needs concurrent
 *   reads: on PostgreSQL the tenant-read pool's connections; PGlite's one connection runs the
 *   searches' scope transactions one at a time, so there the count is 1 either way);
 * - an organization with no document chunk costs the documents providers nothing on a second
 *   search within the window (no statement, no query embedding), and a document the indexer of
 *   this process has just made READY is found by the very next search.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import type { ProviderHit, SearchProvider } from "../../lib/retrieval/search-provider.js";
import { PgVectorStore } from "../../lib/retrieval/vector-stores/pgvector.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { ConversationsKeywordProvider } from "../../subgraphs/conversations/search/keyword-provider.js";
import { DocumentStore } from "../../subgraphs/knowledge-base/document-store.js";
import { documentSearch, type DocumentSearch } from "../../subgraphs/knowledge-base/search.js";
import { DocumentCollections } from "../../subgraphs/knowledge-base/search/document-collections.js";
import { DocumentsKeywordProvider } from "../../subgraphs/knowledge-base/search/keyword-provider.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { recordingLogger } from "../support/recording-logger.js";

const tenant = (organizationId: string, userId: string): TenantContext => ({ organizationId, userId, teamIds: [], role: "member" as const, userName: null, userEmail: null });
/** Above both providers' threshold for keeping statistics (5,000). */
const LARGE = 5_000;
const initech = tenant("initech", "ines");
const newcomer = tenant("newcomer", "nora");

/** A real embedder that counts the calls searches make of it. */
class CountingEmbedder extends FeatureHashingEmbedder {
  calls = 0;
  override async embed(texts: string[]): Promise<number[][]> {
    this.calls += 1;
    return super.embed(texts);
  }
}

let db: TestDatabase;
let store: DocumentStore;
const sql = (text: string, ...values: unknown[]) => db.database.prisma.$executeRawUnsafe(text, ...values);
const logged = (fragment: string) => db.database.statements.log.filter((statement) => statement.includes(fragment)).length;
const find = (provider: SearchProvider, who: TenantContext, query: string): Promise<ProviderHit[]> =>
  provider.search({ tenant: who, query, window: 10, signal: new AbortController().signal, timeoutMs: 30_000 });

/** Starts above 0: lru-cache takes an entry stored at time 0 for one without a TTL. */
const clock = () => {
  let now = 1_000;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
};

async function upload(owner: TenantContext, fileName: string, text: string): Promise<string> {
  const contentHash = createHash("sha256").update(text).digest("hex");
  const { document } = await store.create(owner, { fileName, mediaType: "text/markdown", format: "markdown", category: null, sizeBytes: Buffer.byteLength(text), contentHash, teamId: null });
  await store.saveContent(owner.organizationId, contentHash, text);
  return document.id;
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = new DocumentStore(db.database.prisma);
  // A large organization, written in bulk as the owner: one READY document of LARGE chunks, and
  // LARGE conversations (their keyword_documents rows come from the search triggers).
  const documentId = await upload(initech, "ledger.md", "# Ledger\n\nThe ledger daemon reconciles payments.");
  await sql(
    `INSERT INTO document_chunks (id, organization_id, document_id, chunk_index, text, start_offset, end_offset, token_count, content_hash)
     SELECT gen_random_uuid(), $1, $2::uuid, i, 'ledger reconciliation note ' || i, 0, 10, 4, md5(i::text) FROM generate_series(0, $3::int - 1) AS i`,
    initech.organizationId, documentId, LARGE);
  await sql(`UPDATE documents SET status = 'READY' WHERE id = $1::uuid`, documentId);
  await sql(`DELETE FROM document_index_jobs WHERE document_id = $1::uuid`, documentId);
  await sql(
    `INSERT INTO conversations (id, organization_id, user_id, title) SELECT gen_random_uuid(), $1, $2, 'ledger incident ' || i FROM generate_series(1, $3::int) AS i`,
    initech.organizationId, initech.userId, LARGE);
  const [counts] = await db.database.prisma.$queryRawUnsafe<{ conversations: number }[]>(`SELECT count(*)::int AS conversations FROM keyword_documents WHERE organization_id = $1`, initech.organizationId);
  expect(counts!.conversations).toBe(LARGE);
}, 120_000);

afterAll(async () => {
  await db?.dispose();
  await closeWorkerPools();
});

describe("collection statistics of a large organization", () => {
  it("documents.keyword: 30 searches in flight when the statistics expire send one statistics read", async () => {
    const time = clock();
    const keyword = new DocumentsKeywordProvider(db.database.prisma, new DocumentCollections({ clock: time }));
    const statisticsReads = () => logged("avg(keyword_length)");
    db.database.statements.reset();
    expect((await find(keyword, initech, "ledger reconciliation")).length).toBeGreaterThan(0);
    expect(statisticsReads()).toBe(1);
    // Kept; and these leave the tenant-read pool with warm connections pointed at initech, so that
    // after expiry many searches reach their statistics read at once (as under load).
    await Promise.all(Array.from({ length: 10 }, () => find(keyword, initech, "ledger")));
    expect(statisticsReads()).toBe(1);
    time.advance(10_001);
    db.database.statements.reset();
    const answers = await Promise.all(Array.from({ length: 30 }, () => find(keyword, initech, "ledger reconciliation")));
    expect(answers.every((hits) => hits.length === 10)).toBe(true);
    expect(statisticsReads()).toBe(1);
  });

  it("conversations.keyword: 30 searches in flight when the statistics expire send one statistics read", async () => {
    const time = clock();
    const keyword = new ConversationsKeywordProvider(db.database.prisma, { clock: time });
    const statisticsReads = () => logged("FROM keyword_documents WHERE organization_id");
    await Promise.all(Array.from({ length: 10 }, () => find(keyword, initech, "ledger incident")));
    time.advance(10_001);
    db.database.statements.reset();
    const answers = await Promise.all(Array.from({ length: 30 }, () => find(keyword, initech, "ledger incident")));
    expect(answers.every((hits) => hits.length === 10)).toBe(true);
    expect(statisticsReads()).toBe(1);
  });
});

describe("an organization without documents", () => {
  let search: DocumentSearch;
  const embedder = new CountingEmbedder();
  const unified = (query: string) => Promise.all(search.providers.map((provider) => find(provider, newcomer, query)));

  beforeAll(async () => {
    const vectorStore = new PgVectorStore(db.database);
    await vectorStore.ensureReady(embedder.model, embedder.dimensions);
    search = documentSearch({ database: db.database, embedder, vectorStore, logger: recordingLogger() });
  });

  it("costs the documents providers no statement and no embedding within the window, and finds a document the moment it is READY", async () => {
    expect(await unified("payments runbook")).toEqual([[], []]);
    db.database.statements.reset();
    embedder.calls = 0;
    // Another query: the semantic provider keeps query vectors by text.
    expect(await unified("ledger daemon restart")).toEqual([[], []]);
    expect(db.database.statements.count + db.database.statements.overhead).toBe(0);
    expect(embedder.calls).toBe(0);

    await upload(newcomer, "runbook.md", "# Payments runbook\n\nRestart the ledger daemon with systemctl.");
    expect(await search.indexer.drain()).toBe(1);
    const [keywordHits, semanticHits] = await unified("ledger daemon restart");
    expect(keywordHits).toHaveLength(1);
    expect(semanticHits).toHaveLength(1);
  });
});
