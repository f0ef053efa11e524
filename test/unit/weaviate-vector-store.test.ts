/**
 * No Weaviate server can run here (no Docker, no binaries from outside npm), so these tests run
 * the adapter against a STUB of weaviate-client: an in-memory stand-in for exactly the slice of
 * the client the adapter calls (`WeaviateClientLike`), which keeps one object store per
 * collection and tenant, enforces Weaviate's name rules, evaluates the real client's filter
 * objects and ranks by honestly computed cosine distance. What it cannot show is how a real
 * server behaves; one test at the end does use the real client, against a closed port, to check
 * that the adapter drives the client's connection API correctly and fails fast and clearly.
 */
import { createServer } from "node:net";
import { describe, expect, it, jest } from "@jest/globals";
import type { CollectionConfig, CollectionConfigCreate, DataObject, FilterValue, TenantCreate } from "weaviate-client";
import type { VectorChunk } from "../../lib/retrieval/vector-stores/vector-store.js";
import {
  COLLECTION_PREFIX,
  VECTOR_NAME,
  WeaviateVectorStore,
  WeaviateVectorStoreError,
  chunkObjectId,
  collectionNameFor,
  tenantNameFor,
  type WeaviateClientLike,
  type WeaviateCollectionLike,
  type WeaviateNearVectorOptions,
  type WeaviateQueryResultLike,
  type WeaviateTenantCollectionLike,
} from "../../lib/retrieval/vector-stores/weaviate.js";
import { useFakeClock } from "../support/fake-clock.js";

// ---------------------------------------------------------------------------------------------
// The stub.

// Weaviate's own rules (entities/schema in the server: ClassNameRegexCore, ShardNameRegexCore).
const CLASS_NAME = /^[A-Z][_0-9A-Za-z]{0,254}$/;
const TENANT_NAME = /^[A-Za-z0-9\-_]{1,64}$/;

interface StoredObject {
  id: string;
  properties: Record<string, unknown>;
  vector: number[];
}

interface StubCall {
  operation: string;
  collection: string;
  tenant?: string;
  filters?: FilterValue;
  limit?: number;
}

interface StubCollectionState {
  name: string;
  config: CollectionConfigCreate;
  propertyNames: Set<string>;
  vectorName: string;
  distance: string;
  multiTenancy: { enabled: boolean; autoTenantCreation: boolean; autoTenantActivation: boolean };
  tenants: Map<string, Map<string, StoredObject>>;
}

function cosineDistance(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return 1 - dot / (Math.sqrt(na) * Math.sqrt(nb));
}

/** Evaluates the filter objects the real `weaviate.filter` / `Filters` builders produce. */
function matches(filter: FilterValue, properties: Record<string, unknown>): boolean {
  const property = () => {
    const name = (filter.target as { property?: string } | undefined)?.property;
    if (!name) throw new Error(`stub: filter without a property target: ${JSON.stringify(filter)}`);
    return properties[name];
  };
  switch (filter.operator) {
    case "And":
      return (filter.filters ?? []).every((f) => matches(f, properties));
    case "Or":
      return (filter.filters ?? []).some((f) => matches(f, properties));
    case "Equal":
      return property() === filter.value;
    case "ContainsAny":
      return (filter.value as unknown[]).includes(property());
    default:
      throw new Error(`stub: filter operator ${filter.operator} is not implemented`);
  }
}

class StubWeaviateClient implements WeaviateClientLike {
  readonly calls: StubCall[] = [];
  readonly state = new Map<string, StubCollectionState>();
  /** Set to make the next matching operation throw, as a failing server would. */
  failNext: { operation: string; error: Error } | undefined;

  readonly collections = {
    exists: async (name: string) => {
      this.record({ operation: "collections.exists", collection: name });
      return this.state.has(name);
    },
    create: async (config: CollectionConfigCreate) => {
      this.record({ operation: "collections.create", collection: config.name });
      this.createCollection(config);
      return {};
    },
    listAll: async () => {
      this.record({ operation: "collections.listAll", collection: "*" });
      return [...this.state.keys()].map((name) => ({ name }));
    },
    use: (name: string): WeaviateCollectionLike => this.collection(name),
  };

  async close(): Promise<void> {}

  /** Creates a collection the way Weaviate would from this config (also used to plant pre-existing ones). */
  createCollection(config: CollectionConfigCreate): void {
    if (!CLASS_NAME.test(config.name)) throw new Error(`stub: invalid class name "${config.name}"`);
    if (this.state.has(config.name)) throw new Error(`stub: class name ${config.name} already exists`);
    const vectorizers = config.vectorizers as unknown as { name?: string; vectorizer: { name: string }; vectorIndex: { name: string; config?: { distance?: string } } };
    if (Array.isArray(vectorizers) || !vectorizers?.name) throw new Error("stub: expected exactly one named vector");
    if (vectorizers.vectorizer.name !== "none") throw new Error(`stub: expected no vectorizer, got ${vectorizers.vectorizer.name}`);
    const mt = config.multiTenancy ?? { enabled: false };
    this.state.set(config.name, {
      name: config.name,
      config,
      propertyNames: new Set((config.properties ?? []).map((p) => p.name)),
      vectorName: vectorizers.name,
      distance: vectorizers.vectorIndex.config?.distance ?? "cosine",
      multiTenancy: { enabled: mt.enabled ?? false, autoTenantCreation: mt.autoTenantCreation ?? false, autoTenantActivation: mt.autoTenantActivation ?? false },
      tenants: new Map(),
    });
  }

  objectsIn(collection: string, tenant: string): StoredObject[] {
    return [...(this.state.get(collection)?.tenants.get(tenant)?.values() ?? [])];
  }

  tenantsOf(collection: string): string[] {
    return [...(this.state.get(collection)?.tenants.keys() ?? [])];
  }

  callsFor(operation: string): StubCall[] {
    return this.calls.filter((c) => c.operation === operation);
  }

  private record(call: StubCall): void {
    this.calls.push(call);
    if (this.failNext && this.failNext.operation === call.operation) {
      const { error } = this.failNext;
      this.failNext = undefined;
      throw error;
    }
  }

  private existing(name: string): StubCollectionState {
    const state = this.state.get(name);
    if (!state) throw new Error(`stub: could not find class ${name} in schema`);
    return state;
  }

  private tenantObjects(name: string, tenant: string): Map<string, StoredObject> {
    const state = this.existing(name);
    if (!state.multiTenancy.enabled) throw new Error(`stub: class ${name} has multi-tenancy disabled, but request was with tenant`);
    const objects = state.tenants.get(tenant);
    if (!objects) throw new Error(`stub: tenant not found: "${tenant}"`);
    return objects;
  }

  private collection(name: string): WeaviateCollectionLike {
    return {
      config: {
        get: async () => {
          this.record({ operation: "config.get", collection: name });
          const state = this.existing(name);
          const vectorizers = { [state.vectorName]: { indexType: "hnsw", indexConfig: { distance: state.distance }, vectorizer: { name: "none", config: {} } } };
          return { multiTenancy: state.multiTenancy, vectorizers: vectorizers as unknown as CollectionConfig["vectorizers"] };
        },
      },
      tenants: {
        getByName: async (tenant: string) => {
          this.record({ operation: "tenants.getByName", collection: name, tenant });
          return this.existing(name).tenants.has(tenant) ? { name: tenant } : null;
        },
        create: async (tenants: TenantCreate[]) => {
          for (const { name: tenant } of tenants) {
            this.record({ operation: "tenants.create", collection: name, tenant });
            if (!TENANT_NAME.test(tenant)) throw new Error(`stub: invalid tenant name "${tenant}"`);
            const state = this.existing(name);
            if (state.tenants.has(tenant)) throw new Error(`stub: tenant ${tenant} already exists`);
            state.tenants.set(tenant, new Map());
          }
          return tenants;
        },
      },
      withTenant: (tenant: string): WeaviateTenantCollectionLike => ({
        data: {
          deleteMany: async (where: FilterValue) => {
            this.record({ operation: "data.deleteMany", collection: name, tenant, filters: where });
            const objects = this.tenantObjects(name, tenant);
            let matched = 0;
            for (const [id, object] of objects) {
              if (matches(where, object.properties)) {
                objects.delete(id);
                matched++;
              }
            }
            return { failed: 0, matches: matched, successful: matched };
          },
          insertMany: async (input: DataObject<undefined>[]) => {
            this.record({ operation: "data.insertMany", collection: name, tenant });
            const state = this.existing(name);
            if (!state.tenants.has(tenant)) {
              if (!state.multiTenancy.autoTenantCreation) throw new Error(`stub: tenant not found: "${tenant}"`);
              if (!TENANT_NAME.test(tenant)) throw new Error(`stub: invalid tenant name "${tenant}"`);
              state.tenants.set(tenant, new Map());
            }
            const objects = this.tenantObjects(name, tenant);
            const errors: Record<number, { message: string }> = {};
            input.forEach((object, index) => {
              const vectors = object.vectors as Record<string, number[]> | number[] | undefined;
              const vector = vectors && !Array.isArray(vectors) ? vectors[state.vectorName] : undefined;
              const unknown = Object.keys(object.properties ?? {}).filter((p) => !state.propertyNames.has(p));
              const dims = [...objects.values()][0]?.vector.length;
              if (!object.id) errors[index] = { message: "no id" };
              else if (!vector) errors[index] = { message: `no vector named ${state.vectorName}` };
              else if (unknown.length) errors[index] = { message: `unknown properties ${unknown.join(",")}` };
              else if (dims !== undefined && dims !== vector.length) errors[index] = { message: `vector length ${vector.length}, existing ${dims}` };
              else objects.set(object.id, { id: object.id, properties: { ...(object.properties as Record<string, unknown>) }, vector: [...vector] });
            });
            return { hasErrors: Object.keys(errors).length > 0, errors };
          },
        },
        query: {
          nearVector: async (vector: number[], options: WeaviateNearVectorOptions): Promise<WeaviateQueryResultLike> => {
            this.record({ operation: "query.nearVector", collection: name, tenant, filters: options.filters, limit: options.limit });
            const state = this.existing(name);
            if (options.targetVector !== state.vectorName) throw new Error(`stub: no vector named ${options.targetVector}`);
            const objects = this.tenantObjects(name, tenant);
            const wantDistance = options.returnMetadata === "all" || (options.returnMetadata ?? []).includes("distance");
            return {
              objects: [...objects.values()]
                .filter((o) => matches(options.filters, o.properties))
                .map((o) => ({ o, distance: cosineDistance(vector, o.vector) }))
                .sort((a, b) => a.distance - b.distance)
                .slice(0, options.limit)
                .map(({ o, distance }) => ({
                  properties: Object.fromEntries(options.returnProperties.map((p) => [p, o.properties[p]])),
                  metadata: wantDistance ? { distance } : undefined,
                })),
            };
          },
        },
      }),
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers.

const MODEL_X = "openai/text-embedding-3-small";
const MODEL_Y = "universal-sentence-encoder-lite";

function chunk(chunkIndex: number, vector: number[]): VectorChunk {
  return { chunkIndex, contentHash: `hash-${chunkIndex}-${vector.join(",")}`, vector };
}

function cosine(a: number[], b: number[]): number {
  return 1 - cosineDistance(a, b);
}

async function setup(models: Array<[string, number]> = [[MODEL_X, 3]]) {
  const client = new StubWeaviateClient();
  const store = new WeaviateVectorStore(client);
  for (const [model, dims] of models) await store.ensureReady(model, dims);
  return { client, store };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

// ---------------------------------------------------------------------------------------------

describe("WeaviateVectorStore naming (pure functions)", () => {
  const orgIds = [
    "acme",
    "Acme",
    "ACME",
    "a.c.m.e",
    "a-c-m-e",
    "a_c_m_e",
    "a c m e",
    "acme ",
    " acme",
    "ácme",
    "🚀 rocket org",
    "../../etc/passwd",
    "org_9f1c2a4e-7b3d-4c1e-9a8f-0123456789ab",
    "9f1c2a4e-7b3d-4c1e-9a8f-0123456789ab",
    "9F1C2A4E-7B3D-4C1E-9A8F-0123456789AB",
    "x".repeat(128),
    `${"x".repeat(127)}y`,
    "!!!",
    "???",
  ];

  it("maps every organization id to a valid Weaviate tenant name (charset, 1-64 chars)", () => {
    for (const id of orgIds) {
      const tenant = tenantNameFor(id);
      expect(tenant).toMatch(TENANT_NAME);
      expect(tenant).toMatch(/^org-[a-z0-9-]*[0-9a-f]{32}$/);
    }
  });

  it("keeps ids that differ only in case or punctuation apart, even where case is folded", () => {
    const tenants = orgIds.map(tenantNameFor);
    expect(new Set(tenants).size).toBe(orgIds.length);
    expect(new Set(tenants.map((t) => t.toLowerCase())).size).toBe(orgIds.length);
    // Same readable slug, different hash:
    expect(tenantNameFor("Acme").startsWith("org-acme-")).toBe(true);
    expect(tenantNameFor("acme").startsWith("org-acme-")).toBe(true);
    expect(tenantNameFor("Acme")).not.toBe(tenantNameFor("acme"));
    expect(tenantNameFor("a.c.m.e").startsWith("org-a-c-m-e-")).toBe(true);
    expect(tenantNameFor("a.c.m.e")).not.toBe(tenantNameFor("a-c-m-e"));
  });

  it("is deterministic and readable", () => {
    expect(tenantNameFor("Acme Corp")).toBe(tenantNameFor("Acme Corp"));
    expect(tenantNameFor("Acme Corp")).toMatch(/^org-acme-corp-[0-9a-f]{32}$/);
    expect(tenantNameFor("!!!")).toMatch(/^org-[0-9a-f]{32}$/);
    expect(tenantNameFor("x".repeat(128))).toHaveLength(64);
    expect(() => tenantNameFor("")).toThrow(/organization id is required/);
  });

  it("derives a valid, distinct collection name per model", () => {
    const models = [MODEL_X, "openai/text_embedding_3_small", "OpenAI/Text-Embedding-3-Small", MODEL_Y, "m".repeat(300), "模型"];
    const names = models.map(collectionNameFor);
    for (const name of names) {
      expect(name).toMatch(CLASS_NAME);
      expect(name.startsWith(COLLECTION_PREFIX)).toBe(true);
    }
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(models.length);
    expect(collectionNameFor(MODEL_X)).toMatch(/^ContextChunk_openai_text_embedding_3_small_[0-9a-f]{16}$/);
    expect(collectionNameFor(MODEL_X)).toBe(collectionNameFor(MODEL_X));
  });

  it("gives each chunk a deterministic UUID that differs by organization, entity and chunk", () => {
    const id = chunkObjectId("org", "conversation", "c1", 0);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(chunkObjectId("org", "conversation", "c1", 0)).toBe(id);
    const others = [
      chunkObjectId("org2", "conversation", "c1", 0),
      chunkObjectId("org", "document_chunk", "c1", 0),
      chunkObjectId("org", "conversation", "c2", 0),
      chunkObjectId("org", "conversation", "c1", 1),
    ];
    expect(new Set([id, ...others]).size).toBe(5);
  });
});

describe("WeaviateVectorStore (stubbed weaviate-client: no Weaviate server can run here)", () => {
  it("ensureReady creates one multi-tenant, self-provided-vector, cosine HNSW collection per model, once", async () => {
    const { client, store } = await setup([[MODEL_X, 3], [MODEL_Y, 4]]);
    await store.ensureReady(MODEL_X, 3);
    expect(client.callsFor("collections.create").map((c) => c.collection).sort()).toEqual([collectionNameFor(MODEL_X), collectionNameFor(MODEL_Y)].sort());
    const config = client.state.get(collectionNameFor(MODEL_X))!.config;
    expect(config.multiTenancy).toEqual({ enabled: true, autoTenantCreation: true, autoTenantActivation: true });
    expect(config.vectorizers).toMatchObject({ name: VECTOR_NAME, vectorizer: { name: "none" }, vectorIndex: { name: "hnsw", config: { distance: "cosine" } } });
    expect(config.properties?.map((p) => [p.name, p.dataType])).toEqual([
      ["organizationId", "text"],
      ["entityType", "text"],
      ["entityId", "text"],
      ["chunkIndex", "int"],
      ["contentHash", "text"],
    ]);
    // Exact-match filters need whole-value tokens.
    expect(config.properties?.find((p) => p.name === "entityId")).toMatchObject({ tokenization: "field", indexFilterable: true });
    await expect(store.ensureReady(MODEL_X, 5)).rejects.toThrow(/3 dimensions, now asked for 5/);
  });

  it("adopts an existing collection (another process created it) and refuses one without multi-tenancy", async () => {
    const client = new StubWeaviateClient();
    const store1 = new WeaviateVectorStore(client);
    await store1.ensureReady(MODEL_X, 3);
    const store2 = new WeaviateVectorStore(client);
    await store2.ensureReady(MODEL_X, 3);
    expect(client.callsFor("collections.create")).toHaveLength(1);

    client.createCollection({
      name: collectionNameFor(MODEL_Y),
      vectorizers: { name: VECTOR_NAME, vectorizer: { name: "none" }, vectorIndex: { name: "hnsw", config: { distance: "cosine" } } } as unknown as CollectionConfigCreate["vectorizers"],
    });
    const error = await rejection(store2.ensureReady(MODEL_Y, 3));
    expect(error).toBeInstanceOf(WeaviateVectorStoreError);
    expect(error.message).toContain(collectionNameFor(MODEL_Y));
    expect(error.message).toMatch(/without multi-tenancy/);
  });

  it("keeps organizations apart: one tenant each, and org A's vectors never come back for org B", async () => {
    const { client, store } = await setup();
    const v = [1, 0, 0];
    await store.replaceEntity("org-A", "conversation", "shared-id", MODEL_X, [chunk(0, v)]);
    await store.replaceEntity("org-A", "conversation", "a-only", MODEL_X, [chunk(0, [0.9, 0.1, 0])]);
    await store.replaceEntity("org-B", "conversation", "shared-id", MODEL_X, [chunk(0, [0, 1, 0])]);

    const collection = collectionNameFor(MODEL_X);
    expect(client.tenantsOf(collection).sort()).toEqual([tenantNameFor("org-A"), tenantNameFor("org-B")].sort());
    expect(client.objectsIn(collection, tenantNameFor("org-A")).every((o) => o.properties["organizationId"] === "org-A")).toBe(true);
    expect(client.objectsIn(collection, tenantNameFor("org-B"))).toHaveLength(1);

    client.calls.length = 0;
    const forB = await store.search("org-B", MODEL_X, v, { limit: 10 });
    expect(forB).toEqual([{ entityType: "conversation", entityId: "shared-id", chunkIndex: 0, score: expect.closeTo(0, 10) }]);
    const queries = client.callsFor("query.nearVector");
    expect(queries).toHaveLength(1);
    expect(queries[0]!.tenant).toBe(tenantNameFor("org-B"));
    // Belt and braces: the query also filters on the organization.
    expect(JSON.stringify(queries[0]!.filters)).toContain('"org-B"');

    const forA = await store.search("org-A", MODEL_X, v, { limit: 10 });
    expect(forA.map((m) => m.entityId)).toEqual(["shared-id", "a-only"]);
    expect(client.callsFor("query.nearVector")[1]!.tenant).toBe(tenantNameFor("org-A"));
  });

  it("every write and query names the organization's tenant (ids differing only in case get different tenants)", async () => {
    const { client, store } = await setup();
    await store.replaceEntity("Acme", "conversation", "c1", MODEL_X, [chunk(0, [1, 0, 0])]);
    await store.replaceEntity("acme", "conversation", "c2", MODEL_X, [chunk(0, [1, 0, 0])]);
    expect(await store.search("Acme", MODEL_X, [1, 0, 0], { limit: 5 })).toEqual([expect.objectContaining({ entityId: "c1" })]);
    expect(await store.search("acme", MODEL_X, [1, 0, 0], { limit: 5 })).toEqual([expect.objectContaining({ entityId: "c2" })]);
    for (const call of client.calls.filter((c) => c.operation.startsWith("data.") || c.operation.startsWith("query."))) {
      expect([tenantNameFor("Acme"), tenantNameFor("acme")]).toContain(call.tenant);
    }
  });

  it("keeps models apart: a query for model X never sees model Y's vectors, even of the same length", async () => {
    const { client, store } = await setup([[MODEL_X, 3], [MODEL_Y, 3]]);
    await store.replaceEntity("org", "conversation", "in-x", MODEL_X, [chunk(0, [1, 0, 0])]);
    await store.replaceEntity("org", "conversation", "in-y", MODEL_Y, [chunk(0, [1, 0, 0])]);
    expect((await store.search("org", MODEL_X, [1, 0, 0], { limit: 10 })).map((m) => m.entityId)).toEqual(["in-x"]);
    expect((await store.search("org", MODEL_Y, [1, 0, 0], { limit: 10 })).map((m) => m.entityId)).toEqual(["in-y"]);
    expect(client.callsFor("query.nearVector").map((c) => c.collection)).toEqual([collectionNameFor(MODEL_X), collectionNameFor(MODEL_Y)]);
    await expect(store.search("org", MODEL_X, [1, 0, 0, 0], { limit: 1 })).rejects.toThrow(/3 dimensions, the query vector has 4/);
    await expect(store.replaceEntity("org", "conversation", "bad", MODEL_X, [chunk(0, [1, 0])])).rejects.toThrow(/3 dimensions, chunk 0 has 2/);
  });

  it("collapses chunks to their entity's best chunk, scores it as cosine similarity, sorts best first and cuts to limit", async () => {
    const { store } = await setup();
    const q = [1, 0.2, 0];
    const a = [chunk(0, [0, 1, 0]), chunk(1, [1, 0.1, 0]), chunk(2, [0.5, 0.5, 0.5])];
    const b = [chunk(0, [1, 0.5, 0.2]), chunk(1, [-1, 0, 0])];
    const c = [chunk(0, [0, 0, 1])];
    const d = [chunk(0, [0.8, 0.3, 0.1])];
    await store.replaceEntity("org", "conversation", "a", MODEL_X, a);
    await store.replaceEntity("org", "conversation", "b", MODEL_X, b);
    await store.replaceEntity("org", "conversation", "c", MODEL_X, c);
    await store.replaceEntity("org", "document_chunk", "d", MODEL_X, d);

    const expected = [
      { entityType: "conversation", entityId: "a", chunkIndex: 1, score: cosine(q, [1, 0.1, 0]) },
      { entityType: "document_chunk", entityId: "d", chunkIndex: 0, score: cosine(q, [0.8, 0.3, 0.1]) },
      { entityType: "conversation", entityId: "b", chunkIndex: 0, score: cosine(q, [1, 0.5, 0.2]) },
      { entityType: "conversation", entityId: "c", chunkIndex: 0, score: cosine(q, [0, 0, 1]) },
    ].sort((x, y) => y.score - x.score);
    const all = await store.search("org", MODEL_X, q, { limit: 10 });
    expect(all.map((m) => m.entityId)).toEqual(expected.map((m) => m.entityId));
    all.forEach((m, i) => {
      expect(m).toMatchObject({ entityType: expected[i]!.entityType, entityId: expected[i]!.entityId, chunkIndex: expected[i]!.chunkIndex });
      expect(m.score).toBeCloseTo(expected[i]!.score, 10);
    });
    expect(await store.search("org", MODEL_X, q, { limit: 2 })).toEqual(all.slice(0, 2));

    const conversationsOnly = await store.search("org", MODEL_X, q, { limit: 10, entityTypes: ["conversation"] });
    expect(conversationsOnly.map((m) => m.entityId)).toEqual(expected.filter((m) => m.entityType === "conversation").map((m) => m.entityId));
    expect((await store.search("org", MODEL_X, q, { limit: 10, entityTypes: ["document_chunk"] })).map((m) => m.entityId)).toEqual(["d"]);
    expect(await store.search("org", MODEL_X, q, { limit: 10, entityTypes: [] })).toEqual([]);
    expect(await store.search("org", MODEL_X, q, { limit: 0 })).toEqual([]);
  });

  it("fetches more chunks when many chunks of few entities fill the first page", async () => {
    const client = new StubWeaviateClient();
    const store = new WeaviateVectorStore(client, { overfetch: 2 });
    await store.ensureReady(MODEL_X, 3);
    // Twenty near-identical chunks of one entity outrank everything else.
    await store.replaceEntity("org", "conversation", "long", MODEL_X, Array.from({ length: 20 }, (_, i) => chunk(i, [1, 0.001 * i, 0])));
    await store.replaceEntity("org", "conversation", "other", MODEL_X, [chunk(0, [0.5, 0.5, 0])]);
    const result = await store.search("org", MODEL_X, [1, 0, 0], { limit: 2 });
    expect(result.map((m) => [m.entityId, m.chunkIndex])).toEqual([["long", 0], ["other", 0]]);
    const limits = client.callsFor("query.nearVector").map((c) => c.limit);
    expect(limits[0]).toBe(4);
    expect(limits.length).toBeGreaterThan(1);
  });

  it("replaceEntity overwrites: no stale chunks survive, ids are deterministic, and an empty list removes the entity", async () => {
    const { client, store } = await setup();
    const collection = collectionNameFor(MODEL_X);
    const tenant = tenantNameFor("org");
    await store.replaceEntity("org", "conversation", "e", MODEL_X, [chunk(0, [1, 0, 0]), chunk(1, [0, 1, 0]), chunk(2, [0, 0, 1])]);
    await store.replaceEntity("org", "conversation", "keep", MODEL_X, [chunk(0, [0, 0, 1])]);
    expect(client.objectsIn(collection, tenant)).toHaveLength(4);

    await store.replaceEntity("org", "conversation", "e", MODEL_X, [chunk(0, [0.5, 0.5, 0])]);
    const objects = client.objectsIn(collection, tenant).filter((o) => o.properties["entityId"] === "e");
    expect(objects).toEqual([
      {
        id: chunkObjectId("org", "conversation", "e", 0),
        properties: { organizationId: "org", entityType: "conversation", entityId: "e", chunkIndex: 0, contentHash: "hash-0-0.5,0.5,0" },
        vector: [0.5, 0.5, 0],
      },
    ]);
    // The old chunk 2 pointed at [0,0,1]; it must not match any more.
    const hits = await store.search("org", MODEL_X, [0, 0, 1], { limit: 10 });
    expect(hits.find((m) => m.entityId === "e")).toMatchObject({ chunkIndex: 0, score: expect.closeTo(0, 10) });

    // The delete was scoped to this entity in this tenant.
    const deletes = client.callsFor("data.deleteMany");
    expect(deletes.every((d) => d.tenant === tenant)).toBe(true);
    expect(JSON.stringify(deletes.at(-1)!.filters)).toMatch(/"entityId"\},"value":"e"/);

    await store.replaceEntity("org", "conversation", "e", MODEL_X, []);
    expect(client.objectsIn(collection, tenant).map((o) => o.properties["entityId"])).toEqual(["keep"]);
    await expect(store.replaceEntity("org", "conversation", "dup", MODEL_X, [chunk(1, [1, 0, 0]), chunk(1, [0, 1, 0])])).rejects.toThrow(/appears twice/);
  });

  it("deleteEntity removes an entity's chunks from every model's collection, including ones this process never prepared", async () => {
    const client = new StubWeaviateClient();
    const writer = new WeaviateVectorStore(client);
    await writer.ensureReady(MODEL_X, 3);
    await writer.ensureReady(MODEL_Y, 2);
    await writer.replaceEntity("org", "conversation", "gone", MODEL_X, [chunk(0, [1, 0, 0]), chunk(1, [0, 1, 0])]);
    await writer.replaceEntity("org", "conversation", "gone", MODEL_Y, [chunk(0, [1, 0])]);
    await writer.replaceEntity("org", "document_chunk", "gone", MODEL_X, [chunk(0, [1, 0, 0])]);
    await writer.replaceEntity("org", "conversation", "stays", MODEL_Y, [chunk(0, [0, 1])]);
    await writer.replaceEntity("other-org", "conversation", "gone", MODEL_X, [chunk(0, [1, 0, 0])]);

    // A restarted process that only knows model X.
    const restarted = new WeaviateVectorStore(client);
    await restarted.ensureReady(MODEL_X, 3);
    client.calls.length = 0;
    await restarted.deleteEntity("org", "conversation", "gone");

    const ids = (model: string, org: string) => client.objectsIn(collectionNameFor(model), tenantNameFor(org)).map((o) => `${o.properties["entityType"]}:${o.properties["entityId"]}`).sort();
    expect(ids(MODEL_X, "org")).toEqual(["document_chunk:gone"]);
    expect(ids(MODEL_Y, "org")).toEqual(["conversation:stays"]);
    expect(ids(MODEL_X, "other-org")).toEqual(["conversation:gone"]);
    expect(client.callsFor("data.deleteMany").filter((c) => c.tenant === tenantNameFor("org")).map((c) => c.collection).sort()).toEqual(
      [collectionNameFor(MODEL_X), collectionNameFor(MODEL_Y)].sort(),
    );

    // Deleting for an organization that never wrote anything is not an error.
    await expect(restarted.deleteEntity("never-wrote", "conversation", "x")).resolves.toBeUndefined();
  });

  it("an organization without a tenant yet (or a model without a collection) gets no results, not an error", async () => {
    const { client, store } = await setup();
    await store.replaceEntity("org", "conversation", "c", MODEL_X, [chunk(0, [1, 0, 0])]);
    await expect(store.search("newcomer", MODEL_X, [1, 0, 0], { limit: 5 })).resolves.toEqual([]);
    expect(client.tenantsOf(collectionNameFor(MODEL_X))).not.toContain(tenantNameFor("newcomer"));
    await expect(store.search("org", "never-prepared-model", [1, 0, 0], { limit: 5 })).resolves.toEqual([]);
  });

  it("creates tenants itself in a collection made without auto tenant creation", async () => {
    const client = new StubWeaviateClient();
    client.createCollection({
      name: collectionNameFor(MODEL_X),
      multiTenancy: { enabled: true, autoTenantCreation: false },
      vectorizers: { name: VECTOR_NAME, vectorizer: { name: "none" }, vectorIndex: { name: "hnsw", config: { distance: "cosine" } } } as unknown as CollectionConfigCreate["vectorizers"],
      properties: ["organizationId", "entityType", "entityId", "chunkIndex", "contentHash"].map((name) => ({ name, dataType: name === "chunkIndex" ? "int" : "text" })),
    } as CollectionConfigCreate);
    const store = new WeaviateVectorStore(client);
    await store.ensureReady(MODEL_X, 3);
    await store.replaceEntity("org", "conversation", "c", MODEL_X, [chunk(0, [1, 0, 0])]);
    await store.replaceEntity("org", "conversation", "c2", MODEL_X, [chunk(0, [0, 1, 0])]);
    expect(client.callsFor("tenants.create").map((c) => c.tenant)).toEqual([tenantNameFor("org")]);
    expect(await store.search("org", MODEL_X, [1, 0, 0], { limit: 1 })).toEqual([expect.objectContaining({ entityId: "c" })]);
  });

  it("wraps Weaviate's errors with the operation, collection and tenant", async () => {
    const { client, store } = await setup();
    await store.replaceEntity("org", "conversation", "c", MODEL_X, [chunk(0, [1, 0, 0])]);
    client.failNext = { operation: "query.nearVector", error: new Error("rpc error: deadline exceeded") };
    const error = await rejection(store.search("org", MODEL_X, [1, 0, 0], { limit: 1 }));
    expect(error).toBeInstanceOf(WeaviateVectorStoreError);
    expect(error.message).toBe(`Weaviate search failed (collection "${collectionNameFor(MODEL_X)}", tenant "${tenantNameFor("org")}"): rpc error: deadline exceeded`);
    expect((error as WeaviateVectorStoreError).cause).toBeInstanceOf(Error);

    client.failNext = { operation: "data.insertMany", error: new Error("connection reset") };
    const insert = await rejection(store.replaceEntity("org", "conversation", "c", MODEL_X, [chunk(0, [1, 0, 0])]));
    expect(insert.message).toMatch(/^Weaviate replaceEntity \(insert chunks\) failed \(collection "ContextChunk_.*", tenant "org-org-[0-9a-f]{32}"\): connection reset$/);

    client.failNext = { operation: "collections.create", error: new Error("forbidden") };
    const create = await rejection(store.ensureReady(MODEL_Y, 3));
    expect(create.message).toBe(`Weaviate ensureReady failed (collection "${collectionNameFor(MODEL_Y)}"): forbidden`);
    // Not cached: the next attempt succeeds.
    await expect(store.ensureReady(MODEL_Y, 3)).resolves.toBeUndefined();
  });

  it("reports chunks the server rejected inside a batch", async () => {
    const { client, store } = await setup();
    await store.replaceEntity("org", "conversation", "c", MODEL_X, [chunk(0, [1, 0, 0])]);
    // A second store that never prepared the model lets a wrong-length vector through to "the server".
    const blind = new WeaviateVectorStore(client);
    const error = await rejection(blind.replaceEntity("org", "conversation", "d", MODEL_X, [chunk(0, [1, 0])]));
    expect(error).toBeInstanceOf(WeaviateVectorStoreError);
    expect(error.message).toMatch(/1 of 1 chunks were rejected: vector length 2, existing 3/);
  });
});

describe("WeaviateVectorStore with the REAL weaviate-client against an unreachable server (127.0.0.1, closed port)", () => {
  async function closedPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (!address || typeof address === "string") throw new Error("no port");
    return address.port;
  }

  // "Fast" without a stopwatch: on Jest's fake clock no timer of the client (its 2 s timeouts, a
  // retry's backoff) can fire, so an error that arrives at all came from the refused connection.
  it("fails fast with our clear error naming collection and tenant, on every operation", async () => {
    const port = await closedPort();
    useFakeClock();
    const store = new WeaviateVectorStore({ url: `http://127.0.0.1:${port}`, grpcPort: port, timeout: { init: 2, query: 2, insert: 2 } });
    try {
      const error = await rejection(store.ensureReady(MODEL_X, 3));
      expect(error).toBeInstanceOf(WeaviateVectorStoreError);
      expect(error.message).toContain(`Weaviate ensureReady failed (collection "${collectionNameFor(MODEL_X)}")`);
      expect(error.message).toContain(`could not connect to Weaviate at http://127.0.0.1:${port} (gRPC 127.0.0.1:${port})`);

      const searchError = await rejection(store.search("org", MODEL_X, [1, 0, 0], { limit: 1 }));
      expect(searchError.message).toContain(`tenant "${tenantNameFor("org")}"`);
      expect(searchError.message).toContain("could not connect to Weaviate");
    } finally {
      jest.useRealTimers();
      await store.close();
    }
  });

  it("rejects a URL that is not http(s) when constructed", () => {
    expect(() => new WeaviateVectorStore({ url: "not a url" })).toThrow(/is not a URL/);
    expect(() => new WeaviateVectorStore({ url: "grpc://127.0.0.1:50051" })).toThrow(/http or https/);
  });
});
