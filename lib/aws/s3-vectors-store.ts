/**
 * A VectorStore over Amazon S3 Vectors (@aws-sdk/client-s3vectors), beside pgvector and Weaviate.
 *
 * Layout: one vector index per embedding model in one bucket (an index has one fixed dimension
 * and distance metric, cosine here), named `<prefix>-<model slug>-<hash>`. Organizations share
 * an index; tenancy rests on three locks:
 * 1. every query carries the filter `organizationId $eq <caller>`, which S3 Vectors applies
 *    inside the search, so another organization's vectors are never candidates;
 * 2. every key starts with a hash of the organization (`o<32 hex>/<type>/<entity id>/<chunk>`),
 *    so writes and deletes, which address vectors by key, cannot touch another organization's;
 * 3. every returned match's metadata is checked against the caller before it becomes a result.
 * An index per organization would isolate physically, but S3 Vectors caps indexes per bucket
 * (10,000) and each needs creating before an organization's first write; a filter costs nothing.
 *
 * Deleting by entity needs the keys (S3 Vectors has no delete-by-filter and no key-prefix
 * listing). Every chunk's metadata records `chunkCount`, and chunk 0 is written last, so chunk 0
 * always tells how many keys an entity has: replaceEntity and deleteEntity read it with one
 * GetVectors and delete exactly those keys.
 *
 * PutVectors takes at most 100 vectors per call (S3 Vectors' limit) and DeleteVectors/GetVectors
 * at most 100 keys here; QueryVectors' topK at most 100.
 */
import { createHash } from "node:crypto";
import {
  CreateIndexCommand,
  DeleteVectorsCommand,
  GetIndexCommand,
  GetVectorsCommand,
  ListIndexesCommand,
  PutVectorsCommand,
  QueryVectorsCommand,
  S3VectorsClient,
} from "@aws-sdk/client-s3vectors";
import type { PutInputVector } from "@aws-sdk/client-s3vectors";
import type { AwsCredentialIdentityProvider } from "@smithy/types";
import { replaceEachEntity, type EntityType, type EntityVectors, type VectorChunk, type VectorMatch, type VectorSearchOptions, type VectorStore, type WriteFence } from "../retrieval/vector-stores/vector-store.js";
import { AwsBackendError, toAwsBackendError } from "./errors.js";

export const PUT_BATCH_SIZE = 100;
const KEY_BATCH_SIZE = 100;
const MAX_TOP_K = 100;
/** Chunks fetched per wanted entity (several chunks can belong to one entity). */
const CHUNKS_PER_ENTITY = 4;
const ENTITY_TYPES: readonly EntityType[] = ["conversation", "document_chunk"];

export interface S3VectorsStoreOptions {
  vectorBucketName: string;
  region: string;
  credentials: AwsCredentialIdentityProvider;
  /** Index names start with this (S3 Vectors: 3-63 lower-case letters, digits, "-" and "."). Default "context-search". */
  indexPrefix?: string | undefined;
  /** For stand-ins and VPC endpoints. */
  endpoint?: string | undefined;
  /** SDK attempts per call (it retries throttling with backoff). Default 3, the SDK's. */
  maxAttempts?: number | undefined;
  /** Runs after close() has released the client: whatever the creator opened for this store (its credential source). */
  onClose?: (() => void | Promise<void>) | undefined;
}

interface ChunkMetadata {
  organizationId: string;
  entityType: EntityType;
  entityId: string;
  chunkIndex: number;
  chunkCount: number;
  contentHash: string;
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** The index that holds a model's vectors: deterministic, so every process agrees. */
export function indexNameFor(prefix: string, model: string): string {
  const slug = model.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 63 - prefix.length - 2 - 16).replace(/-+$/, "");
  return `${prefix}-${slug ? `${slug}-` : ""}${sha256Hex(model).slice(0, 16)}`;
}

/** One chunk's key. JSON-free but unambiguous: the entity id is URI-encoded, so "/" cannot appear in it. */
export function vectorKeyFor(organizationId: string, entityType: EntityType, entityId: string, chunkIndex: number): string {
  return `o${sha256Hex(organizationId).slice(0, 32)}/${entityType}/${encodeURIComponent(entityId)}/${chunkIndex}`;
}

export class S3VectorsStore implements VectorStore {
  readonly name = "s3vectors";
  private readonly client: S3VectorsClient;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly indexes = new Map<string, { dimensions: number; ready: Promise<void> }>();
  private discovered: Promise<string[]> | undefined;
  private readonly onClose: (() => void | Promise<void>) | undefined;

  constructor(options: S3VectorsStoreOptions) {
    this.onClose = options.onClose;
    this.bucket = options.vectorBucketName;
    this.prefix = options.indexPrefix ?? "context-search";
    if (!/^[a-z0-9][a-z0-9.-]{1,20}$/.test(this.prefix)) throw new RangeError(`indexPrefix "${this.prefix}" must be 2-21 lower-case letters, digits, "-" or "."`);
    this.client = new S3VectorsClient({
      region: options.region,
      credentials: options.credentials,
      maxAttempts: options.maxAttempts ?? 3,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    });
  }

  async ensureReady(model: string, dimensions: number): Promise<void> {
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 4096) {
      throw new RangeError(`S3 Vectors indexes hold 1 to 4096 dimensions; model ${model} has ${dimensions}`);
    }
    const indexName = indexNameFor(this.prefix, model);
    const known = this.indexes.get(indexName);
    if (known) {
      if (known.dimensions !== dimensions) throw new RangeError(`model ${model} was prepared with ${known.dimensions} dimensions, now asked for ${dimensions}`);
      return known.ready;
    }
    const ready = this.prepareIndex(indexName, dimensions).catch((error: unknown) => {
      this.indexes.delete(indexName);
      throw error;
    });
    this.indexes.set(indexName, { dimensions, ready });
    return ready;
  }

  async replaceEntity(organizationId: string, entityType: EntityType, entityId: string, model: string, chunks: VectorChunk[], fence?: WriteFence): Promise<void> {
    await fence?.(null);
    const indexName = indexNameFor(this.prefix, model);
    checkChunks(chunks, this.indexes.get(indexName)?.dimensions);
    const previousCount = await this.chunkCount(indexName, organizationId, entityType, entityId);
    const chunkCount = chunks.length;
    const vectors: PutInputVector[] = [...chunks]
      .sort((a, b) => a.chunkIndex - b.chunkIndex)
      .map((chunk) => ({
        key: vectorKeyFor(organizationId, entityType, entityId, chunk.chunkIndex),
        data: { float32: chunk.vector },
        metadata: { organizationId, entityType, entityId, chunkIndex: chunk.chunkIndex, chunkCount, contentHash: chunk.contentHash } satisfies ChunkMetadata,
      }));
    // Chunk 0 goes last: until every other chunk is written it keeps the old count, so a
    // failure halfway still leaves a record of every key that may exist.
    const first = vectors.findIndex((vector) => vector.key!.endsWith("/0"));
    if (first >= 0) vectors.push(...vectors.splice(first, 1));
    const stale = [];
    for (let index = chunkCount; index < previousCount; index += 1) stale.push(vectorKeyFor(organizationId, entityType, entityId, index));
    if (chunkCount === 0) {
      // Nothing to write: delete everything, chunk 0 (the record) last.
      await this.deleteKeys(indexName, stale.reverse());
      return;
    }
    for (let start = 0; start < vectors.length; start += PUT_BATCH_SIZE) {
      const batch = vectors.slice(start, start + PUT_BATCH_SIZE);
      await this.call(`writing ${batch.length} vectors to index ${indexName}`, () =>
        this.client.send(new PutVectorsCommand({ vectorBucketName: this.bucket, indexName, vectors: batch })),
      );
    }
    await this.deleteKeys(indexName, stale);
  }

  /** One replaceEntity per entity: each keeps its own chunk-count record (see above). */
  replaceEntities(organizationId: string, entityType: EntityType, model: string, entities: readonly EntityVectors[], fence?: WriteFence): Promise<void> {
    return replaceEachEntity(this, organizationId, entityType, model, entities, fence);
  }

  async deleteEntity(organizationId: string, entityType: EntityType, entityId: string): Promise<void> {
    const names = new Set([...this.indexes.keys(), ...(await this.discoverIndexes())]);
    await Promise.all(
      [...names].map(async (indexName) => {
        const count = await this.chunkCount(indexName, organizationId, entityType, entityId);
        const keys = [];
        // Highest first, chunk 0 (the record of the count) last.
        for (let index = count - 1; index >= 0; index -= 1) keys.push(vectorKeyFor(organizationId, entityType, entityId, index));
        await this.deleteKeys(indexName, keys);
      }),
    );
  }

  async search(organizationId: string, model: string, vector: number[], options: VectorSearchOptions): Promise<VectorMatch[]> {
    const indexName = indexNameFor(this.prefix, model);
    const dimensions = this.indexes.get(indexName)?.dimensions ?? vector.length;
    if (vector.length !== dimensions) throw new RangeError(`query vector has ${vector.length} dimensions; model ${model} has ${dimensions}`);
    const entityTypes = options.entityTypes ?? [...ENTITY_TYPES];
    const limit = Math.max(1, Math.floor(options.limit));
    const output = await this.call(`querying index ${indexName}`, () =>
      this.client.send(
        new QueryVectorsCommand({
          vectorBucketName: this.bucket,
          indexName,
          topK: Math.min(MAX_TOP_K, limit * CHUNKS_PER_ENTITY),
          queryVector: { float32: vector },
          filter: { $and: [{ organizationId: { $eq: organizationId } }, { entityType: { $in: entityTypes } }] },
          returnMetadata: true,
          returnDistance: true,
        }),
      ),
    );
    const best = new Map<string, VectorMatch>();
    for (const match of output.vectors ?? []) {
      const metadata = (match.metadata ?? {}) as Partial<ChunkMetadata>;
      // The filter already guarantees the owner; a mismatch would be a bug, never a result.
      if (metadata.organizationId !== organizationId || typeof match.distance !== "number") continue;
      if (!entityTypes.includes(metadata.entityType as EntityType) || typeof metadata.entityId !== "string" || typeof metadata.chunkIndex !== "number") continue;
      const candidate: VectorMatch = { entityType: metadata.entityType!, entityId: metadata.entityId, chunkIndex: metadata.chunkIndex, score: 1 - match.distance };
      const key = JSON.stringify([candidate.entityType, candidate.entityId]);
      const previous = best.get(key);
      if (!previous || candidate.score > previous.score || (candidate.score === previous.score && candidate.chunkIndex < previous.chunkIndex)) best.set(key, candidate);
    }
    return [...best.values()]
      .sort((a, b) => b.score - a.score || a.entityType.localeCompare(b.entityType) || a.entityId.localeCompare(b.entityId))
      .slice(0, limit);
  }

  async close(): Promise<void> {
    this.client.destroy();
    await this.onClose?.();
  }

  // -------------------------------------------------------------------------------------------

  private async prepareIndex(indexName: string, dimensions: number): Promise<void> {
    try {
      const { index } = await this.client.send(new GetIndexCommand({ vectorBucketName: this.bucket, indexName }));
      if (index?.dimension !== dimensions) throw new AwsBackendError("BAD_REQUEST", `S3 Vectors index ${indexName} holds ${index?.dimension} dimensions, the model ${dimensions}`);
      if (index.distanceMetric !== "cosine") throw new AwsBackendError("BAD_REQUEST", `S3 Vectors index ${indexName} uses ${index.distanceMetric} distance, not cosine`);
      return;
    } catch (error) {
      if ((error as Error).name !== "NotFoundException") throw toAwsBackendError(error, `checking S3 Vectors index ${indexName}`, false);
    }
    await this.call(`creating index ${indexName}`, async () => {
      try {
        await this.client.send(
          new CreateIndexCommand({
            vectorBucketName: this.bucket,
            indexName,
            dataType: "float32",
            dimension: dimensions,
            distanceMetric: "cosine",
            // Everything but the content hash is filterable: the filters name organization, type and entity.
            metadataConfiguration: { nonFilterableMetadataKeys: ["contentHash"] },
          }),
        );
      } catch (error) {
        // Another process created it between our check and our create.
        if ((error as Error).name !== "ConflictException") throw error;
      }
    });
  }

  /** How many chunks an entity has in an index: chunk 0's record, 0 when there is none. */
  private async chunkCount(indexName: string, organizationId: string, entityType: EntityType, entityId: string): Promise<number> {
    const key = vectorKeyFor(organizationId, entityType, entityId, 0);
    const output = await this.call(`reading vector ${key} of index ${indexName}`, async () => {
      try {
        return await this.client.send(new GetVectorsCommand({ vectorBucketName: this.bucket, indexName, keys: [key], returnMetadata: true }));
      } catch (error) {
        // No index yet means no vectors yet.
        if ((error as Error).name === "NotFoundException") return { vectors: [] };
        throw error;
      }
    });
    const metadata = output.vectors?.[0]?.metadata as Partial<ChunkMetadata> | undefined;
    return metadata?.organizationId === organizationId && typeof metadata.chunkCount === "number" ? metadata.chunkCount : 0;
  }

  private async deleteKeys(indexName: string, keys: string[]): Promise<void> {
    for (let start = 0; start < keys.length; start += KEY_BATCH_SIZE) {
      const batch = keys.slice(start, start + KEY_BATCH_SIZE);
      await this.call(`deleting ${batch.length} vectors from index ${indexName}`, () =>
        this.client.send(new DeleteVectorsCommand({ vectorBucketName: this.bucket, indexName, keys: batch })),
      );
    }
  }

  /** This store's indexes that this process never prepared (another model, another process). Once per store. */
  private discoverIndexes(): Promise<string[]> {
    if (!this.discovered) {
      this.discovered = (async () => {
        const names: string[] = [];
        let nextToken: string | undefined;
        // Bounded: 10,000 indexes per bucket at 500 a page.
        for (let page = 0; page < 20; page += 1) {
          const output = await this.call("listing indexes", () =>
            this.client.send(new ListIndexesCommand({ vectorBucketName: this.bucket, prefix: `${this.prefix}-`, ...(nextToken ? { nextToken } : {}) })),
          );
          for (const index of output.indexes ?? []) if (index.indexName) names.push(index.indexName);
          nextToken = output.nextToken;
          if (!nextToken) break;
        }
        return names;
      })().catch((error: unknown) => {
        this.discovered = undefined;
        throw error;
      });
    }
    return this.discovered;
  }

  private async call<T>(what: string, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      throw toAwsBackendError(error, `S3 Vectors bucket ${this.bucket}, ${what}`, false);
    }
  }
}

function checkChunks(chunks: VectorChunk[], dimensions: number | undefined): void {
  const seen = new Set<number>();
  for (const chunk of chunks) {
    if (!Number.isInteger(chunk.chunkIndex) || chunk.chunkIndex < 0) throw new RangeError(`chunkIndex must be a non-negative integer, got ${chunk.chunkIndex}`);
    if (seen.has(chunk.chunkIndex)) throw new RangeError(`chunkIndex ${chunk.chunkIndex} appears twice`);
    seen.add(chunk.chunkIndex);
    if (dimensions !== undefined && chunk.vector.length !== dimensions) throw new RangeError(`the index holds ${dimensions} dimensions, chunk ${chunk.chunkIndex} has ${chunk.vector.length}`);
  }
  // The count in chunk 0 covers keys 0..n-1: the chunks must be exactly those.
  for (let index = 0; index < chunks.length; index += 1) {
    if (!seen.has(index)) throw new RangeError(`chunks must be numbered 0 to ${chunks.length - 1}; ${index} is missing`);
  }
}
