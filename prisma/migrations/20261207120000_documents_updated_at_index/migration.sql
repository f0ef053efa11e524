-- A search page cached for a user is computed again when one of the documents they may find
-- changed after it was searched (shared with their team, made READY): the search subgraph asks
-- for the organization's documents changed since then on every cache hit, a range read here.
CREATE INDEX "documents_organization_id_updated_at_idx" ON "documents"("organization_id", "updated_at");
