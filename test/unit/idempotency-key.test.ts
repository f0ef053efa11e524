/** The Idempotency-Key header as mutations read it (lib/graphql/idempotency-key.ts). */
import { describe, expect, it } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";
import { parseIdempotencyKey, writeOnceFor, type WriteRequest } from "../../lib/graphql/idempotency-key.js";
import type { TenantContext } from "../../lib/tenancy/token.js";

const tenant = (userId: string): TenantContext => ({ organizationId: "org-a", userId, teamIds: [], userName: null, userEmail: null, role: "member" });
const request = (idempotencyKey: string | undefined): WriteRequest => ({ idempotencyKey, idempotencyKeyTtlSeconds: 60, signal: new AbortController().signal });
const field = (fieldName: string, responseKey = fieldName) => ({ fieldName, path: { prev: undefined, key: responseKey, typename: "Mutation" } });

describe("parseIdempotencyKey", () => {
  it("takes a bare key, the IETF draft's quoted one as the same key, and no header as none", () => {
    expect(parseIdempotencyKey("8e03978e-40d5-43e8-bc93-6894a57f9324")).toBe("8e03978e-40d5-43e8-bc93-6894a57f9324");
    expect(parseIdempotencyKey('"8e03978e"')).toBe("8e03978e");
    expect(parseIdempotencyKey("k".repeat(255))).toHaveLength(255);
    expect(parseIdempotencyKey(undefined)).toBeNull();
  });

  it.each([
    ["an empty key", ""],
    ["an empty quoted key", '""'],
    ["256 characters", "k".repeat(256)],
    ["a tab", "tab\there"],
    ["a letter outside ASCII", "é"],
    ["a leading space", " padded"],
  ])("refuses %s as BAD_USER_INPUT on Idempotency-Key", (_case, header) => {
    expect(() => parseIdempotencyKey(header)).toThrow(expect.objectContaining({ extensions: expect.objectContaining({ code: "BAD_USER_INPUT", field: "Idempotency-Key" }) }));
  });

  it.each([
    ["an ellipsis pasted from a document", "5f0c…", 'character 5 is "…" (U+2026), which is not ASCII'],
    // What the subgraph receives for it: the UTF-8 bytes read as Latin-1 by the gateway, and again by the subgraph.
    ["the same ellipsis as its bytes read as Latin-1", Buffer.from("5f0c…", "utf8").toString("latin1"), 'character 5 is "…" (U+2026), which is not ASCII'],
    ["the same ellipsis read as Latin-1 twice", Buffer.from(Buffer.from("5f0c…", "utf8").toString("latin1"), "utf8").toString("latin1"), 'character 5 is "…" (U+2026), which is not ASCII'],
    ["a letter outside ASCII", "café", 'character 4 is "é" (U+00E9), which is not ASCII'],
    ["an emoji", "key-🔑", 'character 5 is "🔑" (U+1F511), which is not ASCII'],
    ["a tab", "tab\there", "character 4 is a tab (U+0009), which is not printable"],
    ["a leading space", " padded", "character 1 is a space (U+0020), and a key may not start or end with one"],
    ["256 characters", "k".repeat(256), "it has 256 characters"],
    ["an empty key", "", "it is empty"],
  ])("names what is wrong with %s, as the caller typed it", (_case, header, reason) => {
    let message = "";
    try {
      parseIdempotencyKey(header);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("1 to 255 printable ASCII characters");
    expect(message.endsWith(reason)).toBe(true);
    expect(message).not.toMatch(/got \d+ characters/);
  });
});

describe("writeOnceFor", () => {
  it("is a plain write without a key", () => {
    expect(writeOnceFor(request(undefined), tenant("alice"), field("createConversation"), {}).claim).toBeNull();
  });

  it("stores each field under its response key, and hashes who asked with what", () => {
    const args = { input: { title: "x" } };
    const plain = writeOnceFor(request("k"), tenant("alice"), field("createConversation"), args).claim!;
    const aliased = writeOnceFor(request("k"), tenant("alice"), field("createConversation", "second"), args).claim!;
    expect(plain.operation).toBe("createConversation");
    expect(aliased.operation).toBe("createConversation as second");
    expect(aliased.requestHash).toBe(plain.requestHash);
    expect(writeOnceFor(request("k"), tenant("bob"), field("createConversation"), args).claim!.requestHash).not.toBe(plain.requestHash);
    expect(writeOnceFor(request("k"), tenant("alice"), field("createConversation"), { input: { title: "y" } }).claim!.requestHash).not.toBe(plain.requestHash);
  });
});

it("keeps keys 24 hours unless IDEMPOTENCY_KEY_TTL_SECONDS says otherwise, and refuses a lifetime under a minute", () => {
  expect(loadConfig({}).idempotency.keyTtlSeconds).toBe(86_400);
  expect(loadConfig({ IDEMPOTENCY_KEY_TTL_SECONDS: "3600" }).idempotency.keyTtlSeconds).toBe(3_600);
  expect(() => loadConfig({ IDEMPOTENCY_KEY_TTL_SECONDS: "5" })).toThrow(/IDEMPOTENCY_KEY_TTL_SECONDS/);
});
