/**
 * The partitioned evaluation (`npm run eval -- --partition …`) end to end on a tiny BEIR data set
 * written here: 30 documents, each about an invented word of its own (every fifth one long
 * enough to be cut into several chunks), and a query per document asking for its word. The
 * corpus is split across conversations, uploaded documents and a platform LOCAL knowledge base
 * of one organization through the product's own paths (the real upload, the real indexer), and
 * searched through the real SearchService with every provider of those sources.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { NoResultCache } from "../../lib/cache/result-cache.js";
import { loadConfig } from "../../lib/config.js";
import { loadBeirDataset, type BeirDataset } from "../../lib/evaluation/beir.js";
import { mapChunksToDocuments, mapPassagesToDocuments } from "../../lib/evaluation/document-evaluation.js";
import { evaluateRun } from "../../lib/evaluation/metrics.js";
import { comparePartitioned, ingestPartitioned, parsePartition, partitionCorpus, PROVIDERS_OF, type PartitionedCorpus, type PartitionedRow, type Partition } from "../../lib/evaluation/partitioned-evaluation.js";
import { indexCorpus, ingestCorpus, type IngestedCorpus } from "../../lib/evaluation/search-evaluation.js";
import { silentLogger } from "../../lib/logger.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { DocumentStore } from "../../subgraphs/knowledge-base/document-store.js";
import { PlatformKnowledge } from "../../subgraphs/knowledge-base/platform-knowledge.js";
import { uploadDocument } from "../../subgraphs/knowledge-base/upload.js";
import { searchSubgraph, type SearchSubgraph } from "../../subgraphs/search/index.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

const SYLLABLES = ["ka", "lo", "mi", "nu", "pe", "ro", "su", "ti", "va", "ze"];
/** An invented word per document: no other document has it, so its query has one right answer. */
const wordOf = (index: number) => `${SYLLABLES[index % 10]}${SYLLABLES[Math.floor(index / 10) % 10]}${SYLLABLES[(index * 7) % 10]}drax`;
const FILLER = "The committee reviewed the findings, compared them with earlier reports and noted where the measurements disagreed. ";
const COUNT = 30;
const SHARES = "conversations=0.4,documents=0.4,knowledge-base=0.2";
const SEED = 7;

let db: TestDatabase;
let search: SearchSubgraph;
let platform: PlatformKnowledge;
let folder: string;
let dataset: BeirDataset;
let partitioned: PartitionedCorpus;
let oneProvider: IngestedCorpus;
let rows: PartitionedRow[];
const rankings = new Map<string, string[]>();

function writeDataset(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "beir-partitioned-"));
  const corpus = Array.from({ length: COUNT }, (_, index) => {
    const word = wordOf(index);
    // Every fifth document is long: several chunks, each naming its word.
    const text = index % 5 === 0 ? Array.from({ length: 8 }, () => `${FILLER.repeat(5)}This section is about ${word}. `).join("\n\n") : `${FILLER}This note is about ${word} and nothing else.`;
    return JSON.stringify({ _id: `doc-${index}`, title: `Notes on ${word}`, text });
  });
  fs.writeFileSync(path.join(root, "corpus.jsonl"), `${corpus.join("\n")}\n`);
  fs.writeFileSync(path.join(root, "queries.jsonl"), `${Array.from({ length: COUNT }, (_, index) => JSON.stringify({ _id: `q-${index}`, text: `what about ${wordOf(index)}` })).join("\n")}\n`);
  fs.mkdirSync(path.join(root, "qrels"));
  fs.writeFileSync(path.join(root, "qrels", "train.tsv"), `query-id\tcorpus-id\tscore\n${Array.from({ length: COUNT }, (_, index) => `q-${index}\tdoc-${index}\t1`).join("\n")}\n`);
  return root;
}

beforeAll(async () => {
  folder = writeDataset();
  dataset = await loadBeirDataset(folder);
  db = await createTestDatabase();
  const config = loadConfig({ SEARCH_INDEXER: "false", SEARCH_PROVIDER_TIMEOUT_MS: "60000" });
  search = await searchSubgraph({ database: db.database, config, logger: silentLogger, embedder: new FeatureHashingEmbedder(), cache: new NoResultCache() });
  platform = new PlatformKnowledge(db.database.prisma, config.knowledgeBase.maxDocumentBytes);
  const store = new DocumentStore(db.database.prisma);
  partitioned = await ingestPartitioned(db.database, dataset, parsePartition(SHARES), SEED, {
    document: (tenant, fileName, bytes) => uploadDocument(store, tenant, { fileName, mediaType: "text/markdown", contentBase64: bytes.toString("base64") }, config.knowledgeBase.maxDocumentBytes),
    knowledgeBase: async (name) => {
      const base = await platform.createKnowledgeBase({ name });
      return { id: base.id, upload: (_tenant, fileName, bytes) => platform.upload(base.id, { fileName, bytes, mediaType: "text/markdown" }) };
    },
  });
  oneProvider = await ingestCorpus(db.database, dataset);
  await indexCorpus(search.indexer);
  await indexCorpus(search.domains.documents.indexer);
  await mapChunksToDocuments(db.database, partitioned);
  await mapPassagesToDocuments(db.database, partitioned, partitioned.knowledgeBaseId!);
  rows = await comparePartitioned(search.service, dataset, partitioned, oneProvider, { alphas: [0.5], fusions: [null] }, { evaluate: { onRanking: (queryId, ranked) => rankings.set(queryId, [...ranked]) } });
}, 60_000);

afterAll(async () => {
  await search?.stop?.();
  await db?.dispose();
  await closeWorkerPools();
  if (folder) fs.rmSync(folder, { recursive: true, force: true });
});

const membersOf = (partition: Partition) => dataset.corpus.filter((document) => partitioned.partitionOf.get(document.id) === partition).map((document) => document.id);

describe("the split", () => {
  it("puts every corpus document in exactly one partition, in the stated proportions", () => {
    const sizes = { conversations: membersOf("conversations").length, documents: membersOf("documents").length, "knowledge-base": membersOf("knowledge-base").length };
    expect(sizes).toEqual({ conversations: 0.4 * COUNT, documents: 0.4 * COUNT, "knowledge-base": 0.2 * COUNT });
    expect(partitioned.partitionOf.size).toBe(COUNT);
    expect(new Set(partitioned.partitionOf.keys())).toEqual(new Set(dataset.corpus.map((document) => document.id)));
  });

  it("is the seed's: the same seed splits the same way, another seed another way", () => {
    const shares = parsePartition(SHARES);
    const ids = dataset.corpus.map((document) => document.id);
    expect(partitionCorpus(ids, shares, SEED)).toEqual(partitionCorpus(ids, shares, SEED));
    expect(new Map([...partitionCorpus(ids, shares, SEED)].map(([partition, members]) => [partition, [...members].sort()]))).toEqual(
      new Map((["conversations", "documents", "knowledge-base"] as const).map((partition) => [partition, membersOf(partition).sort()])),
    );
    expect(partitionCorpus(ids, shares, SEED + 1)).not.toEqual(partitionCorpus(ids, shares, SEED));
  });

  it("went through the product's sources: conversations and documents of one organization, the rest in a platform knowledge base", async () => {
    const { prisma } = db.database;
    const organizationId = partitioned.tenant.organizationId;
    expect(await prisma.conversation.count({ where: { organizationId } })).toBe(membersOf("conversations").length);
    expect(await prisma.document.count({ where: { organizationId, status: "READY" } })).toBe(membersOf("documents").length);
    expect(await prisma.document.count({ where: { knowledgeBaseId: partitioned.knowledgeBaseId!, status: "READY" } })).toBe(membersOf("knowledge-base").length);
    expect(partitioned.refused).toEqual([]);
    expect(partitioned.providers).toEqual(["conversations.keyword", "conversations.semantic", "documents.keyword", "documents.semantic", "knowledge-bases"]);
  });

  it("refuses shares that do not sum to 1, an unknown source, or one named twice", () => {
    expect(() => parsePartition("conversations=0.5,documents=0.4")).toThrow(/sum to 0.9/);
    expect(() => parsePartition("conversations=0.5,web=0.5")).toThrow(/one of conversations, documents, knowledge-base/);
    expect(() => parsePartition("documents=0.5,documents=0.5")).toThrow(/named twice/);
    expect(parsePartition("conversations=0.1,documents=0.2,knowledge-base=0.7").map(({ share }) => share)).toEqual([0.1, 0.2, 0.7]);
  });
});

describe("hits", () => {
  it.each(["conversations", "documents", "knowledge-base"] as const)("from the %s providers map back to the corpus ids of that partition", async (partition) => {
    const members = membersOf(partition);
    for (const beirId of members.slice(0, 3)) {
      const index = Number(beirId.slice("doc-".length));
      const result = await search.service.search(partitioned.tenant, { query: `what about ${wordOf(index)}`, alpha: 0.5, limit: 20, providers: [...PROVIDERS_OF[partition]] });
      expect(result.hits.length).toBeGreaterThan(0);
      await partitioned.mapNewHits!(result.hits.map((hit) => hit.ref.id).filter((id) => !partitioned.documentIdOf.has(id)));
      const mapped = result.hits.map((hit) => partitioned.documentIdOf.get(hit.ref.id));
      // Every hit is one of this partition's documents, and the best is the one asked for.
      for (const id of mapped) expect(id !== undefined && members.includes(id)).toBe(true);
      expect(mapped[0]).toBe(beirId);
    }
  });

  it("count a document's chunks once, at its best rank", async () => {
    const long = membersOf("documents").find((id) => Number(id.slice("doc-".length)) % 5 === 0)!;
    expect(long).toBeDefined();
    const index = Number(long.slice("doc-".length));
    // Chunk by chunk (distinct off): several of the long document's chunks match.
    const result = await search.service.search(partitioned.tenant, { query: `what about ${wordOf(index)}`, alpha: 0.5, limit: 100, distinct: false, providers: [...PROVIDERS_OF.documents] });
    const chunksOfLong = result.hits.filter((hit) => partitioned.documentIdOf.get(hit.ref.id) === long);
    expect(chunksOfLong.length).toBeGreaterThan(1);
    const ranked = rankings.get(`q-${index}`)!;
    expect(ranked.filter((id) => id === long)).toHaveLength(1);
    for (const ranking of rankings.values()) expect(new Set(ranking).size).toBe(ranking.length);
    // Only corpus ids are ranked: every hit mapped.
    const corpusIds = new Set(dataset.corpus.map((document) => document.id));
    for (const ranking of rankings.values()) for (const id of ranking) expect(corpusIds.has(id)).toBe(true);
  });
});

describe("the metrics", () => {
  it("are computed from the rankings, for the partitioned corpus beside the same corpus in one provider", () => {
    expect(rows).toHaveLength(1);
    const [row] = rows as [PartitionedRow];
    expect(row.alpha).toBe(0.5);
    const scores = evaluateRun(rankings, dataset.qrels, [10, 100]);
    expect(row.partitioned.ndcgAt10).toBe(scores.ndcg[10]);
    expect(row.partitioned.recallAt100).toBe(scores.recall[100]);
    expect(row.partitioned.queries).toBe(COUNT);
    expect(row.partitioned.failedProviders).toBe(0);
    expect(row.partitioned.skippedProviders).toEqual([]);
    // Every query names its document's one word: found in every source, near the top.
    expect(row.partitioned.recallAt100).toBe(1);
    expect(row.partitioned.ndcgAt10).toBeGreaterThan(0.5);
    expect(row.oneProvider.recallAt100).toBe(1);
    expect(row.oneProvider.ndcgAt10).toBeGreaterThan(0.5);
    // Scored against other judgements the same rankings score otherwise: nothing is fixed.
    const shifted = new Map([...dataset.qrels].map(([queryId], index) => [queryId, new Map([[`doc-${(index + 1) % COUNT}`, 1]])]));
    expect(evaluateRun(rankings, shifted, [10]).ndcg[10]).toBeLessThan(row.partitioned.ndcgAt10);
  });
});

describe("npm run eval -- --partition", () => {
  it("wires the same run to the product: splits, compares per alpha and fusion, prints the table and writes <dataset>-<split>-partitioned.json", () => {
    const out = path.join(folder, "out");
    const { DATABASE_URL: _ignored, ...env } = process.env;
    const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/eval.ts", folder, "--partition", SHARES, "--seed", String(SEED), "--alphas", "0.5,1", "--fusions", "rrf", "--max-queries", "10", "--out", out], {
      env: { ...env, NODE_OPTIONS: "", EMBEDDER: "hashing", LOG_LEVEL: "warn" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.stderr).not.toMatch(/Error|refused|could not remove/);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/split conversations 0.4 \(12\), documents 0.4 \(12\), knowledge-base 0.2 \(6\), seed 7/);
    expect(run.stdout).toMatch(/\| rrf\s*\| 0\.50\s*\|/);
    const results = JSON.parse(fs.readFileSync(path.join(out, `${path.basename(folder)}-train-partitioned.json`), "utf8"));
    expect(results).toMatchObject({ queries: 10, seed: SEED, complete: true, partition: { conversations: { share: 0.4, documents: 12 }, documents: { share: 0.4, documents: 12 }, "knowledge-base": { share: 0.2, documents: 6 } } });
    expect(results.rows.map((row: PartitionedRow) => [row.fusion, row.alpha])).toEqual([["rrf", 0.5], ["rrf", 1]]);
    // Each query names its document's one word, in whichever source it landed.
    expect(results.rows[0].partitioned.ndcgAt10).toBeGreaterThan(0.5);
    // At alpha 1 the unified search gives SEMANTIC providers no weight and skips them, knowledge-bases among them.
    expect(results.rows[1].partitioned.skippedProviders).toContain("knowledge-bases");
  }, 60_000);
});
