-- Keyword term statistics and pruned exact BM25 (issue 12, lever 1).
--
-- At 100,000 conversations the keyword search read every posting of every query term: the
-- slowest query (12 terms) read 350,172 postings and scored 97,911 conversations, and it read
-- the big ranges twice (count(*) for the document frequency, then the scoring join). Two
-- near-stop-words were 47% of those postings for ~0.17 of the weight.
--
-- keyword_term_statistics keeps, per (organization, term), the document frequency and what an
-- upper bound of the term's BM25 contribution needs: the largest tf and the smallest document
-- length among its postings. BM25's per-term contribution grows with tf and shrinks with the
-- document length, so idf·bm25(max_tf, min_document_length) is never below any document's
-- actual contribution. After deletes max_tf / min_document_length are not recomputed: the
-- bound may become loose, never wrong. df is exact (the pruned search must give exactly the
-- scores the full statement gives, and those use the live count).
--
-- keyword_search_conversations() is MaxScore over those bounds: it scores a small candidate set
-- fully to get θ, the window-th best score; the terms whose bounds, summed from the smallest,
-- stay below θ cannot bring a conversation into the window on their own (non-essential), so
-- only conversations that contain an essential term are scored, and the non-essential terms are
-- probed for those conversations on the postings' primary key instead of being read in full.

CREATE TABLE "keyword_term_statistics" (
    "organization_id" TEXT NOT NULL,
    "term" TEXT NOT NULL,
    "df" INTEGER NOT NULL,
    "max_tf" INTEGER NOT NULL,
    "min_document_length" INTEGER NOT NULL,
    CONSTRAINT "keyword_term_statistics_pkey" PRIMARY KEY ("organization_id", "term")
);

INSERT INTO keyword_term_statistics (organization_id, term, df, max_tf, min_document_length)
SELECT organization_id, term, count(*), max(tf), min(document_length)
FROM keyword_postings
GROUP BY organization_id, term;

-- Same wall as keyword_postings: a tenant sees and changes only its own organization's rows.
-- The tenant role writes them too, through the postings trigger of its own writes.
ALTER TABLE keyword_term_statistics ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON keyword_term_statistics TO context_search_tenant
  USING (organization_id = current_setting('app.organization_id', true))
  WITH CHECK (organization_id = current_setting('app.organization_id', true));
GRANT SELECT, INSERT, UPDATE ON keyword_term_statistics TO context_search_tenant;

-- Applies one conversation's posting change (old terms → new postings) to the statistics.
--
-- Concurrency: every write in an organization touches the same hot rows (its most common
-- terms), and a transaction keeps those row locks until it commits. Sorting one statement's
-- rows is not enough, because a transaction that writes a conversation and then its messages
-- takes locks in two statements (title terms first, message terms next) and another
-- transaction can do the reverse. So each transaction first takes a transaction-level advisory
-- lock for the organization's statistics, then locks rows in term order: writers of one
-- organization's statistics queue instead of deadlocking. That costs little extra, because the
-- hot-term rows already serialize them. The lock is taken only when a row must change: terms a
-- rename keeps, whose max_tf and min_document_length already cover the new posting, are
-- left alone (no lock, no write).
CREATE FUNCTION keyword_term_statistics_apply(p_organization_id TEXT, p_old_terms TEXT[], p_new_vector tsvector, p_document_length INTEGER)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  terms TEXT[];
  deltas INTEGER[];
  tfs INTEGER[];
BEGIN
  -- Set-based (two statements, not one per term): a conversation's re-index after its
  -- messages arrive adds a couple of hundred terms at once.
  SELECT array_agg(c.term ORDER BY c.term), array_agg(c.df_delta ORDER BY c.term), array_agg(c.tf ORDER BY c.term)
  INTO terms, deltas, tfs
  FROM (
    SELECT coalesce(n.term, o.term) AS term,
           CASE WHEN n.term IS NULL THEN -1 WHEN o.term IS NULL THEN 1 ELSE 0 END AS df_delta,
           coalesce(n.tf, 0) AS tf
    FROM (SELECT lexeme AS term, coalesce(array_length(positions, 1), 1) AS tf FROM unnest(p_new_vector)) n
    FULL JOIN (SELECT DISTINCT term FROM unnest(p_old_terms) AS o(term)) o ON o.term = n.term
    LEFT JOIN keyword_term_statistics s ON s.organization_id = p_organization_id AND s.term = coalesce(n.term, o.term)
    WHERE n.term IS NULL OR o.term IS NULL OR s.term IS NULL
       OR s.max_tf < n.tf OR s.min_document_length > p_document_length
  ) c;
  IF terms IS NULL THEN
    RETURN;
  END IF;
  -- Two-key form: its key space never meets the one-bigint keys (e.g. Prisma Migrate's).
  PERFORM pg_advisory_xact_lock(7270, hashtext(p_organization_id));
  INSERT INTO keyword_term_statistics AS s (organization_id, term, df, max_tf, min_document_length)
  SELECT p_organization_id, c.term, c.df_delta, c.tf, p_document_length
  FROM unnest(terms, deltas, tfs) AS c(term, df_delta, tf)
  WHERE c.df_delta >= 0
  ORDER BY c.term
  ON CONFLICT (organization_id, term) DO UPDATE
    SET df = s.df + excluded.df,
        max_tf = greatest(s.max_tf, excluded.max_tf),
        min_document_length = least(s.min_document_length, excluded.min_document_length);
  UPDATE keyword_term_statistics s SET df = s.df - 1
  FROM unnest(terms, deltas) AS c(term, df_delta)
  WHERE c.df_delta < 0 AND s.organization_id = p_organization_id AND s.term = c.term;
END
$$;

CREATE OR REPLACE FUNCTION conversations_after_write_search() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  total_terms INTEGER;
  old_terms TEXT[];
  live BOOLEAN;
BEGIN
  IF TG_OP = 'UPDATE'
     AND NEW.search_vector IS NOT DISTINCT FROM OLD.search_vector
     AND NEW.deleted_at IS NOT DISTINCT FROM OLD.deleted_at THEN
    RETURN NULL;
  END IF;

  -- The old terms come from the postings themselves, so the statistics follow exactly what
  -- the postings held, whatever the vector was.
  WITH gone AS (DELETE FROM keyword_postings WHERE conversation_id = NEW.id RETURNING term)
  SELECT array_agg(term) INTO old_terms FROM gone;
  DELETE FROM keyword_documents WHERE conversation_id = NEW.id;
  live := NEW.deleted_at IS NULL AND NEW.search_vector IS NOT NULL;
  IF live THEN
    SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0) INTO total_terms
    FROM unnest(NEW.search_vector);
    INSERT INTO keyword_postings (organization_id, term, conversation_id, tf, document_length)
    SELECT NEW.organization_id, lexeme, NEW.id, coalesce(array_length(positions, 1), 1), total_terms
    FROM unnest(NEW.search_vector);
    INSERT INTO keyword_documents (conversation_id, organization_id, length)
    VALUES (NEW.id, NEW.organization_id, total_terms);
  END IF;
  PERFORM keyword_term_statistics_apply(NEW.organization_id, coalesce(old_terms, '{}'),
    CASE WHEN live THEN NEW.search_vector ELSE ''::tsvector END, coalesce(total_terms, 0));

  INSERT INTO search_index_jobs (conversation_id, organization_id)
  VALUES (NEW.id, NEW.organization_id)
  ON CONFLICT (conversation_id) DO UPDATE
    SET enqueued_at = clock_timestamp(), run_after = clock_timestamp(), attempts = 0, last_error = NULL;
  RETURN NULL;
END
$$;

-- A hard delete removes the postings by cascade, which no trigger of ours sees: remove them
-- here first and count them out of the statistics.
CREATE FUNCTION conversations_before_delete_search() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  old_terms TEXT[];
BEGIN
  WITH gone AS (DELETE FROM keyword_postings WHERE conversation_id = OLD.id RETURNING term)
  SELECT array_agg(term) INTO old_terms FROM gone;
  IF old_terms IS NOT NULL THEN
    PERFORM keyword_term_statistics_apply(OLD.organization_id, old_terms, ''::tsvector, 0);
  END IF;
  RETURN OLD;
END
$$;

CREATE TRIGGER conversations_before_delete_search
BEFORE DELETE ON conversations
FOR EACH ROW EXECUTE FUNCTION conversations_before_delete_search();

-- Pruned exact BM25 over one organization's conversations: the same top p_window (ids and
-- scores, ties by id) as summing every posting of every query term. p_documents and
-- p_average_length are the collection statistics the caller holds (possibly cached).
--
-- p_prune_from_postings: below this many postings in all (the sum of the terms' df), reading them
-- all is cheaper than finding θ by primary-key probes (measured: 2.4× the CPU at 1,000
-- conversations when always pruning), so the search scores them all, with df from the statistics.
CREATE FUNCTION keyword_search_conversations(p_organization_id TEXT, p_query TEXT, p_documents FLOAT8, p_average_length FLOAT8, p_window INTEGER, p_prune_from_postings INTEGER DEFAULT 20000)
RETURNS TABLE (id UUID, score FLOAT8)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
  -- BM25 parameters, the provider's K1 and B. The contribution below is written exactly as the
  -- full statement writes it, so each posting's contribution is the same float.
  k1 CONSTANT FLOAT8 := 1.2;
  k1_plus_1 CONSTANT FLOAT8 := 2.2;
  one_minus_b CONSTANT FLOAT8 := 0.25;
  b CONSTANT FLOAT8 := 0.75;
  terms TEXT[];
  idfs FLOAT8[];
  bounds FLOAT8[];
  n INTEGER;
  postings BIGINT;
  theta FLOAT8 := 0;
  candidates UUID[] := '{}';
  sample INTEGER := least(greatest(2 * p_window, 1), 1000);
  -- terms[1:m] are non-essential; their bounds sum to nonessential_bound.
  m INTEGER := 0;
  nonessential_bound FLOAT8 := 0;
BEGIN
  SELECT array_agg(t.term ORDER BY t.bound, t.term), array_agg(t.idf ORDER BY t.bound, t.term), array_agg(t.bound ORDER BY t.bound, t.term), sum(t.df)
  INTO terms, idfs, bounds, postings
  FROM (
    SELECT s.term, s.df, x.idf,
           x.idf * s.max_tf * k1_plus_1 / (s.max_tf + k1 * (one_minus_b + b * s.min_document_length / p_average_length)) AS bound
    FROM (SELECT DISTINCT lexeme AS term FROM unnest(to_tsvector('english'::regconfig, p_query))) q
    JOIN keyword_term_statistics s ON s.organization_id = p_organization_id AND s.term = q.term
    -- greatest(documents, df): cached collection statistics may trail a burst of new
    -- conversations; idf must stay a number, never the log of a negative.
    CROSS JOIN LATERAL (SELECT ln(1 + (greatest(p_documents, s.df::float8) - s.df::float8 + 0.5) / (s.df::float8 + 0.5)) AS idf) x
    WHERE s.df > 0
  ) t;
  n := coalesce(array_length(terms, 1), 0);
  IF n = 0 THEN
    RETURN;
  END IF;

  IF n > 1 AND postings >= p_prune_from_postings THEN
    -- θ from a first candidate set: conversations of the highest-bound terms (usually the rarest,
    -- so short ranges), scored over every query term by primary-key probes.
    FOR i IN REVERSE n..1 LOOP
      candidates := ARRAY(
        SELECT DISTINCT c FROM unnest(candidates || ARRAY(
          SELECT p.conversation_id FROM keyword_postings p
          WHERE p.organization_id = p_organization_id AND p.term = terms[i]
          LIMIT sample - cardinality(candidates))) AS c);
      EXIT WHEN cardinality(candidates) >= sample;
    END LOOP;
    SELECT x.total INTO theta FROM (
      SELECT sum(t.idf * p.tf * k1_plus_1 / (p.tf + k1 * (one_minus_b + b * p.document_length / p_average_length))) AS total
      FROM unnest(candidates) AS c(conversation_id)
      CROSS JOIN unnest(terms, idfs) AS t(term, idf)
      JOIN keyword_postings p ON p.organization_id = p_organization_id AND p.term = t.term AND p.conversation_id = c.conversation_id
      GROUP BY c.conversation_id
      ORDER BY total DESC
      OFFSET p_window - 1 LIMIT 1) x;
    theta := coalesce(theta, 0);
    -- Strictly below θ (with a margin for summing floats in another order): a conversation with
    -- only these terms scores below the window-th best one, so it cannot enter the window, not
    -- even on a tie.
    WHILE m < n - 1 AND (nonessential_bound + bounds[m + 1]) * (1 + 1e-9) < theta LOOP
      m := m + 1;
      nonessential_bound := nonessential_bound + bounds[m];
    END LOOP;
  END IF;

  RETURN QUERY
  WITH essential AS (
    SELECT p.conversation_id, sum(t.idf * p.tf * k1_plus_1 / (p.tf + k1 * (one_minus_b + b * p.document_length / p_average_length))) AS partial
    FROM unnest(terms[m + 1:n], idfs[m + 1:n]) AS t(term, idf)
    JOIN keyword_postings p ON p.organization_id = p_organization_id AND p.term = t.term
    GROUP BY p.conversation_id
  )
  SELECT e.conversation_id,
         CASE WHEN m = 0 THEN e.partial ELSE e.partial + coalesce((
           SELECT sum(t.idf * p.tf * k1_plus_1 / (p.tf + k1 * (one_minus_b + b * p.document_length / p_average_length)))
           FROM unnest(terms[1:m], idfs[1:m]) AS t(term, idf)
           JOIN keyword_postings p ON p.organization_id = p_organization_id AND p.term = t.term AND p.conversation_id = e.conversation_id
         ), 0) END AS total
  FROM essential e
  -- A conversation whose essential part plus every non-essential bound stays below θ cannot
  -- reach the window: skip its probes.
  WHERE m = 0 OR (e.partial + nonessential_bound) * (1 + 1e-9) >= theta
  ORDER BY total DESC, e.conversation_id
  LIMIT p_window;
END
$$;
