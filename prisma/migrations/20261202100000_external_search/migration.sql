-- The external-search subgraph's tables: organizations' own provider keys (sealed), a record of
-- every paid call with the credits it cost (the ledger row is written in the same transaction as
-- the call's record), monthly budgets, and the results that search hits and `webSearch` name as
-- entities (WebResult, SlackMessage), kept a day for the organization that retrieved them.
CREATE TYPE "ExternalProvider" AS ENUM ('SERPER', 'PERPLEXITY', 'DATAFORSEO', 'SLACK');
CREATE TYPE "ExternalCallStatus" AS ENUM ('PENDING', 'OK', 'TIMEOUT', 'ERROR');
CREATE TYPE "ExternalResultKind" AS ENUM ('WEB', 'SLACK');

CREATE TABLE "external_provider_credentials" (
    "organization_id" TEXT NOT NULL,
    "provider" "ExternalProvider" NOT NULL,
    "sealed_secret" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "external_provider_credentials_pkey" PRIMARY KEY ("organization_id", "provider"),
    CONSTRAINT "external_provider_credentials_sealed_check" CHECK (char_length("sealed_secret") <= 4096)
);

-- A budget per organization and UTC calendar month; no row means the deployment's default.
CREATE TABLE "credit_budgets" (
    "organization_id" TEXT NOT NULL,
    "monthly_credits" NUMERIC(14, 3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "credit_budgets_pkey" PRIMARY KEY ("organization_id"),
    CONSTRAINT "credit_budgets_monthly_credits_check" CHECK ("monthly_credits" >= 0)
);

-- One row per provider call that could cost credits: reserved (PENDING) before the call under
-- the organization's budget lock, settled after it.
CREATE TABLE "external_calls" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "organization_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "provider" "ExternalProvider" NOT NULL,
    "operation" TEXT NOT NULL,
    "query" TEXT NOT NULL,
    "status" "ExternalCallStatus" NOT NULL DEFAULT 'PENDING',
    "results" INTEGER NOT NULL DEFAULT 0,
    "credits" NUMERIC(14, 3) NOT NULL DEFAULT 0,
    "latency_ms" INTEGER,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "external_calls_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "external_calls_query_check" CHECK (char_length("query") <= 400),
    CONSTRAINT "external_calls_error_check" CHECK ("error" IS NULL OR char_length("error") <= 500)
);
CREATE INDEX "external_calls_organization_id_created_at_idx" ON "external_calls"("organization_id", "created_at");

-- The ledger: what each call cost. A reservation is a row; settling replaces its amount in the
-- same transaction that settles the call, so the ledger and the calls never disagree.
CREATE TABLE "credit_ledger" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "organization_id" TEXT NOT NULL,
    "call_id" UUID NOT NULL,
    "provider" "ExternalProvider" NOT NULL,
    "credits" NUMERIC(14, 3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "credit_ledger_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "credit_ledger_call_id_key" UNIQUE ("call_id"),
    CONSTRAINT "credit_ledger_call_id_fkey" FOREIGN KEY ("call_id") REFERENCES "external_calls"("id") ON DELETE CASCADE,
    CONSTRAINT "credit_ledger_credits_check" CHECK ("credits" >= 0)
);
CREATE INDEX "credit_ledger_organization_id_created_at_idx" ON "credit_ledger"("organization_id", "created_at");

CREATE TABLE "external_results" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "kind" "ExternalResultKind" NOT NULL,
    "provider" "ExternalProvider" NOT NULL,
    "url" TEXT,
    "title" TEXT NOT NULL DEFAULT '',
    "snippet" TEXT NOT NULL DEFAULT '',
    "position" INTEGER NOT NULL DEFAULT 0,
    "channel_id" TEXT,
    "channel_name" TEXT,
    "author" TEXT,
    "posted_at" TIMESTAMPTZ(3),
    "fetched_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retrieved_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "external_results_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "external_results_id_check" CHECK ("id" ~ '^[0-9a-f]{32}$'),
    CONSTRAINT "external_results_url_check" CHECK ("url" IS NULL OR char_length("url") <= 2048),
    CONSTRAINT "external_results_text_check" CHECK (char_length("title") <= 300 AND char_length("snippet") <= 4000)
);
CREATE INDEX "external_results_organization_id_retrieved_at_idx" ON "external_results"("organization_id", "retrieved_at");

GRANT SELECT, INSERT, UPDATE, DELETE ON
  external_provider_credentials, credit_budgets, external_calls, credit_ledger, external_results
TO context_search_tenant;

DO $$
DECLARE
  tenant_table text;
BEGIN
  FOREACH tenant_table IN ARRAY ARRAY['external_provider_credentials', 'credit_budgets', 'external_calls', 'credit_ledger', 'external_results'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', tenant_table);
    EXECUTE format(
      'CREATE POLICY tenant_isolation ON %I TO context_search_tenant '
      'USING (organization_id = current_setting(''app.organization_id'', true)) '
      'WITH CHECK (organization_id = current_setting(''app.organization_id'', true))',
      tenant_table);
  END LOOP;
END
$$;
