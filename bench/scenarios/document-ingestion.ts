/**
 * Document ingestion: how fast uploaded files become searchable, by format.
 *
 * For each format the product reads (Markdown, plain text, PDF, DOCX), the same generated
 * documents (bench/documents.ts) are rendered into files first (not timed: that is the client's
 * work), then timed from the first upload to the last document READY: every file through
 * uploadDocument (size and base64 checks, text extraction in the worker pool, the document
 * store), 4 uploads in flight, then the document indexer drained (chunking by tokens, BM25
 * postings, vectors). Reported as documents/s and chunks/s, with the upload and indexing parts.
 *
 * The feature-hashing embedder isolates the pipeline's own cost; a few Markdown documents with
 * the local model (Universal Sentence Encoder Lite) show what a default deployment indexes at.
 * Each format runs in an organization of its own, deleted afterwards, so the conversation
 * corpus's other scenarios never meet these documents.
 */
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { createEmbedder } from "../../lib/retrieval/embeddings/index.js";
import type { Embedder } from "../../lib/retrieval/embeddings/embedder.js";
import { UniversalSentenceEncoderEmbedder } from "../../lib/retrieval/embeddings/universal-sentence-encoder.js";
import { DocumentStore, type DocumentFormat } from "../../subgraphs/knowledge-base/document-store.js";
import { uploadDocument } from "../../subgraphs/knowledge-base/upload.js";
import type { BenchDatabase } from "../database.js";
import { benchDocumentSearch, benchDocuments, DOCUMENT_FORMATS, documentTenant, FILE_EXTENSIONS, inParallel, MEDIA_TYPES, renderFile } from "../documents.js";
import { databaseLabel, entryHeading, formatCount, formatRate, formatRatio, renderConditions, type EntryBase } from "../report.js";
import { baseConditions, type Scenario } from "../scenario.js";
import { benchConfig } from "../stack.js";
import { ratio, round } from "../stats.js";

/** Documents per format with the hashing embedder (fewer when the run's size is smaller). */
export const DOCUMENTS_PER_FORMAT = 200;
/** Markdown documents indexed with the local model (at most; --embed-conversations lowers it). */
export const LOCAL_MODEL_DOCUMENTS = 20;
const UPLOADS_IN_FLIGHT = 4;
const MAX_BYTES = 10 * 1024 * 1024;

export interface FormatIngestion {
  format: DocumentFormat;
  embedder: string;
  documents: number;
  ready: number;
  failed: number;
  chunks: number;
  /** Bytes of the files uploaded. */
  bytes: number;
  uploadSeconds: number;
  indexSeconds: number;
  /** From the first upload to the last document READY. */
  totalSeconds: number;
  documentsPerSecond: number;
  chunksPerSecond: number;
  uploadsPerSecond: number;
}

export interface DocumentIngestionEntry extends EntryBase {
  formats: FormatIngestion[];
  local: (FormatIngestion & { modelLoadSeconds: number }) | null;
  ratios: {
    /** documents/s of each format over Markdown's: what reading the format costs. */
    documentsPerSecondVsMarkdown: Record<string, number>;
    /** Hashing / local model Markdown chunks per second: what the model costs over the pipeline. */
    hashingVsLocalChunksPerSecond: number;
  };
}

let modelLoaded = false;

async function ingestFormat(bench: BenchDatabase, format: DocumentFormat, count: number, embedder: Embedder, log: (line: string) => void): Promise<FormatIngestion> {
  const { database } = bench;
  const files: { fileName: string; bytes: Buffer }[] = [];
  let index = 0;
  for (const document of benchDocuments(count)) files.push({ fileName: `document-${index++}.${FILE_EXTENSIONS[format]}`, bytes: await renderFile(format, document) });
  const tenant = await documentTenant(database, format);
  const search = await benchDocumentSearch(database, embedder);
  const store = new DocumentStore(database.prisma);
  try {
    const started = performance.now();
    await inParallel(files, UPLOADS_IN_FLIGHT, async (file) => {
      await uploadDocument(store, tenant, { fileName: file.fileName, mediaType: MEDIA_TYPES[format], contentBase64: file.bytes.toString("base64") }, MAX_BYTES);
    });
    const uploaded = performance.now();
    await search.indexer.drain();
    const finished = performance.now();
    const [counts] = await database.prisma.$queryRaw<{ ready: number; failed: number; chunks: number }[]>`
      SELECT count(*) FILTER (WHERE status = 'READY')::int AS ready,
             count(*) FILTER (WHERE status = 'FAILED')::int AS failed,
             (SELECT count(*)::int FROM document_chunks WHERE organization_id = ${tenant.organizationId}) AS chunks
      FROM documents WHERE organization_id = ${tenant.organizationId}`;
    const totalSeconds = (finished - started) / 1000;
    const result: FormatIngestion = {
      format,
      embedder: embedder.model,
      documents: files.length,
      ready: counts?.ready ?? 0,
      failed: counts?.failed ?? 0,
      chunks: counts?.chunks ?? 0,
      bytes: files.reduce((total, file) => total + file.bytes.length, 0),
      uploadSeconds: round((uploaded - started) / 1000, 2),
      indexSeconds: round((finished - uploaded) / 1000, 2),
      totalSeconds: round(totalSeconds, 2),
      documentsPerSecond: round((counts?.ready ?? 0) / totalSeconds, 2),
      chunksPerSecond: round((counts?.chunks ?? 0) / totalSeconds, 2),
      uploadsPerSecond: round(files.length / ((uploaded - started) / 1000), 2),
    };
    log(`  ${format} (${embedder.model}): ${result.ready}/${result.documents} READY, ${result.chunks} chunks in ${result.totalSeconds} s (upload ${result.uploadSeconds} s): ${result.documentsPerSecond} documents/s, ${result.chunksPerSecond} chunks/s`);
    return result;
  } finally {
    await search.flushUsage();
    await database.prisma.organization.delete({ where: { id: tenant.organizationId } });
  }
}

export const documentIngestionScenario: Scenario<DocumentIngestionEntry> = {
  name: "document-ingestion",
  title: "Document ingestion",
  async run(context) {
    const count = Math.min(DOCUMENTS_PER_FORMAT, context.size);
    const formats: FormatIngestion[] = [];
    for (const format of DOCUMENT_FORMATS) formats.push(await ingestFormat(context.bench, format, count, new FeatureHashingEmbedder(), context.log));

    let local: DocumentIngestionEntry["local"] = null;
    const localCount = Math.min(LOCAL_MODEL_DOCUMENTS, context.options.embedConversations, context.size);
    if (localCount > 0) {
      const loadStarted = performance.now();
      await new UniversalSentenceEncoderEmbedder().load();
      const modelLoadSeconds = modelLoaded ? 0 : round((performance.now() - loadStarted) / 1000, 2);
      modelLoaded = true;
      // The product's local embedder, behind its embedding cache, as EMBEDDER=local runs it.
      const embedder = createEmbedder(benchConfig({ cacheTtlSeconds: 0, embedder: "local" }).search, context.bench.database);
      context.log(`  embedding ${localCount} Markdown documents with ${embedder.model} (about 15 chunks/s on 2 cores)…`);
      local = { ...(await ingestFormat(context.bench, "markdown", localCount, embedder, context.log)), modelLoadSeconds };
    }
    const markdown = formats.find((entry) => entry.format === "markdown");
    return {
      database: context.bench.kind,
      size: context.size,
      run: context.run,
      conditions: baseConditions(context, {
        documents: `${count} per format, generated from the demo generator (seed 7, up to 6 sections each), rendered before timing`,
        upload: `uploadDocument (extraction in the worker pool), ${UPLOADS_IN_FLIGHT} in flight, in-process (no HTTP)`,
        indexing: "DocumentIndexer.drain, batches of 16, chunks of at most 500 tokens with 50 overlap (capped to the embedder's input), BM25 postings by trigger, pgvector",
        embedder: "feature hashing (256-d) for every format; Universal Sentence Encoder Lite for the local-model row",
        "local-model documents": localCount > 0 ? `${localCount} Markdown documents` : "skipped (--embed-conversations 0)",
      }),
      corpus: context.corpus,
      profiles: [],
      formats,
      local,
      ratios: {
        documentsPerSecondVsMarkdown: Object.fromEntries(formats.map((entry) => [entry.format, ratio(entry.documentsPerSecond, markdown?.documentsPerSecond, 2)])),
        hashingVsLocalChunksPerSecond: local ? ratio(markdown?.chunksPerSecond, local.chunksPerSecond, 1) : Number.NaN,
      },
    };
  },

  renderSection(file) {
    const rows = file.entries.flatMap((entry) =>
      [...entry.formats, ...(entry.local ? [entry.local] : [])].map((row) => [
        databaseLabel(entry.database),
        formatCount(entry.size),
        row.format,
        row.embedder,
        `${row.ready} / ${row.documents}`,
        formatCount(row.chunks),
        `${(row.bytes / row.documents / 1024).toFixed(1)} KiB`,
        formatRate(row.documentsPerSecond),
        formatRate(row.chunksPerSecond),
        formatRate(row.uploadsPerSecond),
        `${row.totalSeconds.toFixed(1)} s`,
      ]),
    );
    const table = renderMarkdownTable(["database", "conversations", "format", "embedder", "READY", "chunks", "file size (mean)", "documents/s", "chunks/s", "uploads/s", "upload → READY"], rows);
    const details = file.entries.map((entry) =>
      [
        `**${entryHeading(entry)}** — documents/s against Markdown: ${Object.entries(entry.ratios.documentsPerSecondVsMarkdown).map(([format, value]) => `${format} ${formatRatio(value)}`).join(", ")}.` +
          (entry.local
            ? ` Local model: ${entry.local.ready} documents → ${entry.local.chunks} chunks in ${entry.local.totalSeconds.toFixed(1)} s${entry.local.modelLoadSeconds > 0 ? ` (after ${entry.local.modelLoadSeconds} s loading the model)` : ""}; hashing indexes Markdown ${formatRatio(entry.ratios.hashingVsLocalChunksPerSecond)} faster in chunks/s.`
            : ""),
        "",
        renderConditions(entry),
      ].join("\n"),
    );
    return [table, "", ...details.flatMap((detail) => [detail, ""])].join("\n");
  },
};
