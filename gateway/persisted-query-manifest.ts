/**
 * Trusted documents: the operations a frontend was built with, read at start-up from a manifest in
 * Apollo's persisted-query manifest format, as `@apollo/generate-persisted-query-manifest` writes
 * it and `@apollo/persisted-query-lists` sends its ids:
 *
 * ```json
 * { "format": "apollo-persisted-query-manifest", "version": 1,
 *   "operations": [{ "id": "<sha256 of body>", "name": "Search", "type": "query", "body": "query Search …" }] }
 * ```
 *
 * Every entry is checked before the gateway listens: its body parses and validates against the
 * supergraph's API schema, holds exactly the one operation its `name` and `type` say, and its id is
 * the SHA-256 of its body (unless the ids are declared opaque). A wrong entry stops start-up with
 * the file and the entry named, rather than a client learning of it at its first request.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Kind, parse, validate, type GraphQLError, type GraphQLSchema, type OperationDefinitionNode } from "graphql";

export const MANIFEST_FORMAT = "apollo-persisted-query-manifest";

/** How the manifest's ids are made: the SHA-256 of the body (Apollo's default), or ids of the manifest's own. */
export type PersistedDocumentIds = "sha256" | "opaque";

/** A SHA-256 written as Apollo's clients write it: 64 lower-case hexadecimal digits. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;
/** An opaque id: short and printable, so it can be logged and used as a key as it is. */
export const OPAQUE_ID = /^[\w.:~-]{1,128}$/;

export interface PersistedOperation {
  id: string;
  name: string;
  type: "query" | "mutation" | "subscription";
  body: string;
}

export class PersistedQueryManifestError extends Error {
  constructor(file: string, problem: string) {
    super(`Persisted documents manifest ${file}: ${problem}`);
    this.name = "PersistedQueryManifestError";
  }
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** The manifest's operations by id; throws PersistedQueryManifestError naming the file and the first wrong entry. */
export function readPersistedQueryManifest(file: string, schema: GraphQLSchema, ids: PersistedDocumentIds = "sha256"): Map<string, PersistedOperation> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new PersistedQueryManifestError(file, `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch (error) {
    throw new PersistedQueryManifestError(file, `is not JSON (${(error as Error).message})`);
  }
  return manifestOperations(file, manifest, schema, ids);
}

/** The checks of readPersistedQueryManifest, on a manifest already parsed (`file` only names it in errors). */
export function manifestOperations(file: string, manifest: unknown, schema: GraphQLSchema, ids: PersistedDocumentIds): Map<string, PersistedOperation> {
  const root = manifest as { format?: unknown; version?: unknown; operations?: unknown } | null;
  if (typeof root !== "object" || root === null || Array.isArray(root)) throw new PersistedQueryManifestError(file, "must be a JSON object");
  if (root.format !== MANIFEST_FORMAT) throw new PersistedQueryManifestError(file, `"format" must be "${MANIFEST_FORMAT}", got ${JSON.stringify(root.format)}`);
  if (root.version !== 1) throw new PersistedQueryManifestError(file, `"version" must be 1, got ${JSON.stringify(root.version)}`);
  if (!Array.isArray(root.operations)) throw new PersistedQueryManifestError(file, `"operations" must be an array`);
  const operations = new Map<string, PersistedOperation>();
  root.operations.forEach((entry: unknown, index: number) => {
    const operation = checkedEntry(file, entry, index, schema, ids);
    if (operations.has(operation.id)) throw new PersistedQueryManifestError(file, `operations[${index}] repeats the id "${operation.id}" of an earlier operation`);
    operations.set(operation.id, operation);
  });
  return operations;
}

// Private: one entry, named by its index (and its name once that is known to be a string).
function checkedEntry(file: string, entry: unknown, index: number, schema: GraphQLSchema, ids: PersistedDocumentIds): PersistedOperation {
  const fail = (problem: string) => {
    const name = typeof (entry as { name?: unknown })?.name === "string" ? ` ("${(entry as { name: string }).name.slice(0, 100)}")` : "";
    return new PersistedQueryManifestError(file, `operations[${index}]${name} ${problem}`);
  };
  if (typeof entry !== "object" || entry === null) throw fail("must be an object with id, name, type and body");
  const { id, name, type, body } = entry as Record<string, unknown>;
  for (const [key, value] of Object.entries({ id, name, type, body })) {
    if (typeof value !== "string" || value === "") throw fail(`must have a non-empty string "${key}"`);
  }
  const operation = { id, name, type, body } as PersistedOperation;
  if (type !== "query" && type !== "mutation" && type !== "subscription") throw fail(`has "type" ${JSON.stringify(type)}: use query, mutation or subscription`);
  if (ids === "sha256") {
    if (!SHA256_HEX.test(operation.id)) throw fail(`has the id "${operation.id.slice(0, 100)}", which is not a SHA-256 (64 lower-case hex digits); if the manifest's ids are its own, set PERSISTED_DOCUMENTS_IDS=opaque`);
    const expected = sha256Hex(operation.body);
    if (operation.id !== expected) throw fail(`has the id ${operation.id}, but the SHA-256 of its body is ${expected}: regenerate the manifest, or set PERSISTED_DOCUMENTS_IDS=opaque if its ids are not hashes`);
  } else if (!OPAQUE_ID.test(operation.id)) {
    throw fail(`has the id "${operation.id.slice(0, 100)}": an opaque id is 1-128 letters, digits, _ . : ~ or -`);
  }
  let document;
  try {
    document = parse(operation.body);
  } catch (error) {
    throw fail(`does not parse: ${(error as GraphQLError).message}`);
  }
  const definitions = document.definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
  if (definitions.length !== 1) throw fail(`must hold exactly one operation (its body holds ${definitions.length})`);
  const definition = definitions[0]!;
  if (definition.name?.value !== operation.name) throw fail(`is named "${operation.name}" but its body's operation is ${definition.name ? `"${definition.name.value}"` : "anonymous"}`);
  if (definition.operation !== operation.type) throw fail(`has "type" ${operation.type} but its body is a ${definition.operation}`);
  const errors = validate(schema, document);
  if (errors.length > 0) throw fail(`does not validate against the supergraph: ${errors[0]!.message}`);
  return operation;
}
