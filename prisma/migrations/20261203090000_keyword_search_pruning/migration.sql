-- Pruned exact BM25 for conversations (issue 12, lever 1).
--
-- At 100,000 conversations the keyword search read every posting of every query term: the
-- slowest query (12 terms) read 350,172 postings and scored 97,911 conversations. Two
-- near-stop-words were 47% of those postings for ~0.17 of the weight.
--
-- keyword_search_conversations() is MaxScore with the universal BM25 bound: a term's
-- contribution idf·tf·(k1+1)/(tf + k1·(1−b+b·dl/avgdl)) is below idf·(k1+1) for every posting,
-- whatever its tf and document length, so the bound needs no per-term statistics. A first
-- candidate set, scored fully, gives θ (a real window-th best score, so never above the true
-- one); the terms whose bounds, summed from the smallest, stay below θ cannot bring a
-- conversation into the window on their own (non-essential: the near-stop-words, whose idf is
-- tiny). Only conversations that contain an essential term are scored, and the non-essential
-- terms are probed for them on the postings' primary key instead of being summed in full.
--
-- Nothing changes on the write path: no table, no trigger, no lock (an earlier draft kept
-- per-term df / max tf / min length in a table updated by the postings trigger; its upkeep made
-- ingestion 4.8× slower and serialized an organization's writers). df is counted live over the
-- term's index range, as the exhaustive statement does, unless the caller passes the dfs it
-- holds (p_known_terms / p_known_dfs, a short-lived cache like the document count); the dfs
-- counted here are returned as rows with a NULL id, so the caller can keep them.
--
-- p_prune_from_postings: below this many postings in all (the sum of the terms' df), finding θ
-- by primary-key probes costs more than summing every posting, so the search sums them all (see
-- the keyword-pruning benchmark for where it pays).
CREATE FUNCTION keyword_search_conversations(
  p_organization_id TEXT, p_query TEXT, p_documents FLOAT8, p_average_length FLOAT8, p_window INTEGER,
  p_prune_from_postings INTEGER DEFAULT 20000, p_known_terms TEXT[] DEFAULT '{}', p_known_dfs FLOAT8[] DEFAULT '{}')
RETURNS TABLE (id UUID, score FLOAT8, term TEXT, df FLOAT8)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
  -- BM25 parameters, the provider's K1 and B. The contribution below is written exactly as the
  -- exhaustive statement writes it, so each posting's contribution is the same float.
  k1 CONSTANT FLOAT8 := 1.2;
  k1_plus_1 CONSTANT FLOAT8 := 2.2;
  one_minus_b CONSTANT FLOAT8 := 0.25;
  b CONSTANT FLOAT8 := 0.75;
  query_terms TEXT[];
  query_dfs FLOAT8[];
  counted BOOLEAN[];
  terms TEXT[];
  idfs FLOAT8[];
  bounds FLOAT8[];
  n INTEGER;
  postings FLOAT8;
  theta FLOAT8 := 0;
  candidates UUID[] := '{}';
  sample INTEGER := least(greatest(2 * p_window, 1), 1000);
  -- terms[1:m] are non-essential; their bounds sum to nonessential_bound.
  m INTEGER := 0;
  nonessential_bound FLOAT8 := 0;
BEGIN
  -- df: the caller's when it holds one (COALESCE evaluates the count only when it does not),
  -- else counted over the term's primary-key range (index-only).
  SELECT array_agg(q.term ORDER BY q.term),
         array_agg(coalesce(k.df, (SELECT count(*) FROM keyword_postings p
                                   WHERE p.organization_id = p_organization_id AND p.term = q.term)::float8) ORDER BY q.term),
         array_agg(k.df IS NULL ORDER BY q.term)
  INTO query_terms, query_dfs, counted
  FROM (SELECT DISTINCT lexeme AS term FROM unnest(to_tsvector('english'::regconfig, p_query))) q
  LEFT JOIN (SELECT DISTINCT ON (k.term) k.term, k.df FROM unnest(p_known_terms, p_known_dfs) AS k(term, df) WHERE k.term IS NOT NULL AND k.df IS NOT NULL) k
    ON k.term = q.term;
  IF query_terms IS NULL THEN
    RETURN;
  END IF;
  RETURN QUERY SELECT NULL::uuid, NULL::float8, c.term, c.df FROM unnest(query_terms, query_dfs, counted) AS c(term, df, counted) WHERE c.counted;

  -- Bounds ascending (most common terms first); ties by term so the order is deterministic.
  SELECT array_agg(t.term ORDER BY t.idf, t.term), array_agg(t.idf ORDER BY t.idf, t.term), array_agg(t.idf * k1_plus_1 ORDER BY t.idf, t.term), sum(t.df)
  INTO terms, idfs, bounds, postings
  FROM (
    -- greatest(documents, df): cached collection statistics may trail a burst of new
    -- conversations; idf must stay a number, never the log of a negative.
    SELECT c.term, c.df, ln(1 + (greatest(p_documents, c.df) - c.df + 0.5) / (c.df + 0.5)) AS idf
    FROM unnest(query_terms, query_dfs) AS c(term, df)
    WHERE c.df > 0
  ) t;
  n := coalesce(array_length(terms, 1), 0);
  IF n = 0 THEN
    RETURN;
  END IF;

  IF n > 1 AND postings >= p_prune_from_postings THEN
    -- θ from a first candidate set: conversations of the highest-bound terms (the rarest, so
    -- short ranges), scored over every query term by primary-key probes.
    FOR i IN REVERSE n..1 LOOP
      candidates := ARRAY(
        SELECT DISTINCT c FROM unnest(candidates || ARRAY(
          SELECT p.conversation_id FROM keyword_postings p
          WHERE p.organization_id = p_organization_id AND p.term = terms[i]
          LIMIT sample - cardinality(candidates))) AS c);
      EXIT WHEN cardinality(candidates) >= sample;
    END LOOP;
    -- The probes are one index scan on (organization, term = ANY, conversation = ANY), kept
    -- out of the join (OFFSET 0) so the planner cannot turn them into a scan of the
    -- organization's whole range filtered by conversation: it did, on fresh statistics.
    SELECT x.total INTO theta FROM (
      SELECT sum(t.idf * p.tf * k1_plus_1 / (p.tf + k1 * (one_minus_b + b * p.document_length / p_average_length))) AS total
      FROM (SELECT p.conversation_id, p.term, p.tf, p.document_length FROM keyword_postings p
            WHERE p.organization_id = p_organization_id AND p.term = ANY(terms) AND p.conversation_id = ANY(candidates)
            OFFSET 0) p
      JOIN unnest(terms, idfs) AS t(term, idf) ON t.term = p.term
      GROUP BY p.conversation_id
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
  WITH essential AS MATERIALIZED (
    SELECT p.conversation_id, sum(t.idf * p.tf * k1_plus_1 / (p.tf + k1 * (one_minus_b + b * p.document_length / p_average_length))) AS partial
    FROM unnest(terms[m + 1:n], idfs[m + 1:n]) AS t(term, idf)
    JOIN keyword_postings p ON p.organization_id = p_organization_id AND p.term = t.term
    GROUP BY p.conversation_id
  ),
  -- A conversation whose essential part plus every non-essential bound stays below θ cannot
  -- reach the window: it is not probed.
  kept AS MATERIALIZED (
    SELECT e.conversation_id, e.partial FROM essential e
    WHERE m = 0 OR (e.partial + nonessential_bound) * (1 + 1e-9) >= theta
  ),
  -- The non-essential terms' postings of the kept conversations only: one index scan on
  -- (organization, term = ANY, conversation = ANY), as for θ.
  probed AS MATERIALIZED (
    SELECT p.conversation_id, p.term, p.tf, p.document_length FROM keyword_postings p
    WHERE m > 0 AND p.organization_id = p_organization_id AND p.term = ANY(terms[1:m])
      AND p.conversation_id = ANY(ARRAY(SELECT k.conversation_id FROM kept k))
  ),
  rest AS (
    SELECT r.conversation_id, sum(t.idf * r.tf * k1_plus_1 / (r.tf + k1 * (one_minus_b + b * r.document_length / p_average_length))) AS partial
    FROM probed r JOIN unnest(terms[1:m], idfs[1:m]) AS t(term, idf) ON t.term = r.term
    GROUP BY r.conversation_id
  )
  SELECT k.conversation_id, k.partial + coalesce(r.partial, 0) AS total, NULL::text, NULL::float8
  FROM kept k LEFT JOIN rest r ON r.conversation_id = k.conversation_id
  ORDER BY total DESC, k.conversation_id
  LIMIT p_window;
END
$$;
