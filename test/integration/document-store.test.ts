/**
 * The document store against a real database: access scopes (owner, teammate, colleague,
 * another organization), content stored once per organization, chunks with BM25 postings kept
 * by triggers, deletion that takes chunks, postings and vectors with it, the indexing queue,
 * one statement per batch read, and the migration on a database that already has data.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { GraphQLError } from "graphql";
import { migrate, readMigrations } from "../../lib/database/migrate.js";
import { withTenantScope } from "../../lib/database/tenant-scope.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { ConversationStore } from "../../subgraphs/conversations/conversation-store.js";
import { DocumentStore, type NewChunk, type NewDocument } from "../../subgraphs/knowledge-base/document-store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

const tenant = (organizationId: string, userId: string, teamIds: string[] = []): TenantContext => ({ organizationId, userId, teamIds, role: "member" as const, userName: null, userEmail: null });
const ann = tenant("acme", "ann", ["platform-team"]);
const bob = tenant("acme", "bob", ["platform-team"]);
const cat = tenant("acme", "cat", ["sales"]);
const gus = tenant("globex", "gus", ["platform-team"]);

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function upload(fileName: string, text: string, teamId: string | null = null, extra: Partial<NewDocument> = {}): NewDocument {
  return { fileName, mediaType: "text/markdown", format: "markdown", category: null, sizeBytes: Buffer.byteLength(text), contentHash: sha256(text), teamId, text, ...extra };
}

function chunksOf(...texts: string[]): NewChunk[] {
  let offset = 0;
  return texts.map((text, chunkIndex) => {
    const chunk = { chunkIndex, text, headingPath: ["Guide", `Part ${chunkIndex + 1}`], page: null, startOffset: offset, endOffset: offset + text.length, tokenCount: text.split(/\s+/).length, contentHash: sha256(text) };
    offset += text.length;
    return chunk;
  });
}

async function codeOf(promise: Promise<unknown>): Promise<{ code: unknown; message: string }> {
  const error = (await promise.then(() => null, (e: unknown) => e)) as GraphQLError | null;
  if (!error) throw new Error("expected the call to fail");
  return { code: error.extensions?.code, message: error.message };
}

let db: TestDatabase;
let store: DocumentStore;
const sql = <T,>(text: string, ...values: unknown[]) => db.database.prisma.$queryRawUnsafe<T[]>(text, ...values);

beforeAll(async () => {
  db = await createTestDatabase();
  store = new DocumentStore(db.database.prisma);
});
afterAll(async () => db?.dispose());

describe("access scopes", () => {
  let shared: string;
  let privateToAnn: string;
  let globexDocument: string;

  beforeAll(async () => {
    shared = (await store.create(ann, upload("runbook.md", "# Runbook\nRestart the payment service.", "platform-team"))).document.id;
    privateToAnn = (await store.create(ann, upload("notes.md", "# Notes\nSalary review in March."))).document.id;
    globexDocument = (await store.create(gus, upload("merger.md", "# Merger\nGlobex buys Initech.", "platform-team"))).document.id;
  });

  it("shows the owner both of their documents, a teammate only the shared one, others nothing", async () => {
    const ids = [shared, privateToAnn, globexDocument];
    expect((await store.findByIds(ann, ids)).map((d) => d.id).sort()).toEqual([shared, privateToAnn].sort());
    expect((await store.findByIds(bob, ids)).map((d) => d.id)).toEqual([shared]);
    expect(await store.findByIds(cat, ids)).toEqual([]);
    // Same team name in another organization: still nothing of acme's.
    expect((await store.findByIds(gus, ids)).map((d) => d.id)).toEqual([globexDocument]);

    expect((await store.listPage(ann, 10, null)).map((d) => d.id)).toEqual([privateToAnn, shared]);
    expect((await store.listPage(bob, 10, null)).map((d) => d.id)).toEqual([shared]);
    expect(await store.listPage(cat, 10, null)).toEqual([]);
  });

  it("lets only the owner delete: a teammate of a shared document is FORBIDDEN, anyone else gets NOT_FOUND like a missing id", async () => {
    expect((await codeOf(store.delete(bob, shared))).code).toBe("FORBIDDEN");
    const missing = "01900000-0000-7000-8000-000000000000";
    const notFound = (id: string) => ({ code: "NOT_FOUND", message: `Document ${id} was not found` });
    expect(await codeOf(store.delete(bob, privateToAnn))).toEqual(notFound(privateToAnn));
    expect(await codeOf(store.delete(cat, shared))).toEqual(notFound(shared));
    expect(await codeOf(store.delete(gus, shared))).toEqual(notFound(shared));
    expect(await codeOf(store.delete(ann, missing))).toEqual(notFound(missing));
    expect(await store.findByIds(ann, [shared, privateToAnn])).toHaveLength(2);
  });

  it("refuses to share with a team the uploader is not in, and a category over 100 characters", async () => {
    const team = await codeOf(store.create(ann, upload("x.md", "x", "sales")));
    expect(team.code).toBe("BAD_USER_INPUT");
    expect(team.message).toMatch(/teamId: .*platform-team/);
    expect((await codeOf(store.create(ann, upload("x.md", "x", null, { category: "c".repeat(101) })))).message).toMatch(/category: must be at most 100/);
    expect((await codeOf(store.create(ann, upload("n".repeat(256), "x")))).message).toMatch(/fileName: must be at most 255/);
  });

  it("pages newest first with a cursor that never overlaps or skips", async () => {
    const dana = tenant("paging", "dana");
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await store.create(dana, upload(`doc-${i}.md`, `page text ${i}`))).document.id);
    const seen: string[] = [];
    let after: { createdAt: Date; id: string } | null = null;
    for (let page = 0; page < 5; page++) {
      const rows = await store.listPage(dana, 2, after);
      if (rows.length === 0) break;
      seen.push(...rows.map((d) => d.id));
      after = { createdAt: rows.at(-1)!.createdAt, id: rows.at(-1)!.id };
    }
    expect(seen).toEqual([...created].reverse());
  });
});

describe("content stored once", () => {
  it("stores identical content once per organization, never shared across organizations, and drops it with its last document", async () => {
    const text = "# Onboarding\nWelcome aboard.";
    const first = await store.create(ann, upload("onboarding.md", text));
    const second = await store.create(bob, upload("onboarding-copy.md", text));
    const elsewhere = await store.create(gus, upload("onboarding.md", text));
    expect([first.contentExisted, second.contentExisted, elsewhere.contentExisted]).toEqual([false, true, false]);
    const rows = async () => sql<{ organization_id: string }>(`SELECT organization_id FROM document_contents WHERE content_hash = $1 ORDER BY organization_id`, sha256(text));
    expect(await rows()).toEqual([{ organization_id: "acme" }, { organization_id: "globex" }]);
    expect(await store.contentText("acme", sha256(text))).toBe(text);

    await store.delete(ann, first.document.id);
    expect(await rows()).toHaveLength(2);
    await store.delete(bob, second.document.id);
    expect(await rows()).toEqual([{ organization_id: "globex" }]);
  });

  it("stores content once when the same file is uploaded several times at once", async () => {
    for (let round = 0; round < 5; round++) {
      const text = `# Release notes\nVersion ${round} is out.`;
      const uploads = await Promise.all([ann, bob, ann, bob, ann].map((who, i) => store.create(who, upload(`notes-${i}.md`, text))));
      expect(uploads.filter((created) => !created.contentExisted)).toHaveLength(1);
      expect(await sql(`SELECT organization_id FROM document_contents WHERE content_hash = $1`, sha256(text))).toEqual([{ organization_id: "acme" }]);
    }
  });
});

describe("chunks", () => {
  it("keeps BM25 postings for chunks, with tf, chunk length and the document's scope", async () => {
    const { document } = await store.create(ann, upload("deploy.md", "deploy", "platform-team"));
    await store.replaceChunks("acme", document.id, chunksOf("Deploy the deploy service with the deploy script.", "Roll back when the canary fails."));
    const postings = await sql<{ term: string; tf: number; chunk_length: number; owner_id: string; team_id: string | null }>(
      `SELECT term, tf, chunk_length, owner_id, team_id FROM document_keyword_postings WHERE document_id = $1::uuid AND term IN ('deploy', 'canari') ORDER BY term`,
      document.id,
    );
    // Chunk 1: "Guide Part 1" (guid, part, 1) + deploy ×3, servic, script = 8; chunk 2: guid, part, 2 + roll, back, canari, fail = 7.
    expect(postings).toEqual([
      { term: "canari", tf: 1, chunk_length: 7, owner_id: "ann", team_id: "platform-team" },
      { term: "deploy", tf: 3, chunk_length: 8, owner_id: "ann", team_id: "platform-team" },
    ]);
    // Sharing changes reach the postings (index-only keyword search filters by them).
    await db.database.prisma.$executeRawUnsafe(`UPDATE documents SET team_id = NULL WHERE id = $1::uuid`, document.id);
    expect(await sql(`SELECT DISTINCT team_id FROM document_keyword_postings WHERE document_id = $1::uuid`, document.id)).toEqual([{ team_id: null }]);
  });

  it("answers a scope-filtered keyword lookup from the postings' primary key alone (index-only)", async () => {
    const plan = await db.database.withSession(async (session) => {
      await session.exec("VACUUM ANALYZE document_keyword_postings");
      await session.exec("SET enable_seqscan = off");
      try {
        const rows = await session.query<Record<string, string>>(
          `EXPLAIN SELECT chunk_id, document_id, tf, chunk_length FROM document_keyword_postings
           WHERE organization_id = $1 AND term = ANY($2::text[]) AND (owner_id = $3 OR team_id = ANY($4::text[]))`,
          ["acme", ["deploy", "canari"], "bob", ["platform-team"]],
        );
        return rows.map((row) => Object.values(row)[0]).join("\n");
      } finally {
        await session.exec("RESET enable_seqscan");
      }
    });
    expect(plan).toMatch(/Index Only Scan using document_keyword_postings_pkey/);
  });

  it("reads chunks by ids in one statement, only those of documents the caller may read", async () => {
    const shared = (await store.create(ann, upload("a.md", "a", "platform-team"))).document;
    const mine = (await store.create(ann, upload("b.md", "b"))).document;
    const [sharedChunk] = await store.replaceChunks("acme", shared.id, chunksOf("Shared chunk about invoices."));
    const [privateChunk] = await store.replaceChunks("acme", mine.id, chunksOf("Private chunk about invoices."));
    db.database.statements.reset();
    const forBob = await store.findChunksByIds(bob, [sharedChunk!, privateChunk!]);
    expect(db.database.statements.count).toBe(1);
    expect(forBob.map((c) => c.id)).toEqual([sharedChunk]);
    expect((await store.findChunksByIds(ann, [sharedChunk!, privateChunk!])).map((c) => c.id).sort()).toEqual([sharedChunk, privateChunk].sort());
    expect(await store.findChunksByIds(gus, [sharedChunk!, privateChunk!])).toEqual([]);

    db.database.statements.reset();
    expect(await store.findByIds(ann, [shared.id, mine.id, "01900000-0000-7000-8000-000000000001"])).toHaveLength(2);
    expect(db.database.statements.count).toBe(1);
  });

  it("counts usage for a batch of chunk ids in one statement, each occurrence once, ignoring chunks the caller may not read", async () => {
    const shared = (await store.create(ann, upload("usage.md", "usage", "platform-team"))).document;
    const mine = (await store.create(ann, upload("usage-private.md", "usage private"))).document;
    const sharedChunks = await store.replaceChunks("acme", shared.id, chunksOf("one", "two"));
    const [privateChunk] = await store.replaceChunks("acme", mine.id, chunksOf("three"));
    db.database.statements.reset();
    await store.recordUsage(bob, [sharedChunks[0]!, sharedChunks[1]!, sharedChunks[0]!, privateChunk!]);
    expect(db.database.statements.count).toBe(1);
    const [after] = await store.findByIds(ann, [shared.id]);
    expect(after!.usageCount).toBe(3);
    expect(after!.lastUsedAt).not.toBeNull();
    expect((await store.findByIds(ann, [mine.id]))[0]!.usageCount).toBe(0);
  });

  it("deletes a document's chunks, postings and vectors at once, and nothing of anyone else's", async () => {
    const doomed = (await store.create(ann, upload("doomed.md", "doomed"))).document;
    const kept = (await store.create(ann, upload("kept.md", "kept"))).document;
    const doomedChunks = await store.replaceChunks("acme", doomed.id, chunksOf("Alpha bravo charlie.", "Delta echo foxtrot."));
    const [keptChunk] = await store.replaceChunks("acme", kept.id, chunksOf("Golf hotel india."));
    for (const [index, chunkId] of [...doomedChunks, keptChunk!].entries()) {
      await db.database.prisma.$executeRawUnsafe(
        `INSERT INTO embedding_chunks (organization_id, entity_type, entity_id, chunk_index, model, content_hash, embedding) VALUES ('acme', 'document_chunk', $1::uuid, 0, 'test-model', $2, '[1,0,0]')`,
        chunkId,
        `hash-${index}`,
      );
    }
    const counts = async (documentId: string, chunkIds: string[]) => {
      const [row] = await sql<{ chunks: number; postings: number; vectors: number; jobs: number }>(
        `SELECT (SELECT count(*)::int FROM document_chunks WHERE document_id = $1::uuid) AS chunks,
                (SELECT count(*)::int FROM document_keyword_postings WHERE document_id = $1::uuid) AS postings,
                (SELECT count(*)::int FROM embedding_chunks WHERE entity_type = 'document_chunk' AND entity_id = ANY($2::uuid[])) AS vectors,
                (SELECT count(*)::int FROM document_index_jobs WHERE document_id = $1::uuid) AS jobs`,
        documentId,
        chunkIds,
      );
      return row!;
    };
    expect(await counts(doomed.id, doomedChunks)).toEqual({ chunks: 2, postings: expect.any(Number), vectors: 2, jobs: 1 });
    expect((await counts(doomed.id, doomedChunks)).postings).toBeGreaterThan(0);

    db.database.statements.reset();
    await store.delete(ann, doomed.id);
    expect(await counts(doomed.id, doomedChunks)).toEqual({ chunks: 0, postings: 0, vectors: 0, jobs: 0 });
    expect(await counts(kept.id, [keptChunk!])).toEqual({ chunks: 1, postings: expect.any(Number), vectors: 1, jobs: 1 });
  });

  it("replacing chunks removes the old ones' vectors too", async () => {
    const doc = (await store.create(ann, upload("replace.md", "replace"))).document;
    const [old] = await store.replaceChunks("acme", doc.id, chunksOf("Old text."));
    await db.database.prisma.$executeRawUnsafe(
      `INSERT INTO embedding_chunks (organization_id, entity_type, entity_id, chunk_index, model, content_hash, embedding) VALUES ('acme', 'document_chunk', $1::uuid, 0, 'test-model', 'h', '[1,0,0]')`,
      old,
    );
    await store.replaceChunks("acme", doc.id, chunksOf("New text."));
    expect(await sql(`SELECT 1 FROM embedding_chunks WHERE entity_id = $1::uuid`, old)).toEqual([]);
    expect(await sql(`SELECT term FROM document_keyword_postings WHERE document_id = $1::uuid AND term = 'old'`, doc.id)).toEqual([]);
  });
});

describe("indexing queue and progress", () => {
  it("enqueues a new document in the writer's transaction, and again when it is set back to PENDING", async () => {
    const { document } = await store.create(cat, upload("queue.md", "queue"));
    const jobs = () => sql<{ organization_id: string; attempts: number }>(`SELECT organization_id, attempts FROM document_index_jobs WHERE document_id = $1::uuid`, document.id);
    expect(await jobs()).toEqual([{ organization_id: "acme", attempts: 0 }]);
    await db.database.prisma.$executeRawUnsafe(`DELETE FROM document_index_jobs WHERE document_id = $1::uuid`, document.id);

    const indexing = await store.recordProgress("acme", document.id, { status: "INDEXING", chunksTotal: 4, chunksIndexed: 1 });
    expect([indexing.status, indexing.chunksIndexed, indexing.chunksTotal]).toEqual(["INDEXING", 1, 4]);
    const failed = await store.recordProgress("acme", document.id, { status: "FAILED", failureReason: "The PDF has no text layer." });
    expect([failed.status, failed.failureReason]).toEqual(["FAILED", "The PDF has no text layer."]);
    expect(await jobs()).toEqual([]);
    const retried = await store.recordProgress("acme", document.id, { status: "PENDING", chunksIndexed: 0 });
    expect([retried.status, retried.failureReason]).toEqual(["PENDING", null]);
    expect(await jobs()).toHaveLength(1);
    // Another organization's scope cannot touch it.
    expect((await codeOf(store.recordProgress("globex", document.id, { status: "READY" }))).code).toBe("NOT_FOUND");
  });
});

describe("row-level security", () => {
  it("hides every knowledge-base table's rows of other organizations from a statement without a filter", async () => {
    for (const table of ["documents", "document_contents", "document_chunks", "document_keyword_postings", "document_index_jobs"]) {
      const organizations = await withTenantScope(db.database.prisma, "globex", (tx) => tx.$queryRawUnsafe<{ organization_id: string }[]>(`SELECT DISTINCT organization_id FROM ${table}`));
      // globex has documents, contents and a queue entry; acme has rows in every table.
      expect({ table, organizations: organizations.map((row) => row.organization_id).filter((id) => id !== "globex") }).toEqual({ table, organizations: [] });
    }
    await expect(
      withTenantScope(db.database.prisma, "globex", (tx) => tx.$executeRawUnsafe(`INSERT INTO document_contents (organization_id, content_hash, text) VALUES ('acme', $1, 'forged')`, sha256("forged"))),
    ).rejects.toThrow(/row-level security/);
  });
});

describe("the knowledge_base migration", () => {
  it("applies on a database that already has organizations, conversations and postings, leaving them intact", async () => {
    const older = await createTestDatabase({ migrate: false });
    try {
      const migrations = readMigrations();
      const at = migrations.findIndex((m) => m.name.endsWith("_knowledge_base"));
      expect(at).toBeGreaterThan(0);
      await migrate(older.database, migrations.slice(0, at));
      const conversations = new ConversationStore(older.database.prisma);
      const existing = await conversations.create(ann, "Deadlock in the order service", [{ role: "user", content: "The order service deadlocks.", tokenCount: 5 }]);
      const postingsBefore = await older.database.prisma.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM keyword_postings`);

      expect((await migrate(older.database, migrations)).applied).toEqual([migrations[at]!.name, ...migrations.slice(at + 1).map((m) => m.name)]);
      expect((await conversations.findByIds(ann, [existing.id])).map((c) => c.title)).toEqual(["Deadlock in the order service"]);
      expect(await older.database.prisma.$queryRawUnsafe(`SELECT count(*)::int AS n FROM keyword_postings`)).toEqual(postingsBefore);
      expect(await older.database.prisma.$queryRawUnsafe(`SELECT id FROM organizations WHERE id = '__platform__'`)).toEqual([{ id: "__platform__" }]);
      const { document } = await new DocumentStore(older.database.prisma).create(ann, upload("after-upgrade.md", "after the upgrade"));
      expect(document.status).toBe("PENDING");
    } finally {
      await older.dispose();
    }
  });
});
