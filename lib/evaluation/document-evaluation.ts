/**
 * Measures search quality on a BEIR data set with the corpus uploaded as documents instead of
 * conversations: each BEIR document becomes a Markdown file (`# <title>\n\n<text>`) that goes
 * through the real upload path (text extraction in a worker, the document store), the document
 * indexer chunks, embeds and keyword-indexes it, and the queries then run against the documents
 * domain's providers. Hits are chunks; a document ranks where its best chunk ranks.
 *
 * lib/ never imports from subgraphs/: the caller (scripts/eval.ts) hands in the upload function.
 */
import type { Database } from "../database/connect.js";
import type { TenantContext } from "../tenancy/token.js";
import type { BeirDataset, BeirDocument } from "./beir.js";
import { createEvaluationOrganization, type IngestedCorpus } from "./search-evaluation.js";

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
  const tenant = await createEvaluationOrganization(database, `${dataset.name}-docs`, `Evaluation (documents): ${dataset.name}`);
  const corpus: IngestedDocuments = { tenant, documentIdOf: new Map(), beirIdOfDocument: new Map(), refused: [] };
  await uploadDocuments(corpus, dataset.corpus, upload, options);
  return corpus;
}

/**
 * Uploads `documents` as the corpus's evaluator through `upload` (a user's upload, or an
 * operator's into a platform knowledge base), `concurrency` files at a time, and records which
 * product document is which BEIR document. Each file is named after its BEIR id.
 */
export async function uploadDocuments(
  corpus: IngestedDocuments,
  documents: readonly BeirDocument[],
  upload: UploadFile,
  options: { concurrency?: number; onProgress?: (done: number, total: number) => void } = {},
): Promise<void> {
  const concurrency = Math.max(1, Math.min(options.concurrency ?? 4, 16));
  let next = 0;
  let done = 0;
  const worker = async () => {
    // Each worker takes the next document until none is left: at most documents.length iterations in all.
    while (next < documents.length) {
      const document = documents[next++]!;
      try {
        const created = await upload(corpus.tenant, fileNameOf(document), Buffer.from(markdownOf(document), "utf8"));
        corpus.beirIdOfDocument.set(created.id, document.id);
      } catch (error) {
        corpus.refused.push({ id: document.id, reason: (error as Error).message });
      }
      options.onProgress?.(++done, documents.length);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** The file a BEIR document is uploaded as: BEIR ids can hold any character; a file name only needs to be unique and printable. */
export function fileNameOf(document: BeirDocument): string {
  return `${document.id.replace(/[^\w.-]+/g, "_").slice(0, 200)}.md`;
}

/**
 * After the indexer has drained: maps every chunk of the uploaded documents to its BEIR
 * document, so hits (chunk ids) can be scored against the qrels. Returns the chunk count.
 * The documents may be in more than one organization (a platform knowledge base's are the
 * platform's): the chunks are found by document.
 */
export async function mapChunksToDocuments(database: Database, corpus: IngestedDocuments): Promise<number> {
  let count = 0;
  // Read as the tables' owner: the evaluation spans its throwaway organization and the platform's documents.
  for (const documentIds of batchesOf([...corpus.beirIdOfDocument.keys()], 1_000)) {
    const chunks = await database.prisma.documentChunk.findMany({ where: { documentId: { in: documentIds } }, select: { id: true, documentId: true } });
    for (const chunk of chunks) corpus.documentIdOf.set(chunk.id, corpus.beirIdOfDocument.get(chunk.documentId)!);
    count += chunks.length;
  }
  return count;
}

/**
 * After the indexer has drained: lets the evaluation map the `knowledge-bases` provider's hits
 * (KnowledgeBasePassage ids) of one LOCAL knowledge base to BEIR documents. A passage is stored
 * as the search retrieves it, under a hash of its text, and records its knowledge base and its
 * text, not its document (its uri is a remote source's, null for a LOCAL one); its text is its
 * chunk's (cut at 8,000 characters, unstorable characters replaced), so a passage is matched to
 * the chunk whose text begins the same, and through the chunk's document (a file named after its
 * BEIR id) to the BEIR document. Returns how many chunk texts more than one BEIR document shares
 * (such a passage maps to one of them; 0 makes the mapping exact).
 */
export async function mapPassagesToDocuments(database: Database, corpus: IngestedDocuments, knowledgeBaseId: string): Promise<number> {
  const beirIdOfText = new Map<string, string>();
  const shared = new Set<string>();
  const documentIds = [...corpus.beirIdOfDocument.keys()];
  for (const batch of batchesOf(documentIds, 1_000)) {
    const chunks = await database.prisma.documentChunk.findMany({ where: { documentId: { in: batch }, document: { knowledgeBaseId } }, select: { documentId: true, text: true } });
    for (const chunk of chunks) {
      const key = passageKey(chunk.text);
      const beirId = corpus.beirIdOfDocument.get(chunk.documentId)!;
      if (beirIdOfText.has(key) && beirIdOfText.get(key) !== beirId) shared.add(key);
      else beirIdOfText.set(key, beirId);
    }
  }
  corpus.mapNewHits = async (ids) => {
    if (ids.length === 0) return;
    const passages = await database.prisma.knowledgeBasePassage.findMany({
      where: { organizationId: corpus.tenant.organizationId, knowledgeBaseId, id: { in: [...ids] } },
      select: { id: true, text: true },
    });
    for (const passage of passages) {
      const beirId = beirIdOfText.get(passageKey(passage.text));
      if (beirId !== undefined) corpus.documentIdOf.set(passage.id, beirId);
    }
  };
  return shared.size;
}

/** What a passage keeps of its chunk's text for certain: the beginning, well short of the 8,000-character cut. */
function passageKey(text: string): string {
  return text.slice(0, 4_000);
}

function batchesOf<T>(items: readonly T[], size: number): T[][] {
  const batches: T[][] = [];
  for (let start = 0; start < items.length; start += size) batches.push(items.slice(start, start + size));
  return batches;
}

/** How many of the uploaded documents the indexer left in each status (READY, FAILED, …). */
export async function documentStatuses(database: Database, corpus: IngestedDocuments): Promise<Record<string, number>> {
  const groups = await database.prisma.document.groupBy({
    by: ["status"],
    where: { id: { in: [...corpus.beirIdOfDocument.keys()] } },
    _count: { _all: true },
  });
  return Object.fromEntries(groups.map((group) => [group.status, group._count._all]));
}
