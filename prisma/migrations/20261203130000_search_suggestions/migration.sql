-- Suggestions as you type (`searchSuggestions`): prefix lookups over past queries, conversation
-- titles and document names, each an index range scan rather than a scan of the organization.
--
-- Keys are compared byte-wise (COLLATE "C", on every key column and read): a prefix p then matches exactly the keys in [p, p || U+10FFFF), a btree range
-- whatever the database's locale, and `%`, `_` and `\` in p are plain characters (no LIKE). Keys are lower-cased and whitespace-collapsed by
-- search_suggestion_key, the one definition the triggers, the backfill, the indexes and the
-- reads all use, so a key written and a prefix read are always normalized alike.
CREATE FUNCTION search_suggestion_key(text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURNS NULL ON NULL INPUT
AS $$ SELECT left(lower(btrim(regexp_replace($1, '\s+', ' ', 'g'))), 200) $$;

-- ---------------------------------------------------------------------------------------------
-- Past queries, aggregated where the query log is written (a statement-level trigger on the
-- batched INSERT of search_queries), so a keystroke reads a few index entries instead of
-- grouping the raw log. Queries longer than 200 characters are not suggested.
-- ---------------------------------------------------------------------------------------------

-- One row per user and distinct query: the caller's own recent queries.
CREATE TABLE "search_query_users" (
    "organization_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "key" TEXT COLLATE "C" NOT NULL,
    -- As the user last typed it.
    "query" TEXT NOT NULL,
    "times" INTEGER NOT NULL,
    "last_asked_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "search_query_users_pkey" PRIMARY KEY ("organization_id", "user_id", "key")
);

-- One row per organization and distinct query: how many distinct users asked it. Only keys that
-- at least 3 users asked are ever suggested to the organization (the partial index below and
-- SearchSuggestionSource.ORGANIZATION_QUERY say so), so one person's query is never shown to a
-- colleague; the text shown is the key itself, nobody's own spelling.
CREATE TABLE "search_query_totals" (
    "organization_id" TEXT NOT NULL,
    "key" TEXT COLLATE "C" NOT NULL,
    "users" INTEGER NOT NULL,
    "times" INTEGER NOT NULL,
    "last_asked_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "search_query_totals_pkey" PRIMARY KEY ("organization_id", "key")
);
CREATE INDEX "search_query_totals_shared_idx" ON "search_query_totals"("organization_id", "key") WHERE "users" >= 3;

CREATE FUNCTION search_queries_after_insert_suggestions() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  WITH asked AS (
    SELECT organization_id, user_id, search_suggestion_key(query) AS key, btrim(regexp_replace(query, '\s+', ' ', 'g')) AS query, created_at
    FROM added
    WHERE char_length(btrim(regexp_replace(query, '\s+', ' ', 'g'))) BETWEEN 1 AND 200
  ), per_user AS (
    SELECT organization_id, user_id, key, (array_agg(query ORDER BY created_at DESC, query))[1] AS query, count(*)::int AS times, max(created_at) AS last_asked_at
    FROM asked GROUP BY organization_id, user_id, key
  ), upserted AS (
    INSERT INTO search_query_users AS u (organization_id, user_id, key, query, times, last_asked_at)
    SELECT organization_id, user_id, key, query, times, last_asked_at FROM per_user
    ON CONFLICT (organization_id, user_id, key) DO UPDATE
      -- Several processes write the log: an older batch that arrives late keeps the newer spelling.
      SET query = CASE WHEN EXCLUDED.last_asked_at >= u.last_asked_at THEN EXCLUDED.query ELSE u.query END, times = u.times + EXCLUDED.times, last_asked_at = greatest(u.last_asked_at, EXCLUDED.last_asked_at)
    -- xmax is 0 on a row this statement inserted: the user's first time with this query.
    RETURNING organization_id, user_id, key, (xmax = 0) AS first_time
  )
  INSERT INTO search_query_totals AS t (organization_id, key, users, times, last_asked_at)
  SELECT p.organization_id, p.key, count(*) FILTER (WHERE u.first_time)::int, sum(p.times)::int, max(p.last_asked_at)
  FROM per_user p JOIN upserted u USING (organization_id, user_id, key)
  GROUP BY p.organization_id, p.key
  ON CONFLICT (organization_id, key) DO UPDATE
    SET users = t.users + EXCLUDED.users, times = t.times + EXCLUDED.times, last_asked_at = greatest(t.last_asked_at, EXCLUDED.last_asked_at);
  RETURN NULL;
END
$$;

CREATE TRIGGER search_queries_after_insert_suggestions
AFTER INSERT ON search_queries
REFERENCING NEW TABLE AS added
FOR EACH STATEMENT EXECUTE FUNCTION search_queries_after_insert_suggestions();

-- Queries logged before this migration.
INSERT INTO search_query_users (organization_id, user_id, key, query, times, last_asked_at)
SELECT organization_id, user_id, key, (array_agg(query ORDER BY created_at DESC, query))[1], count(*)::int, max(created_at)
FROM (
  SELECT organization_id, user_id, search_suggestion_key(query) AS key, btrim(regexp_replace(query, '\s+', ' ', 'g')) AS query, created_at
  FROM search_queries
) asked
WHERE char_length(query) BETWEEN 1 AND 200
GROUP BY organization_id, user_id, key;
INSERT INTO search_query_totals (organization_id, key, users, times, last_asked_at)
SELECT organization_id, key, count(*)::int, sum(times)::int, max(last_asked_at)
FROM search_query_users
GROUP BY organization_id, key;

GRANT SELECT, INSERT, UPDATE, DELETE ON search_query_users, search_query_totals TO context_search_tenant;

DO $$
DECLARE
  tenant_table text;
BEGIN
  FOREACH tenant_table IN ARRAY ARRAY['search_query_users', 'search_query_totals'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', tenant_table);
    EXECUTE format(
      'CREATE POLICY tenant_isolation ON %I TO context_search_tenant '
      'USING (organization_id = current_setting(''app.organization_id'', true)) '
      'WITH CHECK (organization_id = current_setting(''app.organization_id'', true))',
      tenant_table);
  END LOOP;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Titles and names. Their keys are stored generated columns, not expression indexes: under
-- row-level security PostgreSQL evaluates a condition that calls a function which is not
-- LEAKPROOF (lower, regexp_replace, to_tsvector's @@) only after the policy, so it can never be
-- an index condition, and an expression index on the key was read whole, as a filter (measured:
-- 35 ms for "k", 200 ms for a rare prefix at 10,000 conversations, against 0.2 ms as the owner).
-- A comparison of a plain column with text_ge/text_lt (both LEAKPROOF) is an index range scan
-- for the tenant role too. A title that starts with the prefix is that range, read in key order
-- (the first few entries are the answer); a later word is found by scanning the organization's
-- keys with strpos (no index: see the README), only when the first part found too few.
-- ---------------------------------------------------------------------------------------------
ALTER TABLE "conversations" ADD COLUMN "title_key" TEXT COLLATE "C" GENERATED ALWAYS AS (search_suggestion_key("title")) STORED;
CREATE INDEX "conversations_title_key_idx" ON "conversations"("organization_id", "title_key") WHERE "deleted_at" IS NULL;
ALTER TABLE "documents" ADD COLUMN "name_key" TEXT COLLATE "C" GENERATED ALWAYS AS (search_suggestion_key("file_name")) STORED;
CREATE INDEX "documents_name_key_idx" ON "documents"("organization_id", "name_key");
