-- Each organization's own count of the queries it asked of a knowledge base it does not own (a
-- platform knowledge base every organization reads). knowledge_bases.query_count counts every
-- organization's queries, so showing it to a tenant let one organization watch another's
-- activity (issue 41): a tenant now sees its own count for a knowledge base of another
-- organization, and query_count for its own (where every query is its own anyway).
--
-- Written by the knowledge query log as the tables' owner, like query_count (see
-- knowledge-query-log.ts); read by tenants under row-level security.
CREATE TABLE "knowledge_base_query_counts" (
    "organization_id" TEXT NOT NULL,
    "knowledge_base_id" UUID NOT NULL,
    "query_count" INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT "knowledge_base_query_counts_pkey" PRIMARY KEY ("organization_id", "knowledge_base_id"),
    CONSTRAINT "knowledge_base_query_counts_knowledge_base_fkey" FOREIGN KEY ("knowledge_base_id") REFERENCES "knowledge_bases"("id") ON DELETE CASCADE,
    CONSTRAINT "knowledge_base_query_counts_query_count_check" CHECK ("query_count" >= 0)
);
CREATE INDEX "knowledge_base_query_counts_knowledge_base_id_idx" ON "knowledge_base_query_counts"("knowledge_base_id");

-- What each organization asked so far, from the query log (which keeps every knowledge query).
INSERT INTO "knowledge_base_query_counts" ("organization_id", "knowledge_base_id", "query_count")
SELECT q."organization_id", q."knowledge_base_id", count(*)::int
FROM "knowledge_queries" q
JOIN "knowledge_bases" b ON b."id" = q."knowledge_base_id" AND b."organization_id" <> q."organization_id"
GROUP BY q."organization_id", q."knowledge_base_id";

GRANT SELECT ON knowledge_base_query_counts TO context_search_tenant;

ALTER TABLE knowledge_base_query_counts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON knowledge_base_query_counts TO context_search_tenant
  USING (organization_id = current_setting('app.organization_id', true));
