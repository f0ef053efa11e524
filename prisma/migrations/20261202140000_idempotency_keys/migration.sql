-- Idempotency keys (issue 19): a client that retries a write under the same `Idempotency-Key`
-- gets the first answer again instead of a second write. One row per (organization, key,
-- operation), where the operation is the mutation field and its response key, so one key can
-- cover every mutation of one GraphQL document. The row is written in the same transaction as the
-- write it records: the write commits if and only if its key does. `request_hash` is a SHA-256 of
-- the caller and the field's arguments (the same key with another body is refused); `receipt` is
-- the small JSON (created ids) from which the first answer is read again, never the answer's
-- content. Rows past `expires_at` are free to be reused and are purged lazily by later keyed
-- writes of the same organization (lib/database/idempotency.ts).
CREATE TABLE "idempotency_keys" (
    "organization_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "operation" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "receipt" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("organization_id", "key", "operation"),
    CONSTRAINT "idempotency_keys_key_check" CHECK (char_length("key") BETWEEN 1 AND 255),
    CONSTRAINT "idempotency_keys_operation_check" CHECK (char_length("operation") BETWEEN 1 AND 600)
);
CREATE INDEX "idempotency_keys_organization_id_expires_at_idx" ON "idempotency_keys"("organization_id", "expires_at");

GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_keys TO context_search_tenant;

ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON idempotency_keys TO context_search_tenant
  USING (organization_id = current_setting('app.organization_id', true))
  WITH CHECK (organization_id = current_setting('app.organization_id', true));
