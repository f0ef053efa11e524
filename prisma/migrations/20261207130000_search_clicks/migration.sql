-- Search analytics (`searchAnalytics`, `recordSearchClick`): which hit of a search was opened.
--
-- A search's log row is what a click names (`SearchResult.searchId` is search_queries.id), so
-- the log now says which rows are a person's search: `page_offset` is where the page started in
-- the fused list (0 for a first page; later pages are the same search read further) and
-- `latency` the SearchInput.latency it was limited to (LOCAL for the quick page a client shows
-- before the full one). Analytics count first pages of every provider only; rows written
-- before keep 0 and NULL, which is what almost all of them were.
ALTER TABLE "search_queries" ADD COLUMN "page_offset" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "search_queries" ADD COLUMN "latency" TEXT;
ALTER TABLE "search_queries" ADD CONSTRAINT "search_queries_page_offset_check" CHECK ("page_offset" >= 0);
ALTER TABLE "search_queries" ADD CONSTRAINT "search_queries_latency_check" CHECK ("latency" IS NULL OR "latency" IN ('LOCAL', 'REMOTE'));

-- One row per search and item opened from it: a second click on the same hit of the same
-- search is the same row (the key), so double clicks count once. The search's own time is kept
-- beside the click's, so a range of searches reads its clicks by index without a join.
CREATE TABLE "search_clicks" (
    "organization_id" TEXT NOT NULL,
    "search_id" UUID NOT NULL,
    "item_kind" TEXT NOT NULL,
    "item_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "user_id" TEXT NOT NULL,
    "searched_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "search_clicks_pkey" PRIMARY KEY ("organization_id", "search_id", "item_kind", "item_id"),
    CONSTRAINT "search_clicks_search_fkey" FOREIGN KEY ("organization_id", "search_id") REFERENCES "search_queries"("organization_id", "id") ON DELETE CASCADE,
    CONSTRAINT "search_clicks_position_check" CHECK ("position" BETWEEN 1 AND 1000),
    CONSTRAINT "search_clicks_item_id_check" CHECK (char_length("item_id") BETWEEN 1 AND 512),
    CONSTRAINT "search_clicks_item_kind_check" CHECK ("item_kind" IN ('CONVERSATION', 'DOCUMENT_CHUNK', 'KNOWLEDGE_BASE_PASSAGE', 'WEB_RESULT', 'SLACK_MESSAGE', 'LINKEDIN_POST'))
);
CREATE INDEX "search_clicks_organization_id_searched_at_idx" ON "search_clicks"("organization_id", "searched_at");

GRANT SELECT, INSERT, UPDATE, DELETE ON search_clicks TO context_search_tenant;

DO $$
DECLARE
  tenant_table text;
BEGIN
  FOREACH tenant_table IN ARRAY ARRAY['search_clicks'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', tenant_table);
    EXECUTE format(
      'CREATE POLICY tenant_isolation ON %I TO context_search_tenant '
      'USING (organization_id = current_setting(''app.organization_id'', true)) '
      'WITH CHECK (organization_id = current_setting(''app.organization_id'', true))',
      tenant_table);
  END LOOP;
END
$$;
