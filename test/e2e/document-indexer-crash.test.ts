/**
 * Nothing of an upload is lost when the process indexing it is SIGKILLed mid-document: the
 * document indexer (subgraphs/knowledge-base/search/document-indexer.ts) runs in a search
 * subgraph process started as production starts it, and is killed while one document is half
 * embedded (its chunks stored, one slice of their vectors written, the next slice's embeddings
 * request in flight) and the rest of its batch claimed but not begun. A new process then finishes
 * every document once its lease runs out: each READY, with exactly the chunks and vectors the
 * same file gets when indexed without a crash, none written twice, each found by search; and the
 * slice embedded before the kill is not paid for again (the embedding cache kept it).
 *
 * The embedder is an OpenAI-compatible stand-in (test/support/external/embeddings-stand-in.ts)
 * that stops answering after one request: the kill comes at a point the test chose, counted, not
 * timed. Uploads go through a knowledge-base subgraph process, as a client's would.
 *
 * PostgreSQL only, like the conversation indexer's kill in two-instances.test.ts: the database
 * must outlive the process that is killed, and a PGlite database lives inside its process.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import pg from "pg";
import { createTestDatabase, usingPostgres, type TestDatabase } from "../support/database.js";
import { EmbeddingsStandIn } from "../support/external/embeddings-stand-in.js";
import { graphql } from "../support/graphql.js";
import { indexingJobCounts, startSubgraphProcess, stopServerProcesses, until, type SubgraphProcess } from "../support/server-processes.js";
import { tokenFor } from "../support/tenants.js";

const ORGANIZATION = "org-indexer-crash";
/** The same files, uploaded again after the crash and indexed without one: what each document should hold. */
const REFERENCE_ORGANIZATION = "org-indexer-reference";
const USER = "uma";
/** Short, so the killed process's claims come back within the test; set through config, as an operator would. */
const LEASE_SECONDS = 2;
/** Texts per model call: the document indexer's default `embedSlice`, which the search process runs with. */
const EMBED_SLICE = 8;
/** One chunk per section (the chunker never crosses a heading): three slices of EMBED_SLICE. */
const SECTIONS = 20;
const TOPICS = [
  { fileName: "harbour-operations.md", topic: "harbour", marker: "bollard" },
  { fileName: "orchard-pruning.md", topic: "orchard", marker: "espalier" },
  { fileName: "glacier-survey.md", topic: "glacier", marker: "moraine" },
];
/** In the order the queries below list documents. */
const FILE_NAMES = TOPICS.map((file) => file.fileName).sort();
/** Where each file's marker word sits: in the second slice, the one whose embeddings request the kill cuts off. */
const MARKER_SECTION = 12;

/** A Markdown file of SECTIONS sections, every sentence its own (no chunk text shared between files or sections). */
function handbook({ topic, marker }: (typeof TOPICS)[number]): string {
  return Array.from({ length: SECTIONS }, (_, index) => {
    const n = index + 1;
    const extra = n === MARKER_SECTION ? ` Check every ${marker} before the ${topic} shift ends.` : "";
    return `## ${topic} step ${n}\n\nStep ${n} of the ${topic} handbook covers ${topic} duty ${n}, its ${topic} checklist ${n} and the ${topic} log entry ${n}.${extra} Record ${topic} reading ${n} twice.`;
  }).join("\n\n");
}

let db: TestDatabase;
let sql: pg.Client;
let embeddings: EmbeddingsStandIn;
let knowledgeBase: SubgraphProcess;
let survivor: SubgraphProcess;
let token: string;
let referenceToken: string;
const started: SubgraphProcess[] = [];

async function start(name: string, env: Record<string, string>): Promise<SubgraphProcess> {
  const server = await startSubgraphProcess(name, {
    databaseUrl: db.url!,
    nodeEnv: "production",
    env: {
      EMBEDDER: "openai", OPENAI_API_KEY: "sk-stand-in", OPENAI_BASE_URL: embeddings.baseURL,
      OPENAI_EMBEDDING_MODEL: "stand-in-hashing", OPENAI_EMBEDDING_DIMENSIONS: String(embeddings.dimensions),
      SEARCH_CACHE_TTL_SECONDS: "0",
      ...env,
    },
  });
  started.push(server);
  return server;
}

const startIndexer = () => start("search", { SEARCH_INDEXER: "true", SEARCH_INDEXER_LEASE_SECONDS: String(LEASE_SECONDS) });

async function rows<T extends Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
  return (await sql.query(text, values)).rows as T[];
}

async function upload(asToken: string): Promise<void> {
  for (const file of TOPICS) {
    const answer = await graphql(knowledgeBase.url, `mutation($input: UploadDocumentInput!) { uploadDocument(input: $input) { id status } }`, {
      input: { fileName: file.fileName, contentBase64: Buffer.from(handbook(file)).toString("base64") },
    }, { token: asToken });
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.uploadDocument.status).toBe("PENDING");
  }
}

const queuedJobs = async (organizationId: string) =>
  (await rows<{ n: number }>(`SELECT count(*)::int AS n FROM document_index_jobs WHERE organization_id = $1`, [organizationId]))[0]!.n;

/** Each document's status and progress, by file name. */
async function documents(organizationId: string) {
  return rows<{ id: string; file_name: string; status: string; failure_reason: string | null; chunks_indexed: number; chunks_total: number | null; chunks: number; vectors: number }>(
    `SELECT d.id::text AS id, d.file_name, d.status::text AS status, d.failure_reason, d.chunks_indexed, d.chunks_total,
            (SELECT count(*)::int FROM document_chunks c WHERE c.organization_id = d.organization_id AND c.document_id = d.id) AS chunks,
            (SELECT count(*)::int FROM embedding_chunks e JOIN document_chunks c ON c.organization_id = e.organization_id AND c.id = e.entity_id
              WHERE e.entity_type = 'document_chunk' AND c.organization_id = d.organization_id AND c.document_id = d.id) AS vectors
     FROM documents d WHERE d.organization_id = $1 ORDER BY d.file_name`,
    [organizationId],
  );
}

/** What indexing made of each file, without ids or times: (file, position, text, place, size, hash, vectors of it). */
async function indexedChunks(organizationId: string) {
  return rows(
    `SELECT d.file_name, c.chunk_index, c.text, c.heading_path, c.page, c.start_offset, c.end_offset, c.token_count, c.content_hash, c.keyword_length,
            (SELECT count(*)::int FROM embedding_chunks e WHERE e.organization_id = c.organization_id AND e.entity_type = 'document_chunk' AND e.entity_id = c.id) AS vectors,
            (SELECT count(*)::int FROM document_keyword_postings p WHERE p.organization_id = c.organization_id AND p.chunk_id = c.id) AS postings
     FROM document_chunks c JOIN documents d ON d.organization_id = c.organization_id AND d.id = c.document_id
     WHERE c.organization_id = $1 ORDER BY d.file_name, c.chunk_index`,
    [organizationId],
  );
}

const SEARCH = `query($input: SearchInput!) { search(input: $input) { hits { item { __typename ... on DocumentChunk { id } } } providers { name status error } } }`;

const describeOnPostgres = usingPostgres ? describe : describe.skip;
const skipped = usingPostgres ? "" : " (skipped on PGlite: the database must outlive the killed process, and a PGlite database lives inside it; CI's PostgreSQL pass runs it)";

beforeAll(async () => {
  if (!usingPostgres) return;
  db = await createTestDatabase();
  sql = new pg.Client({ connectionString: db.url! });
  await sql.connect();
  for (const organizationId of [ORGANIZATION, REFERENCE_ORGANIZATION]) {
    await sql.query(`INSERT INTO organizations (id, name) VALUES ($1, $1)`, [organizationId]);
    await sql.query(`INSERT INTO users (organization_id, id) VALUES ($1, $2)`, [organizationId, USER]);
  }
  token = await tokenFor(ORGANIZATION, USER);
  referenceToken = await tokenFor(REFERENCE_ORGANIZATION, USER);
  embeddings = await EmbeddingsStandIn.start();
  knowledgeBase = await start("knowledge-base", {});
}, 300_000);

afterAll(async () => {
  // SIGTERM drains; one still running after the drain's default 10 s (a test left it blocked) is killed.
  await stopServerProcesses(started);
  await sql?.end();
  await embeddings?.close();
  await db?.dispose();
}, 120_000);

describeOnPostgres(`a document indexer SIGKILLed mid-document${skipped}`, () => {
  it("loses nothing: a new process finishes every document READY, with the chunks and vectors an uninterrupted run gives, found by search", async () => {
    // Queued before any indexer runs, so the first one claims all three in its first batch.
    await upload(token);
    expect(await queuedJobs(ORGANIZATION)).toBe(TOPICS.length);

    // The first slice's embeddings are answered; the second slice's request is the last thing the process does.
    const held = embeddings.holdAfter(1);
    const killed = await startIndexer();
    await held;

    const midway = await documents(ORGANIZATION);
    const inProgress = midway.filter((document) => document.status === "INDEXING");
    expect(inProgress).toHaveLength(1);
    // Half-indexed: every chunk stored, one slice of vectors written and recorded.
    expect(inProgress[0]).toMatchObject({ chunks_indexed: EMBED_SLICE, chunks_total: SECTIONS, chunks: SECTIONS, vectors: EMBED_SLICE });
    for (const document of midway.filter((d) => d !== inProgress[0])) expect(document).toMatchObject({ status: "PENDING", chunks_indexed: 0, chunks: 0, vectors: 0 });
    // The whole batch is the killed process's: claimed, its token on every job; only the document
    // it had started has an attempt counted, so its batch-mates lose none to the crash.
    const claims = await rows<{ document_id: string; attempts: number; leased: boolean }>(`SELECT document_id::text, attempts, lease_token IS NOT NULL AS leased FROM document_index_jobs WHERE organization_id = $1`, [ORGANIZATION]);
    expect(claims.map(({ document_id, ...claim }) => ({ ...claim, started: document_id === inProgress[0]!.id })).sort((a, b) => a.attempts - b.attempts)).toEqual(
      TOPICS.map((_, index) => (index < TOPICS.length - 1 ? { attempts: 0, leased: true, started: false } : { attempts: 1, leased: true, started: true })),
    );

    const killedAt = Date.now();
    killed.child.kill("SIGKILL");
    expect((await killed.exited).signal).toBe("SIGKILL");
    embeddings.answerAll();

    survivor = await startIndexer();
    await until("the new indexer to empty the document queue", async () => (await queuedJobs(ORGANIZATION)) === 0, 60_000);
    console.log(`killed with ${inProgress[0]!.chunks_indexed} of ${SECTIONS} chunks of one document embedded and ${TOPICS.length} jobs claimed; every document READY ${((Date.now() - killedAt) / 1000).toFixed(1)} s later (a new process started, lease ${LEASE_SECONDS} s), after ${embeddings.answered.length} embeddings requests in all`);
    const after = await documents(ORGANIZATION);
    expect(after.map(({ file_name, status, failure_reason, chunks_indexed, chunks_total, chunks, vectors }) => ({ file_name, status, failure_reason, chunks_indexed, chunks_total, chunks, vectors })))
      .toEqual(FILE_NAMES.map((fileName) => ({ file_name: fileName, status: "READY", failure_reason: null, chunks_indexed: SECTIONS, chunks_total: SECTIONS, chunks: SECTIONS, vectors: SECTIONS })));
    expect(await indexingJobCounts(survivor, "documents")).toEqual({ indexed: TOPICS.length, failed: 0, lease_lost: 0 });
    // No vector left over from the killed attempt: every document_chunk vector of the organization belongs to a chunk.
    const [orphans] = await rows<{ n: number }>(
      `SELECT count(*)::int AS n FROM embedding_chunks e WHERE e.organization_id = $1 AND e.entity_type = 'document_chunk'
       AND NOT EXISTS (SELECT 1 FROM document_chunks c WHERE c.organization_id = e.organization_id AND c.id = e.entity_id)`,
      [ORGANIZATION],
    );
    expect(orphans!.n).toBe(0);
    // Every chunk's text went to the embedder exactly once over both processes: the slice answered
    // before the kill came from the cache, the one cut off was asked again.
    const chunkTexts = (await rows<{ text: string }>(`SELECT text FROM document_chunks WHERE organization_id = $1`, [ORGANIZATION])).map((row) => row.text);
    expect(embeddings.answered.flat().sort()).toEqual(chunkTexts.sort());

    // The same files indexed without a crash: chunk for chunk the same, one vector and the postings each.
    await upload(referenceToken);
    await until("the reference documents to be indexed", async () => (await queuedJobs(REFERENCE_ORGANIZATION)) === 0, 60_000);
    const crashed = await indexedChunks(ORGANIZATION);
    expect(crashed).toHaveLength(TOPICS.length * SECTIONS);
    expect(crashed).toEqual(await indexedChunks(REFERENCE_ORGANIZATION));
    for (const chunk of crashed) expect([chunk.vectors, Number(chunk.postings) > 0]).toEqual([1, true]);

    // Found by search, by keyword and by meaning, at the chunk whose vector the kill had cut off.
    const chunkOf = new Map((await rows<{ id: string; file_name: string; chunk_index: number }>(
      `SELECT c.id::text AS id, d.file_name, c.chunk_index FROM document_chunks c JOIN documents d ON d.organization_id = c.organization_id AND d.id = c.document_id WHERE c.organization_id = $1`,
      [ORGANIZATION],
    )).map((row) => [row.id, row]));
    for (const { fileName, marker } of TOPICS) {
      for (const alpha of [1, 0]) {
        const answer = await graphql(survivor.url, SEARCH, { input: { query: marker, alpha, limit: 5 } }, { token });
        expect(answer.errors).toBeUndefined();
        const top = answer.data!.search.hits[0]?.item as { __typename: string; id: string } | undefined;
        expect({ alpha, marker, top: top && chunkOf.get(top.id) && { file_name: chunkOf.get(top.id)!.file_name, chunk_index: chunkOf.get(top.id)!.chunk_index } })
          .toEqual({ alpha, marker, top: { file_name: fileName, chunk_index: MARKER_SECTION - 1 } });
      }
    }
  }, 180_000);
});
