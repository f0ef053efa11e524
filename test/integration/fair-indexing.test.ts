/**
 * Indexing that no organization can starve (issue 41): both indexing queues are claimed in turns
 * across organizations (lib/retrieval/fair-claim.ts), so an organization that queued one item
 * has it in the next batch whatever another organization has queued before it. Counted, not
 * timed: what the first batch after the flood holds. On PGlite, and on PostgreSQL in CI.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { DEFAULT_DOCUMENT_CHUNKING } from "../../lib/documents/chunk-document.js";
import { silentLogger } from "../../lib/logger.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { PgVectorStore } from "../../lib/retrieval/vector-stores/pgvector.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { ConversationIndexer } from "../../subgraphs/conversations/search/conversation-indexer.js";
import { DocumentStore } from "../../subgraphs/knowledge-base/document-store.js";
import { DocumentIndexer } from "../../subgraphs/knowledge-base/search/document-indexer.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

const embedder = new FeatureHashingEmbedder();
let db: TestDatabase;

const member = (organizationId: string, userId: string): TenantContext => ({ organizationId, userId, teamIds: [], role: "member", userName: null, userEmail: null });
const flooder = member("org-flood", "fay");
const quiet = member("org-quiet", "quinn");

beforeAll(async () => {
  db = await createTestDatabase();
  await new PgVectorStore(db.database).ensureReady(embedder.model, embedder.dimensions);
  for (const who of [flooder, quiet]) {
    await db.database.prisma.$executeRaw`INSERT INTO organizations (id) VALUES (${who.organizationId})`;
    await db.database.prisma.$executeRaw`INSERT INTO users (organization_id, id) VALUES (${who.organizationId}, ${who.userId})`;
  }
});

afterAll(async () => {
  await db?.dispose();
});

describe("claims in turns across organizations", () => {
  it("indexes another organization's one conversation in the first batch after 40 of one organization's", async () => {
    const sql = db.database.prisma;
    await sql.$executeRaw`
      INSERT INTO conversations (id, organization_id, user_id, title)
      SELECT gen_random_uuid(), ${flooder.organizationId}, ${flooder.userId}, 'Flood ' || n FROM generate_series(1, 40) AS n`;
    const [{ id }] = (await sql.$queryRaw<{ id: string }[]>`
      INSERT INTO conversations (id, organization_id, user_id, title) VALUES (gen_random_uuid(), ${quiet.organizationId}, ${quiet.userId}, 'The quiet one')
      RETURNING id::text AS id`) as [{ id: string }];
    const indexer = new ConversationIndexer(db.database, embedder, new PgVectorStore(db.database), silentLogger, { batchSize: 16 });

    expect(await indexer.runOnce()).toBe(16);
    // Oldest first, it would have waited for three batches of the flood.
    expect(await sql.$queryRaw<unknown[]>`SELECT 1 FROM search_index_jobs WHERE conversation_id = ${id}::uuid`).toEqual([]);
    const [{ left }] = (await sql.$queryRaw<{ left: number }[]>`SELECT count(*)::int AS left FROM search_index_jobs WHERE organization_id = ${flooder.organizationId}`) as [{ left: number }];
    expect(left).toBe(40 - 15);
    expect(await indexer.drain()).toBe(25);
  });

  it("indexes another organization's one document in the first batch after 12 of one organization's", async () => {
    const documents = new DocumentStore(db.database.prisma);
    const upload = async (who: TenantContext, text: string) => {
      const contentHash = createHash("sha256").update(text).digest("hex");
      const { document } = await documents.create(who, { fileName: `${contentHash.slice(0, 8)}.txt`, mediaType: "text/plain", format: "text", category: null, sizeBytes: Buffer.byteLength(text), contentHash, teamId: null });
      await documents.saveContent(who.organizationId, contentHash, text);
      return document.id;
    };
    for (let i = 0; i < 12; i += 1) await upload(flooder, `Flood document ${i}: a long report nobody asked for.`);
    const mine = await upload(quiet, "One line of my own.");
    const indexer = new DocumentIndexer(db.database, embedder, new PgVectorStore(db.database), silentLogger, { batchSize: 4, chunking: DEFAULT_DOCUMENT_CHUNKING });

    expect(await indexer.runOnce()).toBe(4);
    const statuses = await db.database.prisma.$queryRaw<{ organization_id: string; status: string; count: number }[]>`
      SELECT organization_id, status::text AS status, count(*)::int AS count FROM documents GROUP BY 1, 2 ORDER BY 1, 2`;
    expect(statuses).toEqual([
      { organization_id: flooder.organizationId, status: "PENDING", count: 9 },
      { organization_id: flooder.organizationId, status: "READY", count: 3 },
      { organization_id: quiet.organizationId, status: "READY", count: 1 },
    ]);
    expect((await documents.findByIds(quiet, [mine]))[0]?.status).toBe("READY");
  });
});
