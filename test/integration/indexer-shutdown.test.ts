/**
 * A search subgraph busy indexing stops within its drain deadline (issue 41: one did not exit
 * 15 s after SIGTERM). Its indexer is told to stop as soon as the server starts stopping, and
 * the wait for it is bounded by what is left of the deadline: here the model call in hand never
 * returns, so without the bound `stop()` would never resolve. The job it held goes back to the
 * queue (its lease runs out), and nothing else is lost.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { NoResultCache } from "../../lib/cache/result-cache.js";
import { loadConfig } from "../../lib/config.js";
import { startSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import type { Embedder } from "../../lib/retrieval/embeddings/embedder.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { searchSubgraph } from "../../subgraphs/search/index.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { TEST_AUTH } from "../support/tenants.js";

const hashing = new FeatureHashingEmbedder();

/** A model whose calls never return once `hang` is set (a hung local model, an API that never answers). */
class HangingEmbedder implements Embedder {
  readonly model = hashing.model;
  readonly dimensions = hashing.dimensions;
  hang = false;
  private reached!: () => void;
  readonly entered = new Promise<void>((resolve) => (this.reached = resolve));

  embed(texts: readonly string[]): Promise<number[][]> {
    if (!this.hang) return hashing.embed(texts);
    this.reached();
    return new Promise<never>(() => {});
  }
}

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.dispose();
});

describe("a search subgraph that is indexing when it is stopped", () => {
  it("stops within its drain deadline though the model call in hand never returns", async () => {
    const embedder = new HangingEmbedder();
    const search = await searchSubgraph({ database: db.database, config: loadConfig({ SEARCH_INDEXER: "true" }), logger: silentLogger, embedder, cache: new NoResultCache() });
    const server = await startSubgraph(search, { host: "127.0.0.1", port: 0, auth: TEST_AUTH, production: false, logger: silentLogger, drainTimeoutMs: 200 });
    const sql = db.database.prisma;
    await sql.$executeRaw`INSERT INTO organizations (id) VALUES ('org-busy')`;
    await sql.$executeRaw`INSERT INTO users (organization_id, id) VALUES ('org-busy', 'bo')`;
    embedder.hang = true;
    await sql.$executeRaw`INSERT INTO conversations (id, organization_id, user_id, title) VALUES (gen_random_uuid(), 'org-busy', 'bo', 'Indexed when the stop comes')`;
    search.indexer.poke();
    await embedder.entered;

    // Resolves (the bound is the drain deadline, at least a second); unbounded, it never would.
    await server.stop();
    // The job is still queued, leased: it comes back when the lease runs out.
    const [job] = await sql.$queryRaw<{ leased: boolean }[]>`SELECT run_after > clock_timestamp() AS leased FROM search_index_jobs WHERE organization_id = 'org-busy'`;
    expect(job).toEqual({ leased: true });
  });
});
