-- The analytics dashboard (issue 21) shows each provider's failure rate: the knowledge query log
-- now keeps how each source asked went (its KnowledgeSourceStatus: OK, DEGRADED, TIMEOUT, ERROR,
-- …), as the search log keeps its providers' statuses. Rows written before this say OK: their
-- status was not recorded.

ALTER TABLE "knowledge_queries" ADD COLUMN "status" TEXT NOT NULL DEFAULT 'OK';
