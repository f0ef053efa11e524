-- Passages that the unified search retrieved from remote knowledge bases (Bedrock, S3 Vectors),
-- kept so that a search hit can point at an entity the gateway loads like any other
-- (`KnowledgeBasePassage` in the knowledge-base subgraph). A row belongs to the organization
-- whose search retrieved it, whoever owns the knowledge base (platform ones included), so the
-- tenant policy below is the only one. The id is a hash of (organization, knowledge base, source,
-- text): the same passage retrieved again is the same row, its retrieved_at refreshed. Rows go
-- with their knowledge base (cascade) and are pruned a day after their last retrieval, well after
-- the longest a cached search page can point at them (SEARCH_CACHE_TTL_SECONDS <= 86,400).
CREATE TABLE "knowledge_base_passages" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "knowledge_base_id" UUID NOT NULL,
    "text" TEXT NOT NULL,
    "uri" TEXT,
    "page" INTEGER,
    "retrieved_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "knowledge_base_passages_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "knowledge_base_passages_id_check" CHECK ("id" ~ '^[0-9a-f]{32}$'),
    -- Bounded as the application bounds them (remote services are not trusted to).
    CONSTRAINT "knowledge_base_passages_text_check" CHECK (char_length("text") <= 8000),
    CONSTRAINT "knowledge_base_passages_uri_check" CHECK ("uri" IS NULL OR char_length("uri") <= 2048)
);

CREATE INDEX "knowledge_base_passages_organization_id_retrieved_at_idx" ON "knowledge_base_passages"("organization_id", "retrieved_at");
CREATE INDEX "knowledge_base_passages_knowledge_base_id_idx" ON "knowledge_base_passages"("knowledge_base_id");

ALTER TABLE "knowledge_base_passages" ADD CONSTRAINT "knowledge_base_passages_knowledge_base_id_fkey"
  FOREIGN KEY ("knowledge_base_id") REFERENCES "knowledge_bases"("id") ON DELETE CASCADE ON UPDATE CASCADE;

GRANT SELECT, INSERT, UPDATE, DELETE ON knowledge_base_passages TO context_search_tenant;
ALTER TABLE knowledge_base_passages ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON knowledge_base_passages TO context_search_tenant
  USING (organization_id = current_setting('app.organization_id', true))
  WITH CHECK (organization_id = current_setting('app.organization_id', true));
