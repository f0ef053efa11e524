-- Vectors in a store outside the database (Weaviate, S3 Vectors) have no trigger to delete
-- them with their chunk: a deleted document (or a re-indexed one, whose old chunks go) left its
-- vectors behind in that store for ever. Deleted chunks are now queued here, in the deleting
-- statement's transaction, so no deletion is lost across restarts; the document indexer deletes
-- their vectors from the store and the rows (lib/retrieval/vector-stores/deleted-vectors.ts).
-- Chunk ids are never reused, so a queued id can never name a live chunk.
CREATE TABLE "vector_deletion_jobs" (
    "organization_id" TEXT NOT NULL,
    "entity_type" TEXT NOT NULL,
    "entity_id" UUID NOT NULL,
    "enqueued_at" TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),

    CONSTRAINT "vector_deletion_jobs_pkey" PRIMARY KEY ("entity_type", "entity_id")
);
CREATE INDEX "vector_deletion_jobs_enqueued_at_idx" ON "vector_deletion_jobs"("enqueued_at");

-- pgvector's rows still go in the same statement; the queue is filled whatever the store, as
-- the database does not know which store the deployment uses (with pgvector the indexer only
-- empties it).
CREATE OR REPLACE FUNCTION document_chunks_after_delete_embeddings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM embedding_chunks e USING old_chunks c
  WHERE e.entity_type = 'document_chunk' AND e.entity_id = c.id;
  INSERT INTO vector_deletion_jobs (organization_id, entity_type, entity_id)
  SELECT c.organization_id, 'document_chunk', c.id FROM old_chunks c
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

-- Row-level security, the same policy as every other tenant table: a request deleting its
-- own document queues only its own organization's chunks.
GRANT SELECT, INSERT, UPDATE, DELETE ON vector_deletion_jobs TO context_search_tenant;
ALTER TABLE vector_deletion_jobs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON vector_deletion_jobs TO context_search_tenant
  USING (organization_id = current_setting('app.organization_id', true))
  WITH CHECK (organization_id = current_setting('app.organization_id', true));
