-- Row-level security: a second wall behind the application's organization filters. Every
-- tenant table gets a policy that admits only the rows of the organization named by the
-- transaction's `app.organization_id` setting, for the role `context_search_tenant`, which
-- does not own the tables. The application runs each request's statements in a transaction
-- that switches to that role and names the caller's organization (lib/database/tenant-scope.ts),
-- so a statement that forgets its `WHERE organization_id = …` still sees only the caller's rows,
-- and a write of another organization's row is refused.
--
-- The owner of the tables (the role migrations run as) is not subject to the policies: the
-- background work that spans organizations (the indexing queue, the batched query log,
-- migrations, maintenance) runs as the owner.
--
-- Creating a role needs CREATEROLE (or a superuser). On a managed PostgreSQL where the
-- migration role lacks it, create `context_search_tenant` (NOLOGIN) once as an administrator and
-- grant it to the migration role; this migration then only adds the grants and policies.

DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'context_search_tenant') THEN
    CREATE ROLE context_search_tenant NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS;
  END IF;
  -- The application's login role must be allowed to switch to it (superusers always are).
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = current_user AND rolsuper) THEN
    EXECUTE format('GRANT context_search_tenant TO %I', current_user);
  END IF;
END
$$;

GRANT USAGE ON SCHEMA public TO context_search_tenant;
GRANT SELECT, INSERT, UPDATE, DELETE ON
  organizations, users, teams, team_memberships, conversations, messages,
  keyword_documents, keyword_postings, embedding_chunks, embedding_cache,
  search_index_jobs, search_queries
TO context_search_tenant;
-- Tables later migrations add are reachable too; each must add its own policy (a test checks
-- that every table with an organization_id column has row-level security and a policy).
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO context_search_tenant;

ALTER TABLE organizations ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON organizations TO context_search_tenant
  USING (id = current_setting('app.organization_id', true))
  WITH CHECK (id = current_setting('app.organization_id', true));

DO $$
DECLARE
  tenant_table text;
BEGIN
  FOREACH tenant_table IN ARRAY ARRAY[
    'users', 'teams', 'team_memberships', 'conversations', 'messages', 'keyword_documents',
    'keyword_postings', 'embedding_chunks', 'search_index_jobs', 'search_queries'
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
