-- A saved search keeps the rest of what `search` narrows and matches by: its `filter` (the
-- SearchInput.filter it was saved with, normalized: enum names, ISO instants, sorted lists; NULL
-- for none) and whether typo tolerance was on. Rows saved before keep NULL and true, which is
-- how they ran.
ALTER TABLE "saved_searches" ADD COLUMN "filter" JSONB;
ALTER TABLE "saved_searches" ADD COLUMN "typo_tolerance" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "saved_searches" ADD CONSTRAINT "saved_searches_filter_check" CHECK ("filter" IS NULL OR jsonb_typeof("filter") = 'object');
