-- Search: BM25 statistics for the keyword provider, embeddings for the semantic provider, the
-- indexing queue that keeps them current, and the query log.

-- pgvector. Creating an extension needs a superuser (or a trusted-extension grant): on managed
-- PostgreSQL, enable it once as the owner if this statement is refused.
CREATE EXTENSION IF NOT EXISTS vector;

-- ---------------------------------------------------------------------------------------------
-- BM25. PostgreSQL's built-in rankers (ts_rank, ts_rank_cd) ignore document frequency and
-- lose ~0.12 nDCG@10 to BM25 on SciFact; computing BM25 from a postings table costs single-digit
-- milliseconds. Postings are derived from conversations.search_vector (the same stemmed,
-- stop-word-free lexemes the GIN index holds), so the two can never disagree.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE "keyword_documents" (
    "conversation_id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "length" INTEGER NOT NULL,
    CONSTRAINT "keyword_documents_pkey" PRIMARY KEY ("conversation_id"),
    CONSTRAINT "keyword_documents_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE
);
CREATE INDEX "keyword_documents_organization_id_idx" ON "keyword_documents"("organization_id");

CREATE TABLE "keyword_postings" (
    "organization_id" TEXT NOT NULL,
    "term" TEXT NOT NULL,
    "conversation_id" UUID NOT NULL,
    "tf" INTEGER NOT NULL,
    CONSTRAINT "keyword_postings_pkey" PRIMARY KEY ("organization_id", "term", "conversation_id"),
    CONSTRAINT "keyword_postings_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE
);
CREATE INDEX "keyword_postings_conversation_id_idx" ON "keyword_postings"("conversation_id");

-- ---------------------------------------------------------------------------------------------
-- Embeddings. One table for every model: `model` says which model made a vector, and a query
-- only ever compares vectors of one model. HNSW indexes are per model (an expression index
-- over the vector cast to the model's dimensions, partial on the model); the indexer creates
-- the one for its model when it starts.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE "embedding_chunks" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "organization_id" TEXT NOT NULL,
    "entity_type" TEXT NOT NULL,
    "entity_id" UUID NOT NULL,
    "chunk_index" INTEGER NOT NULL,
    "model" TEXT NOT NULL,
    "content_hash" TEXT NOT NULL,
    "embedding" vector NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "embedding_chunks_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "embedding_chunks_entity_model_chunk_key" ON "embedding_chunks"("entity_type", "entity_id", "model", "chunk_index");
CREATE INDEX "embedding_chunks_organization_id_model_idx" ON "embedding_chunks"("organization_id", "model");

-- Re-indexing the same text with the same model costs nothing: vectors are cached by
-- (model, sha256 of the text).
CREATE TABLE "embedding_cache" (
    "model" TEXT NOT NULL,
    "text_hash" TEXT NOT NULL,
    "embedding" vector NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "embedding_cache_pkey" PRIMARY KEY ("model", "text_hash")
);

-- ---------------------------------------------------------------------------------------------
-- Indexing queue. A trigger enqueues a conversation in the same transaction that changes it,
-- so no change can be lost between the write and the indexer, even across restarts. One row
-- per conversation: a burst of appends coalesces into one re-index. `enqueued_at` tells the
-- worker whether the row changed while it was embedding (then it stays queued).
-- ---------------------------------------------------------------------------------------------
CREATE TABLE "search_index_jobs" (
    "conversation_id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "enqueued_at" TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    "run_after" TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    CONSTRAINT "search_index_jobs_pkey" PRIMARY KEY ("conversation_id")
);
CREATE INDEX "search_index_jobs_run_after_idx" ON "search_index_jobs"("run_after");
CREATE INDEX "search_index_jobs_organization_id_idx" ON "search_index_jobs"("organization_id");

CREATE FUNCTION conversations_after_write_search() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE'
     AND NEW.search_vector IS NOT DISTINCT FROM OLD.search_vector
     AND NEW.deleted_at IS NOT DISTINCT FROM OLD.deleted_at THEN
    RETURN NULL;
  END IF;

  DELETE FROM keyword_postings WHERE conversation_id = NEW.id;
  DELETE FROM keyword_documents WHERE conversation_id = NEW.id;
  IF NEW.deleted_at IS NULL AND NEW.search_vector IS NOT NULL THEN
    INSERT INTO keyword_postings (organization_id, term, conversation_id, tf)
    SELECT NEW.organization_id, lexeme, NEW.id, coalesce(array_length(positions, 1), 1)
    FROM unnest(NEW.search_vector);
    INSERT INTO keyword_documents (conversation_id, organization_id, length)
    SELECT NEW.id, NEW.organization_id, coalesce(sum(coalesce(array_length(positions, 1), 1)), 0)
    FROM unnest(NEW.search_vector);
  END IF;

  INSERT INTO search_index_jobs (conversation_id, organization_id)
  VALUES (NEW.id, NEW.organization_id)
  ON CONFLICT (conversation_id) DO UPDATE
    SET enqueued_at = clock_timestamp(), run_after = clock_timestamp(), attempts = 0, last_error = NULL;
  RETURN NULL;
END
$$;

CREATE TRIGGER conversations_after_write_search
AFTER INSERT OR UPDATE OF search_vector, deleted_at ON conversations
FOR EACH ROW EXECUTE FUNCTION conversations_after_write_search();

-- Conversations that existed before this migration: index them too.
INSERT INTO keyword_postings (organization_id, term, conversation_id, tf)
SELECT c.organization_id, v.lexeme, c.id, coalesce(array_length(v.positions, 1), 1)
FROM conversations c, unnest(c.search_vector) v
WHERE c.deleted_at IS NULL AND c.search_vector IS NOT NULL;
INSERT INTO keyword_documents (conversation_id, organization_id, length)
SELECT c.id, c.organization_id, coalesce((SELECT sum(coalesce(array_length(v.positions, 1), 1)) FROM unnest(c.search_vector) v), 0)
FROM conversations c
WHERE c.deleted_at IS NULL AND c.search_vector IS NOT NULL;
INSERT INTO search_index_jobs (conversation_id, organization_id)
SELECT id, organization_id FROM conversations WHERE deleted_at IS NULL;

-- ---------------------------------------------------------------------------------------------
-- Query log: one row per search, written off the response path.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE "search_queries" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "organization_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "query" TEXT NOT NULL,
    "alpha" DOUBLE PRECISION NOT NULL,
    "providers" JSONB NOT NULL,
    "results" INTEGER NOT NULL,
    "top_score" DOUBLE PRECISION,
    "cache_hit" BOOLEAN NOT NULL,
    "took_ms" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "search_queries_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "search_queries_organization_id_created_at_idx" ON "search_queries"("organization_id", "created_at" DESC);
