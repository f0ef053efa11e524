-- Typo tolerance (issue 20): each organization's vocabulary, the words its conversations and
-- documents contain, so that a query word found nowhere can be expanded to its nearest words.
--
-- Words, not lexemes: a suggestion ("did you mean") must read as the user would type it
-- ("deadlock", not the stem "deadlock"'s cousin "convers"), and a word's lexeme is cheap to
-- compute for the few candidates a search looks at (to_tsvector of one word).
--
-- Kept by statement-level triggers on what is written (new messages, titles, document chunks),
-- never by reading a whole conversation again: an append adds only its own words, with
-- INSERT … ON CONFLICT DO NOTHING, which updates no row (no hot row: a word every message uses
-- is looked up in the primary key and left alone). Words are never removed: a word whose
-- conversations were deleted expands to a term with no postings, which scores nothing, and a
-- suggestion needs hits the caller can see (lib/retrieval/typo-tolerance.ts).
--
-- Only words of 4 to 32 letters: shorter query words are not expanded (one edit of a 3-letter
-- word is another word), longer ones are identifiers and noise.
--
-- The GiST index answers "the K words of this organization nearest to this one by trigram
-- distance" (KNN, ORDER BY word <-> typed) inside the organization's part of the index
-- (btree_gist puts organization_id in the same index), so a search never walks other
-- organizations' words. pg_trgm, btree_gist and fuzzystrmatch (edit distance) are contrib
-- extensions marked trusted: the database owner may create them without a superuser. PGlite
-- loads the same three (lib/database/connect.ts).

CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gist;
CREATE EXTENSION IF NOT EXISTS fuzzystrmatch;

CREATE TABLE "search_vocabulary" (
    "organization_id" TEXT NOT NULL,
    "word" TEXT NOT NULL,
    CONSTRAINT "search_vocabulary_pkey" PRIMARY KEY ("organization_id", "word")
);

-- The words of a text as the vocabulary keeps them: lowercase runs of letters, 4 to 32 long.
-- As much text as the search vectors index (500,000 characters), no more.
CREATE FUNCTION vocabulary_words(content TEXT) RETURNS SETOF TEXT
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT DISTINCT w FROM regexp_split_to_table(lower(left(content, 500000)), '[^[:alpha:]]+') AS w
  WHERE length(w) BETWEEN 4 AND 32
$$;

CREATE FUNCTION messages_after_insert_vocabulary() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_vocabulary (organization_id, word)
  SELECT DISTINCT m.organization_id, w FROM new_messages m, vocabulary_words(m.content) AS w
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER messages_after_insert_vocabulary
AFTER INSERT ON messages
REFERENCING NEW TABLE AS new_messages
FOR EACH STATEMENT EXECUTE FUNCTION messages_after_insert_vocabulary();

-- Edited messages add their new words too (the old ones stay, see above).
CREATE TRIGGER messages_after_update_vocabulary
AFTER UPDATE ON messages
REFERENCING NEW TABLE AS new_messages
FOR EACH STATEMENT EXECUTE FUNCTION messages_after_insert_vocabulary();

CREATE FUNCTION conversations_after_title_vocabulary() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_vocabulary (organization_id, word)
  SELECT DISTINCT c.organization_id, w FROM new_conversations c, vocabulary_words(c.title) AS w
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER conversations_after_insert_vocabulary
AFTER INSERT ON conversations
REFERENCING NEW TABLE AS new_conversations
FOR EACH STATEMENT EXECUTE FUNCTION conversations_after_title_vocabulary();
-- A rename only (every append updates its conversation's counters: those must not pay for this).
-- Row-level: PostgreSQL allows no transition table on a trigger with a column list.
CREATE FUNCTION conversations_after_rename_vocabulary() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_vocabulary (organization_id, word)
  SELECT NEW.organization_id, w FROM vocabulary_words(NEW.title) AS w
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER conversations_after_rename_vocabulary
AFTER UPDATE OF title ON conversations
FOR EACH ROW WHEN (NEW.title IS DISTINCT FROM OLD.title)
EXECUTE FUNCTION conversations_after_rename_vocabulary();

CREATE FUNCTION document_chunks_after_write_vocabulary() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_vocabulary (organization_id, word)
  SELECT DISTINCT c.organization_id, w
  FROM new_chunks c, vocabulary_words(array_to_string(c.heading_path, ' ') || ' ' || c.text) AS w
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER document_chunks_after_insert_vocabulary
AFTER INSERT ON document_chunks
REFERENCING NEW TABLE AS new_chunks
FOR EACH STATEMENT EXECUTE FUNCTION document_chunks_after_write_vocabulary();
CREATE TRIGGER document_chunks_after_update_vocabulary
AFTER UPDATE ON document_chunks
REFERENCING NEW TABLE AS new_chunks
FOR EACH STATEMENT EXECUTE FUNCTION document_chunks_after_write_vocabulary();

-- Backfill, then the trigram index (faster built once than maintained row by row).
INSERT INTO search_vocabulary (organization_id, word)
SELECT organization_id, w FROM messages, vocabulary_words(content) AS w
UNION
SELECT organization_id, w FROM conversations, vocabulary_words(title) AS w
UNION
SELECT organization_id, w FROM document_chunks, vocabulary_words(array_to_string(heading_path, ' ') || ' ' || text) AS w
ON CONFLICT DO NOTHING;

CREATE INDEX "search_vocabulary_trigram_idx" ON "search_vocabulary" USING gist ("organization_id", "word" gist_trgm_ops);

GRANT SELECT, INSERT, UPDATE, DELETE ON search_vocabulary TO context_search_tenant;
ALTER TABLE search_vocabulary ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON search_vocabulary TO context_search_tenant
  USING (organization_id = current_setting('app.organization_id', true))
  WITH CHECK (organization_id = current_setting('app.organization_id', true));
