/**
 * VECTOR_STORE and the S3 Vectors settings: today's default (Weaviate when WEAVIATE_URL is set,
 * pgvector otherwise) is kept, and each wrong or missing setting stops start-up with a
 * ConfigError naming the variable to fix.
 */
import { describe, expect, it } from "@jest/globals";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { createVectorStore } from "../../lib/retrieval/vector-stores/index.js";
import type { Database } from "../../lib/database/connect.js";

const S3 = { VECTOR_STORE: "s3vectors", S3_VECTORS_BUCKET: "context-vectors" };

describe("VECTOR_STORE", () => {
  it("defaults to pgvector, or to Weaviate when WEAVIATE_URL is set", () => {
    expect(loadConfig({}).search).toMatchObject({ vectorStore: "pgvector", weaviate: null, s3Vectors: null });
    expect(loadConfig({ WEAVIATE_URL: "http://weaviate:8080" }).search.vectorStore).toBe("weaviate");
    // Naming the store wins over the presence of WEAVIATE_URL.
    expect(loadConfig({ WEAVIATE_URL: "http://weaviate:8080", VECTOR_STORE: "pgvector" }).search.vectorStore).toBe("pgvector");
  });

  it("reads the S3 Vectors bucket, region (S3_VECTORS_REGION, else AWS_REGION, else us-east-1), prefix and endpoint", () => {
    expect(loadConfig(S3).search.s3Vectors).toEqual({ bucket: "context-vectors", region: "us-east-1", indexPrefix: null, endpoint: null });
    expect(loadConfig({ ...S3, AWS_REGION: "eu-central-1" }).search.s3Vectors!.region).toBe("eu-central-1");
    const full = loadConfig({ ...S3, AWS_REGION: "eu-central-1", S3_VECTORS_REGION: "us-west-2", S3_VECTORS_INDEX_PREFIX: "prod.cs", AWS_ENDPOINT_URL_S3VECTORS: "http://127.0.0.1:9000" });
    expect(full.search).toMatchObject({ vectorStore: "s3vectors", s3Vectors: { bucket: "context-vectors", region: "us-west-2", indexPrefix: "prod.cs", endpoint: "http://127.0.0.1:9000" } });
  });

  it("leaves the S3 Vectors settings alone unless S3 Vectors is chosen", () => {
    expect(loadConfig({ S3_VECTORS_BUCKET: "Not A Bucket!", S3_VECTORS_INDEX_PREFIX: "??" }).search).toMatchObject({ vectorStore: "pgvector", s3Vectors: null });
  });

  it.each([
    [{ VECTOR_STORE: "pinecone" }, "VECTOR_STORE", /must be one of pgvector, weaviate, s3vectors, got "pinecone"/],
    [{ VECTOR_STORE: "weaviate" }, "VECTOR_STORE", /WEAVIATE_URL is not set/],
    [{ VECTOR_STORE: "s3vectors" }, "S3_VECTORS_BUCKET", /is required when VECTOR_STORE=s3vectors/],
    [{ ...S3, S3_VECTORS_BUCKET: "Context_Vectors" }, "S3_VECTORS_BUCKET", /lower-case letters/],
    [{ ...S3, S3_VECTORS_BUCKET: "ab" }, "S3_VECTORS_BUCKET", /3-63/],
    [{ ...S3, S3_VECTORS_REGION: "Frankfurt" }, "S3_VECTORS_REGION", /AWS region such as us-east-1/],
    [{ ...S3, AWS_REGION: "moon-1" }, "AWS_REGION", /AWS region/],
    [{ ...S3, S3_VECTORS_INDEX_PREFIX: "Prefix" }, "S3_VECTORS_INDEX_PREFIX", /2-21 lower-case/],
    [{ ...S3, S3_VECTORS_INDEX_PREFIX: "x".repeat(22) }, "S3_VECTORS_INDEX_PREFIX", /2-21 lower-case/],
    [{ ...S3, AWS_ENDPOINT_URL_S3VECTORS: "127.0.0.1:9000" }, "AWS_ENDPOINT_URL_S3VECTORS", /http:\/\/ or https:\/\/ URL/],
  ])("%j is a ConfigError naming %s", (env, variable, problem) => {
    let failure: unknown;
    try {
      loadConfig(env);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as Error).message).toMatch(new RegExp(`^Invalid configuration: ${variable} `));
    expect((failure as Error).message).toMatch(problem);
  });
});

describe("createVectorStore", () => {
  // None of these stores touches the database when built; pgvector's only holds it.
  const database = {} as Database;

  it("builds the store VECTOR_STORE names", async () => {
    const stores = [
      createVectorStore(loadConfig({}).search, database),
      createVectorStore(loadConfig({ WEAVIATE_URL: "http://127.0.0.1:1" }).search, database),
      createVectorStore(loadConfig({ ...S3, AWS_ENDPOINT_URL_S3VECTORS: "http://127.0.0.1:1" }).search, database),
    ];
    expect(stores.map((store) => store.name)).toEqual(["pgvector", "weaviate", "s3vectors"]);
    for (const store of stores) await store.close?.();
  });
});
