/**
 * The trusted-documents manifest is checked before the gateway listens: every mistake names the
 * file and the entry, so an operator fixes the manifest rather than a client meeting it later.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "@jest/globals";
import { apiSchemaOf } from "../../gateway/mcp/api-schema.js";
import { manifestOperations, readPersistedQueryManifest, sha256Hex } from "../../gateway/persisted-query-manifest.js";
import { ConfigError, loadConfig } from "../../lib/config.js";

const schema = apiSchemaOf(readFileSync("supergraph.graphql", "utf8")).schema;
const TITLES = "query Titles { conversations(first: 5) { nodes { title } } }";
const manifest = (operations: unknown[]) => ({ format: "apollo-persisted-query-manifest", version: 1, operations });
const entry = (body: string, fields: Record<string, unknown> = {}) => ({ id: sha256Hex(body), name: "Titles", type: "query", body, ...fields });
const check = (operations: unknown[], ids: "sha256" | "opaque" = "sha256") => () => manifestOperations("m.json", manifest(operations), schema, ids);
const directory = mkdtempSync(path.join(tmpdir(), "manifest-"));

afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe("readPersistedQueryManifest", () => {
  it("reads Apollo's manifest format into operations by id", () => {
    const file = path.join(directory, "good.json");
    writeFileSync(file, JSON.stringify(manifest([entry(TITLES)])));
    expect([...readPersistedQueryManifest(file, schema).entries()]).toEqual([[sha256Hex(TITLES), entry(TITLES)]]);
  });

  it("names the file when it cannot be read or is not JSON", () => {
    expect(() => readPersistedQueryManifest(path.join(directory, "missing.json"), schema)).toThrow(`Persisted documents manifest ${path.join(directory, "missing.json")}: cannot be read (ENOENT)`);
    const file = path.join(directory, "broken.json");
    writeFileSync(file, "{ not json");
    expect(() => readPersistedQueryManifest(file, schema)).toThrow(new RegExp(`^Persisted documents manifest ${file}: is not JSON`));
  });

  it("names the entry that is wrong, and says how to fix it", () => {
    expect(() => manifestOperations("m.json", { format: "other", version: 1, operations: [] }, schema, "sha256")).toThrow(`m.json: "format" must be "apollo-persisted-query-manifest", got "other"`);
    expect(check([entry(TITLES), entry(TITLES, { id: sha256Hex("x") })])).toThrow(`m.json: operations[1] ("Titles") has the id ${sha256Hex("x")}, but the SHA-256 of its body is ${sha256Hex(TITLES)}`);
    expect(check([entry(TITLES, { id: "titles-v1" })])).toThrow(`operations[0] ("Titles") has the id "titles-v1", which is not a SHA-256 (64 lower-case hex digits); if the manifest's ids are its own, set PERSISTED_DOCUMENTS_IDS=opaque`);
    expect(check([entry(TITLES), entry(TITLES)])).toThrow(`operations[1] repeats the id "${sha256Hex(TITLES)}"`);
    expect(check([entry(TITLES, { type: "Query" })])).toThrow(`operations[0] ("Titles") has "type" "Query": use query, mutation or subscription`);
    expect(check([entry(TITLES, { name: "Other" })])).toThrow(`operations[0] ("Other") is named "Other" but its body's operation is "Titles"`);
    expect(check([entry("query Titles { conversations(first: 5) { nodes { title }")])).toThrow(/operations\[0\] \("Titles"\) does not parse: Syntax Error/);
    expect(check([entry("query Titles { noSuchField }")])).toThrow(`operations[0] ("Titles") does not validate against the supergraph: Cannot query field "noSuchField" on type "Query".`);
    expect(check([entry(`${TITLES} query Other { __typename }`)])).toThrow("operations[0] (\"Titles\") must hold exactly one operation (its body holds 2)");
    expect(check([{ id: 1 }])).toThrow(`operations[0] must have a non-empty string "id"`);
  });

  it("takes ids of the manifest's own when they are declared opaque, still bounded", () => {
    expect([...check([entry(TITLES, { id: "titles-v1" })], "opaque")().keys()]).toEqual(["titles-v1"]);
    expect(check([entry(TITLES, { id: "a b" })], "opaque")).toThrow(`operations[0] ("Titles") has the id "a b": an opaque id is 1-128 letters, digits, _ . : ~ or -`);
  });
});

describe("persisted documents configuration", () => {
  it("refuses arbitrary documents by default only in production with a manifest", () => {
    const production = { NODE_ENV: "production", JWT_SECRET: "s".repeat(32) };
    expect(loadConfig({}).gateway.persistedDocuments).toEqual({ manifestPath: null, ids: "sha256", only: false });
    expect(loadConfig({ PERSISTED_DOCUMENTS_MANIFEST: "m.json" }).gateway.persistedDocuments.only).toBe(false);
    expect(loadConfig(production).gateway.persistedDocuments.only).toBe(false);
    expect(loadConfig({ ...production, PERSISTED_DOCUMENTS_MANIFEST: "m.json" }).gateway.persistedDocuments).toEqual({ manifestPath: path.resolve("m.json"), ids: "sha256", only: true });
    expect(loadConfig({ ...production, PERSISTED_DOCUMENTS_MANIFEST: "m.json", PERSISTED_DOCUMENTS_ONLY: "false" }).gateway.persistedDocuments.only).toBe(false);
  });

  it("says what is wrong with a setting", () => {
    expect(() => loadConfig({ PERSISTED_DOCUMENTS_ONLY: "true" })).toThrow(new ConfigError("PERSISTED_DOCUMENTS_ONLY", "is true, but PERSISTED_DOCUMENTS_MANIFEST is not set: with no manifest every request would be refused"));
    expect(() => loadConfig({ PERSISTED_DOCUMENTS_IDS: "md5" })).toThrow("PERSISTED_DOCUMENTS_IDS must be one of sha256, opaque");
    expect(() => loadConfig({ APQ_TTL_SECONDS: "0" })).toThrow("APQ_TTL_SECONDS must be between 1 and 2592000");
    expect(loadConfig({}).gateway.apq).toEqual({ enabled: true, ttlSeconds: 86_400, maxEntries: 10_000, maxBytes: 64 * 1024 * 1024 });
  });
});
