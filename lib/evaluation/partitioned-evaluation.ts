/**
 * The promise of one search over many sources, measured: a BEIR corpus split at random (seeded)
 * across the product's own providers in ONE organization (its conversations, its uploaded
 * documents, and a platform LOCAL knowledge base), every query asked of all their providers at
 * once, the fused ranking scored against the qrels. Set beside the same corpus in one provider
 * (all of it as conversations), the difference is what spreading knowledge over sources costs
 * or gains: the fusion has to rank hits of different providers, scored on different scales and
 * over different statistics, against each other.
 *
 * lib/ never imports from subgraphs/: the caller hands in the uploads (a user's upload, the
 * operator's platform knowledge base) and the search service.
 */
import type { FusionMethod } from "../retrieval/fusion-method.js";
import { mulberry32 } from "../demo-data/conversations.js";
import type { Database } from "../database/connect.js";
import type { BeirDataset, BeirDocument } from "./beir.js";
import { DOCUMENT_PROVIDERS, uploadDocuments, type IngestedDocuments, type UploadFile } from "./document-evaluation.js";
import { createEvaluationOrganization, evaluateAlpha, ingestConversations, type EvaluatedSearch, type EvaluateOptions, type EvaluationRow, type IngestedCorpus } from "./search-evaluation.js";

/** The sources a corpus can be split across, in the order `--partition` may name them. */
export const PARTITIONS = ["conversations", "documents", "knowledge-base"] as const;
export type Partition = (typeof PARTITIONS)[number];

/** The providers that rank each partition's documents. */
export const PROVIDERS_OF: Record<Partition, readonly string[]> = {
  conversations: ["conversations.keyword", "conversations.semantic"],
  documents: DOCUMENT_PROVIDERS,
  "knowledge-base": ["knowledge-bases"],
};

/** `--fusions` names → `SearchInput.fusion`. */
export const FUSIONS: Record<string, FusionMethod> = { rrf: "RRF", relative: "RELATIVE_SCORE", distribution: "DISTRIBUTION_SCORE" };

export interface PartitionShare {
  partition: Partition;
  share: number;
}

/** Parses `conversations=0.4,documents=0.4,knowledge-base=0.2`: known names, each once, shares summing to 1. */
export function parsePartition(spec: string): PartitionShare[] {
  const shares = spec.split(",").map((part) => {
    const [name, value, ...rest] = part.split("=").map((piece) => piece.trim());
    if (!(PARTITIONS as readonly string[]).includes(name ?? "") || rest.length > 0) throw new RangeError(`"${part}": each part is <source>=<share>, the source one of ${PARTITIONS.join(", ")}`);
    const share = Number(value);
    if (!(share >= 0 && share <= 1) || value === "") throw new RangeError(`"${part}": a share is a number between 0 and 1`);
    return { partition: name as Partition, share };
  });
  if (new Set(shares.map((share) => share.partition)).size !== shares.length) throw new RangeError(`"${spec}": a source is named twice`);
  const sum = shares.reduce((total, { share }) => total + share, 0);
  // Decimal shares do not add up exactly in binary (0.1 + 0.2 + 0.7 is 0.9999999999999999).
  if (Math.abs(sum - 1) > 1e-9) throw new RangeError(`"${spec}": the shares sum to ${sum}, not 1`);
  return shares;
}

/**
 * Splits `documents` by the shares after a seeded shuffle (Fisher-Yates driven by mulberry32):
 * the same seed gives the same split on every machine, and each document lands in exactly one
 * partition. A partition's size is its cumulative share of the corpus, rounded, less the ones
 * before it, so the sizes add up to the corpus and each is within one document of its share.
 */
export function partitionCorpus<T>(documents: readonly T[], shares: readonly PartitionShare[], seed: number): Map<Partition, T[]> {
  const shuffled = seededShuffle(documents, seed);
  const parts = new Map<Partition, T[]>();
  let cumulative = 0;
  let start = 0;
  shares.forEach(({ partition, share }, index) => {
    cumulative += share;
    const end = index === shares.length - 1 ? shuffled.length : Math.round(cumulative * shuffled.length);
    parts.set(partition, shuffled.slice(start, end));
    start = end;
  });
  return parts;
}

/** A copy of `items` in an order that depends only on `seed` (Fisher-Yates driven by mulberry32). */
export function seededShuffle<T>(items: readonly T[], seed: number): T[] {
  const random = mulberry32(seed);
  const shuffled = [...items];
  for (let index = shuffled.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [shuffled[index], shuffled[other]] = [shuffled[other]!, shuffled[index]!];
  }
  return shuffled;
}

/** What the evaluation needs of the product to upload files: a user's upload, and the platform operator's. */
export interface PartitionUploads {
  /** A user's upload (the product's uploadDocument), as the evaluator of the organization. */
  document: UploadFile;
  /** A new platform LOCAL knowledge base (the operator's PlatformKnowledge), and an upload into it. */
  knowledgeBase(name: string): Promise<{ id: string; upload: UploadFile }>;
}

export interface PartitionedCorpus extends IngestedDocuments {
  shares: PartitionShare[];
  seed: number;
  /** BEIR document id → the partition it went to */
  partitionOf: Map<string, Partition>;
  /** The platform knowledge base made for the knowledge-base partition (the caller removes it), or null. */
  knowledgeBaseId: string | null;
  /** The providers of the partitions with a share: every query asks all of them. */
  providers: string[];
}

/**
 * Ingests the corpus split across the sources into one fresh organization: conversations as
 * ingestConversations writes them, documents through a user's upload, and the knowledge-base
 * partition through the operator's upload into a new platform LOCAL knowledge base. The uploads
 * are PENDING until the caller drains the indexers; then mapChunksToDocuments and
 * mapPassagesToDocuments (document-evaluation.ts) complete the mapping of hits to BEIR ids.
 */
export async function ingestPartitioned(
  database: Database,
  dataset: BeirDataset,
  shares: readonly PartitionShare[],
  seed: number,
  uploads: PartitionUploads,
  onProgress?: (done: number, total: number) => void,
): Promise<PartitionedCorpus> {
  const tenant = await createEvaluationOrganization(database, `${dataset.name}-partitioned`, `Evaluation (partitioned): ${dataset.name}`);
  const parts = partitionCorpus(dataset.corpus, shares, seed);
  const corpus: PartitionedCorpus = {
    tenant,
    documentIdOf: new Map(),
    beirIdOfDocument: new Map(),
    refused: [],
    shares: [...shares],
    seed,
    partitionOf: new Map([...parts].flatMap(([partition, documents]) => documents.map((document) => [document.id, partition] as const))),
    knowledgeBaseId: null,
    providers: shares.filter(({ share }) => share > 0).flatMap(({ partition }) => [...PROVIDERS_OF[partition]]),
  };
  let before = 0;
  const progress = (done: number) => onProgress?.(before + done, dataset.corpus.length);
  const conversations: readonly BeirDocument[] = parts.get("conversations") ?? [];
  await ingestConversations(database, corpus, conversations, progress);
  before += conversations.length;
  const documents = parts.get("documents") ?? [];
  await uploadDocuments(corpus, documents, uploads.document, { onProgress: progress });
  before += documents.length;
  const knowledge = parts.get("knowledge-base") ?? [];
  if (knowledge.length > 0) {
    const base = await uploads.knowledgeBase(`Evaluation: ${dataset.name} (${tenant.organizationId})`);
    corpus.knowledgeBaseId = base.id;
    await uploadDocuments(corpus, knowledge, base.upload, { onProgress: progress });
  }
  return corpus;
}

export interface PartitionedRow {
  /** `--fusions` name, or null for the service's default fusion */
  fusion: string | null;
  /** null: the deployment's default (no alpha in the input) */
  alpha: number | null;
  partitioned: EvaluationRow;
  /** The same corpus, queries and alpha, all of it in one provider (conversations). */
  oneProvider: EvaluationRow;
}

/**
 * Every query at each alpha (and each fusion), over the partitioned corpus with all its
 * providers and over the same corpus in one provider. The partitioned run reads up to five
 * pages, as a documents run does: a document's chunks and passages take one place.
 */
export async function comparePartitioned(
  service: EvaluatedSearch,
  dataset: BeirDataset,
  partitioned: PartitionedCorpus,
  oneProvider: IngestedCorpus,
  runs: { alphas: readonly (number | null)[]; fusions: readonly (string | null)[] },
  options: { onRow?: (row: PartitionedRow) => void; evaluate?: Pick<EvaluateOptions, "onRanking"> } = {},
): Promise<PartitionedRow[]> {
  const rows: PartitionedRow[] = [];
  for (const fusion of runs.fusions) {
    const method = fusion === null ? null : FUSIONS[fusion];
    if (method === undefined) throw new Error(`unknown fusion "${fusion}": ${Object.keys(FUSIONS).join(", ")}`);
    const fused = method === null ? {} : { fusion: method };
    for (const alpha of runs.alphas) {
      const label = `${fusion ?? "default fusion"}, ${alpha === null ? "default α" : `α=${alpha}`}`;
      const row: PartitionedRow = {
        fusion,
        alpha,
        partitioned: await evaluateAlpha(service, dataset, partitioned, alpha, `partitioned, ${label}`, { ...fused, ...options.evaluate, providers: partitioned.providers, maxPages: 5 }),
        oneProvider: await evaluateAlpha(service, dataset, oneProvider, alpha, `one provider (conversations), ${label}`, { ...fused, providers: PROVIDERS_OF.conversations }),
      };
      rows.push(row);
      options.onRow?.(row);
    }
  }
  return rows;
}
