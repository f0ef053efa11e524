-- Issue 23, item 3: the half-done knowledge-base rows.
--
-- 1. The external id an organization gives with an ASSUME_ROLE knowledge base, sent to STS as
--    AssumeRole's ExternalId. AWS documents it as not secret (it guards against the confused
--    deputy), so it is stored plain beside the role ARN it goes with.
ALTER TABLE "knowledge_bases" ADD COLUMN "external_id" TEXT;
ALTER TABLE "knowledge_bases" ADD CONSTRAINT "knowledge_bases_external_id_check"
  CHECK ("external_id" IS NULL OR ("credential_mode" = 'ASSUME_ROLE' AND char_length("external_id") BETWEEN 2 AND 1224 AND "external_id" ~ '^[A-Za-z0-9_+=,.@:/-]+$'));
-- (PostgreSQL's regular expressions allow bounds up to 255 only, hence char_length for AWS's 1224.)

-- 2. Platform LOCAL knowledge bases: their documents belong to the __platform__ organization
--    (written by a platform operator with `npm run platform-kb`, as the tables' owner, never
--    through a tenant's token). Every organization may READ them, in its own tenant scope: a
--    second, SELECT-only policy beside tenant_isolation (permissive policies are OR-ed), as
--    platform_read on knowledge_bases does. No policy lets a tenant scope insert, update or
--    delete a platform row: tenant_isolation's WITH CHECK and USING still name the caller's own
--    organization for every write. Of documents, only those in a (platform) knowledge base are
--    admitted; the operator's command files every platform document in one, so their chunks
--    are all of the platform's chunks.
CREATE POLICY platform_read ON documents FOR SELECT TO context_search_tenant
  USING (organization_id = '__platform__' AND knowledge_base_id IS NOT NULL);
CREATE POLICY platform_read ON document_chunks FOR SELECT TO context_search_tenant
  USING (organization_id = '__platform__');
