-- LinkedIn as a graph source (issue 23, item 2): the organization's OAuth token is an external
-- provider's credentials like any other (sealed in external_provider_credentials, charged in
-- credit_ledger), and its organizations and posts are external results, so that search hits and
-- entity references can name them. PostgreSQL 12+ adds enum values inside a transaction as long
-- as nothing in the same transaction uses them; nothing here does.
ALTER TYPE "ExternalProvider" ADD VALUE IF NOT EXISTS 'LINKEDIN';
ALTER TYPE "ExternalResultKind" ADD VALUE IF NOT EXISTS 'LINKEDIN_ORGANIZATION';
ALTER TYPE "ExternalResultKind" ADD VALUE IF NOT EXISTS 'LINKEDIN_POST';
