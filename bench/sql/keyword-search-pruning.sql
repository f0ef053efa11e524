-- Pruned exact BM25 for conversations (issue 12, lever 1): an experiment, NOT a migration and
-- not used by the product. The keyword-pruning benchmark and test/integration/keyword-pruning
-- install it into their throwaway databases to compare it with the provider's exhaustive
-- statement (scoreAllPostings). Measured on PostgreSQL at 10,000 conversations it did not pay:
-- 1.69x the exhaustive statement's CPU per search when always pruning, 2.2x on the queries
-- with 20,000 postings or more, 1.14x pruning only from there; at 1,000 conversations 1.88x
-- always pruning. It stays here so the numbers can be reproduced and the idea revisited
-- (e.g. with cached dfs at 100,000 conversations, never measured).
--
-- At 100,000 conversations the keyword search read every posting of every query term: the
-- slowest query (12 terms) read 350,172 postings and scored 97,911 conversations. Two
-- near-stop-words were 47% of those postings for ~0.17 of the weight.
--
-- keyword_search_conversations() is MaxScore with the universal BM25 bound: a term's
-- contribution idf·tf·(k1+1)/(tf + k1·(1−b+b·dl/avgdl)) is below idf·(k1+1) for every posting,
-- whatever its tf and document length, so the bound needs no per-term statistics. θ, a lower
-- bound of the window-th best score, comes from the rarest terms' short ranges alone; the terms
-- whose bounds, summed from the smallest, stay below θ cannot bring a conversation into the
-- window on their own (non-essential: the near-stop-words, whose idf is
-- tiny). Only conversations that contain an essential term are scored, and only those that can
-- still reach θ get the non-essential terms added (probed on the postings' primary key, or read
-- as ranges and matched, whichever reads less).
--
-- Nothing changes on the write path: no table, no trigger, no lock (an earlier draft kept
-- per-term df / max tf / min length in a table updated by the postings trigger; its upkeep made
-- ingestion 4.8× slower and serialized an organization's writers). df is counted live over the
-- term's index range, as the exhaustive statement does, unless the caller passes the dfs it
-- holds (p_known_terms / p_known_dfs, a short-lived cache like the document count); the dfs
-- counted here are returned as rows with a NULL id, so the caller can keep them.
--
-- p_prune_from_postings: below this many postings in all (the sum of the terms' df), pruning
-- costs more than summing every posting, so the search sums them all (the keyword-pruning
-- benchmark measures where it pays).
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
  dfs FLOAT8[];
  j INTEGER;
  budget FLOAT8;
  kept_ids UUID[];
  kept_partials FLOAT8[];
  nonessential_postings FLOAT8;
  -- Postings read in a range that cost about one primary-key probe (see below).
  probe_cost CONSTANT FLOAT8 := 20;
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
  SELECT array_agg(t.term ORDER BY t.idf, t.term), array_agg(t.idf ORDER BY t.idf, t.term), array_agg(t.idf * k1_plus_1 ORDER BY t.idf, t.term),
         array_agg(t.df ORDER BY t.idf, t.term), sum(t.df)
  INTO terms, idfs, bounds, dfs, postings
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
    -- θ, a lower bound of the window-th best score, from the rarest terms alone (the highest
    -- bounds, short ranges): a conversation's sum over some of the query's terms is never above
    -- its full score, so the window-th best such partial sum is never above the window-th best
    -- full score. The rarest terms are taken while their postings stay within a budget (always
    -- at least the rarest one); reading them is cheap, and no probes are needed (probing
    -- candidates on every term cost 6x the exhaustive statement's CPU at 1,000 conversations).
    j := n;
    budget := greatest(postings * 0.1, 20 * p_window);
    WHILE j > 1 AND dfs[j - 1] + (SELECT sum(d) FROM unnest(dfs[j:n]) d) <= budget LOOP
      j := j - 1;
    END LOOP;
    SELECT x.total INTO theta FROM (
      SELECT sum(t.idf * p.tf * k1_plus_1 / (p.tf + k1 * (one_minus_b + b * p.document_length / p_average_length))) AS total
      FROM unnest(terms[j:n], idfs[j:n]) AS t(term, idf)
      JOIN keyword_postings p ON p.organization_id = p_organization_id AND p.term = t.term
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

  IF m = 0 THEN
    RETURN QUERY
    SELECT p.conversation_id, sum(t.idf * p.tf * k1_plus_1 / (p.tf + k1 * (one_minus_b + b * p.document_length / p_average_length))) AS total, NULL::text, NULL::float8
    FROM unnest(terms, idfs) AS t(term, idf)
    JOIN keyword_postings p ON p.organization_id = p_organization_id AND p.term = t.term
    GROUP BY p.conversation_id
    ORDER BY total DESC, p.conversation_id
    LIMIT p_window;
    RETURN;
  END IF;

  -- The essential terms' sums, kept only where adding every non-essential bound could still
  -- reach θ (the others cannot enter the window).
  SELECT array_agg(e.conversation_id), array_agg(e.partial) INTO kept_ids, kept_partials
  FROM (
    SELECT p.conversation_id, sum(t.idf * p.tf * k1_plus_1 / (p.tf + k1 * (one_minus_b + b * p.document_length / p_average_length))) AS partial
    FROM unnest(terms[m + 1:n], idfs[m + 1:n]) AS t(term, idf)
    JOIN keyword_postings p ON p.organization_id = p_organization_id AND p.term = t.term
    GROUP BY p.conversation_id
  ) e
  WHERE (e.partial + nonessential_bound) * (1 + 1e-9) >= theta;
  IF kept_ids IS NULL THEN
    RETURN;
  END IF;
  SELECT sum(d) INTO nonessential_postings FROM unnest(dfs[1:m]) d;

  -- The non-essential terms, for the kept conversations only. A primary-key probe costs about
  -- as much as reading probe_cost postings in a range (measured: ~3.5 µs a probe at 1,000
  -- conversations), so they are probed when there are few kept conversations, and otherwise
  -- read as ranges and matched by hash (still no sum over conversations that cannot qualify).
  -- Both are written so the planner cannot pick the other: the probes as one index scan on
  -- (organization, term = ANY, conversation = ANY), the ranges behind OFFSET 0.
  IF cardinality(kept_ids) * probe_cost < nonessential_postings THEN
    RETURN QUERY
    WITH rest AS (
      SELECT r.conversation_id, sum(t.idf * r.tf * k1_plus_1 / (r.tf + k1 * (one_minus_b + b * r.document_length / p_average_length))) AS partial
      FROM (SELECT p.conversation_id, p.term, p.tf, p.document_length FROM keyword_postings p
            WHERE p.organization_id = p_organization_id AND p.term = ANY(terms[1:m]) AND p.conversation_id = ANY(kept_ids)
            OFFSET 0) r
      JOIN unnest(terms[1:m], idfs[1:m]) AS t(term, idf) ON t.term = r.term
      GROUP BY r.conversation_id
    )
    SELECT k.conversation_id, k.partial + coalesce(r.partial, 0) AS total, NULL::text, NULL::float8
    FROM unnest(kept_ids, kept_partials) AS k(conversation_id, partial)
    LEFT JOIN rest r ON r.conversation_id = k.conversation_id
    ORDER BY total DESC, k.conversation_id
    LIMIT p_window;
  ELSE
    RETURN QUERY
    WITH rest AS (
      SELECT r.conversation_id, sum(r.idf * r.tf * k1_plus_1 / (r.tf + k1 * (one_minus_b + b * r.document_length / p_average_length))) AS partial
      FROM (SELECT p.conversation_id, t.idf, p.tf, p.document_length
            FROM unnest(terms[1:m], idfs[1:m]) AS t(term, idf)
            JOIN keyword_postings p ON p.organization_id = p_organization_id AND p.term = t.term
            OFFSET 0) r
      JOIN unnest(kept_ids) AS k(conversation_id) ON k.conversation_id = r.conversation_id
      GROUP BY r.conversation_id
    )
    SELECT k.conversation_id, k.partial + coalesce(r.partial, 0) AS total, NULL::text, NULL::float8
    FROM unnest(kept_ids, kept_partials) AS k(conversation_id, partial)
    LEFT JOIN rest r ON r.conversation_id = k.conversation_id
    ORDER BY total DESC, k.conversation_id
    LIMIT p_window;
  END IF;
END
$$;
