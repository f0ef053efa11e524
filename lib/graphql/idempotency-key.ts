/**
 * The `Idempotency-Key` request header (as Stripe and the IETF httpapi draft name it), read for
 * each mutation that creates or appends. The gateway forwards the header to every subgraph a
 * document reaches; each mutation field keeps its own record under (organization, key, field
 * and response key), so one key covers a whole document: `a: appendMessages(…)` and
 * `b: appendMessages(…)` under one key are two writes, each made once. The request a key stands
 * for is the caller (user) and the field's arguments, hashed; lib/database/idempotency.ts does
 * the rest inside the write's transaction.
 */
import { createHash } from "node:crypto";
import type { GraphQLResolveInfo } from "graphql";
import type { WriteOnce } from "../database/idempotency.js";
import type { TenantContext } from "../tenancy/token.js";
import { badUserInput } from "./errors.js";

export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";

/** Stripe's bound; room for a UUID, a ULID or a client's own scheme. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** Printable ASCII, no leading or trailing space (HTTP would strip them anyway). */
const KEY_SHAPE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** What a subgraph request carries for its writes (built by subgraph-server.ts). */
export interface WriteRequest {
  /** The raw header, if sent: checked only by a mutation that uses it. */
  idempotencyKey: string | undefined;
  /** How long a key's answer is kept. */
  idempotencyKeyTtlSeconds: number;
  /** Aborted when the caller closes the connection before the answer (the gateway gave up). */
  signal: AbortSignal;
}

/**
 * The header's key, or null without one. The draft sends it as a structured-field string
 * (`"abc"`), Stripe bare (`abc`): both are the key `abc`.
 */
export function parseIdempotencyKey(header: string | undefined): string | null {
  if (header === undefined) return null;
  const key = header.length >= 2 && header.startsWith('"') && header.endsWith('"') ? header.slice(1, -1) : header;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !KEY_SHAPE.test(key)) {
    throw badUserInput("Idempotency-Key", `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters without leading or trailing spaces (a UUID is a good key): ${whatIsWrong(key)}`);
  }
  return key;
}

/**
 * Names what makes a key unusable, as the caller typed it. HTTP header values reach Node as bytes
 * read one per character (Latin-1), and the gateway's forwarded copy is read that way once more,
 * so a key typed as `5f0c…` arrives as `5f0câ\u0080¦` (or longer): a count of characters or the
 * first bad byte would point the caller at something they never wrote. The bytes are read back
 * as UTF-8 while they decode cleanly, to name the character they sent and its position.
 */
function whatIsWrong(received: string): string {
  if (received.length === 0) return "it is empty";
  const key = asTyped(received);
  const characters = [...key];
  const bad = characters.findIndex((character, index) => {
    const code = character.codePointAt(0)!;
    if (code === 0x20) return index === 0 || index === characters.length - 1;
    return code < 0x20 || code > 0x7e;
  });
  if (bad >= 0) return `character ${bad + 1} is ${describeCharacter(characters[bad]!)}`;
  return `it has ${characters.length} characters`;
}

function asTyped(received: string): string {
  let text = received;
  // Each pass undoes one Latin-1 reading of UTF-8 bytes; more than two readings never happen.
  for (let pass = 0; pass < 3 && /[\u0080-\u00ff]/.test(text) && !/[^\u0000-\u00ff]/.test(text); pass++) {
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(text, "latin1"));
    } catch {
      break;
    }
  }
  return text;
}

function describeCharacter(character: string): string {
  const code = `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
  if (character === " ") return `a space (${code}), and a key may not start or end with one`;
  if (character === "\t") return `a tab (${code}), which is not printable`;
  if (character.codePointAt(0)! < 0x20 || character.codePointAt(0) === 0x7f) return `a control character (${code}), which is not printable`;
  return `"${character}" (${code}), which is not ASCII`;
}

/**
 * How this mutation field's write is made once: its key (from the header), the operation it is
 * stored under, the hash of who asked what, and the request's liveness. `args` are the field's
 * coerced arguments, whose keys graphql-js orders by the schema (not by the client's text), so
 * the same request hashes the same however it was written or split into variables.
 */
export function writeOnceFor(request: WriteRequest, tenant: TenantContext, info: Pick<GraphQLResolveInfo, "fieldName" | "path">, args: unknown): WriteOnce {
  const key = parseIdempotencyKey(request.idempotencyKey);
  if (key === null) return { claim: null, signal: request.signal };
  const responseKey = String(info.path.key);
  return {
    claim: {
      key,
      operation: responseKey === info.fieldName ? info.fieldName : `${info.fieldName} as ${responseKey}`,
      requestHash: createHash("sha256").update(tenant.userId).update("\n").update(JSON.stringify(args)).digest("hex"),
      ttlSeconds: request.idempotencyKeyTtlSeconds,
    },
    signal: request.signal,
  };
}
