/**
 * Picks the vector store the configuration names (VECTOR_STORE): pgvector in the database,
 * Weaviate, or Amazon S3 Vectors. Unset, it is Weaviate when WEAVIATE_URL is set and pgvector
 * otherwise. The caller owns the store: its `close()` releases whatever was opened here.
 */
import { AwsCredentialSource } from "../../aws/credentials.js";
import { S3VectorsStore } from "../../aws/s3-vectors-store.js";
import type { SearchConfig } from "../../config.js";
import type { Database } from "../../database/connect.js";
import { PgVectorStore } from "./pgvector.js";
import type { VectorStore } from "./vector-store.js";
import { WeaviateVectorStore } from "./weaviate.js";

export function createVectorStore(config: Pick<SearchConfig, "vectorStore" | "weaviate" | "s3Vectors">, database: Database): VectorStore {
  switch (config.vectorStore) {
    case "weaviate": {
      if (!config.weaviate) throw new Error("createVectorStore: vectorStore is weaviate but no Weaviate settings were given (WEAVIATE_URL)");
      return new WeaviateVectorStore({
        url: config.weaviate.url,
        ...(config.weaviate.apiKey ? { apiKey: config.weaviate.apiKey } : {}),
        ...(config.weaviate.grpcPort ? { grpcPort: config.weaviate.grpcPort } : {}),
      });
    }
    case "s3vectors": {
      const settings = config.s3Vectors;
      if (!settings) throw new Error("createVectorStore: vectorStore is s3vectors but no S3 Vectors settings were given (S3_VECTORS_BUCKET)");
      // Vectors are the platform's data, not an organization's: they are signed with the
      // platform's identity (the SDK's default chain: environment, shared files, instance or
      // container role). The credential source's STS client lends that chain; closing the
      // store closes it too.
      const credentials = new AwsCredentialSource({ sts: { region: settings.region } });
      return new S3VectorsStore({
        vectorBucketName: settings.bucket,
        region: settings.region,
        credentials: credentials.providerFor({ mode: "platform" }, ""),
        indexPrefix: settings.indexPrefix ?? undefined,
        endpoint: settings.endpoint ?? undefined,
        onClose: () => credentials.close(),
      });
    }
    case "pgvector":
      return new PgVectorStore(database);
    default:
      throw new Error(`createVectorStore: unknown vector store "${String((config as { vectorStore: unknown }).vectorStore)}" (pgvector, weaviate or s3vectors)`);
  }
}
