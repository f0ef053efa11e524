/**
 * The benchmark corpus: N generated conversations (lib/demo-data's deterministic generator,
 * streamed, so 100k never sit in memory) written into one organization through the same Prisma
 * calls and the same triggers as real traffic, so the keyword index (postings, document
 * lengths) and the indexing queue are built by the product itself. Vectors then come from the
 * product's own ConversationIndexer draining that queue, and the HNSW index is built after the
 * bulk load, which is much faster than maintaining it row by row (see DESIGN.md).
 *
 * Also here: the query pool (drawn from the same generator, so queries look like what people
 * asked), and the tenant every benchmark request runs as.
 */
import type { Database } from "../lib/database/connect.js";
import { demoConversations, type DemoConversation } from "../lib/demo-data/conversations.js";
import { silentLogger } from "../lib/logger.js";
import type { TenantContext } from "../lib/tenancy/token.js";
import type { Embedder } from "../lib/retrieval/embeddings/embedder.js";
import { chunkingFor } from "../lib/retrieval/chunking.js";
import { ConversationIndexer } from "../subgraphs/conversations/search/conversation-indexer.js";
import { PgVectorStore } from "../lib/retrieval/vector-stores/pgvector.js";

export const BENCH_ORGANIZATION_ID = "bench-org";
export const BENCH_USER_IDS = Array.from({ length: 8 }, (_, index) => `bench-user-${index}`);
/** The generator's default seed: the corpus is the demo organization's, only larger. */
export const CORPUS_SEED = 42;

export const BENCH_TENANT: TenantContext = {
  organizationId: BENCH_ORGANIZATION_ID,
  userId: BENCH_USER_IDS[0]!,
  teamIds: [],
  role: "member",
  userName: "Benchmark",
  userEmail: null,
};

/** Conversations per createMany round trip: large enough to amortize the statement-level trigger, small enough for bind-parameter limits. */
const INSERT_BATCH = 250;

export interface InsertStats {
  conversations: number;
  messages: number;
  /** Characters of message content written. */
  characters: number;
  /** Wall time of the whole load, generation included. */
  seconds: number;
  /** Time spent in the database calls alone (inserts plus the triggers they fire). */
  databaseSeconds: number;
  conversationsPerSecond: number;
  messagesPerSecond: number;
  /** Rates over database time only: what the database and its triggers sustain. */
  databaseConversationsPerSecond: number;
  databaseMessagesPerSecond: number;
  keywordPostings: number;
}

export interface IndexStats {
  embedder: string;
  conversations: number;
  chunks: number;
  seconds: number;
  conversationsPerSecond: number;
  chunksPerSecond: number;
  /** Jobs left failing after the drain (should be 0). */
  failing: number;
}

export interface CorpusStats {
  insert: InsertStats;
  index: IndexStats;
  /** Building the HNSW index over all vectors after the load. */
  hnswSeconds: number;
  analyzeSeconds: number;
}

export type Progress = (message: string) => void;

/** Inserts `count` generated conversations with their messages; the project's triggers index them. */
export async function insertConversations(database: Database, count: number, progress: Progress = () => {}): Promise<InsertStats> {
  const { prisma } = database;
  await prisma.organization.create({ data: { id: BENCH_ORGANIZATION_ID, name: "Benchmark organization" } });
  await prisma.user.createMany({ data: BENCH_USER_IDS.map((id, index) => ({ organizationId: BENCH_ORGANIZATION_ID, id, name: `Benchmark user ${index}` })) });

  const started = performance.now();
  let databaseMs = 0;
  let conversations = 0;
  let messages = 0;
  let characters = 0;
  let lastReport = started;
  let batch: DemoConversation[] = [];

  const flush = async () => {
    if (batch.length === 0) return;
    const dbStarted = performance.now();
    const created = await prisma.conversation.createManyAndReturn({
      data: batch.map((conversation) => ({
        organizationId: BENCH_ORGANIZATION_ID,
        userId: BENCH_USER_IDS[conversation.ownerIndex % BENCH_USER_IDS.length]!,
        title: conversation.title,
        createdAt: conversation.createdAt,
        updatedAt: conversation.createdAt,
      })),
      select: { id: true },
    });
    const rows = batch.flatMap((conversation, index) =>
      conversation.messages.map((message, position) => ({
        conversationId: created[index]!.id,
        organizationId: BENCH_ORGANIZATION_ID,
        position,
        role: message.role,
        content: message.content,
        // Token counts do not affect search; the real tokenizer would make loading 100k
        // conversations take many minutes longer for nothing the benchmark measures.
        tokenCount: Math.ceil(message.content.length / 4),
        createdAt: new Date(conversation.createdAt.getTime() + position * 75_000),
      })),
    );
    await prisma.message.createMany({ data: rows });
    databaseMs += performance.now() - dbStarted;
    conversations += batch.length;
    messages += rows.length;
    characters += rows.reduce((sum, row) => sum + row.content.length, 0);
    batch = [];
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      const seconds = (lastReport - started) / 1000;
      progress(`  inserted ${conversations}/${count} conversations (${(conversations / seconds).toFixed(0)}/s)`);
    }
  };

  for (const conversation of demoConversations({ count, seed: CORPUS_SEED, users: BENCH_USER_IDS.length })) {
    batch.push(conversation);
    if (batch.length === INSERT_BATCH) await flush();
  }
  await flush();
  const seconds = (performance.now() - started) / 1000;
  const databaseSeconds = databaseMs / 1000;
  const [postings] = await prisma.$queryRaw<{ count: number }[]>`SELECT count(*)::int AS count FROM keyword_postings`;
  return {
    conversations,
    messages,
    characters,
    seconds,
    databaseSeconds,
    conversationsPerSecond: conversations / seconds,
    messagesPerSecond: messages / seconds,
    databaseConversationsPerSecond: conversations / databaseSeconds,
    databaseMessagesPerSecond: messages / databaseSeconds,
    keywordPostings: postings?.count ?? 0,
  };
}

/**
 * Drains the indexing queue with the product's indexer and `embedder`. Batches of 64 (the
 * background worker uses 16, to keep its rounds short next to live traffic; a bulk load has
 * no traffic to yield to).
 */
export async function indexQueuedConversations(database: Database, embedder: Embedder, progress: Progress = () => {}, batchSize = 64): Promise<IndexStats> {
  const vectorStore = new PgVectorStore(database);
  const indexer = new ConversationIndexer(database, embedder, vectorStore, silentLogger, { batchSize, chunking: chunkingFor(embedder) });
  const [before] = await database.prisma.$queryRaw<{ count: number }[]>`SELECT count(*)::int AS count FROM embedding_chunks WHERE model = ${embedder.model}`;
  const started = performance.now();
  let lastReport = started;
  const conversations = await indexer.drain((done) => {
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      progress(`  indexed ${done} conversations with ${embedder.model} (${(done / ((lastReport - started) / 1000)).toFixed(0)}/s)`);
    }
  });
  const seconds = (performance.now() - started) / 1000;
  const [after] = await database.prisma.$queryRaw<{ count: number }[]>`SELECT count(*)::int AS count FROM embedding_chunks WHERE model = ${embedder.model}`;
  const failing = await database.prisma.searchIndexJob.count({ where: { lastError: { not: null } } });
  const chunks = (after?.count ?? 0) - (before?.count ?? 0);
  return {
    embedder: embedder.model,
    conversations,
    chunks,
    seconds,
    conversationsPerSecond: conversations / seconds,
    chunksPerSecond: chunks / seconds,
    failing,
  };
}

/** Loads and indexes a whole corpus, then builds the vector index and planner statistics. */
export async function loadCorpus(database: Database, count: number, embedder: Embedder, progress: Progress = () => {}): Promise<CorpusStats> {
  const insert = await insertConversations(database, count, progress);
  progress(`  inserted ${insert.conversations} conversations, ${insert.messages} messages in ${insert.seconds.toFixed(1)} s`);
  const index = await indexQueuedConversations(database, embedder, progress);
  progress(`  embedded ${index.conversations} conversations (${index.chunks} chunks) with ${index.embedder} in ${index.seconds.toFixed(1)} s`);
  const hnswStarted = performance.now();
  await new PgVectorStore(database).ensureReady(embedder.model, embedder.dimensions);
  const hnswSeconds = (performance.now() - hnswStarted) / 1000;
  // Autovacuum would vacuum and analyze these tables eventually; a benchmark must not depend
  // on when. The vacuum matters, not only the statistics: until it sets the visibility map,
  // every index-only scan of the keyword postings visits the heap for each row (at 100,000
  // conversations that made keyword search 7.8× slower: p50 456 ms against 58.5 ms).
  const analyzeStarted = performance.now();
  await database.prisma.$executeRawUnsafe("VACUUM ANALYZE");
  const analyzeSeconds = (performance.now() - analyzeStarted) / 1000;
  progress(`  built the HNSW index in ${hnswSeconds.toFixed(1)} s, VACUUM ANALYZE in ${analyzeSeconds.toFixed(1)} s`);
  return { insert, index, hnswSeconds, analyzeSeconds };
}

/** Kept with a kept database (--keep-database), so that --reuse-database reports the load it did not redo. */
export async function keepCorpusStats(database: Database, stats: CorpusStats): Promise<void> {
  await database.prisma.$executeRawUnsafe("CREATE TABLE IF NOT EXISTS bench_corpus_stats (stats jsonb NOT NULL)");
  await database.prisma.$executeRawUnsafe("DELETE FROM bench_corpus_stats");
  await database.prisma.$executeRawUnsafe("INSERT INTO bench_corpus_stats (stats) VALUES ($1::jsonb)", JSON.stringify(stats));
}

/** The corpus a kept database holds, checked to be of the size asked for. */
export async function keptCorpus(database: Database, size: number): Promise<CorpusStats> {
  const [row] = await database.prisma.$queryRawUnsafe<{ stats: CorpusStats }[]>("SELECT stats FROM bench_corpus_stats").catch(() => []);
  if (!row) throw new Error("the reused database keeps no corpus statistics: it was not kept by a run with --keep-database");
  if (row.stats.insert.conversations !== size) throw new Error(`the reused database holds ${row.stats.insert.conversations} conversations, not ${size}`);
  return row.stats;
}

/**
 * Search queries as people type them: conversation titles and the opening words of users'
 * messages, drawn from across the corpus, without duplicates. Distinct queries keep the
 * query-embedding cache and the result cache from making an uncached run look cached.
 */
export function queryPool(corpusSize: number, wanted: number): string[] {
  const queries = new Set<string>();
  // Every conversation is an independent draw (its own PRNG stream), so the first ones are as
  // representative as any, and they exist in every corpus at least this large.
  for (const conversation of demoConversations({ count: corpusSize, seed: CORPUS_SEED, users: BENCH_USER_IDS.length })) {
    queries.add(conversation.title);
    const opening = conversation.messages.find((message) => message.role === "user")?.content;
    if (opening) queries.add(openingWords(opening));
    if (queries.size >= wanted) break;
  }
  return [...queries].slice(0, wanted);
}

/** The first sentence of a message, cut at a word boundary near 120 characters, without code. */
function openingWords(text: string): string {
  const firstLine = text.split("\n").find((line) => line.trim().length > 0 && !line.startsWith("```")) ?? text;
  const sentence = firstLine.split(/(?<=[.?!])\s/)[0] ?? firstLine;
  if (sentence.length <= 120) return sentence.trim();
  const cut = sentence.lastIndexOf(" ", 120);
  return sentence.slice(0, cut > 40 ? cut : 120).trim();
}

/** Ids of some of the corpus's conversations, for `conversation(id:)` requests. */
export async function sampleConversationIds(database: Database, count: number): Promise<string[]> {
  const rows = await database.prisma.$queryRaw<{ id: string }[]>`
    SELECT id::text AS id FROM conversations WHERE organization_id = ${BENCH_ORGANIZATION_ID} ORDER BY md5(id::text) LIMIT ${count}`;
  return rows.map((row) => row.id);
}
