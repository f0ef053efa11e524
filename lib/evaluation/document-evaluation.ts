/**
 * Measures search quality on a BEIR data set with the corpus uploaded as documents instead of
 * conversations: each BEIR document becomes a Markdown file (`# <title>\n\n<text>`) that goes
 * through the real upload path (text extraction in a worker, the document store), the document
 * indexer chunks, embeds and keyword-indexes it, and the queries then run against the documents
 * domain's providers. Hits are chunks; a document ranks where its best chunk ranks.
 *
 * lib/ never imports from subgraphs/: the caller (scripts/eval.ts) hands in the upload function.
 */
import { randomUUID } from "node:crypto";
import type { Database } from "../database/connect.js";
import type { TenantContext } from "../tenancy/token.js";
import type { BeirDataset, BeirDocument } from "./beir.js";
import type { IngestedCorpus } from "./search-evaluation.js";

/** The providers a documents run asks for; conversations of the same organization stay out. */
export const DOCUMENT_PROVIDERS = ["documents.keyword", "documents.semantic"] as const;

/** Uploads one file as `tenant` and returns the new document's id (the product's uploadDocument). */
export type UploadFile = (tenant: TenantContext, fileName: string, bytes: Buffer) => Promise<{ id: string }>;

export interface IngestedDocuments extends IngestedCorpus {
  /** product document id → BEIR document id, until chunks exist to map hits with */
  beirIdOfDocument: Map<string, string>;
  /** BEIR documents the upload path refused, with its reason (e.g. an empty text). */
  refused: { id: string; reason: string }[];
}

/** The Markdown file a BEIR document is uploaded as. */
export function markdownOf(document: BeirDocument): string {
  const title = document.title.trim() || document.id;
  return `# ${title}\n\n${document.text}`;
}

/**
 * Uploads the corpus into a fresh organization, `concurrency` files at a time (text extraction
 * runs in a worker pool, so a few in flight keep it busy without queueing past its bound).
 */
export async function ingestAsDocuments(
  database: Database,
  dataset: BeirDataset,
  upload: UploadFile,
  options: { concurrency?: number; onProgress?: (done: number, total: number) => void } = {},
): Promise<IngestedDocuments> {
  const organizationId = `eval-${dataset.name}-docs-${randomUUID().slice(0, 8)}`;
  const tenant: TenantContext = { organizationId, userId: "evaluator", teamIds: [], role: "member", userName: "Evaluator", userEmail: null };
  await database.prisma.organization.create({ data: { id: organizationId, name: `Evaluation (documents): ${dataset.name}` } });

  const beirIdOfDocument = new Map<string, string>();
  const refused: { id: string; reason: string }[] = [];
  const concurrency = Math.max(1, Math.min(options.concurrency ?? 4, 16));
  let next = 0;
  let done = 0;
  const worker = async () => {
    // Each worker takes the next document until none is left: at most corpus.length iterations in all.
    while (next < dataset.corpus.length) {
      const document = dataset.corpus[next++]!;
      try {
        // BEIR ids can hold any character; the file name only needs to be unique and printable.
        const fileName = `${document.id.replace(/[^\w.-]+/g, "_").slice(0, 200)}.md`;
        const created = await upload(tenant, fileName, Buffer.from(markdownOf(document), "utf8"));
        beirIdOfDocument.set(created.id, document.id);
      } catch (error) {
        refused.push({ id: document.id, reason: (error as Error).message });
      }
      options.onProgress?.(++done, dataset.corpus.length);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { tenant, documentIdOf: new Map(), beirIdOfDocument, refused };
}

/**
 * After the indexer has drained: maps every chunk of the uploaded documents to its BEIR
 * document, so hits (chunk ids) can be scored against the qrels. Returns the chunk count.
 */
export async function mapChunksToDocuments(database: Database, corpus: IngestedDocuments): Promise<number> {
  // Read as the tables' owner: the evaluation spans the whole throwaway organization.
  const chunks = await database.prisma.documentChunk.findMany({
    where: { organizationId: corpus.tenant.organizationId },
    select: { id: true, documentId: true },
  });
  for (const chunk of chunks) {
    const beirId = corpus.beirIdOfDocument.get(chunk.documentId);
    if (beirId !== undefined) corpus.documentIdOf.set(chunk.id, beirId);
  }
  return chunks.length;
}

/** How many of the uploaded documents the indexer left in each status (READY, FAILED, …). */
export async function documentStatuses(database: Database, corpus: IngestedDocuments): Promise<Record<string, number>> {
  const groups = await database.prisma.document.groupBy({
    by: ["status"],
    where: { organizationId: corpus.tenant.organizationId },
    _count: { _all: true },
  });
  return Object.fromEntries(groups.map((group) => [group.status, group._count._all]));
}
