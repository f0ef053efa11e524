/** Picks the vector store the configuration names: Weaviate when WEAVIATE_URL is set, pgvector otherwise. */
import type { SearchConfig } from "../../config.js";
import type { Database } from "../../database/connect.js";
import { PgVectorStore } from "./pgvector.js";
import type { VectorStore } from "./vector-store.js";
import { WeaviateVectorStore } from "./weaviate.js";

export function createVectorStore(config: SearchConfig, database: Database): VectorStore {
  if (config.weaviate) {
    return new WeaviateVectorStore({
      url: config.weaviate.url,
      ...(config.weaviate.apiKey ? { apiKey: config.weaviate.apiKey } : {}),
      ...(config.weaviate.grpcPort ? { grpcPort: config.weaviate.grpcPort } : {}),
    });
  }
  return new PgVectorStore(database);
}
