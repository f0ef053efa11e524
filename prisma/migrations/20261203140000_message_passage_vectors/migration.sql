-- Highlights (issue 20) choose, for each conversation on a page, the messages with the most
-- occurrences of the query's lexemes. Computing those with to_tsvector at read time parsed up to
-- 64 messages (32 KB) per hit for every page asked with highlights: the search-features benchmark
-- measured a page with highlights at 2.11x the same page without. Each message now keeps the
-- lexemes of the text highlights read (its first 4,000 characters, MAX_PASSAGE_SCAN in
-- lib/retrieval/highlights.ts), computed once when it is written, as search engines keep term
-- vectors for highlighting; a page then parses only the few messages it returns.
--
-- Row-level and BEFORE: the vector is part of the row as it is written, so no second write.
-- Only an edit of the content recomputes it.

ALTER TABLE "messages" ADD COLUMN "passage_vector" tsvector;

CREATE FUNCTION messages_passage_vector() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.passage_vector := to_tsvector('english'::regconfig, left(NEW.content, 4000));
  RETURN NEW;
END
$$;

CREATE TRIGGER messages_passage_vector
BEFORE INSERT OR UPDATE OF content ON messages
FOR EACH ROW EXECUTE FUNCTION messages_passage_vector();

-- The messages already written. Without row-level triggers firing the statement-level ones:
-- UPDATE OF passage_vector touches no column the other triggers on messages follow, but
-- messages_after_update (any UPDATE) would recompute every conversation's search vector.
ALTER TABLE "messages" DISABLE TRIGGER messages_after_update;
ALTER TABLE "messages" DISABLE TRIGGER messages_after_update_vocabulary;
UPDATE "messages" SET "passage_vector" = to_tsvector('english'::regconfig, left("content", 4000));
ALTER TABLE "messages" ENABLE TRIGGER messages_after_update;
ALTER TABLE "messages" ENABLE TRIGGER messages_after_update_vocabulary;
