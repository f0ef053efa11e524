/**
 * Ingestion: how fast conversations get in and become searchable.
 *
 * - Inserts: conversations and messages per second through Prisma's createMany, with every
 *   trigger firing (counters, tsvector, BM25 postings, the indexing queue). Measured while the
 *   corpus for this database and size was loaded, so it costs no extra run.
 * - Indexing with the feature-hashing embedder: the indexer's own overhead (claim, load, chunk,
 *   store vectors, complete) with an embedder that costs almost nothing. Also from the load.
 * - Indexing with the local model (Universal Sentence Encoder Lite, through the product's
 *   embedding cache, exactly as `EMBEDDER=local` runs it): a modest sample of conversations,
 *   because the model embeds ~15 paragraphs a second on these machines.
 *
 * Documents (the knowledge-base subgraph) do not exist yet: conversations are the only thing
 * the product ingests today.
 */
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { createEmbedder } from "../../lib/retrieval/embeddings/index.js";
import { UniversalSentenceEncoderEmbedder } from "../../lib/retrieval/embeddings/universal-sentence-encoder.js";
import { indexQueuedConversations, sampleConversationIds, type IndexStats, type InsertStats } from "../corpus.js";
import { databaseLabel, entryHeading, formatCount, formatRate, formatRatio, renderConditions, type EntryBase } from "../report.js";
import { baseConditions, type Scenario } from "../scenario.js";
import { benchConfig } from "../stack.js";
import { ratio, round } from "../stats.js";

export interface LocalModelIndexing {
  /** Loading the model's weights into this process (0 when an earlier step already had). */
  modelLoadSeconds: number;
  index: IndexStats;
  chunksPerConversation: number;
  /** Chunks whose vectors came from the embedding cache (identical text seen before) instead of the model. */
  chunksFromCache: number;
}

export interface IngestionEntry extends EntryBase {
  insert: InsertStats;
  hashing: IndexStats;
  hnswSeconds: number;
  local: LocalModelIndexing | null;
  ratios: {
    /** Hashing / local model, chunks per second: what the model costs over the indexer itself. */
    hashingVsLocalChunksPerSecond: number;
    /** Inserting / indexing with the local model, conversations per second: how far indexing trails writes. */
    insertVsLocalConversationsPerSecond: number;
  };
}

let modelLoaded = false;

export const ingestionScenario: Scenario<IngestionEntry> = {
  name: "ingestion",
  title: "Ingestion",
  async run(context) {
    const { database } = context.bench;
    const count = Math.min(context.options.embedConversations, context.size);
    let local: LocalModelIndexing | null = null;
    if (count > 0) {
      const loadStarted = performance.now();
      await new UniversalSentenceEncoderEmbedder().load();
      const modelLoadSeconds = modelLoaded ? 0 : round((performance.now() - loadStarted) / 1000, 2);
      modelLoaded = true;
      const ids = await sampleConversationIds(database, count);
      // Queue exactly these conversations again, as `npm run search:reindex -- --all` would.
      await database.prisma.$executeRaw`
        INSERT INTO search_index_jobs (conversation_id, organization_id)
        SELECT id, organization_id FROM conversations WHERE id = ANY(${ids}::uuid[])
        ON CONFLICT (organization_id, conversation_id) DO UPDATE SET run_after = clock_timestamp(), attempts = 0, last_error = NULL`;
      const embedder = createEmbedder(benchConfig({ cacheTtlSeconds: 0, embedder: "local" }).search, database);
      const [cacheBefore] = await database.prisma.$queryRaw<{ count: number }[]>`SELECT count(*)::int AS count FROM embedding_cache WHERE model = ${embedder.model}`;
      context.log(`  embedding ${ids.length} conversations with ${embedder.model} (about 15 chunks/s on 2 cores)…`);
      // The background worker's batch size: this is the rate a live deployment indexes at.
      const index = await indexQueuedConversations(database, embedder, context.log, 16);
      const [cacheAfter] = await database.prisma.$queryRaw<{ count: number }[]>`SELECT count(*)::int AS count FROM embedding_cache WHERE model = ${embedder.model}`;
      const embedded = (cacheAfter?.count ?? 0) - (cacheBefore?.count ?? 0);
      local = {
        modelLoadSeconds,
        index,
        chunksPerConversation: round(index.chunks / Math.max(1, index.conversations), 1),
        chunksFromCache: Math.max(0, index.chunks - embedded),
      };
      context.log(`  ${embedder.model}: ${index.conversations} conversations, ${index.chunks} chunks in ${index.seconds.toFixed(1)} s (${index.chunksPerSecond.toFixed(1)} chunks/s, ${index.conversationsPerSecond.toFixed(2)} conversations/s)`);
    }
    const insert = context.corpus.insert;
    const hashing = context.corpus.index;
    return {
      database: context.bench.kind,
      size: context.size,
      run: context.run,
      conditions: baseConditions(context, {
        inserts: "Prisma createManyAndReturn (conversations) + createMany (messages), 250 conversations per batch, all triggers on; token counts estimated (length/4) instead of tokenized",
        "hashing indexing": "ConversationIndexer.drain, batches of 64, feature hashing (256-d), chunks of 1,200 characters",
        "local-model indexing": count > 0 ? `${count} conversations, ConversationIndexer.drain in batches of 16 (the background worker's), Universal Sentence Encoder Lite (512-d, TF.js WASM, single thread) behind the PostgreSQL embedding cache, chunks of 450 characters` : "skipped (--embed-conversations 0)",
        "vector index": "HNSW built after the load (time reported separately)",
      }),
      corpus: context.corpus,
      profiles: [],
      insert,
      hashing,
      hnswSeconds: round(context.corpus.hnswSeconds, 2),
      local,
      ratios: {
        hashingVsLocalChunksPerSecond: local ? ratio(hashing.chunksPerSecond, local.index.chunksPerSecond, 1) : Number.NaN,
        insertVsLocalConversationsPerSecond: local ? ratio(insert.conversationsPerSecond, local.index.conversationsPerSecond, 1) : Number.NaN,
      },
    };
  },

  renderSection(file) {
    const table = renderMarkdownTable(
      ["database", "conversations", "inserted conv./s", "inserted messages/s", "(database time only: conv./s)", "hashing: conv./s", "hashing: chunks/s", "HNSW build", "local model: conv./s", "local model: chunks/s", "hashing / local chunks/s"],
      file.entries.map((entry) => [
        databaseLabel(entry.database),
        formatCount(entry.size),
        formatRate(entry.insert.conversationsPerSecond),
        formatRate(entry.insert.messagesPerSecond),
        formatRate(entry.insert.databaseConversationsPerSecond),
        formatRate(entry.hashing.conversationsPerSecond),
        formatRate(entry.hashing.chunksPerSecond),
        `${entry.hnswSeconds.toFixed(1)} s`,
        entry.local ? entry.local.index.conversationsPerSecond.toFixed(2) : "–",
        entry.local ? entry.local.index.chunksPerSecond.toFixed(1) : "–",
        formatRatio(entry.ratios.hashingVsLocalChunksPerSecond),
      ]),
    );
    const details = file.entries.map((entry) =>
      [
        `**${entryHeading(entry)}** — ${formatCount(entry.insert.conversations)} conversations and ${formatCount(entry.insert.messages)} messages (${(entry.insert.characters / 1e6).toFixed(1)} M characters) in ${entry.insert.seconds.toFixed(1)} s, ` +
          `${entry.insert.databaseSeconds.toFixed(1)} s of it in the database; ${formatCount(entry.insert.keywordPostings)} BM25 postings. ` +
          `Hashing: ${formatCount(entry.hashing.chunks)} chunks for ${formatCount(entry.hashing.conversations)} conversations in ${entry.hashing.seconds.toFixed(1)} s.` +
          (entry.local
            ? ` Local model: ${entry.local.index.conversations} conversations → ${entry.local.index.chunks} chunks (${entry.local.chunksPerConversation} per conversation; ${entry.local.chunksFromCache} served by the embedding cache) in ${entry.local.index.seconds.toFixed(1)} s` +
              `${entry.local.modelLoadSeconds > 0 ? `, after ${entry.local.modelLoadSeconds} s loading the model` : ""}; ${entry.local.index.failing} failing. ` +
              `Writes outpace local-model indexing ${formatRatio(entry.ratios.insertVsLocalConversationsPerSecond)} (conversations/s).`
            : ""),
        "",
        renderConditions(entry),
      ].join("\n"),
    );
    return [table, "", ...details.flatMap((detail) => [detail, ""])].join("\n");
  },
};
