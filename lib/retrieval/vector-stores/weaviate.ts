/**
 * The Weaviate vector store, as the seed product runs it in production: one multi-tenant
 * collection per embedding model, ONE TENANT PER ORGANIZATION. A tenant is its own shard in
 * Weaviate, so a query that names organization A's tenant physically cannot reach organization
 * B's vectors; every query also filters on `organizationId` as a second lock.
 *
 * Only the v3 client's gRPC/REST calls are used (Weaviate's GraphQL API is deprecated). The
 * slice of the client this file depends on is the `WeaviateClientLike` interface below, typed
 * with the client's own types: the real client is checked against it by the compiler (see
 * `connectToWeaviate`), and tests hand in a stand-in that implements exactly that slice.
 *
 * Names (both deterministic, so every process and every restart agrees on them):
 * - Tenant: Weaviate allows `[A-Za-z0-9_-]{1,64}`; organization ids are arbitrary strings up to
 *   128 characters. `org-<slug>-<hash>` where slug is the id lower-cased with every run of other
 *   characters turned into "-" and cut to 27 characters (for people reading Weaviate's tenant
 *   list) and hash is the first 32 hex digits (128 bits) of sha256(organization id), computed
 *   on the exact id. The hash carries uniqueness: ids that differ only in case or punctuation
 *   ("Acme", "acme", "a.c.m.e") share a slug but not a hash. Lower-case only, so names stay
 *   distinct where a file system folds case.
 * - Collection: Weaviate allows `[A-Z][_0-9A-Za-z]{0,254}`. `ContextChunk_<slug>_<hash>`
 *   with the model id slugged the same way (with "_", cut to 48) and 16 hex digits of
 *   sha256(model id). Vectors of different models have different dimensions and meanings, so
 *   they never share a collection, and a query for one model cannot see another's vectors.
 *
 * Requires Weaviate >= 1.25 (named vectors, auto tenant creation, auto tenant activation).
 */
import { createHash } from "node:crypto";
import weaviate, { Filters, generateUuid5 } from "weaviate-client";
import type {
  CollectionConfig,
  CollectionConfigCreate,
  DataObject,
  FilterValue,
  QueryMetadata,
  TenantCreate,
  TimeoutParams,
  WeaviateClient,
} from "weaviate-client";
import { replaceEachEntity, type EntityType, type EntityVectors, type VectorChunk, type VectorMatch, type VectorSearchOptions, type VectorStore, type WriteFence } from "./vector-store.js";

/** Every collection this store owns starts with this: it is how `deleteEntity` finds them. */
export const COLLECTION_PREFIX = "ContextChunk_";
const TENANT_PREFIX = "org-";
const TENANT_HASH_HEX = 32;
const TENANT_MAX_LENGTH = 64;
const COLLECTION_HASH_HEX = 16;
const COLLECTION_SLUG_MAX = 48;
/** The collection's one named vector. Named explicitly so that writes and queries never depend on a server's default. */
export const VECTOR_NAME = "default";
const ENTITY_TYPES: readonly EntityType[] = ["conversation", "document_chunk"];
const RETURNED_PROPERTIES = ["organizationId", "entityType", "entityId", "chunkIndex"];

// ---------------------------------------------------------------------------------------------
// The slice of weaviate-client v3 this store uses.

/** What `insertMany` reports; only the parts we read. */
export interface WeaviateBatchResultLike {
  hasErrors: boolean;
  errors: Record<number, { message: string }>;
}

/** What `deleteMany` reports; only the parts we read. */
export interface WeaviateDeleteResultLike {
  failed: number;
  matches: number;
  successful: number;
}

export interface WeaviateNearVectorOptions {
  targetVector: string;
  limit: number;
  filters: FilterValue;
  returnMetadata: QueryMetadata;
  returnProperties: string[];
}

export interface WeaviateQueryResultLike {
  objects: Array<{ properties: Record<string, unknown>; metadata?: { distance?: number } | undefined }>;
}

/** A collection bound to one tenant (`collection.withTenant(name)`). */
export interface WeaviateTenantCollectionLike {
  data: {
    deleteMany(where: FilterValue): Promise<WeaviateDeleteResultLike>;
    insertMany(objects: DataObject<undefined>[]): Promise<WeaviateBatchResultLike>;
  };
  query: {
    nearVector(vector: number[], options: WeaviateNearVectorOptions): Promise<WeaviateQueryResultLike>;
  };
}

export interface WeaviateCollectionLike {
  config: { get(): Promise<Pick<CollectionConfig, "multiTenancy" | "vectorizers">> };
  tenants: {
    getByName(name: string): Promise<{ name: string } | null>;
    create(tenants: TenantCreate[]): Promise<unknown>;
  };
  withTenant(tenant: string): WeaviateTenantCollectionLike;
}

export interface WeaviateClientLike {
  collections: {
    exists(name: string): Promise<boolean>;
    create(config: CollectionConfigCreate): Promise<unknown>;
    listAll(): Promise<Array<{ name: string }>>;
    use(name: string): WeaviateCollectionLike;
  };
  close(): Promise<void>;
}

export interface WeaviateConnectionOptions {
  /** REST endpoint: scheme, host and port, e.g. "http://weaviate:8080" or "https://vectors.example.com". */
  url: string;
  apiKey?: string;
  /** gRPC host; defaults to the URL's host. */
  grpcHost?: string;
  /** gRPC port; defaults to 50051, Weaviate's default. */
  grpcPort?: number;
  /** Defaults to whether `url` is https. */
  grpcSecure?: boolean;
  /** In seconds, as the client takes them (its defaults: init 2, query 30, insert 90). */
  timeout?: TimeoutParams;
}

export interface WeaviateVectorStoreOptions {
  /** Chunks fetched per wanted entity on the first try (several chunks can belong to one entity). Default 8. */
  overfetch?: number;
  /** Most chunks one search fetches, however often it retries for more entities. Default 10,000 (Weaviate's default QUERY_MAXIMUM_RESULTS). */
  maxFetch?: number;
}

/** Every failure from Weaviate leaves this store as one of these, naming the collection and tenant. */
export class WeaviateVectorStoreError extends Error {
  constructor(
    message: string,
    readonly collection: string | undefined,
    readonly tenant: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "WeaviateVectorStoreError";
  }
}

// ---------------------------------------------------------------------------------------------
// Names.

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function slug(text: string, separator: "-" | "_", maxLength: number): string {
  const trim = new RegExp(`^${separator}+|${separator}+$`, "g");
  return text.toLowerCase().replace(/[^a-z0-9]+/g, separator).replace(trim, "").slice(0, maxLength).replace(trim, "");
}

/** The tenant that holds an organization's vectors (see the file's header for the scheme). */
export function tenantNameFor(organizationId: string): string {
  if (organizationId.length === 0) throw new Error("WeaviateVectorStore: an organization id is required");
  const hash = sha256Hex(organizationId).slice(0, TENANT_HASH_HEX);
  const readable = slug(organizationId, "-", TENANT_MAX_LENGTH - TENANT_PREFIX.length - 1 - TENANT_HASH_HEX);
  return readable ? `${TENANT_PREFIX}${readable}-${hash}` : `${TENANT_PREFIX}${hash}`;
}

/** The collection that holds a model's vectors (see the file's header for the scheme). */
export function collectionNameFor(model: string): string {
  if (model.length === 0) throw new Error("WeaviateVectorStore: a model id is required");
  const hash = sha256Hex(model).slice(0, COLLECTION_HASH_HEX);
  const readable = slug(model, "_", COLLECTION_SLUG_MAX);
  return `${COLLECTION_PREFIX}${readable ? `${readable}_` : ""}${hash}`;
}

/**
 * The id of one chunk's object. Deterministic so that indexing an entity again overwrites its
 * objects instead of adding to them; the organization is part of it so that ids stay unique
 * even outside their tenant (exports, backups, a future merge of tenants).
 */
export function chunkObjectId(organizationId: string, entityType: EntityType, entityId: string, chunkIndex: number): string {
  // JSON keeps the parts apart whatever characters an id contains.
  return generateUuid5(JSON.stringify([organizationId, entityType, entityId, chunkIndex]));
}

// ---------------------------------------------------------------------------------------------
// Connecting.

interface ResolvedConnection {
  describe: string;
  connect: () => Promise<WeaviateClientLike>;
}

function resolveConnection(options: WeaviateConnectionOptions): ResolvedConnection {
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new Error(`WeaviateVectorStore: "${options.url}" is not a URL (expected e.g. http://localhost:8080)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`WeaviateVectorStore: "${options.url}" must be an http or https URL`);
  }
  const httpSecure = url.protocol === "https:";
  const httpPort = url.port ? Number(url.port) : httpSecure ? 443 : 80;
  // URL keeps IPv6 literals bracketed; the client wants the bare address.
  const httpHost = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const httpPath = url.pathname.replace(/\/+$/, "");
  const grpcHost = options.grpcHost ?? httpHost;
  const grpcPort = options.grpcPort ?? 50051;
  const grpcSecure = options.grpcSecure ?? httpSecure;
  const describe = `${url.protocol}//${url.host}${httpPath} (gRPC ${grpcHost}:${grpcPort})`;
  return {
    describe,
    connect: () =>
      connectToWeaviate({
        httpHost,
        httpPort,
        httpSecure,
        ...(httpPath ? { httpPath } : {}),
        grpcHost,
        grpcPort,
        grpcSecure,
        ...(options.apiKey ? { authCredentials: new weaviate.ApiKey(options.apiKey) } : {}),
        ...(options.timeout ? { timeout: options.timeout } : {}),
      }),
  };
}

async function connectToWeaviate(options: Parameters<typeof weaviate.connectToCustom>[0]): Promise<WeaviateClientLike> {
  // The annotation is the point: it makes the compiler prove that the real client provides
  // everything WeaviateClientLike promises.
  const client: WeaviateClient = await weaviate.connectToCustom(options);
  return client;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// ---------------------------------------------------------------------------------------------
// The store.

interface ModelCollection {
  name: string;
  model: string;
  dimensions: number;
  /** Settles when the collection exists and has been checked. */
  ready: Promise<void>;
  /** False for a collection someone created without it: then we create tenants ourselves. */
  autoTenantCreation: boolean;
}

export class WeaviateVectorStore implements VectorStore {
  readonly name = "weaviate";

  private readonly connection: ResolvedConnection | undefined;
  private connecting: Promise<WeaviateClientLike> | undefined;
  private readonly ownsClient: boolean;
  private readonly overfetch: number;
  private readonly maxFetch: number;
  private readonly models = new Map<string, ModelCollection>();
  /** Tenants known to exist, as "collection/tenant", for collections without auto tenant creation. */
  private readonly knownTenants = new Set<string>();
  private discovery: Promise<void> | undefined;
  private readonly discovered = new Set<string>();

  /**
   * @param connection where Weaviate is (connected lazily, on first use), or an already
   *   connected client (which this store then does not close).
   */
  constructor(connection: WeaviateConnectionOptions | WeaviateClientLike, options: WeaviateVectorStoreOptions = {}) {
    if ("collections" in connection) {
      this.connecting = Promise.resolve(connection);
      this.ownsClient = false;
    } else {
      this.connection = resolveConnection(connection);
      this.ownsClient = true;
    }
    this.overfetch = Math.max(1, Math.floor(options.overfetch ?? 8));
    this.maxFetch = Math.max(1, Math.floor(options.maxFetch ?? 10_000));
  }

  async ensureReady(model: string, dimensions: number): Promise<void> {
    if (!Number.isInteger(dimensions) || dimensions <= 0) {
      throw new Error(`WeaviateVectorStore.ensureReady: dimensions must be a positive integer, got ${dimensions} for model "${model}"`);
    }
    const name = collectionNameFor(model);
    const known = this.models.get(name);
    if (known) {
      if (known.dimensions !== dimensions) {
        throw new Error(`WeaviateVectorStore: model "${model}" was prepared with ${known.dimensions} dimensions, now asked for ${dimensions}`);
      }
      return known.ready;
    }
    const entry: ModelCollection = { name, model, dimensions, ready: Promise.resolve(), autoTenantCreation: true };
    entry.ready = this.prepareCollection(entry).catch((error: unknown) => {
      // Forget the failure so that a later call (Weaviate back up) tries again.
      this.models.delete(name);
      throw error;
    });
    this.models.set(name, entry);
    return entry.ready;
  }

  async replaceEntity(organizationId: string, entityType: EntityType, entityId: string, model: string, chunks: VectorChunk[], fence?: WriteFence): Promise<void> {
    await fence?.(null);
    const tenant = tenantNameFor(organizationId);
    const name = collectionNameFor(model);
    let entry = this.models.get(name);
    const first = chunks[0];
    if (!entry && first) {
      // A writer that skipped ensureReady still gets a proper collection.
      await this.ensureReady(model, first.vector.length);
      entry = this.models.get(name);
    }
    if (entry) await entry.ready;
    checkChunks(model, entry?.dimensions, chunks);

    const scope = await this.tenantScope(name, tenant, "replaceEntity");
    await this.call("replaceEntity (delete old chunks)", name, tenant, async () => {
      await this.deleteObjects(scope, name, tenant, entityFilter(organizationId, entityType, entityId));
    });
    if (chunks.length === 0) return;

    if (entry && !entry.autoTenantCreation) await this.createTenantIfMissing(name, tenant);
    const objects: DataObject<undefined>[] = chunks.map((chunk) => ({
      id: chunkObjectId(organizationId, entityType, entityId, chunk.chunkIndex),
      properties: { organizationId, entityType, entityId, chunkIndex: chunk.chunkIndex, contentHash: chunk.contentHash },
      vectors: { [VECTOR_NAME]: chunk.vector },
    }));
    await this.call("replaceEntity (insert chunks)", name, tenant, async () => {
      const result = await scope.data.insertMany(objects);
      if (result.hasErrors) {
        const errors = Object.values(result.errors);
        const sample = errors.slice(0, 3).map((e) => e.message).join("; ");
        throw new Error(`${errors.length} of ${objects.length} chunks were rejected: ${sample}`);
      }
    });
  }

  /** Weaviate has no transaction to share: one replaceEntity per entity. */
  replaceEntities(organizationId: string, entityType: EntityType, model: string, entities: readonly EntityVectors[], fence?: WriteFence): Promise<void> {
    return replaceEachEntity(this, organizationId, entityType, model, entities, fence);
  }

  async deleteEntity(organizationId: string, entityType: EntityType, entityId: string): Promise<void> {
    const tenant = tenantNameFor(organizationId);
    await this.discoverCollections();
    const names = new Set<string>([...this.models.keys(), ...this.discovered]);
    const filter = entityFilter(organizationId, entityType, entityId);
    await Promise.all(
      [...names].map(async (name) => {
        const scope = await this.tenantScope(name, tenant, "deleteEntity");
        await this.call("deleteEntity", name, tenant, () => this.deleteObjects(scope, name, tenant, filter));
      }),
    );
  }

  async search(organizationId: string, model: string, vector: number[], options: VectorSearchOptions): Promise<VectorMatch[]> {
    const tenant = tenantNameFor(organizationId);
    const name = collectionNameFor(model);
    const limit = Math.floor(options.limit);
    // An explicit empty list asks for no entity types at all.
    if (!(limit > 0) || options.entityTypes?.length === 0) return [];
    const entry = this.models.get(name);
    if (entry) {
      await entry.ready;
      if (vector.length !== entry.dimensions) {
        throw new Error(`WeaviateVectorStore.search: model "${model}" has ${entry.dimensions} dimensions, the query vector has ${vector.length}`);
      }
    }

    const conditions: FilterValue[] = [weaviate.filter.byProperty("organizationId").equal(organizationId)];
    if (options.entityTypes) conditions.push(weaviate.filter.byProperty("entityType").containsAny([...new Set(options.entityTypes)]));
    const filters = conditions.length === 1 ? conditions[0]! : Filters.and(...conditions);

    const scope = await this.tenantScope(name, tenant, "search");
    return this.call("search", name, tenant, async () => {
      let fetchLimit = Math.min(this.maxFetch, Math.max(limit, limit * this.overfetch));
      for (;;) {
        let result: WeaviateQueryResultLike;
        try {
          result = await scope.query.nearVector(vector, {
            targetVector: VECTOR_NAME,
            limit: fetchLimit,
            filters,
            returnMetadata: ["distance"],
            returnProperties: RETURNED_PROPERTIES,
          });
        } catch (error) {
          // A tenant appears on an organization's first write: before that, nothing to find.
          if (await this.tenantMissing(name, tenant)) return [];
          throw error;
        }
        const best = bestChunkPerEntity(result, organizationId);
        // Many chunks of few entities can fill a page: ask for more until enough entities or the end.
        if (best.length >= limit || result.objects.length < fetchLimit || fetchLimit >= this.maxFetch) {
          return best.slice(0, limit);
        }
        fetchLimit = Math.min(this.maxFetch, fetchLimit * 4);
      }
    });
  }

  /** Closes the connection this store opened itself (a client handed in is left to its owner). */
  async close(): Promise<void> {
    if (!this.ownsClient || !this.connecting) return;
    const pending = this.connecting;
    this.connecting = undefined;
    const client = await pending.catch(() => undefined);
    await client?.close();
  }

  // -------------------------------------------------------------------------------------------

  private client(): Promise<WeaviateClientLike> {
    if (!this.connecting) {
      const connection = this.connection!;
      this.connecting = connection.connect().catch((error: unknown) => {
        // Not cached: the next call tries again.
        this.connecting = undefined;
        throw new Error(`could not connect to Weaviate at ${connection.describe}: ${messageOf(error)}`, { cause: error });
      });
    }
    return this.connecting;
  }

  private async tenantScope(collection: string, tenant: string, operation: string): Promise<WeaviateTenantCollectionLike> {
    return this.call(operation, collection, tenant, async () => (await this.client()).collections.use(collection).withTenant(tenant));
  }

  /** Runs one step against Weaviate, turning any failure into an error that names where it happened. */
  private async call<T>(operation: string, collection: string, tenant: string | undefined, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof WeaviateVectorStoreError) throw error;
      const where = tenant ? `collection "${collection}", tenant "${tenant}"` : `collection "${collection}"`;
      throw new WeaviateVectorStoreError(`Weaviate ${operation} failed (${where}): ${messageOf(error)}`, collection, tenant, { cause: error });
    }
  }

  private async prepareCollection(entry: ModelCollection): Promise<void> {
    await this.call("ensureReady", entry.name, undefined, async () => {
      const client = await this.client();
      if (!(await client.collections.exists(entry.name))) {
        try {
          await client.collections.create(collectionConfig(entry.name, entry.model));
        } catch (error) {
          // Another process may have created it between our check and our create.
          if (!(await client.collections.exists(entry.name))) throw error;
        }
      }
      const config = await client.collections.use(entry.name).config.get();
      if (!config.multiTenancy.enabled) {
        throw new Error("the collection exists without multi-tenancy; refusing to put organizations' vectors in one shard");
      }
      const vectorConfig = config.vectorizers[VECTOR_NAME];
      if (!vectorConfig) throw new Error(`the collection exists without a vector named "${VECTOR_NAME}"`);
      const distance = (vectorConfig.indexConfig as { distance?: unknown }).distance;
      if (distance !== undefined && distance !== "cosine") {
        throw new Error(`the collection's vector index uses ${String(distance)} distance, not cosine`);
      }
      entry.autoTenantCreation = config.multiTenancy.autoTenantCreation;
    });
  }

  /** For collections created without auto tenant creation: make the tenant before the first write. */
  private async createTenantIfMissing(collection: string, tenant: string): Promise<void> {
    const key = `${collection}/${tenant}`;
    if (this.knownTenants.has(key)) return;
    await this.call("tenant creation", collection, tenant, async () => {
      const tenants = (await this.client()).collections.use(collection).tenants;
      if (!(await tenants.getByName(tenant))) {
        try {
          await tenants.create([{ name: tenant }]);
        } catch (error) {
          if (!(await tenants.getByName(tenant))) throw error;
        }
      }
    });
    this.knownTenants.add(key);
  }

  private async deleteObjects(scope: WeaviateTenantCollectionLike, collection: string, tenant: string, filter: FilterValue): Promise<void> {
    let result: WeaviateDeleteResultLike;
    try {
      result = await scope.data.deleteMany(filter);
    } catch (error) {
      // No tenant (or no collection) yet means nothing of this organization's to delete.
      if (await this.tenantMissing(collection, tenant)) return;
      throw error;
    }
    if (result.failed > 0) throw new Error(`${result.failed} of ${result.matches} objects could not be deleted`);
  }

  /**
   * Whether a failed call failed because the collection or the tenant does not exist. Asked
   * only after a failure, so the usual path costs no extra round trip; if this check fails
   * too, the original error is the one worth reporting.
   */
  private async tenantMissing(collection: string, tenant: string): Promise<boolean> {
    try {
      const client = await this.client();
      if (!(await client.collections.exists(collection))) return true;
      return (await client.collections.use(collection).tenants.getByName(tenant)) === null;
    } catch {
      return false;
    }
  }

  /**
   * Finds this store's collections that this process never prepared (a model used before a
   * restart, or by another process), so that deleteEntity removes every model's chunks. Once
   * per store; a failure is not cached.
   */
  private discoverCollections(): Promise<void> {
    if (!this.discovery) {
      this.discovery = this.call("listing collections", `${COLLECTION_PREFIX}*`, undefined, async () => {
        const all = await (await this.client()).collections.listAll();
        for (const { name } of all) if (name.startsWith(COLLECTION_PREFIX)) this.discovered.add(name);
      }).catch((error: unknown) => {
        this.discovery = undefined;
        throw error;
      });
    }
    return this.discovery;
  }
}

function collectionConfig(name: string, model: string): CollectionConfigCreate {
  const keyword = { dataType: "text", tokenization: "field", indexFilterable: true, indexSearchable: false } as const;
  return {
    name,
    description: `Context search chunk vectors of embedding model "${model}", one tenant per organization`,
    multiTenancy: weaviate.configure.multiTenancy({ enabled: true, autoTenantCreation: true, autoTenantActivation: true }),
    vectorizers: weaviate.configure.vectors.selfProvided({
      name: VECTOR_NAME,
      vectorIndexConfig: weaviate.configure.vectorIndex.hnsw({ distanceMetric: weaviate.configure.vectorDistances.COSINE }),
    }),
    properties: [
      { name: "organizationId", ...keyword },
      { name: "entityType", ...keyword },
      { name: "entityId", ...keyword },
      { name: "chunkIndex", dataType: "int", indexFilterable: true },
      { name: "contentHash", dataType: "text", tokenization: "field", indexFilterable: false, indexSearchable: false },
    ],
  };
}

function entityFilter(organizationId: string, entityType: EntityType, entityId: string): FilterValue {
  return Filters.and(
    weaviate.filter.byProperty("organizationId").equal(organizationId),
    weaviate.filter.byProperty("entityType").equal(entityType),
    weaviate.filter.byProperty("entityId").equal(entityId),
  );
}

function checkChunks(model: string, dimensions: number | undefined, chunks: VectorChunk[]): void {
  const seen = new Set<number>();
  for (const chunk of chunks) {
    if (!Number.isInteger(chunk.chunkIndex) || chunk.chunkIndex < 0) {
      throw new Error(`WeaviateVectorStore: chunkIndex must be a non-negative integer, got ${chunk.chunkIndex}`);
    }
    // Same index, same object id: one would silently overwrite the other.
    if (seen.has(chunk.chunkIndex)) throw new Error(`WeaviateVectorStore: chunkIndex ${chunk.chunkIndex} appears twice`);
    seen.add(chunk.chunkIndex);
    if (dimensions !== undefined && chunk.vector.length !== dimensions) {
      throw new Error(`WeaviateVectorStore: model "${model}" has ${dimensions} dimensions, chunk ${chunk.chunkIndex} has ${chunk.vector.length}`);
    }
  }
}

/** One match per entity: its best chunk, by cosine similarity (1 - Weaviate's cosine distance), best first. */
function bestChunkPerEntity(result: WeaviateQueryResultLike, organizationId: string): VectorMatch[] {
  const best = new Map<string, VectorMatch>();
  for (const object of result.objects) {
    const { organizationId: owner, entityType, entityId, chunkIndex } = object.properties;
    const distance = object.metadata?.distance;
    // The tenant and the filter already guarantee the owner; a mismatch would be a bug, never a result.
    if (owner !== organizationId || typeof distance !== "number") continue;
    if (!ENTITY_TYPES.includes(entityType as EntityType) || typeof entityId !== "string" || typeof chunkIndex !== "number") continue;
    const match: VectorMatch = { entityType: entityType as EntityType, entityId, chunkIndex, score: 1 - distance };
    const key = JSON.stringify([entityType, entityId]);
    const previous = best.get(key);
    if (!previous || match.score > previous.score || (match.score === previous.score && match.chunkIndex < previous.chunkIndex)) {
      best.set(key, match);
    }
  }
  return [...best.values()].sort(
    (a, b) => b.score - a.score || a.entityType.localeCompare(b.entityType) || a.entityId.localeCompare(b.entityId),
  );
}
