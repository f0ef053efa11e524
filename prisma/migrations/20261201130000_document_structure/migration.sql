-- A document's structure beside its text: the sections under its headings and (PDFs) where
-- each page's text is, as extraction found them (lib/documents/document-structure.ts). The
-- text alone keeps only Markdown's headings. NULL for rows stored before this migration and
-- for texts with nothing to add (no headings, no pages): the indexer then recovers what it
-- can from the text. Bounded like the application bounds it, so no writer can store more.
ALTER TABLE "document_contents" ADD COLUMN "structure" JSONB;
ALTER TABLE "document_contents" ADD CONSTRAINT "document_contents_structure_check"
  CHECK ("structure" IS NULL OR (jsonb_typeof("structure") = 'object' AND octet_length("structure"::text) <= 1000000));
