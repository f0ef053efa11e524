/**
 * Secrets at rest: what the platform stores on behalf of an organization (its own AWS keys, web
 * search API keys) is sealed with AES-256-GCM before it reaches the database, and opened only in
 * the process that calls the provider. Nothing that stores a secret ever returns it through the
 * API; callers see at most whether one is set.
 *
 * Format of a sealed value: `v1.<key id>.<iv>.<ciphertext and tag>` (base64url parts). The key id
 * says which key sealed it, so keys rotate: a new key goes first in `SECRETS_ENCRYPTION_KEYS`
 * and seals everything from then on, the old ones stay to open what they sealed, and
 * `reseal()` moves a value to the current key. Each value is bound to its context (e.g.
 * `org:acme/serper-api-key`) as GCM additional data: a sealed value copied to another
 * organization's row, or to another purpose, does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
/** Values past this are refused: a stored credential is a few kilobytes at most. */
const MAX_PLAINTEXT_BYTES = 64 * 1024;

export class SecretError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretError";
  }
}

export interface SecretKey {
  id: string;
  key: Buffer;
}

export class SecretKeyring {
  private readonly keys: Map<string, Buffer>;
  private readonly current: SecretKey;

  /** `keys[0]` seals; every key opens what it sealed. */
  constructor(keys: readonly SecretKey[]) {
    if (keys.length === 0) throw new SecretError("a keyring needs at least one key");
    for (const { id, key } of keys) {
      if (!/^[A-Za-z0-9_-]{1,32}$/.test(id)) throw new SecretError(`key id "${id}" must be 1-32 letters, digits, _ or -`);
      if (key.length !== KEY_BYTES) throw new SecretError(`key "${id}" must be ${KEY_BYTES} bytes (AES-256), got ${key.length}`);
    }
    this.keys = new Map(keys.map(({ id, key }) => [id, key]));
    if (this.keys.size !== keys.length) throw new SecretError("key ids must be unique");
    this.current = keys[0]!;
  }

  /**
   * Parses `SECRETS_ENCRYPTION_KEYS`: comma-separated `<id>:<32 bytes in base64>`, the sealing
   * key first (e.g. `2026-12:…,2026-06:…`).
   */
  static parse(spec: string): SecretKeyring {
    const keys = spec
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => {
        const separator = part.indexOf(":");
        if (separator <= 0) throw new SecretError(`"${part.slice(0, 8)}…" is not <id>:<base64 key>`);
        return { id: part.slice(0, separator), key: Buffer.from(part.slice(separator + 1), "base64") };
      });
    return new SecretKeyring(keys);
  }

  /** The id of the key that seals new values. */
  get currentKeyId(): string {
    return this.current.id;
  }

  seal(plaintext: string, context: string): string {
    const data = Buffer.from(plaintext, "utf8");
    if (data.length > MAX_PLAINTEXT_BYTES) throw new SecretError(`a secret may be at most ${MAX_PLAINTEXT_BYTES} bytes`);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.current.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, "utf8"));
    const sealed = Buffer.concat([cipher.update(data), cipher.final(), cipher.getAuthTag()]);
    return [VERSION, this.current.id, iv.toString("base64url"), sealed.toString("base64url")].join(".");
  }

  open(value: string, context: string): string {
    const [version, keyId, ivText, sealedText, ...rest] = value.split(".");
    if (version !== VERSION || !keyId || !ivText || !sealedText || rest.length > 0) throw new SecretError("not a sealed secret of this format");
    const key = this.keys.get(keyId);
    if (!key) throw new SecretError(`sealed with key "${keyId}", which is not in SECRETS_ENCRYPTION_KEYS any more`);
    const iv = Buffer.from(ivText, "base64url");
    const sealed = Buffer.from(sealedText, "base64url");
    if (iv.length !== IV_BYTES || sealed.length < TAG_BYTES) throw new SecretError("sealed secret is truncated");
    const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, "utf8"));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString("utf8");
    } catch {
      // Wrong key material, a changed byte, or a value moved to another context: all look alike.
      throw new SecretError("sealed secret does not open: it was altered, or it belongs to another context");
    }
  }

  /** Whether a value is sealed with an older key (and should be resealed). */
  isStale(value: string): boolean {
    return value.split(".")[1] !== this.current.id;
  }

  /** The same secret sealed with the current key. */
  reseal(value: string, context: string): string {
    return this.seal(this.open(value, context), context);
  }
}
