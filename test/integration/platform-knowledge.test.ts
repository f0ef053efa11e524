/**
 * Platform LOCAL knowledge bases against a real database and the real knowledge-base subgraph
 * over HTTP: the operator's command (scripts/platform-kb.ts) creates one and uploads a file,
 * the indexer makes it READY, and then two organizations (whose own documents share words with
 * it) each find the platform's passages through `queryKnowledgeBase`, `queryPlatformKnowledge`
 * and the unified search's `knowledge-bases` provider, and neither ever sees the other's.
 * Row-level security itself: a tenant scope reads platform rows and cannot insert, update or
 * delete one. Every tenant mutation aimed at a platform knowledge base or document is FORBIDDEN.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";
import { withTenantScope } from "../../lib/database/tenant-scope.js";
import { startSubgraph, type RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { PgVectorStore } from "../../lib/retrieval/vector-stores/pgvector.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { platformKnowledgeCommand } from "../../scripts/platform-kb.js";
import { DocumentIngestion, knowledgeBaseSubgraph, PlatformKnowledge } from "../../subgraphs/knowledge-base/index.js";
import { PassageStore } from "../../subgraphs/knowledge-base/passage-store.js";
import { PLATFORM_TENANT } from "../../subgraphs/knowledge-base/document-passages.js";
import { DocumentsKeywordProvider } from "../../subgraphs/knowledge-base/search/keyword-provider.js";
import { documentSearch, knowledgeBaseSearch } from "../../subgraphs/knowledge-base/search.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { graphql } from "../support/graphql.js";
import { recordingLogger } from "../support/recording-logger.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

const tenant = (organizationId: string, userId: string, role: "admin" | "member" = "admin"): TenantContext => ({ organizationId, userId, teamIds: [], role, userName: null, userEmail: null });
const ada = tenant("acme", "ada");
const gus = tenant("globex", "gus");

const PLATFORM_GUIDE = "# Refund policy\n\nRefunds for annual plans are prorated to the day of cancellation and paid within ten days.\n";
const ACME_NOTE = "Acme internal: refunds for annual plans at acme need the finance lead's signature.\n";
const GLOBEX_NOTE = "Globex internal: refunds for annual plans at globex go through the merger escrow.\n";

let db: TestDatabase;
let subgraph: RunningSubgraph;
let platform: PlatformKnowledge;
let platformKbId: string;
let platformDocumentId: string;
const tokens: Record<string, string> = {};
const documents: Record<string, string> = {};
const embedder = new FeatureHashingEmbedder();
const logger = recordingLogger();
const output: string[] = [];
let workdir: string;

const gql = (who: string, query: string, variables: Record<string, unknown> = {}) => graphql(subgraph.url, query, variables, { token: tokens[who]! });
const operator = (...argv: string[]) => platformKnowledgeCommand(platform, argv, (line) => output.push(line));

beforeAll(async () => {
  db = await createTestDatabase();
  workdir = await fs.mkdtemp(path.join(os.tmpdir(), "platform-kb-"));
  platform = new PlatformKnowledge(db.database.prisma, 1024 * 1024);
  const config = loadConfig({ SEARCH_INDEXER: "false", EMBEDDER: "hashing" });
  subgraph = await startSubgraph(knowledgeBaseSubgraph({ database: db.database, config, logger, embedder }), { host: "127.0.0.1", port: 0, auth: TEST_AUTH, production: false, logger });
  tokens.ada = await tokenFor("acme", "ada", [], "admin");
  tokens.gus = await tokenFor("globex", "gus", [], "admin");

  // The operator's command: a platform knowledge base, and a file in it.
  await operator("add", "--name", "Platform billing guides", "--category", "billing");
  platformKbId = output.at(-1)!.split(/\s+/)[0]!;
  const file = path.join(workdir, "refunds.md");
  await fs.writeFile(file, PLATFORM_GUIDE);
  await operator("upload", "--kb", platformKbId, file);
  platformDocumentId = output.at(-1)!.split(/\s+/)[0]!;

  // Each organization's own document, sharing the platform's words.
  const ingestion = new DocumentIngestion(db.database.prisma, 1024 * 1024);
  for (const [who, text] of [[ada, ACME_NOTE], [gus, GLOBEX_NOTE]] as const) {
    const document = await ingestion.upload(who, { fileName: `${who.organizationId}-refunds.txt`, contentBase64: Buffer.from(text).toString("base64") });
    documents[who.organizationId] = document.id;
  }
  const search = documentSearch({ database: db.database, embedder, vectorStore: new PgVectorStore(db.database), logger });
  await search.indexer.drain();
  await search.close?.();
});

afterAll(async () => {
  await subgraph?.stop();
  await db?.dispose();
  await closeWorkerPools();
  if (workdir) await fs.rm(workdir, { recursive: true, force: true });
});

describe("the operator's command", () => {
  it("lists the platform knowledge base with its document, indexed", async () => {
    output.length = 0;
    await operator("list");
    expect(output).toEqual([`${platformKbId}  Platform billing guides (LOCAL, 1 document)`, `  ${platformDocumentId}  refunds.md  READY`]);
  });

  it("refuses an upload to a knowledge base that is not the platform's, and names what it needs", async () => {
    await expect(operator("upload", "--kb", platformKbId)).rejects.toThrow(/upload needs --kb <id> and at least one file/);
    await expect(operator("frobnicate")).rejects.toThrow(/^usage: npm run platform-kb/);
    const acmeBase = await gql("ada", `mutation { createKnowledgeBase(input: { name: "Acme handbook", scope: COMPANY, backend: LOCAL }) { id } }`);
    const file = path.join(workdir, "other.md");
    await fs.writeFile(file, "# Other\n\nNot for acme's knowledge base.\n");
    await expect(operator("upload", "--kb", acmeBase.data!.createKnowledgeBase.id, file)).rejects.toMatchObject({ extensions: { code: "NOT_FOUND" } });
  });
});

describe("row-level security", () => {
  it("lets every tenant scope read the platform's documents and chunks, and neither organization the other's", async () => {
    for (const [organization, other] of [["acme", "globex"], ["globex", "acme"]] as const) {
      const rows = await withTenantScope(db.database.prisma, organization, (tx) =>
        tx.$queryRawUnsafe<{ organization_id: string; chunks: number }[]>(
          `SELECT d.organization_id, count(c.id)::int AS chunks FROM documents d LEFT JOIN document_chunks c ON c.organization_id = d.organization_id AND c.document_id = d.id GROUP BY 1 ORDER BY 1`,
        ),
      );
      expect(rows.map((row) => row.organization_id)).toEqual([organization, "__platform__"].sort());
      expect(rows.every((row) => row.chunks > 0)).toBe(true);
      expect(rows.map((row) => row.organization_id)).not.toContain(other);
    }
  });

  it("refuses a tenant scope every write of a platform row", async () => {
    const inScope = (sql: string) => withTenantScope(db.database.prisma, "acme", (tx) => tx.$executeRawUnsafe(sql));
    await expect(
      inScope(`INSERT INTO documents (id, organization_id, owner_id, file_name, media_type, format, size_bytes, content_hash, knowledge_base_id)
               VALUES (gen_random_uuid(), '__platform__', 'ada', 'planted.txt', 'text/plain', 'text', 1, repeat('a', 64), '${platformKbId}')`),
    ).rejects.toThrow(/row-level security/);
    expect(await inScope(`UPDATE documents SET file_name = 'renamed.md' WHERE organization_id = '__platform__'`)).toBe(0);
    expect(await inScope(`UPDATE document_chunks SET text = 'defaced' WHERE organization_id = '__platform__'`)).toBe(0);
    expect(await inScope(`DELETE FROM document_chunks WHERE organization_id = '__platform__'`)).toBe(0);
    expect(await inScope(`DELETE FROM documents WHERE organization_id = '__platform__'`)).toBe(0);
    expect(await inScope(`UPDATE knowledge_bases SET name = 'renamed' WHERE organization_id = '__platform__'`)).toBe(0);
    const [still] = await db.database.prisma.$queryRawUnsafe<{ file_name: string; chunks: number }[]>(
      `SELECT d.file_name, (SELECT count(*)::int FROM document_chunks c WHERE c.organization_id = d.organization_id AND c.document_id = d.id) AS chunks FROM documents d WHERE d.organization_id = '__platform__'`,
    );
    expect(still).toEqual({ file_name: "refunds.md", chunks: expect.any(Number) });
    expect(still!.chunks).toBeGreaterThan(0);
  });
});

describe("reading a platform LOCAL knowledge base", () => {
  const QUERY = `query($id: ID) { queryKnowledgeBase(input: { query: "refunds for annual plans", knowledgeBaseId: $id, limit: 10 }) {
    passages { text source { documentId fileName } knowledgeBase { id scope } }
    sources { provider status error returned }
  } }`;

  it("answers queryKnowledgeBase for every organization with the platform's passages only", async () => {
    for (const who of ["ada", "gus"]) {
      const answer = await gql(who, QUERY, { id: platformKbId });
      expect(answer.errors).toBeUndefined();
      const { passages, sources } = answer.data!.queryKnowledgeBase;
      expect(sources).toEqual([{ provider: "documents", status: "OK", error: null, returned: 1 }]);
      expect(passages).toEqual([{ text: expect.stringContaining("prorated to the day of cancellation"), source: { documentId: platformDocumentId, fileName: "refunds.md" }, knowledgeBase: { id: platformKbId, scope: "PLATFORM" } }]);
    }
  });

  it("keeps each organization's own documents to itself, beside the platform's", async () => {
    for (const [who, own, other] of [["ada", "acme", "globex"], ["gus", "globex", "acme"]] as const) {
      const answer = await gql(who, QUERY, { id: null });
      const ids = answer.data!.queryKnowledgeBase.passages.map((passage: Record<string, any>) => passage.source.documentId);
      expect(ids).toEqual([documents[own]]);
      expect(ids).not.toContain(documents[other]);
    }
  });

  it("lists the platform document under the knowledge base and loads it by id for every organization", async () => {
    for (const who of ["ada", "gus"]) {
      const answer = await gql(who, `query($kb: ID!, $doc: ID!) {
        knowledgeBase(id: $kb) { status documents { nodes { id fileName status } } }
        document(id: $doc) { fileName knowledgeBase { id } chunks { nodes { text } } }
        documents { nodes { id } }
      }`, { kb: platformKbId, doc: platformDocumentId });
      expect(answer.errors).toBeUndefined();
      expect(answer.data!.knowledgeBase).toEqual({ status: "ACTIVE", documents: { nodes: [{ id: platformDocumentId, fileName: "refunds.md", status: "READY" }] } });
      expect(answer.data!.document.fileName).toBe("refunds.md");
      expect(answer.data!.document.chunks.nodes[0].text).toContain("prorated");
      // The caller's own documents listing is theirs alone.
      expect(answer.data!.documents.nodes.map((node: { id: string }) => node.id)).toEqual([documents[who === "ada" ? "acme" : "globex"]]);
    }
  });

  it("answers queryPlatformKnowledge through a capability mapped to it", async () => {
    expect((await gql("ada", `mutation($id: ID!) { mapCapability(capability: "billing", knowledgeBaseId: $id) { priority } }`, { id: platformKbId })).errors).toBeUndefined();
    const answer = await gql("ada", `{ queryPlatformKnowledge(capability: "billing", query: "annual plan refunds") { passages { source { documentId } } sources { status } } }`);
    expect(answer.data!.queryPlatformKnowledge).toEqual({ passages: [{ source: { documentId: platformDocumentId } }], sources: [{ status: "OK" }] });
  });

  it("is asked by the unified search's knowledge-bases provider, its passages stored per organization", async () => {
    const config = loadConfig({ SEARCH_INDEXER: "false" });
    const domain = knowledgeBaseSearch({ database: db.database, config, embedder, vectorStore: new PgVectorStore(db.database), logger, provider: { listTtlMs: 0 } });
    const passages = new PassageStore(db.database.prisma);
    try {
      const found: Record<string, string[]> = {};
      for (const who of [ada, gus]) {
        const hits = await domain.providers[0]!.search({ tenant: who, query: "refunds for annual plans", window: 10, signal: new AbortController().signal });
        expect(hits.map((hit) => [hit.ref.typename, hit.attributes?.knowledgeBaseId])).toEqual([["KnowledgeBasePassage", platformKbId]]);
        const [stored] = await passages.findByIds(who, hits.map((hit) => hit.ref.id));
        expect(stored!.text).toContain("prorated to the day of cancellation");
        found[who.organizationId] = hits.map((hit) => hit.ref.id);
      }
      // The same platform passage, kept apart per organization: neither loads the other's row.
      expect(found.acme).not.toEqual(found.globex);
      expect(await passages.findByIds(gus, found.acme!)).toEqual([]);

      // Ranked by BM25 alone (this embedder's measured default alpha is 1, and alpha 1 given),
      // a passage keeps the very score documents.keyword gives its chunk as the platform ranks
      // it, and says so, so the search weighs it on the keyword providers' scale.
      const [bm25] = await new DocumentsKeywordProvider(db.database.prisma).search({ tenant: PLATFORM_TENANT, query: "refunds for annual plans", window: 10, signal: new AbortController().signal });
      for (const alpha of [undefined, 1]) {
        const [hit] = await domain.providers[0]!.search({ tenant: ada, query: "refunds for annual plans", window: 10, signal: new AbortController().signal, ...(alpha === undefined ? {} : { alpha }) });
        expect(hit).toMatchObject({ rankedAs: { kind: "KEYWORD", scoreScale: "okapi-bm25" }, group: `Document:${platformDocumentId}` });
        expect(hit!.nativeScore).toBe(bm25!.nativeScore);
      }
      // Ranked by both (a hybrid alpha), the passage comes once per ranking, each with its own
      // score and scale: BM25 as above, and the vector store's similarity for this embedder.
      const hybrid = await domain.providers[0]!.search({ tenant: ada, query: "refunds for annual plans", window: 10, signal: new AbortController().signal, alpha: 0.5 });
      expect(hybrid.map((hit) => [hit.rankedAs?.kind, hit.rankedAs?.scoreScale])).toEqual([
        ["KEYWORD", "okapi-bm25"],
        ["SEMANTIC", `similarity:pgvector:${embedder.model}`],
      ]);
      expect(new Set(hybrid.map((hit) => hit.ref.id)).size).toBe(1);
      expect(hybrid[0]!.nativeScore).toBe(bm25!.nativeScore);
      expect(hybrid.every((hit) => hit.relevance === hybrid[0]!.relevance && hit.relevance! > 0)).toBe(true);
    } finally {
      await domain.close?.();
    }
  });
});

describe("tenant mutations against the platform's knowledge", () => {
  it("are FORBIDDEN with a message that says who curates it", async () => {
    const attempts: [string, string, Record<string, unknown>][] = [
      ["uploadDocument", `mutation($kb: ID!) { uploadDocument(input: { fileName: "mine.txt", contentBase64: "${Buffer.from("planted text").toString("base64")}", knowledgeBaseId: $kb }) { id } }`, { kb: platformKbId }],
      ["deleteDocument", `mutation($id: ID!) { deleteDocument(id: $id) { id } }`, { id: platformDocumentId }],
      ["deleteKnowledgeBase", `mutation($id: ID!) { deleteKnowledgeBase(id: $id) { id } }`, { id: platformKbId }],
      ["setKnowledgeBaseCredentials", `mutation($id: ID!) { setKnowledgeBaseCredentials(id: $id, accessKeyId: "AKIAEXAMPLE000000001", secretAccessKey: "example-secret-0123456789") { id } }`, { id: platformKbId }],
    ];
    for (const [field, mutation, variables] of attempts) {
      const answer = await gql("ada", mutation, variables);
      expect(answer.data?.[field] ?? null).toBeNull();
      expect(answer.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
      expect(answer.errors![0]!.message).toMatch(/platform/);
    }
    // Nothing changed.
    output.length = 0;
    await operator("list");
    expect(output).toEqual([`${platformKbId}  Platform billing guides (LOCAL, 1 document)`, `  ${platformDocumentId}  refunds.md  READY`]);
  });

  it("the operator removes the document and the knowledge base; every organization stops seeing them", async () => {
    await operator("remove", "--kb", platformKbId);
    expect(output.at(-1)).toBe(`removed knowledge base ${platformKbId} and its 1 document`);
    const answer = await gql("gus", `query($kb: ID!, $doc: ID!) { knowledgeBase(id: $kb) { id } document(id: $doc) { id } }`, { kb: platformKbId, doc: platformDocumentId });
    expect(answer.data).toEqual({ knowledgeBase: null, document: null });
  });
});
