/**
 * A document's structure survives from extraction to its chunks, against a real database:
 * a PDF uploaded through the upload path gives chunks that know their page, a DOCX gives
 * chunks under its headings, and a row stored before the structure column (or with a
 * structure that does not fit its text) still indexes, recovering what the text itself says.
 * Also: the document indexer writes a slice's vectors in one vector-store call, counted in
 * SQL statements per chunk.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { createHash } from "node:crypto";
import { extractText } from "../../lib/documents/extract-text.js";
import { jsonbTextBytes, MAX_STRUCTURE_BYTES, readStructure, storableStructure } from "../../lib/documents/document-structure.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { PgVectorStore } from "../../lib/retrieval/vector-stores/pgvector.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { DocumentStore, type DocumentFormat } from "../../subgraphs/knowledge-base/document-store.js";
import { documentSearch, type DocumentSearch } from "../../subgraphs/knowledge-base/search.js";
import { uploadDocument } from "../../subgraphs/knowledge-base/upload.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { docxGuide, pdfWithPages } from "../support/document-fixtures.js";
import { recordingLogger } from "../support/recording-logger.js";

const ann: TenantContext = { organizationId: "acme", userId: "ann", teamIds: [], role: "member", userName: null, userEmail: null };
const sha256 = (text: string | Uint8Array) => createHash("sha256").update(text).digest("hex");
const MAX_BYTES = 10 * 1024 * 1024;

let db: TestDatabase;
let store: DocumentStore;
let search: DocumentSearch;
const embedder = new FeatureHashingEmbedder();
const logger = recordingLogger();
const sql = <T,>(text: string, ...values: unknown[]) => db.database.prisma.$queryRawUnsafe<T[]>(text, ...values);

interface ChunkRow {
  text: string;
  heading_path: string[];
  page: number | null;
}

async function chunksOf(documentId: string): Promise<ChunkRow[]> {
  return sql<ChunkRow>(`SELECT text, heading_path, page FROM document_chunks WHERE document_id = $1::uuid ORDER BY chunk_index`, documentId);
}

async function uploadFile(fileName: string, bytes: Uint8Array): Promise<string> {
  const document = await uploadDocument(store, ann, { fileName, contentBase64: Buffer.from(bytes).toString("base64") }, MAX_BYTES);
  return document.id;
}

/** What the upload path wrote before the structure column existed: the text alone. */
async function uploadTextOnly(fileName: string, format: DocumentFormat, text: string): Promise<string> {
  const contentHash = sha256(`${fileName}\n${text}`);
  const { document } = await store.create(ann, { fileName, mediaType: "application/octet-stream", format, category: null, sizeBytes: text.length, contentHash, teamId: null });
  await sql(`INSERT INTO document_contents (organization_id, content_hash, text) VALUES ($1, $2, $3)`, ann.organizationId, contentHash, text);
  return document.id;
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = new DocumentStore(db.database.prisma);
  await new PgVectorStore(db.database).ensureReady(embedder.model, embedder.dimensions);
  // Small chunks, so that each page's sentences land in chunks of their own.
  search = documentSearch({
    database: db.database,
    embedder,
    vectorStore: new PgVectorStore(db.database),
    logger,
    indexer: { chunking: { maxTokens: 24, overlapTokens: 0 } },
  });
});
afterAll(async () => {
  await search?.indexer.stop();
  await db?.dispose();
  await closeWorkerPools();
});

describe("structure from extraction to chunks", () => {
  it("gives a 3-page PDF's chunks their page numbers 1, 2 and 3", async () => {
    const pdf = await pdfWithPages([
      ["Apples grow in the northern orchard.", "The harvest of apples starts in September."],
      ["Bananas ripen in the southern greenhouse.", "Bananas are shipped every Tuesday morning."],
      ["Cherries are picked by hand in June.", "Cherries bruise easily, so pack them loosely."],
    ]);
    const id = await uploadFile("fruit.pdf", pdf);
    expect(await search.indexer.drain()).toBe(1);
    const chunks = await chunksOf(id);
    expect([...new Set(chunks.map((chunk) => chunk.page))].sort()).toEqual([1, 2, 3]);
    for (const [word, page] of [["Apples", 1], ["Bananas", 2], ["Cherries", 3]] as const) {
      const onPage = chunks.filter((chunk) => chunk.text.includes(word));
      expect(onPage.length).toBeGreaterThan(0);
      expect(onPage.every((chunk) => chunk.page === page)).toBe(true);
    }
  });

  it("gives a DOCX's chunks the heading paths of its Word heading styles", async () => {
    const id = await uploadFile("guide.docx", await docxGuide());
    expect(await search.indexer.drain()).toBe(1);
    const chunks = await chunksOf(id);
    const pathOf = (words: string) => chunks.find((chunk) => chunk.text.includes(words))?.heading_path;
    expect(pathOf("Download the package")).toEqual(["Install"]);
    expect(pathOf("Use apt to install it")).toEqual(["Install", "On Linux"]);
    expect(pathOf("Edit the settings file")).toEqual(["Configure"]);
    expect(chunks.every((chunk) => chunk.page === null)).toBe(true);
  });

  it("still indexes rows stored without a structure: Markdown headings from the text, other formats as one section", async () => {
    const markdown = await uploadTextOnly("old.md", "markdown", "# Ledger\n\nRestart the ledger daemon.\n\n## Keys\n\nRotate the keys every quarter.\n");
    const pdfText = await uploadTextOnly("old.pdf", "pdf", "Page one of an old upload.\n\nPage two of an old upload.");
    expect(await search.indexer.drain()).toBe(2);
    expect((await chunksOf(markdown)).map((chunk) => chunk.heading_path)).toEqual([["Ledger"], ["Ledger", "Keys"]]);
    const old = await chunksOf(pdfText);
    expect(old.length).toBeGreaterThan(0);
    expect(old.every((chunk) => chunk.page === null && chunk.heading_path.length === 0)).toBe(true);
    expect((await store.findByIds(ann, [markdown, pdfText])).map((document) => document.status)).toEqual(["READY", "READY"]);
  });

  it("gives an old row its structure when the same file is uploaded again, without storing the text twice", async () => {
    const pdf = await pdfWithPages([["Plums are dried into prunes."], ["Prunes keep for a year."]]);
    const { text } = await extractText({ fileName: "plums.pdf", bytes: pdf });
    const contentHash = sha256(pdf);
    await store.create(ann, { fileName: "plums-old.pdf", mediaType: "application/pdf", format: "pdf", category: null, sizeBytes: pdf.length, contentHash, teamId: null });
    await sql(`INSERT INTO document_contents (organization_id, content_hash, text) VALUES ($1, $2, $3)`, ann.organizationId, contentHash, text);
    const again = await uploadFile("plums.pdf", pdf);
    expect((await store.content(ann.organizationId, contentHash))!.structure!.pages.map((page) => page.pageNumber)).toEqual([1, 2]);
    const [rows] = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM document_contents WHERE content_hash = $1`, contentHash);
    expect(rows!.n).toBe(1);
    expect(await search.indexer.drain()).toBe(2);
    // Two short sentences make one chunk, which starts on page 1.
    expect((await chunksOf(again)).map((chunk) => chunk.page)).toEqual([1]);
  });

  it("ignores a stored structure that does not describe its text, and indexes as if none were stored", async () => {
    const text = "# Orchard\n\nPears and plums grow here.";
    const contentHash = sha256(text);
    const { document } = await store.create(ann, { fileName: "odd.md", mediaType: "text/markdown", format: "markdown", category: null, sizeBytes: text.length, contentHash, teamId: null });
    const wrong = { version: 1, sections: [{ headingPath: ["Far away"], start: 0, end: text.length + 500 }], pages: [] };
    await sql(`INSERT INTO document_contents (organization_id, content_hash, text, structure) VALUES ($1, $2, $3, $4::jsonb)`, ann.organizationId, contentHash, text, JSON.stringify(wrong));
    expect(await search.indexer.drain()).toBe(1);
    expect((await chunksOf(document.id)).map((chunk) => chunk.heading_path)).toEqual([["Orchard"]]);
  });
});

describe("statements per chunk", () => {
  it("writes a slice's vectors in one transaction: two vector statements per slice of 8, not two per chunk", async () => {
    const paragraphs = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} talks about topic number ${i}, with enough words to be a chunk of its own here.`);
    const id = await uploadFile("many.md", new TextEncoder().encode(`# Many\n\n${paragraphs.join("\n\n")}\n`));
    db.database.statements.reset();
    expect(await search.indexer.drain()).toBe(1);
    const { count, overhead, log } = db.database.statements;
    const chunks = (await chunksOf(id)).length;
    expect(chunks).toBeGreaterThanOrEqual(32);
    const slices = Math.ceil(chunks / 8);
    const vectorWrites = log.filter((statement) => /(DELETE FROM|INSERT INTO) embedding_chunks/.test(statement)).length;
    expect(vectorWrites).toBe(2 * slices);
    // 41 chunks measured 2.61 data and 2.59 transaction-control statements per chunk with a
    // transaction per chunk's vector, 0.90 and 0.88 with one per slice.
    expect(count / chunks).toBeLessThan(1);
    expect(overhead / chunks).toBeLessThan(1);
  });
});

describe("PgVectorStore.replaceEntities", () => {
  it("replaces exactly the named entities' vectors of one model, in one transaction, and refuses an entity named twice", async () => {
    const vectors = new PgVectorStore(db.database);
    const [a, b, c] = ["0190b0c0-0000-7000-8000-00000000000a", "0190b0c0-0000-7000-8000-00000000000b", "0190b0c0-0000-7000-8000-00000000000c"];
    const unit = (i: number) => Array.from({ length: embedder.dimensions }, (_, d) => (d === i ? 1 : 0));
    const chunk = (i: number, hash: string) => ({ chunkIndex: i, contentHash: hash, vector: unit(i) });
    await vectors.replaceEntities("acme", "document_chunk", embedder.model, [{ entityId: a, chunks: [chunk(0, "a0")] }, { entityId: c, chunks: [chunk(0, "c0")] }]);
    await vectors.replaceEntities("acme", "document_chunk", embedder.model, [{ entityId: a, chunks: [chunk(0, "a1"), chunk(1, "a2")] }, { entityId: b, chunks: [chunk(0, "b0")] }]);
    const stored = await sql<{ entity_id: string; content_hash: string }>(
      `SELECT entity_id::text AS entity_id, content_hash FROM embedding_chunks WHERE entity_id = ANY($1::uuid[]) ORDER BY entity_id, chunk_index`, [a, b, c]);
    expect(stored.map((row) => row.content_hash)).toEqual(["a1", "a2", "b0", "c0"]);
    await expect(vectors.replaceEntities("acme", "document_chunk", embedder.model, [{ entityId: b, chunks: [] }, { entityId: b, chunks: [chunk(0, "x")] }])).rejects.toThrow(/appears twice/);
    // An empty list of chunks removes the entity, as with replaceEntity.
    await vectors.replaceEntities("acme", "document_chunk", embedder.model, [{ entityId: a, chunks: [] }, { entityId: b, chunks: [] }, { entityId: c, chunks: [] }]);
    expect(await sql(`SELECT 1 FROM embedding_chunks WHERE entity_id = ANY($1::uuid[])`, [a, b, c])).toEqual([]);
  });
});

describe("bounds on the stored structure", () => {
  it("keeps a structure with very many headings under the byte limit, the rest of the text in one section without headings", () => {
    const count = 20_000;
    const text = "x".repeat(count * 10);
    const sections = Array.from({ length: count }, (_, i) => ({ headingPath: ["Part", `Heading number ${i} ${"y".repeat(300)}`], start: i * 10, end: i * 10 + 10 }));
    const structure = storableStructure(text, { sections, pages: [] })!;
    expect(Buffer.byteLength(JSON.stringify(structure))).toBeLessThanOrEqual(MAX_STRUCTURE_BYTES);
    expect(structure.sections[0]!.headingPath[1]!.length).toBeLessThanOrEqual(200);
    const last = structure.sections[structure.sections.length - 1]!;
    expect(last).toEqual({ headingPath: [], start: last.start, end: text.length });
    expect(structure.sections.length).toBeLessThan(count);
    expect(readStructure(structure, text)).not.toBeNull();
    // Nothing to add to the text: nothing stored.
    expect(storableStructure("plain", { sections: [{ headingPath: [], start: 0, end: 5 }], pages: [] })).toBeNull();
  });

  it("uploads Markdown of 200,000 headings: its structure fits the database's own bound, measured as the database measures it", async () => {
    // 2.4 MB of "# hNNNNNN" headings: measured with JSON.stringify, the stored structure passed
    // our bound and then failed the CHECK (jsonb's text has a space after every ':' and ','),
    // which reached the client as INTERNAL_SERVER_ERROR.
    const markdown = Array.from({ length: 200_000 }, (_, i) => `# h${i}`).join("\n");
    const id = await uploadFile("headings.md", new TextEncoder().encode(markdown));
    const [row] = await sql<{ bytes: number; sections: number }>(
      `SELECT octet_length(c.structure::text) AS bytes, jsonb_array_length(c.structure->'sections') AS sections
         FROM documents d JOIN document_contents c ON c.organization_id = d.organization_id AND c.content_hash = d.content_hash WHERE d.id = $1::uuid`,
      id,
    );
    expect(row!.bytes).toBeLessThanOrEqual(MAX_STRUCTURE_BYTES);
    expect(row!.sections).toBeGreaterThan(10_000);
    expect(row!.sections).toBeLessThan(200_000);
  });

  it("measures a structure in bytes exactly as PostgreSQL's jsonb text does", async () => {
    const structure = { version: 1, sections: [{ headingPath: ["Café \"quoted\"", "tab\there"], start: 0, end: 12 }], pages: [{ pageNumber: 1, start: 0, end: 12 }], empty: [], nested: {} };
    const [row] = await sql<{ bytes: number }>(`SELECT octet_length($1::jsonb::text) AS bytes`, JSON.stringify(structure));
    expect(jsonbTextBytes(structure)).toBe(row!.bytes);
  });

  it("refuses an oversized structure in the database itself", async () => {
    const huge = JSON.stringify({ version: 1, sections: [], pages: [], padding: "z".repeat(MAX_STRUCTURE_BYTES) });
    await expect(sql(`INSERT INTO document_contents (organization_id, content_hash, text, structure) VALUES ($1, $2, 'x', $3::jsonb)`, ann.organizationId, sha256("huge"), huge)).rejects.toThrow(/document_contents_structure_check/);
  });
});
