/**
 * Writes that happen once. A client that retries a write (its connection dropped, or the gateway
 * answered 504 while the write was still running) sends the same `Idempotency-Key`; the write
 * records the key in its own transaction, so the write commits if and only if its key does, and
 * the retry finds the key and reads the first answer again instead of writing a second time.
 *
 * A key belongs to one organization and one operation (a mutation field under its response key,
 * see lib/graphql/idempotency-key.ts). Its row holds a hash of the request (who asked, with which
 * arguments: the same key with another request is refused with IDEMPOTENCY_KEY_REUSED) and a
 * receipt, the ids the write created, from which the first answer is read again: storing the
 * answer itself would keep a second copy of up to 10 MB of messages for every key.
 *
 * A second request with the key while the first still runs waits for it on the key's row (the
 * first's uncommitted insert holds the unique index): then it sees the first's receipt, or, if
 * the first rolled back, writes itself. So concurrent duplicates make one write.
 *
 * A write that outlives its caller (the gateway's deadline passed and it closed the connection):
 * without a key it is rolled back rather than committed unseen (the check runs before the write
 * starts and again just before COMMIT), since nothing could tell the caller it happened; with a
 * key it commits, and the retry is answered from the key. Rolling keyed writes back too would
 * make a write that takes longer than the deadline fail on every retry; this way the retries
 * converge. A mutation with expensive work before its transaction (counting tokens) first asks
 * `earlierAnswer`, so a retry of a committed write is answered without redoing that work.
 */
import { createdThenDeleted, idempotencyKeyReused, requestAbandoned } from "../graphql/errors.js";
import type { TenantTransaction } from "./tenant-scope.js";

/** The key of one write, as the GraphQL layer derives it from the request. */
export interface IdempotencyClaim {
  /** The client's key (1 to 255 printable ASCII characters). */
  key: string;
  /** The mutation field and its response key, e.g. `appendMessages` or `appendMessages as second`. */
  operation: string;
  /** SHA-256 (hex) of the caller and the field's arguments. */
  requestHash: string;
  /** How long the key's answer is kept (IDEMPOTENCY_KEY_TTL_SECONDS). */
  ttlSeconds: number;
}

/** How one write is guarded: its key, if the client sent one, and the request's liveness. */
export interface WriteOnce {
  claim: IdempotencyClaim | null;
  /** Aborted when the caller stopped waiting: a write without a key then rolls back instead of committing. */
  signal?: AbortSignal;
}

/** JSON the database keeps for a key: the created ids, enough to read the answer again. */
export type Receipt = Record<string, string | string[]>;

/**
 * How a write's result becomes its receipt, and how the receipt becomes the result again. The
 * organization is passed back to `replay` because every entity is keyed by (organization, id).
 */
export interface ReceiptFormat<T> {
  of(result: T): Receipt;
  replay(tx: TenantTransaction, receipt: Receipt, organizationId: string): Promise<T>;
}

/**
 * The receipt of a write that creates one entity: its id. A retry reads the entity again as it is
 * now; one deleted since is NOT_FOUND, saying so.
 */
export function createdEntity<T>(what: string, idOf: (result: T) => string, read: (tx: TenantTransaction, organizationId: string, id: string) => Promise<T | null>): ReceiptFormat<T> {
  return {
    of: (result) => ({ id: idOf(result) }),
    async replay(tx, receipt, organizationId) {
      const id = String(receipt.id);
      const entity = await read(tx, organizationId, id);
      if (entity === null) throw createdThenDeleted(what, id);
      return entity;
    },
  };
}

/** How many expired keys of the organization one keyed write deletes on the way (lazy purge). */
const PURGE_BATCH = 100;

/**
 * Runs `write` (statements on `tx`, the tenant-scoped transaction) once per key: the first time
 * it runs and its receipt is stored with the key; later with the same key and request it does
 * not run, and the first answer is read again from the receipt. Without a key it just runs,
 * and rolls back when the caller has gone.
 */
export async function writeOnce<T>(tx: TenantTransaction, organizationId: string, once: WriteOnce | undefined, write: () => Promise<T>, receipts: ReceiptFormat<T>): Promise<T> {
  const claim = once?.claim ?? null;
  if (!claim) {
    requireCallerWaiting(once?.signal);
    const result = await write();
    // The last moment to roll back: past this the caller would miss a committed write.
    requireCallerWaiting(once?.signal);
    return result;
  }
  const earlier = await claimKey(tx, organizationId, claim);
  if (earlier) return receipts.replay(tx, earlier, organizationId);
  const result = await write();
  await tx.$executeRaw`
    UPDATE idempotency_keys SET receipt = ${JSON.stringify(receipts.of(result))}::jsonb
    WHERE organization_id = ${organizationId} AND key = ${claim.key} AND operation = ${claim.operation}`;
  return result;
}

/**
 * The first answer of a keyed write that has committed and not expired, or null (no key, or not
 * written yet); IDEMPOTENCY_KEY_REUSED when the key stands for another request. One indexed read,
 * for mutations to ask before work too expensive to repeat for a retry.
 */
export async function earlierAnswer<T>(tx: TenantTransaction, organizationId: string, once: WriteOnce | undefined, receipts: ReceiptFormat<T>): Promise<T | null> {
  const claim = once?.claim;
  if (!claim) return null;
  const [earlier] = await tx.$queryRaw<{ request_hash: string; receipt: Receipt | null }[]>`
    SELECT request_hash, receipt FROM idempotency_keys
    WHERE organization_id = ${organizationId} AND key = ${claim.key} AND operation = ${claim.operation} AND expires_at > now()`;
  if (!earlier) return null;
  if (!earlier.receipt || earlier.request_hash !== claim.requestHash) throw idempotencyKeyReused(claim.key, claim.operation);
  return receipts.replay(tx, earlier.receipt, organizationId);
}

/**
 * Inserts the key, or finds it: null when this transaction now owns the key (new, or expired and
 * taken over), the receipt when an earlier request with the same body committed it. Expired keys
 * of the organization are purged in the same statement, a bounded batch at a time, skipping rows
 * another transaction holds.
 */
async function claimKey(tx: TenantTransaction, organizationId: string, claim: IdempotencyClaim): Promise<Receipt | null> {
  const claimed = await tx.$queryRaw<{ claimed: number }[]>`
    WITH purged AS (
      DELETE FROM idempotency_keys WHERE ctid IN (
        SELECT ctid FROM idempotency_keys
        WHERE organization_id = ${organizationId} AND expires_at <= now()
          AND NOT (key = ${claim.key} AND operation = ${claim.operation})
        LIMIT ${PURGE_BATCH} FOR UPDATE SKIP LOCKED))
    INSERT INTO idempotency_keys (organization_id, key, operation, request_hash, expires_at)
    VALUES (${organizationId}, ${claim.key}, ${claim.operation}, ${claim.requestHash}, now() + make_interval(secs => ${claim.ttlSeconds}::float8))
    ON CONFLICT (organization_id, key, operation) DO UPDATE
      SET request_hash = EXCLUDED.request_hash, receipt = NULL, created_at = now(), expires_at = EXCLUDED.expires_at
      WHERE idempotency_keys.expires_at <= now()
    RETURNING 1 AS claimed`;
  if (claimed.length > 0) return null;
  // The conflict waited for the key's first transaction to end; it committed, so its row is visible now.
  const [earlier] = await tx.$queryRaw<{ request_hash: string; receipt: Receipt | null }[]>`
    SELECT request_hash, receipt FROM idempotency_keys
    WHERE organization_id = ${organizationId} AND key = ${claim.key} AND operation = ${claim.operation}`;
  // A committed key always has its receipt (written in the same transaction as the key).
  if (!earlier?.receipt || earlier.request_hash !== claim.requestHash) throw idempotencyKeyReused(claim.key, claim.operation);
  return earlier.receipt;
}

function requireCallerWaiting(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw requestAbandoned();
}
