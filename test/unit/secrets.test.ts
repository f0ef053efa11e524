import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it, jest } from "@jest/globals";
import { createLogger } from "../../lib/logger.js";
import { SecretError, SecretKeyring } from "../../lib/secrets/keyring.js";
import { redactSecrets } from "../../lib/secrets/redact.js";
import { signToken } from "../../lib/tenancy/token.js";
import { TEST_AUTH } from "../support/tenants.js";

const key = (id: string) => ({ id, key: randomBytes(32) });

describe("SecretKeyring", () => {
  it("seals with AES-256-GCM and opens only in the same context", () => {
    const keyring = new SecretKeyring([key("k1")]);
    const sealed = keyring.seal("sk-live-123", "org:acme/serper-api-key");
    expect(sealed).not.toContain("sk-live-123");
    expect(sealed.startsWith("v1.k1.")).toBe(true);
    expect(keyring.open(sealed, "org:acme/serper-api-key")).toBe("sk-live-123");
    // Another organization's row, or another purpose: the value does not open.
    expect(() => keyring.open(sealed, "org:globex/serper-api-key")).toThrow(SecretError);
    expect(() => keyring.open(sealed, "org:acme/aws-secret")).toThrow(SecretError);
    // Two seals of the same value differ (fresh IV each time).
    expect(keyring.seal("x", "c")).not.toBe(keyring.seal("x", "c"));
  });

  it("refuses a value with one byte changed", () => {
    const keyring = new SecretKeyring([key("k1")]);
    const sealed = keyring.seal("secret", "ctx");
    const parts = sealed.split(".");
    const body = Buffer.from(parts[3]!, "base64url");
    body[0]! ^= 1;
    parts[3] = body.toString("base64url");
    expect(() => keyring.open(parts.join("."), "ctx")).toThrow(/altered/);
  });

  it("rotates keys: the newest seals, older keys still open, reseal moves a value to the newest", () => {
    const old = key("2026-06");
    const before = new SecretKeyring([old]);
    const sealedBefore = before.seal("AKIAOLDOLDOLDOLDOLDO", "org:acme/aws");
    const rotated = new SecretKeyring([key("2026-12"), old]);
    expect(rotated.open(sealedBefore, "org:acme/aws")).toBe("AKIAOLDOLDOLDOLDOLDO");
    expect(rotated.isStale(sealedBefore)).toBe(true);
    const resealed = rotated.reseal(sealedBefore, "org:acme/aws");
    expect(resealed.startsWith("v1.2026-12.")).toBe(true);
    expect(rotated.isStale(resealed)).toBe(false);
    // Once the old key is dropped, what it sealed says which key it needs.
    expect(() => new SecretKeyring([key("2026-12")]).open(sealedBefore, "org:acme/aws")).toThrow(/2026-06/);
  });

  it("parses SECRETS_ENCRYPTION_KEYS and refuses keys of the wrong size", () => {
    const spec = `new:${randomBytes(32).toString("base64")}, old:${randomBytes(32).toString("base64")}`;
    expect(SecretKeyring.parse(spec).currentKeyId).toBe("new");
    expect(() => SecretKeyring.parse(`short:${randomBytes(16).toString("base64")}`)).toThrow(/32 bytes/);
    expect(() => SecretKeyring.parse("no-separator")).toThrow(SecretError);
  });
});

describe("log redaction", () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it("removes tokens, authorization headers, provider keys and URL passwords from log lines", async () => {
    const token = await signToken({ organizationId: "acme", userId: "ann" }, TEST_AUTH);
    const lines: string[] = [];
    jest.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const logger = createLogger("test", "debug");
    logger.info(`request with authorization: Bearer ${token}`);
    logger.warn(`forwarding {"Authorization":"Basic YWxhZGRpbjpvcGVuc2VzYW1l"} to upstream`);
    logger.error("provider failed", new Error(`401 from https://api.example: api_key=sk-proj-abcdefghijklmnopqrstuv and token ${token}`));
    logger.info("aws AKIAIOSFODNN7EXAMPLE secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
    logger.info("connecting to postgresql://app:hunter2@db.internal:5432/prod, slack xoxb-1234567890-abcdefghij");
    const output = lines.join("");
    for (const secret of [token, "YWxhZGRpbjpvcGVuc2VzYW1l", "sk-proj-abcdefghijklmnopqrstuv", "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI", "hunter2", "xoxb-1234567890"]) {
      expect(output).not.toContain(secret);
    }
    // What a reader needs stays.
    expect(output).toContain("provider failed");
    expect(output).toContain("db.internal:5432/prod");
  });

  it("leaves ordinary text alone", () => {
    const text = "search for 'deadlock in order service' took 12 ms (keyword OK, semantic TIMEOUT)";
    expect(redactSecrets(text)).toBe(text);
  });
});
