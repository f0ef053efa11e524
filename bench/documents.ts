/**
 * Documents for the document benchmarks: the demo generator's conversations (another seed than
 * the conversation corpus's, so no document repeats a conversation) turned into files people
 * upload: a title, then sections of paragraphs. The same content is rendered in each format the
 * product reads (Markdown, plain text, PDF with pdf-lib, DOCX with docx), so formats compare on
 * equal text. Also: the throwaway organization a document benchmark uploads into, and the
 * document-search pieces wired as the search subgraph wires them.
 */
import { createHash, randomUUID } from "node:crypto";
import { AlignmentType, Document as DocxDocument, HeadingLevel, Packer, Paragraph } from "docx";
import { PDFDocument, StandardFonts } from "pdf-lib";
import type { Database } from "../lib/database/connect.js";
import { demoConversations } from "../lib/demo-data/conversations.js";
import { chunkDocument, documentChunkingFor } from "../lib/documents/chunk-document.js";
import { markdownSections } from "../lib/documents/normalize-text.js";
import { silentLogger } from "../lib/logger.js";
import type { Embedder } from "../lib/retrieval/embeddings/embedder.js";
import { PgVectorStore } from "../lib/retrieval/vector-stores/pgvector.js";
import type { TenantContext } from "../lib/tenancy/token.js";
import { documentSearch, type DocumentSearch } from "../subgraphs/knowledge-base/search.js";
import type { DocumentFormat } from "../subgraphs/knowledge-base/document-store.js";

export const DOCUMENT_SEED = 7;
export const DOCUMENT_FORMATS: readonly DocumentFormat[] = ["markdown", "text", "pdf", "docx"];
export const FILE_EXTENSIONS: Record<DocumentFormat, string> = { markdown: "md", text: "txt", pdf: "pdf", docx: "docx" };
export const MEDIA_TYPES: Record<DocumentFormat, string> = {
  markdown: "text/markdown",
  text: "text/plain",
  pdf: "application/pdf",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
};

export interface BenchDocument {
  title: string;
  sections: { heading: string; paragraphs: string[] }[];
}

/**
 * `count` documents, deterministic. `maxSections` bounds each one's size (a conversation of 30
 * messages would make a long document; most documents people search are a few pages).
 */
export function* benchDocuments(count: number, options: { seed?: number; maxSections?: number } = {}): Generator<BenchDocument> {
  const maxSections = options.maxSections ?? 6;
  for (const conversation of demoConversations({ count, seed: options.seed ?? DOCUMENT_SEED })) {
    const sections = conversation.messages.slice(0, maxSections).map((message, index) => ({
      heading: message.role === "user" ? `Question ${Math.floor(index / 2) + 1}` : `Answer ${Math.floor(index / 2) + 1}`,
      // Code fences and blank lines become paragraphs of their own; empty ones are dropped.
      paragraphs: message.content.split(/\n{2,}/).map((paragraph) => paragraph.replace(/\s+/g, " ").trim()).filter((paragraph) => paragraph.length > 0),
    }));
    yield { title: conversation.title, sections };
  }
}

export function markdownFile(document: BenchDocument): string {
  return [`# ${document.title}`, ...document.sections.flatMap((section) => [`## ${section.heading}`, ...section.paragraphs])].join("\n\n");
}

export function textFile(document: BenchDocument): string {
  return [document.title, ...document.sections.flatMap((section) => [section.heading, ...section.paragraphs])].join("\n\n");
}

/** PDF's standard fonts encode WinAnsi only: anything else is drawn as "?". */
function winAnsi(text: string): string {
  return text.replace(/[^\x20-\x7e\u00a0-\u00ff]/g, "?");
}

/** Wraps text to lines of at most `width` characters, at spaces (a long word gets a line of its own, cut). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    const piece = word.slice(0, width);
    if (line.length + piece.length + 1 > width && line.length > 0) {
      lines.push(line);
      line = piece;
    } else {
      line = line ? `${line} ${piece}` : piece;
    }
  }
  if (line) lines.push(line);
  return lines;
}

export async function pdfFile(document: BenchDocument): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const lines: { text: string; bold: boolean }[] = [{ text: winAnsi(document.title), bold: true }, { text: "", bold: false }];
  for (const section of document.sections) {
    lines.push({ text: winAnsi(section.heading), bold: true });
    for (const paragraph of section.paragraphs) {
      for (const line of wrap(winAnsi(paragraph), 90)) lines.push({ text: line, bold: false });
      lines.push({ text: "", bold: false });
    }
  }
  const perPage = 44;
  for (let start = 0; start < lines.length; start += perPage) {
    const page = pdf.addPage([612, 792]);
    lines.slice(start, start + perPage).forEach((line, index) => {
      if (line.text) page.drawText(line.text, { x: 50, y: 740 - index * 16, size: 11, font: line.bold ? bold : font });
    });
  }
  return pdf.save();
}

export async function docxFile(document: BenchDocument): Promise<Uint8Array> {
  const children = [
    new Paragraph({ text: document.title, heading: HeadingLevel.HEADING_1 }),
    ...document.sections.flatMap((section) => [
      new Paragraph({ text: section.heading, heading: HeadingLevel.HEADING_2 }),
      ...section.paragraphs.map((paragraph) => new Paragraph({ text: paragraph, alignment: AlignmentType.LEFT })),
    ]),
  ];
  return new Uint8Array(await Packer.toBuffer(new DocxDocument({ sections: [{ children }] })));
}

export async function renderFile(format: DocumentFormat, document: BenchDocument): Promise<Buffer> {
  switch (format) {
    case "markdown":
      return Buffer.from(markdownFile(document), "utf8");
    case "text":
      return Buffer.from(textFile(document), "utf8");
    case "pdf":
      return Buffer.from(await pdfFile(document));
    case "docx":
      return Buffer.from(await docxFile(document));
  }
}

/** A fresh organization for one document benchmark, so nothing it uploads meets the conversation corpus's searches. */
export async function documentTenant(database: Database, label: string): Promise<TenantContext> {
  const organizationId = `bench-docs-${label}-${randomUUID().slice(0, 8)}`;
  await database.prisma.organization.create({ data: { id: organizationId, name: `Document benchmark (${label})` } });
  return { organizationId, userId: "bench-uploader", teamIds: [], role: "member", userName: "Benchmark uploader", userEmail: null };
}

/** The documents domain's search as the search subgraph builds it, on pgvector, with `embedder`. */
export async function benchDocumentSearch(database: Database, embedder: Embedder, batchSize = 16): Promise<DocumentSearch> {
  const vectorStore = new PgVectorStore(database);
  await vectorStore.ensureReady(embedder.model, embedder.dimensions);
  return documentSearch({ database, embedder, vectorStore, logger: silentLogger, indexer: { batchSize } });
}

/** Runs `work` over `items`, `concurrency` at a time, in order of start. */
export async function inParallel<T>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
}

export interface SearchableDocumentsStats {
  documents: number;
  chunks: number;
  ready: number;
  /** Chunking, writing documents, text, chunks (postings by trigger) and vectors, in bulk; the HNSW rebuild included. */
  loadSeconds: number;
  /** Rebuilding the HNSW index(es) over every vector after the load. */
  hnswSeconds: number;
}

/**
 * `count` Markdown documents owned by `tenant`'s user, made searchable in bulk, 200 at a time:
 * the product's chunker (chunkDocument over markdownSections, capped to the embedder's input),
 * documents written READY with their text, chunks in one INSERT per batch (the product's
 * triggers derive the BM25 postings), vectors through PgVectorStore.replaceEntities, the HNSW
 * index rebuilt after the load. The
 * document indexer does the same one document at a time (a few transactions per chunk), which
 * at ~10 documents/s on this machine would make 10,000 documents take a quarter of an hour:
 * its rate is the document-ingestion scenario's business; this one needs the index.
 */
export async function loadSearchableDocuments(
  database: Database,
  tenant: TenantContext,
  count: number,
  embedder: Embedder,
  log: (line: string) => void,
  options: { maxSections?: number } = {},
): Promise<SearchableDocumentsStats> {
  const { prisma } = database;
  const vectorStore = new PgVectorStore(database);
  const chunking = documentChunkingFor(embedder);
  const batchSize = 200;
  const started = performance.now();
  // As for the conversation corpus (bench/corpus.ts): inserting into an HNSW index row by row
  // costs more as it grows (on PGlite 10,000 documents took over a quarter of an hour so);
  // building it once after the load is the fast way. Dropped here, rebuilt from the same
  // definitions below.
  const hnswIndexes = await prisma.$queryRaw<{ indexname: string; indexdef: string }[]>`
    SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'embedding_chunks' AND indexdef ILIKE '%USING hnsw%'`;
  for (const index of hnswIndexes) await prisma.$executeRawUnsafe(`DROP INDEX IF EXISTS "${index.indexname.replace(/"/g, '""')}"`);
  let lastReport = started;
  let batch: string[] = [];
  let documents = 0;
  let chunks = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const texts = batch;
    batch = [];
    // Token counting runs in a worker pool with a bounded queue: a few documents at a time.
    const chunked: Awaited<ReturnType<typeof chunkDocument>>[] = [];
    await inParallel(texts, 16, async (text, index) => {
      chunked[index] = await chunkDocument({ text, sections: markdownSections(text) }, chunking);
    });
    const rows = texts.map((text, index) => ({ id: randomUUID(), text, contentHash: createHash("sha256").update(text).digest("hex"), chunks: chunked[index]!.chunks }));
    await prisma.documentContent.createMany({ data: rows.map((row) => ({ organizationId: tenant.organizationId, contentHash: row.contentHash, text: row.text })), skipDuplicates: true });
    await prisma.document.createMany({
      data: rows.map((row, index) => ({
        id: row.id,
        organizationId: tenant.organizationId,
        ownerId: tenant.userId,
        fileName: `note-${documents + index}.md`,
        mediaType: MEDIA_TYPES.markdown,
        format: "markdown" as const,
        sizeBytes: Buffer.byteLength(row.text),
        contentHash: row.contentHash,
        // READY: the queue trigger fires only for PENDING documents.
        status: "READY" as const,
        chunksIndexed: row.chunks.length,
        chunksTotal: row.chunks.length,
      })),
    });
    const chunkRows = rows.flatMap((row) =>
      row.chunks.map((chunk) => ({
        id: randomUUID(),
        organizationId: tenant.organizationId,
        documentId: row.id,
        chunkIndex: chunk.index,
        text: chunk.text,
        headingPath: chunk.headingPath,
        page: chunk.pageNumbers[0] ?? null,
        startOffset: chunk.start,
        endOffset: chunk.end,
        tokenCount: chunk.tokenCount,
        contentHash: chunk.contentHash,
      })),
    );
    await prisma.documentChunk.createMany({ data: chunkRows });
    const vectors = await embedder.embed(chunkRows.map((chunk) => chunk.text));
    await vectorStore.replaceEntities(
      tenant.organizationId,
      "document_chunk",
      embedder.model,
      chunkRows.map((chunk, index) => ({ entityId: chunk.id, chunks: [{ chunkIndex: 0, contentHash: chunk.contentHash, vector: vectors[index]! }] })),
    );
    documents += rows.length;
    chunks += chunkRows.length;
    if (performance.now() - lastReport > 15_000) {
      lastReport = performance.now();
      log(`    ${documents} / ${count} documents, ${chunks} chunks`);
    }
  };
  for (const document of benchDocuments(count, { maxSections: options.maxSections ?? 2 })) {
    batch.push(markdownFile(document));
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  const hnswStarted = performance.now();
  for (const index of hnswIndexes) await prisma.$executeRawUnsafe(index.indexdef);
  await vectorStore.ensureReady(embedder.model, embedder.dimensions);
  const hnswSeconds = Math.round((performance.now() - hnswStarted) / 10) / 100;
  log(`    HNSW index rebuilt in ${hnswSeconds} s`);
  // On both databases, as bench/corpus.ts does: without statistics and a visibility map the
  // planner and the index-only scans see an empty table (seen on PostgreSQL: mixed searches
  // took 17 s at p50 right after the load, before autovacuum came round).
  await database.withSession((session) => session.query("VACUUM (ANALYZE) documents, document_chunks, document_keyword_postings, embedding_chunks"));
  const [counts] = await prisma.$queryRaw<{ ready: number }[]>`
    SELECT count(*) FILTER (WHERE status = 'READY')::int AS ready FROM documents WHERE organization_id = ${tenant.organizationId}`;
  return { documents, chunks, ready: counts?.ready ?? 0, loadSeconds: Math.round((performance.now() - started) / 10) / 100, hnswSeconds };
}
