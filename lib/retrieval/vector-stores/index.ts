/**
 * Picks the vector store the configuration names (VECTOR_STORE): pgvector in the database,
 * Weaviate, or Amazon S3 Vectors. Unset, it is Weaviate when WEAVIATE_URL is set and pgvector
 * otherwise. The caller owns the store: its `close()` releases whatever was opened here.
 *
 * Weaviate's and S3 Vectors' client libraries are loaded when their store is first used, not
 * when this module is: weaviate-client alone is 170 modules, seconds of every start on a busy
 * machine that runs pgvector (the default) and never needs them (issue 38).
 */
import type { SearchConfig } from "../../config.js";
import type { Database } from "../../database/connect.js";
import { PgVectorStore } from "./pgvector.js";
import type { VectorStore } from "./vector-store.js";

export function createVectorStore(config: Pick<SearchConfig, "vectorStore" | "weaviate" | "s3Vectors">, database: Database): VectorStore {
  switch (config.vectorStore) {
    case "weaviate": {
      if (!config.weaviate) throw new Error("createVectorStore: vectorStore is weaviate but no Weaviate settings were given (WEAVIATE_URL)");
      const settings = config.weaviate;
      return loadedOnFirstUse("weaviate", async () => {
        const { WeaviateVectorStore } = await import("./weaviate.js");
        return new WeaviateVectorStore({
          url: settings.url,
          ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
          ...(settings.grpcPort ? { grpcPort: settings.grpcPort } : {}),
        });
      });
    }
    case "s3vectors": {
      const settings = config.s3Vectors;
      if (!settings) throw new Error("createVectorStore: vectorStore is s3vectors but no S3 Vectors settings were given (S3_VECTORS_BUCKET)");
      // Vectors are the platform's data, not an organization's: they are signed with the
      // platform's identity (the SDK's default chain: environment, shared files, instance or
      // container role). The credential source's STS client lends that chain; closing the
      // store closes it too.
      return loadedOnFirstUse("s3vectors", async () => {
        const [{ AwsCredentialSource }, { S3VectorsStore }] = await Promise.all([import("../../aws/credentials.js"), import("../../aws/s3-vectors-store.js")]);
        const credentials = new AwsCredentialSource({ sts: { region: settings.region } });
        return new S3VectorsStore({
          vectorBucketName: settings.bucket,
          region: settings.region,
          credentials: credentials.providerFor({ mode: "platform" }, ""),
          indexPrefix: settings.indexPrefix ?? undefined,
          endpoint: settings.endpoint ?? undefined,
          onClose: () => credentials.close(),
        });
      });
    }
    case "pgvector":
      return new PgVectorStore(database);
    default:
      throw new Error(`createVectorStore: unknown vector store "${String((config as { vectorStore: unknown }).vectorStore)}" (pgvector, weaviate or s3vectors)`);
  }
}

/** A store whose implementation (and client library) is loaded by the first call that needs it; closing one never used loads nothing. */
function loadedOnFirstUse(name: string, load: () => Promise<VectorStore>): VectorStore {
  let store: Promise<VectorStore> | null = null;
  const loaded = () => (store ??= load());
  return {
    name,
    ensureReady: async (...args) => (await loaded()).ensureReady(...args),
    replaceEntity: async (...args) => (await loaded()).replaceEntity(...args),
    replaceEntities: async (...args) => (await loaded()).replaceEntities(...args),
    deleteEntity: async (...args) => (await loaded()).deleteEntity(...args),
    search: async (...args) => (await loaded()).search(...args),
    async close() {
      if (store) await (await store).close?.();
    },
  };
}
