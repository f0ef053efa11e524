/**
 * The document benchmarks' fixtures, against a real database: every generated format reads back
 * through the product's extractText to the document's words, and the bulk loader the
 * mixed-search benchmark uses builds exactly what the upload path and the document indexer
 * build for the same files (same chunks, same BM25 postings, one vector per chunk, READY, no job
 * left queued), so its search latencies are those of a really indexed corpus.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { extractText } from "../../lib/documents/extract-text.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { DocumentStore } from "../../subgraphs/knowledge-base/document-store.js";
import { uploadDocument } from "../../subgraphs/knowledge-base/upload.js";
import { benchDocumentSearch, benchDocuments, DOCUMENT_FORMATS, FILE_EXTENSIONS, loadSearchableDocuments, markdownFile, MEDIA_TYPES, renderFile } from "../../bench/documents.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

let db: TestDatabase;
const embedder = new FeatureHashingEmbedder();
const tenant = (organizationId: string): TenantContext => ({ organizationId, userId: "uploader", teamIds: [], role: "member" as const, userName: null, userEmail: null });
const sql = <T,>(text: string, ...values: unknown[]) => db.database.prisma.$queryRawUnsafe<T[]>(text, ...values);

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.dispose();
  await closeWorkerPools();
});

describe("generated benchmark documents", () => {
  it("read back through extractText in every format, title and body words included", async () => {
    const [document] = [...benchDocuments(1)];
    const firstParagraph = document!.sections[0]!.paragraphs[0]!;
    const someWords = firstParagraph.split(" ").filter((word) => /^[a-z]{5,}$/i.test(word)).slice(0, 3);
    expect(someWords.length).toBeGreaterThan(0);
    for (const format of DOCUMENT_FORMATS) {
      const bytes = await renderFile(format, document!);
      const extracted = await extractText({ fileName: `bench.${FILE_EXTENSIONS[format]}`, mediaType: MEDIA_TYPES[format], bytes });
      expect(extracted.format).toBe(format);
      const words = extracted.text.replace(/\s+/g, " ");
      expect(words).toContain(document!.title.replace(/[^\x20-\x7e]/g, "").split(" ")[0]!);
      for (const word of someWords) expect(words).toContain(word);
    }
  }, 60_000);

  it("are deterministic: the same count gives the same documents", () => {
    expect([...benchDocuments(3)].map(markdownFile)).toEqual([...benchDocuments(3)].map(markdownFile));
  });
});

describe("loadSearchableDocuments (the mixed-search benchmark's bulk loader)", () => {
  it("builds the same chunks, postings and vectors as uploadDocument followed by the document indexer", async () => {
    const count = 12;
    // The product's path: each file uploaded, then the indexer drained.
    const uploaded = tenant("org-uploaded");
    const store = new DocumentStore(db.database.prisma);
    for (const document of benchDocuments(count, { maxSections: 2 })) {
      await uploadDocument(store, uploaded, { fileName: "note.md", mediaType: "text/markdown", contentBase64: Buffer.from(markdownFile(document)).toString("base64") }, 1_000_000);
    }
    const search = await benchDocumentSearch(db.database, embedder);
    expect(await search.indexer.drain()).toBe(count);

    // The benchmark's bulk path, into another organization.
    const bulk = tenant("org-bulk");
    await db.database.prisma.organization.create({ data: { id: bulk.organizationId } });
    await db.database.prisma.user.create({ data: { organizationId: bulk.organizationId, id: bulk.userId } });
    const stats = await loadSearchableDocuments(db.database, bulk, count, embedder, () => {});
    expect(stats).toMatchObject({ documents: count, ready: count });

    const chunks = (organizationId: string) =>
      sql<{ text: string; heading_path: string[]; token_count: number; keyword_length: number }>(
        `SELECT c.text, c.heading_path, c.token_count, c.keyword_length FROM document_chunks c JOIN document_contents t ON t.organization_id = c.organization_id
         JOIN documents d ON d.id = c.document_id AND t.content_hash = d.content_hash WHERE c.organization_id = $1 ORDER BY t.text, c.chunk_index`,
        organizationId,
      );
    const fromUpload = await chunks(uploaded.organizationId);
    expect(fromUpload.length).toBeGreaterThan(count);
    expect(await chunks(bulk.organizationId)).toEqual(fromUpload);
    expect(stats.chunks).toBe(fromUpload.length);

    const totals = (organizationId: string) =>
      sql<{ postings: number; vectors: number; ready: number; jobs: number }>(
        `SELECT (SELECT count(*)::int FROM document_keyword_postings WHERE organization_id = $1) AS postings,
                (SELECT count(*)::int FROM embedding_chunks WHERE organization_id = $1 AND entity_type = 'document_chunk') AS vectors,
                (SELECT count(*)::int FROM documents WHERE organization_id = $1 AND status = 'READY') AS ready,
                (SELECT count(*)::int FROM document_index_jobs WHERE organization_id = $1) AS jobs`,
        organizationId,
      );
    const [viaUpload] = await totals(uploaded.organizationId);
    const [viaBulk] = await totals(bulk.organizationId);
    expect(viaBulk).toEqual(viaUpload);
    expect(viaBulk).toMatchObject({ vectors: fromUpload.length, ready: count, jobs: 0 });

    // And the documents provider finds the bulk-loaded documents for their owner.
    const keyword = search.providers.find((provider) => provider.name === "documents.keyword")!;
    const [first] = [...benchDocuments(1, { maxSections: 2 })];
    const hits = await keyword.search({ tenant: bulk, query: first!.title, window: 5, signal: new AbortController().signal, timeoutMs: 30_000 });
    expect(hits.length).toBeGreaterThan(0);
  }, 120_000);
});
