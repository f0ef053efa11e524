/**
 * The lease token of the conversation indexer (issue 22), with two indexers on one database in
 * one process (PGlite and PostgreSQL alike; two processes: test/e2e/two-instances.test.ts): an
 * indexer whose lease runs out while it is still embedding, and whose job another indexer
 * takes over and finishes, writes nothing when it comes back and counts a lost lease, so the
 * conversation is indexed once, by the new holder.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { silentLogger } from "../../lib/logger.js";
import type { Embedder } from "../../lib/retrieval/embeddings/embedder.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { PgVectorStore } from "../../lib/retrieval/vector-stores/pgvector.js";
import { ConversationIndexer } from "../../subgraphs/conversations/search/conversation-indexer.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

const embedder = new FeatureHashingEmbedder();

/** The hashing embedder, held at its first call until the test lets it go on. */
class HeldEmbedder implements Embedder {
  readonly model = embedder.model;
  readonly dimensions = embedder.dimensions;
  calls = 0;
  private letGo!: () => void;
  private readonly released = new Promise<void>((resolve) => (this.letGo = resolve));
  private reached!: () => void;
  readonly entered = new Promise<void>((resolve) => (this.reached = resolve));

  async embed(texts: readonly string[]): Promise<number[][]> {
    this.calls += 1;
    this.reached();
    await this.released;
    return embedder.embed(texts);
  }

  release(): void {
    this.letGo();
  }
}

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await new PgVectorStore(db.database).ensureReady(embedder.model, embedder.dimensions);
  const sql = db.database.prisma;
  await sql.$executeRaw`INSERT INTO organizations (id, name) VALUES ('org-leases', 'Leases')`;
  await sql.$executeRaw`INSERT INTO users (organization_id, id) VALUES ('org-leases', 'lea')`;
});

afterAll(async () => {
  await db?.dispose();
});

async function rows<T>(query: Promise<T[]>): Promise<T> {
  return (await query)[0]!;
}

describe("conversation indexing leases", () => {
  it("an indexer whose job was taken over when its lease ran out writes nothing, and the job is indexed once", async () => {
    const sql = db.database.prisma;
    const { id } = await rows(sql.$queryRaw<{ id: string }[]>`
      INSERT INTO conversations (id, organization_id, user_id, title) VALUES (gen_random_uuid(), 'org-leases', 'lea', 'Leases that run out')
      RETURNING id::text AS id`);
    const held = new HeldEmbedder();
    const slow = new ConversationIndexer(db.database, held, new PgVectorStore(db.database), silentLogger, { leaseSeconds: 1 });
    const other = new ConversationIndexer(db.database, embedder, new PgVectorStore(db.database), silentLogger, { leaseSeconds: 1 });

    const slowRound = slow.runOnce();
    await held.entered;
    // Counted, not timed: wait until the database itself says the lease has run out.
    for (;;) {
      const { expired } = await rows(sql.$queryRaw<{ expired: boolean }[]>`SELECT run_after < clock_timestamp() AS expired FROM search_index_jobs WHERE conversation_id = ${id}::uuid`);
      if (expired) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await other.runOnce()).toBe(1);
    expect(other.counters.finished).toEqual({ indexed: 1, failed: 0, lease_lost: 0 });

    held.release();
    expect(await slowRound).toBe(1);
    expect(slow.counters.finished).toEqual({ indexed: 0, failed: 0, lease_lost: 1 });
    expect(held.calls).toBe(1);
    const { jobs } = await rows(sql.$queryRaw<{ jobs: number }[]>`SELECT count(*)::int AS jobs FROM search_index_jobs`);
    expect(jobs).toBe(0);
    const { vectors } = await rows(sql.$queryRaw<{ vectors: number }[]>`SELECT count(*)::int AS vectors FROM embedding_chunks WHERE entity_id = ${id}::uuid`);
    expect(vectors).toBe(1);
  });
});
