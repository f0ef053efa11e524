/**
 * Documents in the unified search, against a real database: the indexer takes uploads (a
 * Markdown guide with headings, a generated PDF through extractText) to READY with chunks,
 * postings and vectors; `documents.keyword` and `documents.semantic` find the right chunk and
 * only for those who may see it (owner, teammate of a shared document; never a colleague of
 * another team or another organization); a failure leaves FAILED with a reason and nothing
 * indexed; deletion removes hits at once; usage counts rise once the batch is flushed.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { extractText } from "../../lib/documents/extract-text.js";
import type { Embedder } from "../../lib/retrieval/embeddings/embedder.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import type { EntityRef, ProviderHit, SearchProvider } from "../../lib/retrieval/search-provider.js";
import type { WordCorrection } from "../../lib/retrieval/typo-tolerance.js";
import { PgVectorStore } from "../../lib/retrieval/vector-stores/pgvector.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { DocumentStore, type DocumentFormat } from "../../subgraphs/knowledge-base/document-store.js";
import { documentSearch, type DocumentSearch } from "../../subgraphs/knowledge-base/search.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { pdfWithPages } from "../support/document-fixtures.js";
import { recordingLogger } from "../support/recording-logger.js";

const tenant = (organizationId: string, userId: string, teamIds: string[] = []): TenantContext => ({ organizationId, userId, teamIds, role: "member" as const, userName: null, userEmail: null });
const ann = tenant("acme", "ann", ["platform-team"]);
const bob = tenant("acme", "bob", ["platform-team"]);
const cat = tenant("acme", "cat", ["sales"]);
const gus = tenant("globex", "gus", ["platform-team"]);

const sha256 = (text: string | Uint8Array) => createHash("sha256").update(text).digest("hex");

const RUNBOOK = [
  "# Payments runbook",
  "",
  "What the on-call engineer does when payments stop.",
  "",
  "## Restarting the ledger",
  "",
  "Restart the ledger daemon with systemctl and watch the reconciliation queue drain.",
  "",
  "## Rotating keys",
  "",
  "Rotate the HSM credentials every quarter and record the fingerprint in the vault.",
  "",
].join("\n");

/** Statements one documents.keyword search takes (tenant scope, collection statistics, scoring). */
const KEYWORD_STATEMENTS = 2;

let db: TestDatabase;
let store: DocumentStore;
let search: DocumentSearch;
let keyword: SearchProvider;
let semantic: SearchProvider;
const embedder = new FeatureHashingEmbedder();
const logger = recordingLogger();
const sql = <T,>(text: string, ...values: unknown[]) => db.database.prisma.$queryRawUnsafe<T[]>(text, ...values);

function searchDomain(indexEmbedder: Embedder, indexer: Parameters<typeof documentSearch>[0]["indexer"] = {}): DocumentSearch {
  const vectorStore = new PgVectorStore(db.database);
  return documentSearch({ database: db.database, embedder: indexEmbedder, vectorStore, logger, indexer });
}

/** What the upload path does: create the document (PENDING, queued by trigger), store its text. */
async function upload(owner: TenantContext, fileName: string, format: DocumentFormat, text: string, teamId: string | null = null, bytes?: Uint8Array): Promise<string> {
  const contentHash = sha256(bytes ?? text);
  const { document } = await store.create(owner, { fileName, mediaType: "application/octet-stream", format, category: null, sizeBytes: bytes?.length ?? Buffer.byteLength(text), contentHash, teamId });
  await store.saveContent(owner.organizationId, contentHash, text);
  return document.id;
}

const find = (provider: SearchProvider, who: TenantContext, query: string): Promise<ProviderHit[]> =>
  provider.search({ tenant: who, query, window: 10, signal: new AbortController().signal, timeoutMs: 30_000 });

async function chunksOf(documentId: string) {
  return sql<{ id: string; text: string; heading_path: string[]; chunk_index: number }>(
    `SELECT id::text AS id, text, heading_path, chunk_index FROM document_chunks WHERE document_id = $1::uuid ORDER BY chunk_index`, documentId);
}

async function vectorsOf(chunkIds: string[]): Promise<number> {
  const [row] = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM embedding_chunks WHERE entity_type = 'document_chunk' AND entity_id = ANY($1::uuid[])`, chunkIds);
  return row!.n;
}

async function documentVectorCount(): Promise<number> {
  const [row] = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM embedding_chunks WHERE entity_type = 'document_chunk'`);
  return row!.n;
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = new DocumentStore(db.database.prisma);
  await new PgVectorStore(db.database).ensureReady(embedder.model, embedder.dimensions);
  search = searchDomain(embedder);
  keyword = search.providers.find((provider) => provider.name === "documents.keyword")!;
  semantic = search.providers.find((provider) => provider.name === "documents.semantic")!;
});
afterAll(async () => {
  await search?.indexer.stop();
  await db?.dispose();
  await closeWorkerPools();
});

describe("indexing and search", () => {
  let runbook: string;
  let payroll: string;
  let runbookChunks: Awaited<ReturnType<typeof chunksOf>>;
  let payrollChunks: Awaited<ReturnType<typeof chunksOf>>;

  beforeAll(async () => {
    runbook = await upload(ann, "runbook.md", "markdown", RUNBOOK, "platform-team");
    const pdf = await pdfWithPages([
      ["Quarterly payroll review", "Salary bands for engineering are revised in March."],
      ["Bonuses", "Bonus payouts follow the payroll calendar."],
    ]);
    const extracted = await extractText({ fileName: "payroll.pdf", bytes: pdf });
    payroll = await upload(ann, "payroll.pdf", "pdf", extracted.text, null, pdf);
    await upload(gus, "globex-runbook.md", "markdown", RUNBOOK.replace("Payments", "Globex"), "platform-team");
    expect(await search.indexer.drain()).toBe(3);
    runbookChunks = await chunksOf(runbook);
    payrollChunks = await chunksOf(payroll);
  });

  it("takes every document to READY with progress n/n, chunks under their headings and one vector per chunk", async () => {
    const documents = await store.findByIds(ann, [runbook, payroll]);
    for (const document of documents) {
      expect(document).toMatchObject({ status: "READY", failureReason: null });
      expect(document.chunksTotal).toBeGreaterThan(0);
      expect(document.chunksIndexed).toBe(document.chunksTotal);
    }
    expect(documents.find((d) => d.id === runbook)!.chunksTotal).toBe(runbookChunks.length);
    expect(runbookChunks.map((chunk) => chunk.heading_path)).toEqual([
      ["Payments runbook"],
      ["Payments runbook", "Restarting the ledger"],
      ["Payments runbook", "Rotating keys"],
    ]);
    expect(payrollChunks.length).toBeGreaterThan(0);
    expect(payrollChunks.map((chunk) => chunk.text).join(" ")).toContain("Salary bands");
    expect(await vectorsOf([...runbookChunks, ...payrollChunks].map((chunk) => chunk.id))).toBe(runbookChunks.length + payrollChunks.length);
    const [queue] = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM document_index_jobs`);
    expect(queue!.n).toBe(0);
    expect(logger.lines).toEqual([]);
  });

  it("finds the right chunk by keyword and by meaning, as DocumentChunk references", async () => {
    const restart = runbookChunks[1]!.id;
    const byKeyword = await find(keyword, ann, "restart the ledger daemon");
    expect(byKeyword[0]!.ref).toEqual({ typename: "DocumentChunk", id: restart });
    const bySemantic = await find(semantic, ann, "restart the ledger daemon");
    expect(bySemantic[0]!.ref).toEqual({ typename: "DocumentChunk", id: restart });
    // The heading is indexed with the chunk's text: "rotating keys" is only in a heading.
    expect((await find(keyword, ann, "rotating"))[0]!.ref.id).toBe(runbookChunks[2]!.id);
    expect((await find(keyword, ann, "salary bands"))[0]!.ref.id).toBe(payrollChunks[0]!.id);
    // Query text that looks like tsquery or SQL is just words.
    expect(await find(keyword, ann, "') OR 1=1; -- !&|")).toEqual([]);
  });

  it("shows a teammate the shared document's chunks and not the private one's; another team and another organization see nothing of them", async () => {
    const runbookIds = new Set(runbookChunks.map((chunk) => chunk.id));
    const payrollIds = new Set(payrollChunks.map((chunk) => chunk.id));
    for (const provider of [keyword, semantic]) {
      const bobRunbook = await find(provider, bob, "restart the ledger daemon");
      expect(bobRunbook[0]!.ref.id).toBe(runbookChunks[1]!.id);
      const bobPayroll = await find(provider, bob, "salary bands payroll bonus");
      expect(bobPayroll.filter((hit) => payrollIds.has(hit.ref.id))).toEqual([]);
      for (const outsider of [cat, gus]) {
        const hits = [...(await find(provider, outsider, "restart the ledger daemon")), ...(await find(provider, outsider, "salary bands payroll"))];
        expect(hits.filter((hit) => runbookIds.has(hit.ref.id) || payrollIds.has(hit.ref.id))).toEqual([]);
      }
    }
    // Globex's own copy is found by Globex only.
    const gusHits = await find(keyword, gus, "restart the ledger daemon");
    expect(gusHits.length).toBeGreaterThan(0);
    expect(gusHits.every((hit) => !runbookIds.has(hit.ref.id))).toBe(true);

    const refs: EntityRef[] = [...runbookChunks, ...payrollChunks].map((chunk) => ({ typename: "DocumentChunk", id: chunk.id }));
    const annLive = await search.liveEntities!(ann, [...refs, { typename: "Conversation", id: runbookChunks[0]!.id }, { typename: "DocumentChunk", id: "not-a-uuid" }]);
    expect(annLive).toEqual(new Set(refs.map((ref) => `DocumentChunk:${ref.id}`)));
    expect(await search.liveEntities!(bob, refs)).toEqual(new Set([...runbookIds].map((id) => `DocumentChunk:${id}`)));
    expect(await search.liveEntities!(cat, refs)).toEqual(new Set());
    expect(await search.liveEntities!(gus, refs)).toEqual(new Set());
  });

  it("corrects a misspelled word from the chunks the caller may see, and only from those (typo tolerance)", async () => {
    const misspelled = async (who: TenantContext, typoTolerance: boolean) => {
      const corrections: WordCorrection[] = [];
      const hits = await keyword.search({ tenant: who, query: "reconcilation queue", window: 10, signal: new AbortController().signal, timeoutMs: 30_000, typoTolerance, onCorrections: (found) => void corrections.push(...found) });
      return { hits, corrections };
    };
    // A teammate: the shared runbook's chunk, through the correction, which is reported.
    const bobs = await misspelled(bob, true);
    expect(bobs.hits[0]!.ref.id).toBe(runbookChunks[1]!.id);
    expect(bobs.corrections.map(({ typed, word, documents }) => ({ typed, word, documents }))).toEqual([{ typed: "reconcilation", word: "reconciliation", documents: 1 }]);
    expect(bobs.corrections[0]!.boost).toBeLessThan(1);
    // Off: only "queue" matches, and nothing is corrected.
    const bobsOff = await misspelled(bob, false);
    expect(bobsOff.corrections).toEqual([]);
    // Another team in the same organization: the word is in the organization's vocabulary, but in
    // no chunk cat may see, so nothing is found through it and nothing is reported (no suggestion).
    const cats = await misspelled(cat, true);
    expect(cats.corrections).toEqual([]);
    expect(cats.hits.filter((hit) => runbookChunks.some((chunk) => chunk.id === hit.ref.id))).toEqual([]);
  });

  it("checks the caller's scope on many chunks in one statement (semantic filter and cached-page check)", async () => {
    const refs: EntityRef[] = [...runbookChunks, ...payrollChunks].map((chunk) => ({ typename: "DocumentChunk", id: chunk.id }));
    let before = db.database.statements.count;
    await search.liveEntities!(bob, refs);
    expect(db.database.statements.count - before).toBe(1);
    await find(semantic, bob, "warm the query embedding cache");
    before = db.database.statements.count;
    await find(semantic, bob, "warm the query embedding cache");
    // The vector search and the scope filter.
    expect(db.database.statements.count - before).toBe(2);
  });

  it("raises usageCount and lastUsedAt once recorded hits are flushed, off the caller's path", async () => {
    const restart = runbookChunks[1]!.id;
    search.recordUsage(ann, [restart, runbookChunks[2]!.id]);
    search.recordUsage(bob, [restart]);
    // Not a reader of payroll: ignored.
    search.recordUsage(bob, [payrollChunks[0]!.id]);
    search.recordUsage(cat, [restart]);
    const before = await store.findByIds(ann, [runbook, payroll]);
    expect(before.map((d) => d.usageCount)).toEqual([0, 0]);
    await search.flushUsage();
    const after = new Map((await store.findByIds(ann, [runbook, payroll])).map((d) => [d.id, d]));
    expect(after.get(runbook)!.usageCount).toBe(3);
    expect(after.get(runbook)!.lastUsedAt).toBeInstanceOf(Date);
    expect(after.get(payroll)!.usageCount).toBe(0);
    expect(after.get(payroll)!.lastUsedAt).toBeNull();
  });

  it("removes a deleted document's hits at once, from both providers and from cached pages", async () => {
    await store.delete(ann, runbook);
    expect(await find(keyword, ann, "restart the ledger daemon")).toEqual([]);
    const semanticHits = await find(semantic, ann, "restart the ledger daemon");
    expect(semanticHits.filter((hit) => runbookChunks.some((chunk) => chunk.id === hit.ref.id))).toEqual([]);
    expect(await search.liveEntities!(ann, runbookChunks.map((chunk) => ({ typename: "DocumentChunk", id: chunk.id })))).toEqual(new Set());
    expect(await vectorsOf(runbookChunks.map((chunk) => chunk.id))).toBe(0);
  });
});

describe("failures leave nothing behind", () => {
  it("marks a document whose text yields no chunks FAILED with a reason, and does not retry it", async () => {
    const id = await upload(ann, "blank.txt", "text", "   \n\n   \n");
    await search.indexer.drain();
    const [document] = await store.findByIds(ann, [id]);
    expect(document).toMatchObject({ status: "FAILED", chunksIndexed: 0 });
    expect(document!.failureReason).toMatch(/blank\.txt.*no text/);
    expect(await chunksOf(id)).toEqual([]);
    const jobs = await sql(`SELECT 1 FROM document_index_jobs WHERE document_id = $1::uuid`, id);
    expect(jobs).toEqual([]);
  });

  it("marks FAILED when the embedder throws part-way, removing the chunks, postings and vectors already written; a later retry succeeds", async () => {
    let calls = 0;
    const flaky: Embedder = {
      model: embedder.model,
      dimensions: embedder.dimensions,
      async embed(texts) {
        calls += 1;
        if (calls > 1) throw new Error("embedding service answered 503\nSlow down");
        return embedder.embed(texts);
      },
    };
    const vectorsBefore = await documentVectorCount();
    const failing = searchDomain(flaky, { embedSlice: 1 });
    const id = await upload(bob, "oncall.md", "markdown", RUNBOOK.replace("Payments", "On-call"), "platform-team");
    expect(await failing.indexer.drain()).toBe(1);
    expect(calls).toBe(2);
    const [document] = await store.findByIds(bob, [id]);
    expect(document).toMatchObject({ status: "FAILED", failureReason: "embedding service answered 503 Slow down", chunksIndexed: 0, chunksTotal: null });
    expect(await chunksOf(id)).toEqual([]);
    const [postings] = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM document_keyword_postings WHERE document_id = $1::uuid`, id);
    expect(postings!.n).toBe(0);
    expect(await documentVectorCount()).toBe(vectorsBefore);
    expect(await find(keyword, bob, "on-call")).toEqual([]);

    // The failure may pass: the job waits with backoff, and the next attempt indexes it.
    const [job] = await sql<{ attempts: number; waiting: boolean; last_error: string }>(
      `SELECT attempts, run_after > clock_timestamp() AS waiting, last_error FROM document_index_jobs WHERE document_id = $1::uuid`, id);
    expect(job).toEqual({ attempts: 1, waiting: true, last_error: "embedding service answered 503 Slow down" });
    await sql(`UPDATE document_index_jobs SET run_after = clock_timestamp() WHERE document_id = $1::uuid`, id);
    expect(await search.indexer.drain()).toBe(1);
    const [retried] = await store.findByIds(bob, [id]);
    expect(retried).toMatchObject({ status: "READY", failureReason: null, chunksIndexed: 3, chunksTotal: 3 });
  });

  it("retries a document whose indexing process died under it, and FAILs it once it has been interrupted more often than its attempts allow", async () => {
    const maxAttempts = 3;
    /** A worker that dies in the middle: its chunks are stored and its embedder never answers; nothing cleans up. */
    const dieUnder = async (id: string): Promise<void> => {
      let embedding!: () => void;
      const reachedEmbedding = new Promise<void>((resolve) => (embedding = resolve));
      const dying = searchDomain({ model: embedder.model, dimensions: embedder.dimensions, embed: () => (embedding(), new Promise<number[][]>(() => undefined)) }, { embedSlice: 1, maxAttempts });
      void dying.indexer.drain();
      await reachedEmbedding;
      // Its lease runs out, as it does for a process that is gone.
      await sql(`UPDATE document_index_jobs SET run_after = clock_timestamp() WHERE document_id = $1::uuid`, id);
    };
    const job = async (id: string) => (await sql<{ attempts: number }>(`SELECT attempts FROM document_index_jobs WHERE document_id = $1::uuid`, id))[0];

    // Interrupted once: the next worker indexes it, the dead one's chunks replaced, not doubled.
    const once = await upload(bob, "interrupted-once.md", "markdown", RUNBOOK.replace("Payments", "Wobbly"));
    await dieUnder(once);
    expect(await job(once)).toEqual({ attempts: 1 });
    expect((await store.findByIds(bob, [once]))[0]).toMatchObject({ status: "INDEXING" });
    expect(await searchDomain(embedder, { maxAttempts }).indexer.drain()).toBe(1);
    expect((await store.findByIds(bob, [once]))[0]).toMatchObject({ status: "READY", chunksIndexed: 3, chunksTotal: 3 });
    expect(await chunksOf(once)).toHaveLength(3);

    // Interrupted every time (a file that takes its process down): FAILED after maxAttempts
    // starts, saying why, with what the dead attempts left removed, rather than retried forever.
    const poison = await upload(bob, "poison.md", "markdown", RUNBOOK.replace("Payments", "Poison"));
    for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
      await dieUnder(poison);
      expect(await job(poison)).toEqual({ attempts: attempt });
    }
    expect(await searchDomain(embedder, { maxAttempts }).indexer.drain()).toBe(1);
    const [failed] = await store.findByIds(bob, [poison]);
    expect(failed).toMatchObject({ status: "FAILED", chunksIndexed: 0, chunksTotal: null });
    expect(failed!.failureReason).toMatch(/^Indexing was interrupted 3 times before it finished/);
    expect(await chunksOf(poison)).toEqual([]);
    expect(await job(poison)).toBeUndefined();
    expect(await find(keyword, bob, "poison")).toEqual([]);
  });

  it("hands an unfinished document back to the queue on stop, PENDING, with what it wrote removed", async () => {
    const vectorsBefore = await documentVectorCount();
    let stopping: Promise<void> | null = null;
    const domain = searchDomain({
      model: embedder.model,
      dimensions: embedder.dimensions,
      async embed(texts) {
        stopping ??= domain.indexer.stop();
        return embedder.embed(texts);
      },
    }, { embedSlice: 1 });
    const id = await upload(ann, "interrupted.md", "markdown", RUNBOOK.replace("Payments", "Interrupted"));
    expect(await domain.indexer.drain()).toBe(0);
    await stopping;
    const [document] = await store.findByIds(ann, [id]);
    expect(document).toMatchObject({ status: "PENDING", chunksIndexed: 0, chunksTotal: null, failureReason: null });
    expect(await chunksOf(id)).toEqual([]);
    expect(await documentVectorCount()).toBe(vectorsBefore);
    const [job] = await sql<{ attempts: number; ready: boolean }>(`SELECT attempts, run_after <= clock_timestamp() AS ready FROM document_index_jobs WHERE document_id = $1::uuid`, id);
    expect(job).toEqual({ attempts: 0, ready: true });
    expect(await search.indexer.drain()).toBe(1);
    expect((await store.findByIds(ann, [id]))[0]!.status).toBe("READY");
  });

  it("ends quietly when the document is deleted while it is being embedded, leaving no chunks or vectors", async () => {
    const warningsBefore = logger.lines.length;
    let id = "";
    const deleting: Embedder = {
      model: embedder.model,
      dimensions: embedder.dimensions,
      async embed(texts) {
        if (id) await store.delete(ann, id);
        return embedder.embed(texts);
      },
    };
    const vectorsBefore = await documentVectorCount();
    const indexer = searchDomain(deleting, { embedSlice: 1 }).indexer;
    id = await upload(ann, "doomed.md", "markdown", RUNBOOK.replace("Payments", "Doomed"));
    expect(await indexer.drain()).toBe(1);
    expect(await store.findByIds(ann, [id])).toEqual([]);
    expect(await chunksOf(id)).toEqual([]);
    expect(await documentVectorCount()).toBe(vectorsBefore);
    expect(await sql(`SELECT 1 FROM document_index_jobs WHERE document_id = $1::uuid`, id)).toEqual([]);
    expect(logger.lines.slice(warningsBefore)).toEqual([]);
  });
});

// The indexer writes a document's chunks and postings in one transaction, then its vectors a
// slice at a time while the document is INDEXING; a READY document is set back to PENDING to
// be indexed again. Until it is READY (again), nothing of it may be found: a half-indexed
// document is found by keyword and not by meaning, or by its first slices only.
describe("documents that are not READY", () => {
  const GUIDE = "# Quokka husbandry\n\nFeed the quokka fresh leaves at dawn.\n\n## Enclosures\n\nA quokka enclosure needs shade and a water trough.\n";
  const QUERY = "quokka enclosure leaves";

  async function foundBy(who: TenantContext, chunkIds: readonly string[]) {
    const ours = (hits: ProviderHit[]) => hits.filter((hit) => chunkIds.includes(hit.ref.id)).map((hit) => hit.ref.id);
    const refs: EntityRef[] = chunkIds.map((id) => ({ typename: "DocumentChunk", id }));
    return {
      keyword: ours(await find(keyword, who, QUERY)),
      semantic: ours(await find(semantic, who, QUERY)),
      live: [...(await search.liveEntities!(who, refs))],
    };
  }
  const nothing = { keyword: [], semantic: [], live: [] };

  it("finds nothing of a document caught mid-indexing (chunks stored, some vectors written), and all of it once READY", async () => {
    let id = "";
    let calls = 0;
    let midway: { status: string; chunks: number; vectors: number; found: Awaited<ReturnType<typeof foundBy>> } | null = null;
    const probing: Embedder = {
      model: embedder.model,
      dimensions: embedder.dimensions,
      async embed(texts) {
        calls += 1;
        // The second slice: the first chunk's vector is in the store, the postings of all of them.
        if (calls === 2) {
          const chunkIds = (await chunksOf(id)).map((chunk) => chunk.id);
          const [document] = await store.findByIds(ann, [id]);
          midway = { status: document!.status, chunks: chunkIds.length, vectors: await vectorsOf(chunkIds), found: await foundBy(ann, chunkIds) };
        }
        return embedder.embed(texts);
      },
    };
    id = await upload(ann, "quokkas.md", "markdown", GUIDE, "platform-team");
    expect(await searchDomain(probing, { embedSlice: 1 }).indexer.drain()).toBe(1);
    expect(midway).toEqual({ status: "INDEXING", chunks: 2, vectors: 1, found: nothing });

    const chunkIds = (await chunksOf(id)).map((chunk) => chunk.id);
    expect((await store.findByIds(ann, [id]))[0]!.status).toBe("READY");
    for (const who of [ann, bob]) {
      const found = await foundBy(who, chunkIds);
      expect(found.keyword).toEqual(expect.arrayContaining(chunkIds));
      expect(found.semantic).toEqual(expect.arrayContaining(chunkIds));
      expect(found.live.sort()).toEqual(chunkIds.map((chunkId) => `DocumentChunk:${chunkId}`).sort());
    }
  });

  it("hides a READY document's old chunks while it waits to be indexed again, and after a failure", async () => {
    const id = await upload(bob, "quokka-care.md", "markdown", GUIDE.replace("Quokka husbandry", "Quokka care"), "platform-team");
    await search.indexer.drain();
    const chunkIds = (await chunksOf(id)).map((chunk) => chunk.id);
    expect((await foundBy(bob, chunkIds)).keyword.length).toBeGreaterThan(0);
    // Set back to PENDING (the trigger queues it again), as a re-index does; its chunks are still stored.
    await sql(`UPDATE documents SET status = 'PENDING' WHERE id = $1::uuid`, id);
    for (const who of [bob, ann]) expect(await foundBy(who, chunkIds)).toEqual(nothing);
    await sql(`UPDATE documents SET status = 'FAILED', failure_reason = 'the embedder went away' WHERE id = $1::uuid`, id);
    expect(await foundBy(bob, chunkIds)).toEqual(nothing);
    await sql(`UPDATE documents SET status = 'READY', failure_reason = NULL WHERE id = $1::uuid`, id);
    const found = await foundBy(bob, chunkIds);
    expect(found.keyword).toEqual(expect.arrayContaining(chunkIds));
    expect(found.live).toHaveLength(chunkIds.length);
    await sql(`DELETE FROM document_index_jobs WHERE document_id = $1::uuid`, id);
  });

  it("still answers a keyword search in its statements (collection statistics and scoring)", async () => {
    await find(keyword, ann, QUERY);
    const before = db.database.statements.count;
    await find(keyword, ann, QUERY);
    expect(db.database.statements.count - before).toBe(KEYWORD_STATEMENTS);
  });
});
