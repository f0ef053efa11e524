-- Grounded answers' language model calls are paid calls of the external-search subgraph: their
-- call records and ledger rows name this provider (issue 23).
ALTER TYPE "ExternalProvider" ADD VALUE IF NOT EXISTS 'LANGUAGE_MODEL';
