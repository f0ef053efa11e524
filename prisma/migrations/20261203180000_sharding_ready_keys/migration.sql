-- Sharding-ready keys (issue 22, item 5). Distributed PostgreSQL (Citus) spreads a tenant
-- table's rows over shards by organization_id and then checks uniqueness and references within
-- one shard: every primary key and unique constraint must include organization_id, and a
-- foreign key between two tenant tables must pair organization_id with organization_id. Done
-- now, on one PostgreSQL, it costs little, and it also makes the database itself refuse a row
-- that points at another organization's row (a message of acme in globex's conversation).
-- test/integration/sharding-readiness.test.ts holds every table, present and future, to it.
--
-- knowledge_bases keeps its key (id): PLATFORM knowledge bases belong to the __platform__
-- organization and every organization maps capabilities to them and keeps passages from them,
-- so those references cross organizations on purpose. It is a small table (a few rows per
-- organization) meant to be a Citus reference table, copied to every node, which references
-- from distributed tables may name by id.
--
-- Runs on a database that already holds rows: every child row already carries its parent's
-- organization (the application writes both from the same tenant, and row-level security checks
-- it), so the composite keys validate. The migrator runs this file in one transaction. Order:
-- drop the references, re-key the parents, then the children, then reference again.

-- 1. References between tenant tables by id alone.
ALTER TABLE "messages" DROP CONSTRAINT "messages_conversation_id_fkey";
ALTER TABLE "keyword_documents" DROP CONSTRAINT "keyword_documents_conversation_id_fkey";
ALTER TABLE "keyword_postings" DROP CONSTRAINT "keyword_postings_conversation_id_fkey";
ALTER TABLE "document_chunks" DROP CONSTRAINT "document_chunks_document_id_fkey";
ALTER TABLE "document_index_jobs" DROP CONSTRAINT "document_index_jobs_document_id_fkey";
ALTER TABLE "document_keyword_postings" DROP CONSTRAINT "document_keyword_postings_chunk_id_fkey";
ALTER TABLE "credit_ledger" DROP CONSTRAINT "credit_ledger_call_id_fkey";

-- 2. Primary keys: (organization_id, the old key).
ALTER TABLE "conversations" DROP CONSTRAINT "conversations_pkey", ADD CONSTRAINT "conversations_pkey" PRIMARY KEY ("organization_id", "id");
ALTER TABLE "messages" DROP CONSTRAINT "messages_pkey", ADD CONSTRAINT "messages_pkey" PRIMARY KEY ("organization_id", "id");
ALTER TABLE "keyword_documents" DROP CONSTRAINT "keyword_documents_pkey", ADD CONSTRAINT "keyword_documents_pkey" PRIMARY KEY ("organization_id", "conversation_id");
ALTER TABLE "search_index_jobs" DROP CONSTRAINT "search_index_jobs_pkey", ADD CONSTRAINT "search_index_jobs_pkey" PRIMARY KEY ("organization_id", "conversation_id");
ALTER TABLE "embedding_chunks" DROP CONSTRAINT "embedding_chunks_pkey", ADD CONSTRAINT "embedding_chunks_pkey" PRIMARY KEY ("organization_id", "id");
ALTER TABLE "search_queries" DROP CONSTRAINT "search_queries_pkey", ADD CONSTRAINT "search_queries_pkey" PRIMARY KEY ("organization_id", "id");
ALTER TABLE "documents" DROP CONSTRAINT "documents_pkey", ADD CONSTRAINT "documents_pkey" PRIMARY KEY ("organization_id", "id");
ALTER TABLE "document_chunks" DROP CONSTRAINT "document_chunks_pkey", ADD CONSTRAINT "document_chunks_pkey" PRIMARY KEY ("organization_id", "id");
ALTER TABLE "document_index_jobs" DROP CONSTRAINT "document_index_jobs_pkey", ADD CONSTRAINT "document_index_jobs_pkey" PRIMARY KEY ("organization_id", "document_id");
ALTER TABLE "knowledge_base_credentials" DROP CONSTRAINT "knowledge_base_credentials_pkey", ADD CONSTRAINT "knowledge_base_credentials_pkey" PRIMARY KEY ("organization_id", "knowledge_base_id");
ALTER TABLE "knowledge_base_capabilities" DROP CONSTRAINT "knowledge_base_capabilities_pkey", ADD CONSTRAINT "knowledge_base_capabilities_pkey" PRIMARY KEY ("organization_id", "id");
ALTER TABLE "knowledge_base_passages" DROP CONSTRAINT "knowledge_base_passages_pkey", ADD CONSTRAINT "knowledge_base_passages_pkey" PRIMARY KEY ("organization_id", "id");
ALTER TABLE "knowledge_queries" DROP CONSTRAINT "knowledge_queries_pkey", ADD CONSTRAINT "knowledge_queries_pkey" PRIMARY KEY ("organization_id", "id");
ALTER TABLE "vector_deletion_jobs" DROP CONSTRAINT "vector_deletion_jobs_pkey", ADD CONSTRAINT "vector_deletion_jobs_pkey" PRIMARY KEY ("organization_id", "entity_type", "entity_id");
ALTER TABLE "external_calls" DROP CONSTRAINT "external_calls_pkey", ADD CONSTRAINT "external_calls_pkey" PRIMARY KEY ("organization_id", "id");
ALTER TABLE "credit_ledger" DROP CONSTRAINT "credit_ledger_pkey", ADD CONSTRAINT "credit_ledger_pkey" PRIMARY KEY ("organization_id", "id");
ALTER TABLE "external_results" DROP CONSTRAINT "external_results_pkey", ADD CONSTRAINT "external_results_pkey" PRIMARY KEY ("organization_id", "id");
ALTER TABLE "saved_searches" DROP CONSTRAINT "saved_searches_pkey", ADD CONSTRAINT "saved_searches_pkey" PRIMARY KEY ("organization_id", "id");

-- 3. Unique constraints, organization first (each also serves the lookups the old one did,
-- which all know their organization).
DROP INDEX "messages_conversation_id_position_key";
CREATE UNIQUE INDEX "messages_organization_id_conversation_id_position_key" ON "messages"("organization_id", "conversation_id", "position");
DROP INDEX "embedding_chunks_entity_model_chunk_key";
CREATE UNIQUE INDEX "embedding_chunks_organization_entity_model_chunk_key" ON "embedding_chunks"("organization_id", "entity_type", "entity_id", "model", "chunk_index");
DROP INDEX "document_chunks_document_id_chunk_index_key";
CREATE UNIQUE INDEX "document_chunks_organization_id_document_id_chunk_index_key" ON "document_chunks"("organization_id", "document_id", "chunk_index");
ALTER TABLE "credit_ledger" DROP CONSTRAINT "credit_ledger_call_id_key", ADD CONSTRAINT "credit_ledger_organization_id_call_id_key" UNIQUE ("organization_id", "call_id");

-- 4. References again, (organization_id, x) to the parent's (organization_id, id), with the
-- same ON DELETE / ON UPDATE behaviour as before.
ALTER TABLE "messages" ADD CONSTRAINT "messages_organization_id_conversation_id_fkey"
  FOREIGN KEY ("organization_id", "conversation_id") REFERENCES "conversations"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "keyword_documents" ADD CONSTRAINT "keyword_documents_organization_id_conversation_id_fkey"
  FOREIGN KEY ("organization_id", "conversation_id") REFERENCES "conversations"("organization_id", "id") ON DELETE CASCADE;
ALTER TABLE "keyword_postings" ADD CONSTRAINT "keyword_postings_organization_id_conversation_id_fkey"
  FOREIGN KEY ("organization_id", "conversation_id") REFERENCES "conversations"("organization_id", "id") ON DELETE CASCADE;
ALTER TABLE "document_chunks" ADD CONSTRAINT "document_chunks_organization_id_document_id_fkey"
  FOREIGN KEY ("organization_id", "document_id") REFERENCES "documents"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "document_index_jobs" ADD CONSTRAINT "document_index_jobs_organization_id_document_id_fkey"
  FOREIGN KEY ("organization_id", "document_id") REFERENCES "documents"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "document_keyword_postings" ADD CONSTRAINT "document_keyword_postings_organization_id_chunk_id_fkey"
  FOREIGN KEY ("organization_id", "chunk_id") REFERENCES "document_chunks"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "credit_ledger" ADD CONSTRAINT "credit_ledger_organization_id_call_id_fkey"
  FOREIGN KEY ("organization_id", "call_id") REFERENCES "external_calls"("organization_id", "id") ON DELETE CASCADE;

-- 5. Triggers whose ON CONFLICT named the old keys, or that found a row by id alone (which
-- the new keys serve only with the organization in front).
CREATE OR REPLACE FUNCTION conversation_search_vector(organization TEXT, conversation UUID, title TEXT) RETURNS tsvector
LANGUAGE sql STABLE AS $$
  SELECT setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A')
      || coalesce(setweight(to_tsvector('english'::regconfig, left(string_agg(m.content, E'\n' ORDER BY m.position), 500000)), 'B'), ''::tsvector)
  FROM messages m
  WHERE m.organization_id = organization AND m.conversation_id = conversation
$$;

CREATE OR REPLACE FUNCTION conversations_before_write() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.search_vector := setweight(to_tsvector('english'::regconfig, NEW.title), 'A');
  ELSIF NEW.title IS DISTINCT FROM OLD.title THEN
    NEW.search_vector := conversation_search_vector(NEW.organization_id, NEW.id, NEW.title);
    NEW.updated_at := now();
  END IF;
  RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION messages_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE conversations c
  SET message_count = c.message_count + added.messages,
      token_count = c.token_count + added.tokens,
      updated_at = greatest(c.updated_at, added.last_at),
      search_vector = CASE
        -- A tsvector is capped at 1 MB; near the cap, rebuild from the (truncated) whole text.
        WHEN pg_column_size(c.search_vector) + pg_column_size(added.vector) > 900000
          THEN conversation_search_vector(c.organization_id, c.id, c.title)
        ELSE coalesce(c.search_vector, ''::tsvector) || added.vector
      END
  FROM (
    SELECT organization_id,
           conversation_id,
           count(*) AS messages,
           sum(token_count) AS tokens,
           max(created_at) AS last_at,
           setweight(to_tsvector('english'::regconfig, left(string_agg(content, E'\n' ORDER BY position), 500000)), 'B') AS vector
    FROM new_messages
    GROUP BY organization_id, conversation_id
  ) added
  WHERE c.organization_id = added.organization_id AND c.id = added.conversation_id;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION messages_after_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE conversations c
  SET message_count = totals.messages,
      token_count = totals.tokens,
      updated_at = now(),
      search_vector = conversation_search_vector(c.organization_id, c.id, c.title)
  FROM (
    SELECT touched.organization_id,
           touched.conversation_id,
           count(m.id) AS messages,
           coalesce(sum(m.token_count), 0) AS tokens
    FROM (SELECT DISTINCT organization_id, conversation_id FROM old_messages) touched
    LEFT JOIN messages m ON m.organization_id = touched.organization_id AND m.conversation_id = touched.conversation_id
    GROUP BY touched.organization_id, touched.conversation_id
  ) totals
  WHERE c.organization_id = totals.organization_id AND c.id = totals.conversation_id;
  RETURN NULL;
END
$$;

-- The old two-argument form is no longer called by anything.
DROP FUNCTION conversation_search_vector(UUID, TEXT);

CREATE OR REPLACE FUNCTION conversations_after_write_search() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  total_terms INTEGER;
BEGIN
  IF TG_OP = 'UPDATE'
     AND NEW.search_vector IS NOT DISTINCT FROM OLD.search_vector
     AND NEW.deleted_at IS NOT DISTINCT FROM OLD.deleted_at THEN
    RETURN NULL;
  END IF;

  DELETE FROM keyword_postings WHERE conversation_id = NEW.id;
  DELETE FROM keyword_documents WHERE organization_id = NEW.organization_id AND conversation_id = NEW.id;
  IF NEW.deleted_at IS NULL AND NEW.search_vector IS NOT NULL THEN
    SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0) INTO total_terms
    FROM unnest(NEW.search_vector);
    INSERT INTO keyword_postings (organization_id, term, conversation_id, tf, document_length)
    SELECT NEW.organization_id, lexeme, NEW.id, coalesce(array_length(positions, 1), 1), total_terms
    FROM unnest(NEW.search_vector);
    INSERT INTO keyword_documents (conversation_id, organization_id, length)
    VALUES (NEW.id, NEW.organization_id, total_terms);
  END IF;

  INSERT INTO search_index_jobs (conversation_id, organization_id)
  VALUES (NEW.id, NEW.organization_id)
  ON CONFLICT (organization_id, conversation_id) DO UPDATE
    SET enqueued_at = clock_timestamp(), run_after = clock_timestamp(), attempts = 0, last_error = NULL;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION documents_after_write_enqueue() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO document_index_jobs (document_id, organization_id)
  VALUES (NEW.id, NEW.organization_id)
  ON CONFLICT (organization_id, document_id) DO UPDATE
    SET enqueued_at = clock_timestamp(), run_after = clock_timestamp(), attempts = 0, last_error = NULL;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION document_chunks_after_insert_postings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO document_keyword_postings (organization_id, term, chunk_id, document_id, owner_id, team_id, tf, chunk_length)
  SELECT c.organization_id, v.lexeme, c.id, c.document_id, d.owner_id, d.team_id,
         coalesce(array_length(v.positions, 1), 1), c.keyword_length
  FROM new_chunks c
  JOIN documents d ON d.organization_id = c.organization_id AND d.id = c.document_id,
       unnest(c.search_vector) v;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION document_chunks_after_update_postings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM document_keyword_postings p USING new_chunks c
  WHERE p.chunk_id = c.id;
  INSERT INTO document_keyword_postings (organization_id, term, chunk_id, document_id, owner_id, team_id, tf, chunk_length)
  SELECT c.organization_id, v.lexeme, c.id, c.document_id, d.owner_id, d.team_id,
         coalesce(array_length(v.positions, 1), 1), c.keyword_length
  FROM new_chunks c
  JOIN documents d ON d.organization_id = c.organization_id AND d.id = c.document_id,
       unnest(c.search_vector) v;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION document_chunks_after_delete_embeddings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM embedding_chunks e USING old_chunks c
  WHERE e.organization_id = c.organization_id AND e.entity_type = 'document_chunk' AND e.entity_id = c.id;
  INSERT INTO vector_deletion_jobs (organization_id, entity_type, entity_id)
  SELECT c.organization_id, 'document_chunk', c.id FROM old_chunks c
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
