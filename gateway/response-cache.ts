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
 *   caller's organization (see OrganizationGenerations), so a frontend that refetches after a rename,
 *   an append or a delete sees the change at once (a new conversation also waits for the
 *   search subgraph's own cached page to expire). Writes that bypass the gateway show up
 *   within the TTL.
 *
 * The store is an in-process LRU of whole answers, one per gateway instance: a shared store
 * would need the generations shared too. The plugin is Yoga's useResponseCache
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
import { asksForIncrementalDelivery } from "./incremental-planner.js";

export interface ResponseCacheOptions {
  /** How long a search answer is served from the gateway; 0 turns the cache off. */
  ttlSeconds: number;
}

/** Answers kept per gateway instance; a page of 20 hits is ~5 KB, so this bounds it near 50 MB. */
const RESPONSE_CACHE_MAX_ENTRIES = 10_000;

/** The key of a request that must neither read nor fill the cache. */
const NO_KEY = "";

export interface SearchResponseCache {
  /** Where answers are kept (tests read its size). */
  store: ResponseStore;
  /**
   * The plugins, in order: the one that learns which operations select `search` and retires an
   * organization's answers after its mutations, then the caching plugin itself. They must come
   * after the authentication plugin, whose verified caller they read.
   */
  plugins(): GatewayPlugin[];
}

/** Whole answers by response key, each with the TTL the plugin computed; no entity index (see above). */
export class ResponseStore implements Cache {
  private readonly answers = new LRUCache<string, ExecutionResult>({ max: RESPONSE_CACHE_MAX_ENTRIES });

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
  { ttlSeconds }: ResponseCacheOptions,
  tenantOf: (request: Request) => TenantContext | null,
  operationLimits: Pick<OperationLimits, "maxVariableDepth" | "maxVariableValues">,
): SearchResponseCache {
  const generations = new OrganizationGenerations(ttlSeconds);
  const searchOperations = new SearchOperations();
  const store = new ResponseStore();

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
        onExecuteDone() {
          generations.advance(organization);
        },
      };
    },
  };

  return {
    store,
    plugins() {
      const caching = useResponseCache({
        cache: store,
        // The organization's write generation is part of the key: see OrganizationGenerations.
        enabled: cacheable,
        session: (request: Request) => {
          const tenant = tenantOf(request);
          if (!tenant) return null;
          const token = createHash("sha256").update(request.headers.get("authorization") ?? "").digest("base64url");
          return `${token}:${generations.current(tenant.organizationId)}`;
        },
        // Yoga builds the key from every request's params, cacheable or not, in the same onParams
        // hook where the operation limits refuse oversized variables, and before they can stop it:
        // its stable JSON of variables nested 10,000 levels overflowed the stack (HTTP 500 with a
        // stack in the log, even without a token). Requests this cache would not serve, or whose
        // variables the limits refuse, get no key at all, so their variables are never serialized.
        buildResponseCacheKey: (params) => {
          if (!cacheableOperation(params.request, params.documentString, params.operationName)) return NO_KEY;
          if (!withinVariableLimits(params.variableValues, operationLimits)) return NO_KEY;
          return defaultBuildResponseCacheKey(params);
        },
        ttl: 0,
        ttlPerSchemaCoordinate: { "Query.search": ttlSeconds * 1000 },
        // Entity-based eviction is off: the generations retire more (deletes, new
        // conversations) at less cost (no per-entity keys, no scan of the store on each mutation).
        invalidateViaMutation: false,
        // No `__responseCacheId: id` alias in every selection set of a type with an id (only entity
        // eviction reads it): the operation limits count what the plugin adds (`countAddedTypenames`).
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

/**
 * Each organization's write generation, advanced by every mutation that passes through this
 * gateway. Entity-based invalidation alone misses writes whose result is not the cached entity:
 * a deleted conversation (the payload is `DeleteConversationPayload`) or a new one that a cached
 * search should now include. With the generation in the key, any write in an organization
 * retires all of its cached answers at once (they then expire unread). Only verified callers
 * advance a generation, and only their own organization's.
 */
class OrganizationGenerations {
  /**
   * Bumped whenever the map below has to forget an organization for room: forgetting would put
   * it back at generation 0, where answers from before its last write may still be stored, so
   * everyone's answers retire instead (rare: it takes 100,000 writing organizations in one TTL).
   */
  private epoch = 0;
  private readonly generations: LRUCache<string, number>;

  constructor(ttlSeconds: number) {
    // Past the response TTL a generation no longer matters: every answer stored under an older
    // one has expired.
    this.generations = new LRUCache<string, number>({
      max: 100_000,
      ttl: Math.max(1, ttlSeconds) * 1000,
      dispose: (_value, _key, reason) => {
        if (reason === "evict") this.epoch += 1;
      },
    });
  }

  current(organization: string): string {
    return `${this.epoch}.${this.generations.get(organization) ?? 0}`;
  }

  /** Generations are never reused (a forgotten organization's next write must not land on an old number). */
  private counter = 0;

  advance(organization: string): void {
    this.counter += 1;
    this.generations.set(organization, this.counter);
  }
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
