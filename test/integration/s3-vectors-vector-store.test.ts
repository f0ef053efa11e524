/**
 * S3 Vectors as THE vector store (VECTOR_STORE=s3vectors), end to end below GraphQL: the
 * configuration read from env, the store built by createVectorStore and signed with the
 * platform's identity from the SDK's default chain (here: the environment), the real document
 * indexer writing chunk vectors to the SigV4-checking stand-in (test/support/aws/aws-stand-in.ts),
 * and the real `documents.semantic` provider finding them there: for the owner, never for
 * another organization; deleting the document removes its vectors from the stand-in.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { indexNameFor } from "../../lib/aws/s3-vectors-store.js";
import { loadConfig, type Config } from "../../lib/config.js";
import type { Embedder } from "../../lib/retrieval/embeddings/embedder.js";
import { createEmbedder } from "../../lib/retrieval/embeddings/index.js";
import type { ProviderHit, SearchProvider } from "../../lib/retrieval/search-provider.js";
import { createVectorStore } from "../../lib/retrieval/vector-stores/index.js";
import type { VectorStore } from "../../lib/retrieval/vector-stores/vector-store.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { DocumentStore } from "../../subgraphs/knowledge-base/document-store.js";
import { documentSearch, type DocumentSearch } from "../../subgraphs/knowledge-base/search.js";
import { AwsStandIn } from "../support/aws/aws-stand-in.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { recordingLogger } from "../support/recording-logger.js";

const PLATFORM = { accessKeyId: "AKIAPLATFORMVECTORS1", secretAccessKey: "platform-vectors-secret-0123456789abcdef" };
const BUCKET = "context-search-vectors";
const REGION = "eu-west-1";
const PREFIX = "cs-test";

const tenant = (organizationId: string, userId: string, teamIds: string[] = []): TenantContext => ({ organizationId, userId, teamIds, role: "member" as const, userName: null, userEmail: null });
const ann = tenant("acme", "ann", ["platform-team"]);
const gus = tenant("globex", "gus", ["platform-team"]);

const RUNBOOK = "# Payments runbook\n\n## Restarting the ledger\n\nRestart the ledger daemon with systemctl and watch the reconciliation queue drain.\n";

let standIn: AwsStandIn;
let db: TestDatabase;
let config: Config;
let embedder: Embedder;
let vectorStore: VectorStore;
let search: DocumentSearch;
let semantic: SearchProvider;
let documents: DocumentStore;
const savedEnv = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY, token: process.env.AWS_SESSION_TOKEN };

const find = (who: TenantContext, query: string): Promise<ProviderHit[]> => semantic.search({ tenant: who, query, window: 10, signal: new AbortController().signal, timeoutMs: 30_000 });
const storedVectors = () => standIn.index(BUCKET, indexNameFor(PREFIX, embedder.model)) ?? new Map();
const sql = <T,>(text: string, ...values: unknown[]) => db.database.prisma.$queryRawUnsafe<T[]>(text, ...values);

async function upload(owner: TenantContext, fileName: string, text: string): Promise<string> {
  const contentHash = createHash("sha256").update(text).digest("hex");
  const { document } = await documents.create(owner, { fileName, mediaType: "text/markdown", format: "markdown", category: null, sizeBytes: Buffer.byteLength(text), contentHash, teamId: null });
  await documents.saveContent(owner.organizationId, contentHash, text);
  return document.id;
}

async function chunkIdsOf(documentId: string): Promise<string[]> {
  return (await sql<{ id: string }>(`SELECT id::text AS id FROM document_chunks WHERE document_id = $1::uuid ORDER BY chunk_index`, documentId)).map((row) => row.id);
}

beforeAll(async () => {
  standIn = await AwsStandIn.start();
  standIn.addAccessKey(PLATFORM.accessKeyId, PLATFORM.secretAccessKey);
  // The platform identity as a deployment gives it to the SDK's default chain.
  process.env.AWS_ACCESS_KEY_ID = PLATFORM.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = PLATFORM.secretAccessKey;
  delete process.env.AWS_SESSION_TOKEN;
  config = loadConfig({
    EMBEDDER: "hashing",
    VECTOR_STORE: "s3vectors",
    S3_VECTORS_BUCKET: BUCKET,
    S3_VECTORS_REGION: REGION,
    S3_VECTORS_INDEX_PREFIX: PREFIX,
    AWS_ENDPOINT_URL_S3VECTORS: standIn.endpoint,
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
  });
  db = await createTestDatabase();
  documents = new DocumentStore(db.database.prisma);
  embedder = createEmbedder(config.search, db.database);
  vectorStore = createVectorStore(config.search, db.database);
  await vectorStore.ensureReady(embedder.model, embedder.dimensions);
  search = documentSearch({ database: db.database, embedder, vectorStore, logger: recordingLogger() });
  semantic = search.providers.find((provider) => provider.name === "documents.semantic")!;
});

afterAll(async () => {
  await search?.indexer.stop();
  await vectorStore?.close?.();
  await db?.dispose();
  await standIn?.close();
  for (const [name, value] of [["AWS_ACCESS_KEY_ID", savedEnv.id], ["AWS_SECRET_ACCESS_KEY", savedEnv.secret], ["AWS_SESSION_TOKEN", savedEnv.token]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe("VECTOR_STORE=s3vectors", () => {
  let runbook: string;
  let chunkIds: string[];

  it("is the store createVectorStore builds, with a cosine index of the model's dimensions in the configured bucket", () => {
    expect(vectorStore.name).toBe("s3vectors");
    expect(semantic.description).toContain("s3vectors");
    expect(standIn.index(BUCKET, indexNameFor(PREFIX, embedder.model))).toBeDefined();
    const created = standIn.requests.find((request) => request.operation === "CreateIndex")!;
    expect(created).toMatchObject({ service: "s3vectors", region: REGION, accessKeyId: PLATFORM.accessKeyId, body: { vectorBucketName: BUCKET, dimension: embedder.dimensions, distanceMetric: "cosine" } });
  });

  it("indexes an uploaded document's chunks into S3 Vectors (and not into pgvector), signed with the platform's key", async () => {
    runbook = await upload(ann, "runbook.md", RUNBOOK);
    expect(await search.indexer.drain()).toBe(1);
    chunkIds = await chunkIdsOf(runbook);
    expect(chunkIds.length).toBeGreaterThan(0);
    const stored = [...storedVectors().values()];
    expect(stored.map((vector) => vector.metadata.entityId).sort()).toEqual([...chunkIds].sort());
    expect(stored.every((vector) => vector.metadata.organizationId === "acme" && vector.metadata.entityType === "document_chunk" && vector.data.length === embedder.dimensions)).toBe(true);
    const puts = standIn.requests.filter((request) => request.operation === "PutVectors");
    expect(puts.length).toBeGreaterThan(0);
    expect(puts.every((request) => request.accessKeyId === PLATFORM.accessKeyId && request.region === REGION && request.sessionToken === undefined)).toBe(true);
    const [row] = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM embedding_chunks`);
    expect(row!.n).toBe(0);
  });

  it("documents.semantic finds the chunk through QueryVectors, for its organization only", async () => {
    standIn.requests.length = 0;
    const hits = await find(ann, "restart the ledger daemon");
    const [ledger] = await sql<{ id: string }>(`SELECT id::text AS id FROM document_chunks WHERE document_id = $1::uuid AND text LIKE '%Restart the ledger daemon%' ORDER BY chunk_index LIMIT 1`, runbook);
    expect(hits.length).toBeGreaterThan(0);
    expect(hits[0]!.ref).toEqual({ typename: "DocumentChunk", id: ledger!.id });
    const query = standIn.requests.find((request) => request.operation === "QueryVectors")!;
    expect(query).toMatchObject({ accessKeyId: PLATFORM.accessKeyId, body: { vectorBucketName: BUCKET } });
    expect(JSON.stringify(query.body.filter)).toContain('"organizationId":{"$eq":"acme"}');

    expect(await find(gus, "restart the ledger daemon")).toEqual([]);
    // Not because the stand-in is empty for globex by accident: the query was asked, filtered to globex.
    const foreign = standIn.requests.filter((request) => request.operation === "QueryVectors").at(-1)!;
    expect(JSON.stringify(foreign.body.filter)).toContain('"organizationId":{"$eq":"globex"}');
  });

  it("deleting the document removes its vectors from S3 Vectors", async () => {
    await documents.delete(ann, runbook);
    expect(await find(ann, "restart the ledger daemon")).toEqual([]);
    // The vectors go off the request path (the indexer), so drain it; bounded, so a missing cleanup fails here.
    await search.indexer.drain();
    expect([...storedVectors().values()].filter((vector) => chunkIds.includes(vector.metadata.entityId as string))).toEqual([]);
    expect(await sql(`SELECT 1 FROM vector_deletion_jobs`)).toEqual([]);
    expect(standIn.requests.filter((request) => request.operation === "DeleteVectors").every((request) => request.accessKeyId === PLATFORM.accessKeyId)).toBe(true);
  });
});
