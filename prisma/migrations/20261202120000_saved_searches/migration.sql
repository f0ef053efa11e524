-- The search subgraph's saved searches: a user's named search input (query, alpha, providers,
-- weights), private to that user within their organization. `last_hit_keys` holds the
-- `Typename:id` keys of the previous run's first page (at most 100 hits, bounded at 200 here),
-- so that a run can tell which hits are new since the last one; NULL until the first run.
CREATE TABLE "saved_searches" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "organization_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "query" TEXT NOT NULL,
    "alpha" DOUBLE PRECISION NOT NULL DEFAULT 0.5,
    "providers" TEXT[],
    "weights" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_run_at" TIMESTAMPTZ(3),
    "last_hit_keys" JSONB,
    CONSTRAINT "saved_searches_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "saved_searches_name_check" CHECK (char_length("name") BETWEEN 1 AND 200),
    CONSTRAINT "saved_searches_query_check" CHECK (char_length("query") BETWEEN 1 AND 1000),
    CONSTRAINT "saved_searches_alpha_check" CHECK ("alpha" >= 0 AND "alpha" <= 1),
    CONSTRAINT "saved_searches_weights_check" CHECK (jsonb_typeof("weights") = 'array' AND jsonb_array_length("weights") <= 100),
    CONSTRAINT "saved_searches_last_hit_keys_check" CHECK ("last_hit_keys" IS NULL OR (jsonb_typeof("last_hit_keys") = 'array' AND jsonb_array_length("last_hit_keys") <= 200))
);
CREATE UNIQUE INDEX "saved_searches_organization_id_user_id_name_key" ON "saved_searches"("organization_id", "user_id", "name");
CREATE INDEX "saved_searches_organization_id_user_id_created_at_idx" ON "saved_searches"("organization_id", "user_id", "created_at");

GRANT SELECT, INSERT, UPDATE, DELETE ON saved_searches TO context_search_tenant;

DO $$
DECLARE
  tenant_table text;
BEGIN
  FOREACH tenant_table IN ARRAY ARRAY['saved_searches'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', tenant_table);
    EXECUTE format(
      'CREATE POLICY tenant_isolation ON %I TO context_search_tenant '
      'USING (organization_id = current_setting(''app.organization_id'', true)) '
      'WITH CHECK (organization_id = current_setting(''app.organization_id'', true))',
      tenant_table);
  END LOOP;
END
$$;
