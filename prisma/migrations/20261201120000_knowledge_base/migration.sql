-- Knowledge base: users' documents (their extracted text, chunks, BM25 postings and indexing
-- queue), knowledge bases on a local, Bedrock or S3 Vectors backend, the capabilities that map
-- to them, and the log of knowledge queries. Every table carries organization_id and the same
-- row-level security policy as the row_level_security migration; knowledge_bases and
-- knowledge_base_capabilities additionally let every organization READ the platform's rows.

CREATE TYPE "document_format" AS ENUM ('text', 'markdown', 'pdf', 'docx');
CREATE TYPE "document_status" AS ENUM ('PENDING', 'INDEXING', 'READY', 'FAILED');
CREATE TYPE "knowledge_base_scope" AS ENUM ('PLATFORM', 'COMPANY', 'TEAM');
CREATE TYPE "knowledge_base_status" AS ENUM ('ACTIVE', 'SYNCING', 'ERROR');
CREATE TYPE "knowledge_base_backend" AS ENUM ('LOCAL', 'BEDROCK', 'S3VECTORS');
CREATE TYPE "aws_credential_mode" AS ENUM ('PLATFORM', 'USER_KEYS', 'ASSUME_ROLE');

-- The platform's curated knowledge bases belong to this organization. No identity provider
-- issues it (the double underscores keep it apart from real organization ids); it exists so
-- that every row keeps a real organization_id and foreign key.
INSERT INTO organizations (id, name) VALUES ('__platform__', 'Platform knowledge') ON CONFLICT (id) DO NOTHING;

-- ---------------------------------------------------------------------------------------------
-- Knowledge bases. Credentials live in a table of their own (below), so no listing of
-- knowledge bases can select a secret, and the platform's rows that every organization may
-- read carry none.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE "knowledge_bases" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "scope" "knowledge_base_scope" NOT NULL,
    "team_id" TEXT,
    "category" TEXT,
    "status" "knowledge_base_status" NOT NULL DEFAULT 'ACTIVE',
    "status_reason" TEXT,
    "embedding_model" TEXT,
    "query_count" INTEGER NOT NULL DEFAULT 0,
    "backend" "knowledge_base_backend" NOT NULL,
    "aws_region" TEXT,
    "bedrock_knowledge_base_id" TEXT,
    "s3_vectors_bucket" TEXT,
    "s3_vectors_index" TEXT,
    "credential_mode" "aws_credential_mode",
    "role_arn" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "knowledge_bases_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "knowledge_bases_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "knowledge_bases_name_check" CHECK (char_length("name") BETWEEN 1 AND 200),
    CONSTRAINT "knowledge_bases_category_check" CHECK ("category" IS NULL OR char_length("category") <= 100),
    -- Platform knowledge bases are the platform organization's, and only its.
    CONSTRAINT "knowledge_bases_scope_check" CHECK (
      ("scope" = 'PLATFORM') = ("organization_id" = '__platform__')
      AND ("scope" = 'TEAM') = ("team_id" IS NOT NULL)),
    -- Each backend has the settings it needs to be queried.
    CONSTRAINT "knowledge_bases_backend_check" CHECK (CASE "backend"
      WHEN 'LOCAL' THEN "credential_mode" IS NULL
      WHEN 'BEDROCK' THEN "bedrock_knowledge_base_id" IS NOT NULL AND "aws_region" IS NOT NULL AND "credential_mode" IS NOT NULL
      WHEN 'S3VECTORS' THEN "s3_vectors_bucket" IS NOT NULL AND "s3_vectors_index" IS NOT NULL AND "aws_region" IS NOT NULL AND "credential_mode" IS NOT NULL
    END),
    CONSTRAINT "knowledge_bases_role_arn_check" CHECK (("credential_mode" = 'ASSUME_ROLE') = ("role_arn" IS NOT NULL))
);
CREATE INDEX "knowledge_bases_organization_id_scope_idx" ON "knowledge_bases"("organization_id", "scope", "team_id");

-- A user's own AWS keys for a knowledge base (credential mode USER_KEYS), sealed with
-- lib/secrets (AES-256-GCM, bound to the organization and knowledge base). Read only by the
-- code that calls AWS; never by a listing.
CREATE TABLE "knowledge_base_credentials" (
    "knowledge_base_id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "sealed_secret" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "knowledge_base_credentials_pkey" PRIMARY KEY ("knowledge_base_id"),
    CONSTRAINT "knowledge_base_credentials_knowledge_base_id_fkey" FOREIGN KEY ("knowledge_base_id") REFERENCES "knowledge_bases"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "knowledge_base_credentials_organization_id_idx" ON "knowledge_base_credentials"("organization_id");

-- Which knowledge bases answer for a capability (e.g. "billing-support"), in priority order
-- (lower first), with how many results each may give and the lowest score worth returning.
-- An organization may map its capabilities to its own or to platform knowledge bases; the
-- platform's own mappings are readable by everyone.
CREATE TABLE "knowledge_base_capabilities" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "capability" TEXT NOT NULL,
    "knowledge_base_id" UUID NOT NULL,
    "priority" INTEGER NOT NULL DEFAULT 0,
    "max_results" INTEGER NOT NULL DEFAULT 5,
    "min_score" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "knowledge_base_capabilities_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "knowledge_base_capabilities_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "knowledge_base_capabilities_knowledge_base_id_fkey" FOREIGN KEY ("knowledge_base_id") REFERENCES "knowledge_bases"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "knowledge_base_capabilities_capability_check" CHECK (char_length("capability") BETWEEN 1 AND 100),
    CONSTRAINT "knowledge_base_capabilities_max_results_check" CHECK ("max_results" BETWEEN 1 AND 100),
    CONSTRAINT "knowledge_base_capabilities_min_score_check" CHECK ("min_score" >= 0 AND "min_score" <= 1)
);
CREATE UNIQUE INDEX "knowledge_base_capabilities_organization_id_capability_knowledge_base_id_key" ON "knowledge_base_capabilities"("organization_id", "capability", "knowledge_base_id");
CREATE INDEX "knowledge_base_capabilities_organization_id_capability_priority_idx" ON "knowledge_base_capabilities"("organization_id", "capability", "priority");
CREATE INDEX "knowledge_base_capabilities_knowledge_base_id_idx" ON "knowledge_base_capabilities"("knowledge_base_id");

-- ---------------------------------------------------------------------------------------------
-- Documents. A document is private to its owner, or shared with one of the owner's teams
-- (team_id; teams come from the token, so there is no foreign key to teams). content_hash is
-- the sha256 of the uploaded bytes; the extracted text is stored once per (organization, hash).
-- ---------------------------------------------------------------------------------------------
CREATE TABLE "document_contents" (
    "organization_id" TEXT NOT NULL,
    "content_hash" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "document_contents_pkey" PRIMARY KEY ("organization_id", "content_hash"),
    CONSTRAINT "document_contents_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "document_contents_content_hash_check" CHECK ("content_hash" ~ '^[0-9a-f]{64}$')
);

CREATE TABLE "documents" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "owner_id" TEXT NOT NULL,
    "team_id" TEXT,
    "knowledge_base_id" UUID,
    "file_name" TEXT NOT NULL,
    "media_type" TEXT NOT NULL,
    "format" "document_format" NOT NULL,
    "category" TEXT,
    "size_bytes" INTEGER NOT NULL,
    "content_hash" TEXT NOT NULL,
    "status" "document_status" NOT NULL DEFAULT 'PENDING',
    "failure_reason" TEXT,
    "chunks_indexed" INTEGER NOT NULL DEFAULT 0,
    "chunks_total" INTEGER,
    "usage_count" INTEGER NOT NULL DEFAULT 0,
    "last_used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "documents_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "documents_organization_id_owner_id_fkey" FOREIGN KEY ("organization_id", "owner_id") REFERENCES "users"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "documents_knowledge_base_id_fkey" FOREIGN KEY ("knowledge_base_id") REFERENCES "knowledge_bases"("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "documents_file_name_check" CHECK (char_length("file_name") BETWEEN 1 AND 255),
    CONSTRAINT "documents_category_check" CHECK ("category" IS NULL OR char_length("category") <= 100),
    CONSTRAINT "documents_size_bytes_check" CHECK ("size_bytes" >= 0),
    CONSTRAINT "documents_content_hash_check" CHECK ("content_hash" ~ '^[0-9a-f]{64}$'),
    CONSTRAINT "documents_progress_check" CHECK ("chunks_indexed" >= 0 AND ("chunks_total" IS NULL OR "chunks_indexed" <= "chunks_total")),
    CONSTRAINT "documents_failure_reason_check" CHECK (("status" = 'FAILED') = ("failure_reason" IS NOT NULL))
);
-- Listings: newest first within the organization, the scope filter a recheck on each row.
CREATE INDEX "documents_organization_id_created_at_id_idx" ON "documents"("organization_id", "created_at" DESC, "id" DESC);
CREATE INDEX "documents_organization_id_content_hash_idx" ON "documents"("organization_id", "content_hash");
CREATE INDEX "documents_knowledge_base_id_idx" ON "documents"("knowledge_base_id");

-- One row per chunk of a document's text. search_vector and keyword_length are set by a
-- trigger (heading path and text, English configuration like conversations).
CREATE TABLE "document_chunks" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "document_id" UUID NOT NULL,
    "chunk_index" INTEGER NOT NULL,
    "text" TEXT NOT NULL,
    "heading_path" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "page" INTEGER,
    "start_offset" INTEGER NOT NULL,
    "end_offset" INTEGER NOT NULL,
    "token_count" INTEGER NOT NULL,
    "content_hash" TEXT NOT NULL,
    "search_vector" tsvector,
    "keyword_length" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "document_chunks_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "document_chunks_document_id_fkey" FOREIGN KEY ("document_id") REFERENCES "documents"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "document_chunks_offsets_check" CHECK ("start_offset" >= 0 AND "end_offset" >= "start_offset")
);
CREATE UNIQUE INDEX "document_chunks_document_id_chunk_index_key" ON "document_chunks"("document_id", "chunk_index");
-- Collection statistics for BM25 (chunk count and average length) by index-only scan.
CREATE INDEX "document_chunks_organization_id_idx" ON "document_chunks"("organization_id") INCLUDE ("keyword_length");

-- BM25 postings of chunks, derived from document_chunks.search_vector by triggers. Besides tf
-- and the chunk's length, each posting carries its document and the document's access scope
-- (owner, team): keyword search reads only its terms' index ranges and filters by scope there,
-- never visiting a chunk or document row (index-only). A change of owner or team rewrites them.
CREATE TABLE "document_keyword_postings" (
    "organization_id" TEXT NOT NULL,
    "term" TEXT NOT NULL,
    "chunk_id" UUID NOT NULL,
    "document_id" UUID NOT NULL,
    "owner_id" TEXT NOT NULL,
    "team_id" TEXT,
    "tf" INTEGER NOT NULL,
    "chunk_length" INTEGER NOT NULL,
    CONSTRAINT "document_keyword_postings_pkey" PRIMARY KEY ("organization_id", "term", "chunk_id") INCLUDE ("tf", "chunk_length", "document_id", "owner_id", "team_id"),
    CONSTRAINT "document_keyword_postings_chunk_id_fkey" FOREIGN KEY ("chunk_id") REFERENCES "document_chunks"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "document_keyword_postings_chunk_id_idx" ON "document_keyword_postings"("chunk_id");
CREATE INDEX "document_keyword_postings_document_id_idx" ON "document_keyword_postings"("document_id");

CREATE FUNCTION document_chunks_before_write() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.search_vector := setweight(to_tsvector('english'::regconfig, array_to_string(NEW.heading_path, ' ')), 'A')
                    || setweight(to_tsvector('english'::regconfig, NEW.text), 'B');
  SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0) INTO NEW.keyword_length
  FROM unnest(NEW.search_vector);
  RETURN NEW;
END
$$;
CREATE TRIGGER document_chunks_before_write
BEFORE INSERT OR UPDATE OF text, heading_path ON document_chunks
FOR EACH ROW EXECUTE FUNCTION document_chunks_before_write();

-- Statement-level with transition tables: a document's chunks arrive in one INSERT, and their
-- postings follow in one INSERT … SELECT, not one per chunk.
CREATE FUNCTION document_chunks_after_insert_postings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO document_keyword_postings (organization_id, term, chunk_id, document_id, owner_id, team_id, tf, chunk_length)
  SELECT c.organization_id, v.lexeme, c.id, c.document_id, d.owner_id, d.team_id,
         coalesce(array_length(v.positions, 1), 1), c.keyword_length
  FROM new_chunks c
  JOIN documents d ON d.id = c.document_id,
       unnest(c.search_vector) v;
  RETURN NULL;
END
$$;
CREATE TRIGGER document_chunks_after_insert_postings
AFTER INSERT ON document_chunks REFERENCING NEW TABLE AS new_chunks
FOR EACH STATEMENT EXECUTE FUNCTION document_chunks_after_insert_postings();

CREATE FUNCTION document_chunks_after_update_postings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM document_keyword_postings p USING new_chunks c
  WHERE p.chunk_id = c.id;
  INSERT INTO document_keyword_postings (organization_id, term, chunk_id, document_id, owner_id, team_id, tf, chunk_length)
  SELECT c.organization_id, v.lexeme, c.id, c.document_id, d.owner_id, d.team_id,
         coalesce(array_length(v.positions, 1), 1), c.keyword_length
  FROM new_chunks c
  JOIN documents d ON d.id = c.document_id,
       unnest(c.search_vector) v;
  RETURN NULL;
END
$$;
CREATE TRIGGER document_chunks_after_update_postings
AFTER UPDATE ON document_chunks REFERENCING NEW TABLE AS new_chunks
FOR EACH STATEMENT EXECUTE FUNCTION document_chunks_after_update_postings();

-- Vectors of a chunk live in embedding_chunks (entity_type 'document_chunk', entity_id the
-- chunk's id), which has no foreign key (it serves every domain): deleting chunks, directly
-- or by deleting their document, deletes their vectors in the same statement's transaction.
CREATE FUNCTION document_chunks_after_delete_embeddings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM embedding_chunks e USING old_chunks c
  WHERE e.entity_type = 'document_chunk' AND e.entity_id = c.id;
  RETURN NULL;
END
$$;
CREATE TRIGGER document_chunks_after_delete_embeddings
AFTER DELETE ON document_chunks REFERENCING OLD TABLE AS old_chunks
FOR EACH STATEMENT EXECUTE FUNCTION document_chunks_after_delete_embeddings();

-- Sharing a document with another team (or none) changes who may find its postings.
CREATE FUNCTION documents_after_scope_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE document_keyword_postings SET owner_id = NEW.owner_id, team_id = NEW.team_id
  WHERE document_id = NEW.id;
  RETURN NULL;
END
$$;
CREATE TRIGGER documents_after_scope_change
AFTER UPDATE OF owner_id, team_id ON documents
FOR EACH ROW WHEN (NEW.owner_id IS DISTINCT FROM OLD.owner_id OR NEW.team_id IS DISTINCT FROM OLD.team_id)
EXECUTE FUNCTION documents_after_scope_change();

-- The extracted text goes with the last document that uses it.
CREATE FUNCTION documents_after_delete_contents() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM document_contents dc
  USING (SELECT DISTINCT organization_id, content_hash FROM old_documents) gone
  WHERE dc.organization_id = gone.organization_id AND dc.content_hash = gone.content_hash
    AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.organization_id = gone.organization_id AND d.content_hash = gone.content_hash);
  RETURN NULL;
END
$$;
CREATE TRIGGER documents_after_delete_contents
AFTER DELETE ON documents REFERENCING OLD TABLE AS old_documents
FOR EACH STATEMENT EXECUTE FUNCTION documents_after_delete_contents();

-- ---------------------------------------------------------------------------------------------
-- Document indexing queue, like search_index_jobs: one row per document, enqueued by a trigger
-- in the writer's transaction whenever a document is (re)set to PENDING, so no upload is lost
-- between the write and the indexer. Deleting the document dequeues it.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE "document_index_jobs" (
    "document_id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "enqueued_at" TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    "run_after" TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    CONSTRAINT "document_index_jobs_pkey" PRIMARY KEY ("document_id"),
    CONSTRAINT "document_index_jobs_document_id_fkey" FOREIGN KEY ("document_id") REFERENCES "documents"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "document_index_jobs_run_after_idx" ON "document_index_jobs"("run_after");
CREATE INDEX "document_index_jobs_organization_id_idx" ON "document_index_jobs"("organization_id");

CREATE FUNCTION documents_after_write_enqueue() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO document_index_jobs (document_id, organization_id)
  VALUES (NEW.id, NEW.organization_id)
  ON CONFLICT (document_id) DO UPDATE
    SET enqueued_at = clock_timestamp(), run_after = clock_timestamp(), attempts = 0, last_error = NULL;
  RETURN NULL;
END
$$;
CREATE TRIGGER documents_after_write_enqueue
AFTER INSERT OR UPDATE OF status ON documents
FOR EACH ROW WHEN (NEW.status = 'PENDING')
EXECUTE FUNCTION documents_after_write_enqueue();

-- ---------------------------------------------------------------------------------------------
-- Query log: one row per knowledge query (queryKnowledgeBase, queryPlatformKnowledge, the
-- knowledge-bases search provider), written off the response path. No foreign key to the
-- knowledge base: the log outlives a deleted knowledge base.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE "knowledge_queries" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "organization_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "knowledge_base_id" UUID,
    "query" TEXT NOT NULL,
    "results" INTEGER NOT NULL,
    "top_score" DOUBLE PRECISION,
    "provider" TEXT NOT NULL,
    "credits" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "latency_ms" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "knowledge_queries_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "knowledge_queries_organization_id_created_at_idx" ON "knowledge_queries"("organization_id", "created_at" DESC);

-- ---------------------------------------------------------------------------------------------
-- Row-level security, the same policy as every other tenant table.
-- ---------------------------------------------------------------------------------------------
GRANT SELECT, INSERT, UPDATE, DELETE ON
  knowledge_bases, knowledge_base_credentials, knowledge_base_capabilities, document_contents,
  documents, document_chunks, document_keyword_postings, document_index_jobs, knowledge_queries
TO context_search_tenant;

DO $$
DECLARE
  tenant_table text;
BEGIN
  FOREACH tenant_table IN ARRAY ARRAY[
    'knowledge_bases', 'knowledge_base_credentials', 'knowledge_base_capabilities', 'document_contents',
    'documents', 'document_chunks', 'document_keyword_postings', 'document_index_jobs', 'knowledge_queries'
  ] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', tenant_table);
    EXECUTE format(
      'CREATE POLICY tenant_isolation ON %I TO context_search_tenant '
      'USING (organization_id = current_setting(''app.organization_id'', true)) '
      'WITH CHECK (organization_id = current_setting(''app.organization_id'', true))',
      tenant_table);
  END LOOP;
END
$$;

-- Platform knowledge bases, and the platform's capability mappings, are for every
-- organization to query: a second, read-only policy admits them (permissive policies are
-- OR-ed). Writing them still needs the platform's own scope, and their credentials stay in
-- knowledge_base_credentials under the tenant-only policy.
CREATE POLICY platform_read ON knowledge_bases FOR SELECT TO context_search_tenant
  USING (organization_id = '__platform__' AND scope = 'PLATFORM');
CREATE POLICY platform_read ON knowledge_base_capabilities FOR SELECT TO context_search_tenant
  USING (organization_id = '__platform__');
