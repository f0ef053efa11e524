-- A conversation whose indexing kills the process (out of memory on a huge conversation, a
-- native crash in a model) was claimed again when its lease ran out, killed the next process
-- too, and so on for ever, taking every batch-mate down with it each time: `attempts` counts
-- claims and is only compared when indexing throws, which a crash never does.
--
-- `unfinished_attempts` counts the attempts that began embedding the conversation and never
-- ended in order (done, failed, or handed back at a stop): each one is a process that died, or
-- a lease lost, mid-work. The indexer embeds such a conversation alone, so its batch-mates are
-- not taken down again, and parks it (run_after = infinity, with a reason in last_error) once
-- it reaches the limit. A change to the conversation re-enqueues it with a clean count.

ALTER TABLE "search_index_jobs" ADD COLUMN "unfinished_attempts" INTEGER NOT NULL DEFAULT 0;

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
  DELETE FROM keyword_documents WHERE organization_id = NEW.organization_id AND conversation_id = NEW.id;
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
  ON CONFLICT (organization_id, conversation_id) DO UPDATE
    SET enqueued_at = clock_timestamp(), run_after = clock_timestamp(), attempts = 0, unfinished_attempts = 0, last_error = NULL;
  RETURN NULL;
END
$$;
