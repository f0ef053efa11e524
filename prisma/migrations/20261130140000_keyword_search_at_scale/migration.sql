-- Keyword search at scale. The first BM25 query joined every posting of the organization to
-- the document lengths before it looked at the query's terms: 0.5 s at 10,000 conversations,
-- 3.3 s at 100,000, linear in the corpus. Now each posting carries its document's length, and
-- the primary key covers tf and length, so a search reads only the index ranges of its own
-- terms (index-only scans) and never touches keyword_documents row by row.
--
-- It also fixes renames: a rename changes search_vector inside conversations_before_write, but
-- `UPDATE OF column` triggers fire only for columns the UPDATE statement itself names, so
-- renamed conversations kept their old postings. The trigger now lists title too (the
-- function returns early when the vector did not change).
--
-- Postings and document lengths are rebuilt from conversations.search_vector, which repairs
-- conversations renamed before this fix and fills document_length in one pass. The primary
-- key is built after the bulk insert, which is faster than maintaining it row by row.

TRUNCATE "keyword_postings", "keyword_documents";
ALTER TABLE "keyword_postings" DROP CONSTRAINT "keyword_postings_pkey";
ALTER TABLE "keyword_postings" ADD COLUMN "document_length" INTEGER NOT NULL;

CREATE OR REPLACE FUNCTION conversations_after_write_search() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  total_terms INTEGER;
BEGIN
  IF TG_OP = 'UPDATE'
     AND NEW.search_vector IS NOT DISTINCT FROM OLD.search_vector
     AND NEW.deleted_at IS NOT DISTINCT FROM OLD.deleted_at THEN
    RETURN NULL;
  END IF;

  DELETE FROM keyword_postings WHERE conversation_id = NEW.id;
  DELETE FROM keyword_documents WHERE conversation_id = NEW.id;
  IF NEW.deleted_at IS NULL AND NEW.search_vector IS NOT NULL THEN
    SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0) INTO total_terms
    FROM unnest(NEW.search_vector);
    INSERT INTO keyword_postings (organization_id, term, conversation_id, tf, document_length)
    SELECT NEW.organization_id, lexeme, NEW.id, coalesce(array_length(positions, 1), 1), total_terms
    FROM unnest(NEW.search_vector);
    INSERT INTO keyword_documents (conversation_id, organization_id, length)
    VALUES (NEW.id, NEW.organization_id, total_terms);
  END IF;

  INSERT INTO search_index_jobs (conversation_id, organization_id)
  VALUES (NEW.id, NEW.organization_id)
  ON CONFLICT (conversation_id) DO UPDATE
    SET enqueued_at = clock_timestamp(), run_after = clock_timestamp(), attempts = 0, last_error = NULL;
  RETURN NULL;
END
$$;

DROP TRIGGER conversations_after_write_search ON conversations;
CREATE TRIGGER conversations_after_write_search
AFTER INSERT OR UPDATE OF title, search_vector, deleted_at ON conversations
FOR EACH ROW EXECUTE FUNCTION conversations_after_write_search();

INSERT INTO keyword_documents (conversation_id, organization_id, length)
SELECT c.id, c.organization_id, coalesce((SELECT sum(coalesce(array_length(v.positions, 1), 1)) FROM unnest(c.search_vector) v), 0)
FROM conversations c
WHERE c.deleted_at IS NULL AND c.search_vector IS NOT NULL;

INSERT INTO keyword_postings (organization_id, term, conversation_id, tf, document_length)
SELECT c.organization_id, v.lexeme, c.id, coalesce(array_length(v.positions, 1), 1), d.length
FROM conversations c
JOIN keyword_documents d ON d.conversation_id = c.id,
     unnest(c.search_vector) v;

ALTER TABLE "keyword_postings" ADD CONSTRAINT "keyword_postings_pkey"
  PRIMARY KEY ("organization_id", "term", "conversation_id") INCLUDE ("tf", "document_length");

-- Collection statistics (documents and their average length) by index-only scan.
DROP INDEX "keyword_documents_organization_id_idx";
CREATE INDEX "keyword_documents_organization_id_idx" ON "keyword_documents"("organization_id") INCLUDE ("length");
