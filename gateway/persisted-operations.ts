/**
 * Persisted operations at the gateway: a client sends `extensions.persistedQuery: { version: 1,
 * sha256Hash }` instead of (or, once, beside) the document.
 *
 * - Trusted documents: the operations of a manifest (persisted-query-manifest.ts), by id.
 * - Automatic persisted queries (APQ), as Apollo Client's `PersistedQueryLink` speaks them: a hash
 *   the gateway does not know is `PersistedQueryNotFound` (code `PERSISTED_QUERY_NOT_FOUND`, HTTP
 *   200 with `Cache-Control: private, no-cache, must-revalidate`, as Apollo Server answers it); the
 *   client then sends the document with its hash, and the gateway keeps it (after checking that the
 *   hash is the document's SHA-256) in Redis when configured, shared by every gateway, or in a
 *   bounded in-process LRU.
 * - Persisted operations only (`only`): every request must name a manifest operation; a document
 *   sent as text is refused (`PERSISTED_QUERY_ID_REQUIRED`) and nothing is registered.
 *
 * Ids are resolved by Hive Gateway's own `persistedDocuments` option (Yoga's persisted-operations
 * plugin), which runs before every plugin of ours: the operation limits, identity, rate limits and
 * the response cache see the resolved document exactly as if it had been sent. Documents are
 * registered by our plugin below once they reach execution, so the store only ever holds
 * documents that parse, validate and pass every limit. `@graphql-yoga/plugin-apq` was the other
 * candidate: it resolves and registers in one `onParams` hook, before any limit has looked at the
 * document, and behind the runtime's option it would look every id up a second time and rewrite
 * the store on every hit.
 *
 * A store that fails (Redis down) never fails the request: a lookup that fails is a
 * `PersistedQueryNotFound`, so the client sends its document and is served; a registration that
 * fails is logged (result-cache.ts) and the request goes on.
 */
import type { GatewayPlugin } from "@graphql-hive/gateway-runtime";
import { GraphQLError } from "graphql";
import { MemoryResultCache, RedisResultCache, type ResultCache } from "../lib/cache/result-cache.js";
import type { Logger } from "../lib/logger.js";
import { OPAQUE_ID, SHA256_HEX, sha256Hex, type PersistedDocumentIds, type PersistedOperation } from "./persisted-query-manifest.js";

export interface AutomaticPersistedQueriesOptions {
  /** How long a registered document is kept after its registration (Redis TTL; the LRU's too). */
  ttlSeconds: number;
  /** Shared store in Redis when set (REDIS_URL); an in-process LRU otherwise. */
  redisUrl: string | null;
  redisKeyPrefix: string;
  /** Bounds of the in-process store: documents, and their total length in characters. */
  maxEntries: number;
  maxBytes: number;
}

export interface PersistedOperationsOptions {
  /** Trusted documents by id (readPersistedQueryManifest); null: none. */
  manifest: Map<string, PersistedOperation> | null;
  /** How the manifest's ids are made; an opaque id need not be a SHA-256. */
  ids: PersistedDocumentIds;
  /** Refuse every document that is not one of the manifest's (APQ is then off whatever `apq` says). */
  only: boolean;
  /** Automatic persisted queries; null: off (a hash the manifest lacks is then PersistedQueryNotSupported). */
  apq: AutomaticPersistedQueriesOptions | null;
  /**
   * Requests the gateway makes itself (an MCP tool's operation, the upload endpoint's mutation):
   * their documents are the gateway's own code, so `only` lets them through.
   */
  ownRequest?: (request: Request) => boolean;
}

/**
 * Codes of the refusals. The messages of the first two ("PersistedQueryNotFound",
 * "PersistedQueryNotSupported") are kept verbatim: Apollo's clients match them, Apollo Kotlin and
 * iOS on the message alone.
 */
export const PERSISTED_QUERY_NOT_FOUND = "PERSISTED_QUERY_NOT_FOUND";
export const PERSISTED_QUERY_NOT_SUPPORTED = "PERSISTED_QUERY_NOT_SUPPORTED";
export const PERSISTED_QUERY_ID_REQUIRED = "PERSISTED_QUERY_ID_REQUIRED";
export const PERSISTED_QUERY_INVALID = "PERSISTED_QUERY_INVALID";
export const PERSISTED_QUERY_HASH_MISMATCH = "PERSISTED_QUERY_HASH_MISMATCH";

const APQ_KEY_PREFIX = "apq:";

/** What startGateway needs: the runtime's `persistedDocuments` option, the registering plugin, and a close. */
export interface PersistedOperations {
  runtimeOption: PersistedDocumentsOption;
  plugin: GatewayPlugin;
  /** Waits (at most a second) for the Redis store, so registrations right after the start are kept. */
  connected(): Promise<void>;
  close(): Promise<void>;
}

const REDIS_CONNECT_WAIT_MS = 1_000;

/** The part of createGatewayRuntime's `persistedDocuments` option we use (Yoga's persisted-operations plugin options). */
export interface PersistedDocumentsOption {
  getPersistedOperation(id: string, request: Request): Promise<string | null> | string | null;
  extractPersistedOperationId(params: { extensions?: Record<string, unknown> | null }): string | null;
  allowArbitraryDocuments: boolean | ((request: Request) => boolean);
  customErrors: { notFound: (payload: { request: Request }) => GraphQLError; keyNotFound: () => GraphQLError; persistedQueryOnly: () => GraphQLError };
}

export function persistedOperations(options: PersistedOperationsOptions, logger: Logger): PersistedOperations {
  const manifest = options.manifest ?? new Map<string, PersistedOperation>();
  const apq = options.only ? null : options.apq;
  const store = apq ? apqStore(apq, logger) : null;
  // Requests whose document came from an id: their persistedQuery extension is not a registration.
  const resolved = new WeakSet<Request>();
  // An opaque id is only ever the manifest's: APQ ids are always hashes.
  const acceptsOpaqueIds = options.ids === "opaque" && manifest.size > 0;

  const runtimeOption: PersistedDocumentsOption = {
    extractPersistedOperationId: (params) => persistedQueryId(params.extensions, acceptsOpaqueIds),
    getPersistedOperation(id, request) {
      const trusted = manifest.get(id);
      if (trusted) {
        resolved.add(request);
        return trusted.body;
      }
      if (!store || !SHA256_HEX.test(id)) return null;
      return store.get(APQ_KEY_PREFIX + id).then((document) => {
        if (document !== null) resolved.add(request);
        return document;
      });
    },
    allowArbitraryDocuments: options.only ? (request) => options.ownRequest?.(request) ?? false : true,
    customErrors: {
      notFound: () =>
        options.only || apq
          ? // 200 and never stored, as Apollo Server and the Router answer it: the protocol working,
            // not a failure (a 404 put a failed request in every browser console for each new
            // operation), and no cache between may keep the miss of a hashed GET after the
            // document is registered.
            requestError("PersistedQueryNotFound", PERSISTED_QUERY_NOT_FOUND, 200, { "cache-control": "private, no-cache, must-revalidate" })
          : // Apollo's link stops sending hashes when told this; a manifest's ids still resolve.
            requestError("PersistedQueryNotSupported", PERSISTED_QUERY_NOT_SUPPORTED, 400),
      keyNotFound: () => requestError("Missing query: send the document as `query`, or a persisted operation's id as extensions.persistedQuery.sha256Hash", "BAD_REQUEST", 400),
      persistedQueryOnly: () =>
        requestError(
          "This gateway accepts only persisted operations: send extensions.persistedQuery { version: 1, sha256Hash } with the id of an operation in its manifest instead of the document",
          PERSISTED_QUERY_ID_REQUIRED,
          400,
        ),
    },
  };

  // A registration waits for execution: by then the document has parsed, validated and passed
  // every limit (the limits refuse by setting a result, which does not stop later onParams hooks).
  const registrations = new WeakMap<Request, string>();
  const plugin: GatewayPlugin = {
    onParams({ request, params }) {
      if (typeof params.query !== "string" || resolved.has(request)) return;
      const hash = persistedQueryId(params.extensions, false);
      if (hash === null) return;
      const actual = sha256Hex(params.query);
      if (hash !== actual) {
        throw requestError(
          `extensions.persistedQuery.sha256Hash is not the SHA-256 of the query sent (that is ${actual}): hash the exact query text, in UTF-8, as lower-case hex`,
          PERSISTED_QUERY_HASH_MISMATCH,
          400,
        );
      }
      if (store) registrations.set(request, hash);
    },
    async onExecute({ args }) {
      const { request, params } = args.contextValue as { request?: Request; params?: { query?: unknown } };
      const hash = request && registrations.get(request);
      // The body limit bounds its size; a failing Redis is logged and skipped (result-cache.ts).
      if (hash && typeof params?.query === "string") await store!.set(APQ_KEY_PREFIX + hash, params.query, apq!.ttlSeconds);
    },
  };

  return {
    runtimeOption,
    plugin,
    async connected() {
      if (store instanceof RedisResultCache && !(await store.connected(REDIS_CONNECT_WAIT_MS))) {
        logger.warn("Redis store of persisted queries not reachable at start: clients will be asked for their documents until it is");
      }
    },
    close: async () => store?.close(),
  };
}

/**
 * The id in `extensions.persistedQuery`, or null when there is none; a persistedQuery that is
 * there but malformed is a 400 naming what is wrong, never a lookup.
 */
export function persistedQueryId(extensions: Record<string, unknown> | null | undefined, acceptOpaque: boolean): string | null {
  if (extensions === null || typeof extensions !== "object" || !("persistedQuery" in extensions)) return null;
  const persisted = extensions.persistedQuery as { version?: unknown; sha256Hash?: unknown } | null;
  if (typeof persisted !== "object" || persisted === null) throw requestError("extensions.persistedQuery must be an object { version: 1, sha256Hash }", PERSISTED_QUERY_INVALID, 400);
  if (persisted.version !== 1) throw requestError(`extensions.persistedQuery.version must be 1, got ${String(JSON.stringify(persisted.version)).slice(0, 20)}`, PERSISTED_QUERY_INVALID, 400);
  const id = persisted.sha256Hash;
  if (typeof id === "string" && (SHA256_HEX.test(id) || (acceptOpaque && OPAQUE_ID.test(id)))) return id;
  const got = typeof id === "string" ? `${id.length} characters` : JSON.stringify(id) === undefined ? "nothing" : `a ${typeof id}`;
  throw requestError(
    `extensions.persistedQuery.sha256Hash must be 64 lower-case hexadecimal digits (the SHA-256 of the document${acceptOpaque ? ", or an id from the manifest" : ""}), got ${got}`,
    PERSISTED_QUERY_INVALID,
    400,
  );
}

function apqStore(options: AutomaticPersistedQueriesOptions, logger: Logger): ResultCache {
  return options.redisUrl
    ? new RedisResultCache(options.redisUrl, logger, options.redisKeyPrefix, "Redis store of persisted queries unavailable, asking clients for their documents")
    : new MemoryResultCache({ maxEntries: options.maxEntries, maxSize: options.maxBytes });
}

/** An error that ends the request before execution; Yoga reads the status from `extensions.http`. */
function requestError(message: string, code: string, status: number, headers?: Record<string, string>): GraphQLError {
  return new GraphQLError(message, { extensions: { code, http: { status, ...(headers ? { headers } : {}) } } });
}
