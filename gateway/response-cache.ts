/**
 * Whole-response caching of `search` at the gateway (Hive Gateway's `responseCaching`, i.e.
 * @envelop/response-cache). The search subgraph caches fused results too, but a hit there
 * still costs two subgraph round trips (the cached search, then `_entities` for the page's
 * titles), each with its own HTTP, parsing and execution: ~9 ms at the gateway's p50 on these
 * machines against ~0.6 ms inside the service. A hit here answers without leaving the gateway.
 *
 * What is cached, and for whom:
 * - Only query operations that select `Query.search`: the plugin is not even enabled for any
 *   other operation, so it never rewrites their documents (the caching plugin adds
 *   `__typename` and `id` selections to every selection set it caches, which changes what the
 *   planner sends and broke 7 of The Guild's 179 federation audit queries when it ran on every
 *   authenticated operation). Only answers without errors and without a degraded provider
 *   (when the client selected `providers { status }`; a client that did not select it may see
 *   a degraded page again until the TTL passes, which is why the TTL is short).
 * - Per verified token: the session key is a hash of the Authorization header, and only
 *   requests whose token the gateway verified (gateway/authentication.ts) use the cache. An
 *   expired or forged token never reaches a cached answer. Two users, two organizations or
 *   two team sets never share an entry.
 * - Any mutation through the gateway by a verified caller retires every cached answer of that
 *   caller's organization (see response-cache-generations.ts), so a frontend that refetches after a rename,
 *   an append or a delete sees the change at once (a new conversation also waits for the
 *   search subgraph's own cached page to expire). Writes that bypass the gateway show up
 *   within the TTL.
 *
 * Several gateways (REDIS_URL): the answers stay in each gateway's bounded LRU, and the
 * generations move to Redis, so a write through any gateway retires the organization's answers
 * in all of them; a hit then costs one Redis round trip more. Measured (bench/response-cache-redis.ts,
 * 2 shared cores under load, three runs): a hit's p50 0.65-0.85 ms with generations in process,
 * 0.79-1.22 ms with them in Redis (median difference +0.2 ms; the read alone 0.17 ms). Invalidation
 * messages (pub/sub) would cost nothing per hit but arrive after the mutation's answer, so the
 * client's next search on another gateway could still be stale; answers in Redis too would add a
 * GET and parse of the answer (0.06-0.15 ms for 3.9 KB) on every hit. Redis down or slower than
 * 100 ms: no cache for that request, never a stale or failed answer (response-cache-generations.ts;
 * docs/shared-state.md has the whole comparison).
 *
 * The plugin is Yoga's useResponseCache
 * (@graphql-yoga/plugin-response-cache, on @envelop/response-cache) used directly, not through
 * @graphql-mesh/plugin-response-cache 0.107.2: that wrapper always passes the deprecated
 * `ttlPerType` (so every gateway start printed "[useResponseCache] ttlForType is deprecated"),
 * and its store wrote two index keys per entity of every cached answer (41 LRU entries for a
 * page of 20 hits), which only entity invalidation reads and which we have off.
 */
import { createHash } from "node:crypto";
import type { GatewayPlugin } from "@graphql-hive/gateway-runtime";
import { defaultBuildResponseCacheKey } from "@envelop/response-cache";
import { useResponseCache, type Cache } from "@graphql-yoga/plugin-response-cache";
import { getOperationAST, Kind, type DocumentNode, type ExecutionResult } from "graphql";
import { LRUCache } from "lru-cache";
import { checkVariables, OperationLimitError, type OperationLimits } from "../lib/graphql/operation-limits.js";
import { rootFieldNames, selectedOperation } from "../lib/graphql/root-fields.js";
import type { TenantContext } from "../lib/tenancy/token.js";
import type { Logger } from "../lib/logger.js";
import { asksForIncrementalDelivery } from "./incremental-planner.js";
import { LocalGenerations, SharedGenerations, type WriteGenerations } from "./response-cache-generations.js";

export interface ResponseCacheOptions {
  /** How long a search answer is served from the gateway; 0 turns the cache off. */
  ttlSeconds: number;
  /**
   * Redis (REDIS_URL) for the organizations' write generations, shared by every gateway so that a
   * write through one retires the answers of all; null or absent: this gateway's own, in process.
   */
  redis?: { url: string; keyPrefix: string } | null;
}

/** Answers kept per gateway instance, at most. */
const RESPONSE_CACHE_MAX_ENTRIES = 10_000;
/** Their total size as JSON, at most (a page of 20 hits with titles is ~5 KB). */
const RESPONSE_CACHE_MAX_BYTES = 64 * 1024 * 1024;
/** An answer larger than this as JSON is not kept: one huge page would push out hundreds of ordinary ones. */
const RESPONSE_CACHE_MAX_ENTRY_BYTES = 256 * 1024;

/** The key of a request that must neither read nor fill the cache. */
const NO_KEY = "";

export interface SearchResponseCache {
  /** Where answers are kept (tests read its size). */
  store: ResponseStore;
  /** The organizations' write generations: in this process, or shared through Redis. */
  generations: WriteGenerations;
  /**
   * The plugins, in order: the one that learns which operations select `search` and retires an
   * organization's answers after its mutations, then the caching plugin itself. They must come
   * after the authentication plugin, whose verified caller they read.
   */
  plugins(): GatewayPlugin[];
}

/** Whole answers by response key, each with the TTL the plugin computed; no entity index (see above). */
export class ResponseStore implements Cache {
  private readonly answers = new LRUCache<string, ExecutionResult>({
    max: RESPONSE_CACHE_MAX_ENTRIES,
    maxSize: RESPONSE_CACHE_MAX_BYTES,
    maxEntrySize: RESPONSE_CACHE_MAX_ENTRY_BYTES,
    // Measured once, when an answer is stored (a miss, which has just executed a whole search).
    sizeCalculation: (answer) => JSON.stringify(answer).length,
  });

  get size(): number {
    return this.answers.size;
  }

  // NO_KEY ("") is what a request that must not use the cache gets (see buildResponseCacheKey):
  // it is never stored and never served, so two such requests can never share an answer.
  get(key: string): ExecutionResult | undefined {
    return key === NO_KEY ? undefined : this.answers.get(key);
  }

  set(key: string, answer: ExecutionResult, _entities: unknown, ttlMs: number): void {
    if (key !== NO_KEY && ttlMs > 0) this.answers.set(key, answer, { ttl: Number.isFinite(ttlMs) ? ttlMs : undefined });
  }

  /** Entity invalidation is off (`invalidateViaMutation: false`): mutations advance generations instead. */
  invalidate(): void {}

  clear(): void {
    this.answers.clear();
  }
}

export function searchResponseCache(
  { ttlSeconds, redis }: ResponseCacheOptions,
  tenantOf: (request: Request) => TenantContext | null,
  operationLimits: Pick<OperationLimits, "maxVariableDepth" | "maxVariableValues">,
  logger: Logger,
): SearchResponseCache {
  const searchOperations = new SearchOperations();
  const store = new ResponseStore();
  // This gateway's own generations always count: its own writes retire its answers even when
  // Redis cannot be told (the shared generation is then unknown, and nothing is served anyway).
  const local = new LocalGenerations(ttlSeconds);
  const shared = redis ? new SharedGenerations(redis.url, redis.keyPrefix, ttlSeconds, logger, () => store.clear()) : null;
  const generations: WriteGenerations = shared
    ? {
        current: async (organization) => {
          const sharedGeneration = await shared.current(organization);
          return sharedGeneration === null ? null : `${local.now(organization)}:${sharedGeneration}`;
        },
        advance: async (organization) => {
          await local.advance(organization);
          await shared.advance(organization);
        },
        ready: (timeoutMs) => shared.ready(timeoutMs),
        close: () => shared.close(),
      }
    : local;

  const cacheableOperation = (request: Request, query: string | undefined, operationName: string | null | undefined) =>
    tenantOf(request) !== null && query !== undefined && searchOperations.isSearch(query, operationName ?? undefined);
  const cacheable = (request: Request, context?: { params?: { query?: string; operationName?: string | null } }) =>
    cacheableOperation(request, context?.params?.query, context?.params?.operationName);

  const bookkeeping: GatewayPlugin = {
    onParse({ context }) {
      const { query, operationName } = (context as { params?: { query?: string; operationName?: string | null } }).params ?? {};
      return ({ result }) => {
        if (query !== undefined && result && (result as DocumentNode).kind === Kind.DOCUMENT) searchOperations.learn(query, operationName ?? undefined, result as DocumentNode);
      };
    },
    onExecute({ args }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== "mutation") return;
      const request = (args.contextValue as { request?: Request }).request;
      const organization = request ? (tenantOf(request)?.organizationId ?? null) : null;
      // An unverified caller's mutation changes nothing (the authentication plugin has refused it).
      if (organization === null) return;
      return {
        // After the mutation is done: a search that built its key before this point is stored
        // under the old generation, where no later request looks.
        // Awaited, so that once the client has the mutation's answer, every gateway's next
        // search in this organization reads the new generation.
        async onExecuteDone() {
          await generations.advance(organization);
        },
      };
    },
  };

  return {
    store,
    generations,
    plugins() {
      const caching = useResponseCache({
        cache: store,
        // The organization's write generation is part of the key (buildResponseCacheKey below).
        enabled: cacheable,
        session: (request: Request) => (tenantOf(request) ? createHash("sha256").update(request.headers.get("authorization") ?? "").digest("base64url") : null),
        // Yoga builds the key from every request's params, cacheable or not, in the same onParams
        // hook where the operation limits refuse oversized variables, and before they can stop it:
        // its stable JSON of variables nested 10,000 levels overflowed the stack (HTTP 500 with a
        // stack in the log, even without a token). Requests this cache would not serve, or whose
        // variables the limits refuse, get no key at all, so their variables are never serialized.
        // The generation is read here, not in `session`, which runs for every request: only a
        // search pays for the read (a Redis round trip when shared). No generation, no key.
        buildResponseCacheKey: async (params) => {
          const tenant = tenantOf(params.request);
          if (!tenant || params.sessionId == null) return NO_KEY;
          if (!cacheableOperation(params.request, params.documentString, params.operationName)) return NO_KEY;
          if (!withinVariableLimits(params.variableValues, operationLimits)) return NO_KEY;
          const generation = await generations.current(tenant.organizationId);
          if (generation === null) return NO_KEY;
          return defaultBuildResponseCacheKey({ ...params, sessionId: `${params.sessionId}:${generation}` });
        },
        ttl: 0,
        ttlPerSchemaCoordinate: { "Query.search": ttlSeconds * 1000 },
        // Entity-based eviction is off: the generations retire more (deletes, new
        // conversations) at less cost (no per-entity keys, no scan of the store on each mutation).
        invalidateViaMutation: false,
        // No `__responseCacheId: id` alias in every selection set of a type with an id (only entity
        // eviction reads it): the subgraphs' limits leave the `__responseCacheTypeName: __typename`
        // alias it adds to every selection set uncounted (GATEWAY_ADDED_TYPENAMES), an id alias they
        // would count.
        idFields: [],
        // `extensions.responseCache.hit` tells clients (and benchmarks) where an answer came from.
        includeExtensionMetadata: true,
        shouldCacheResult: ({ result }) => !result.errors?.length && !hasDegradedSearch(result.data),
      }) as unknown as GatewayPlugin;
      return [bookkeeping, caching];
    },
  };
}

/**
 * Which documents (by their text and operation name) are query operations selecting
 * `Query.search`. Learnt when a document is parsed, so the decision costs a map lookup on later
 * requests, including the cache lookup that happens before parsing: a document never seen
 * before goes through uncached once.
 */
class SearchOperations {
  private readonly known = new LRUCache<string, boolean>({ max: 5_000 });

  learn(query: string, operationName: string | undefined, document: DocumentNode): void {
    const key = `${operationName ?? ""}\n${query}`;
    if (!this.known.has(key)) this.known.set(key, selectsSearch(document, operationName));
  }

  isSearch(query: string, operationName: string | undefined): boolean {
    return this.known.get(`${operationName ?? ""}\n${query}`) ?? false;
  }
}

function selectsSearch(document: DocumentNode, operationName: string | undefined): boolean {
  const operation = selectedOperation(document, operationName);
  // A streamed (`@defer`) answer is not cached whole: replayed, its parts would arrive as one,
  // and each of its searches is cached by the search subgraph anyway.
  return operation?.operation === "query" && rootFieldNames(document, operation).has("search") && !asksForIncrementalDelivery(document);
}

/** A search answer in which some provider failed or timed out, when the client selected statuses. */
function hasDegradedSearch(data: unknown): boolean {
  if (!data || typeof data !== "object") return false;
  return Object.values(data as Record<string, unknown>).some((value) => {
    const providers = (value as { providers?: unknown } | null)?.providers;
    return Array.isArray(providers) && providers.some((provider) => typeof provider?.status === "string" && provider.status !== "OK" && provider.status !== "SKIPPED");
  });
}

function withinVariableLimits(variables: unknown, limits: Pick<OperationLimits, "maxVariableDepth" | "maxVariableValues">): boolean {
  try {
    checkVariables(variables, limits);
    return true;
  } catch (error) {
    if (error instanceof OperationLimitError) return false;
    throw error;
  }
}
