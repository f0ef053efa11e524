/**
 * The lease token of the conversation indexer (issue 22), with two indexers on one database in
 * one process (PGlite and PostgreSQL alike; two processes: test/e2e/two-instances.test.ts): an
 * indexer whose lease runs out while it is still embedding, and whose job another indexer
 * takes over and finishes, writes nothing when it comes back and counts a lost lease, so the
 * conversation is indexed once, by the new holder. And a conversation whose indexing kills the
 * process every time is retried alone, so its batch-mates get indexed, and is parked after three
 * deaths instead of being retried for ever.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { silentLogger } from "../../lib/logger.js";
import { chunkText, DEFAULT_CHUNKING } from "../../lib/retrieval/chunking.js";
import type { Embedder } from "../../lib/retrieval/embeddings/embedder.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { PgVectorStore } from "../../lib/retrieval/vector-stores/pgvector.js";
import { ConversationIndexer } from "../../subgraphs/conversations/search/conversation-indexer.js";
import { SearchIndexStatusReader } from "../../subgraphs/conversations/search/index-status.js";
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

/**
 * The hashing embedder, except that a call holding `poison` never returns: as far as the queue
 * can tell, the process it ran in died there (out of memory, say). One per "process".
 */
class DiesOn implements Embedder {
  readonly model = embedder.model;
  readonly dimensions = embedder.dimensions;
  readonly embedded: string[] = [];
  private reached!: () => void;
  readonly died = new Promise<"died">((resolve) => (this.reached = () => resolve("died")));

  constructor(private readonly poison: string) {}

  async embed(texts: readonly string[]): Promise<number[][]> {
    this.embedded.push(...texts);
    if (texts.some((text) => text.includes(this.poison))) {
      this.reached();
      return new Promise<never>(() => {});
    }
    return embedder.embed(texts);
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

  it("a conversation changed between the claim and the start of its attempt is indexed again at once, not a lease later", async () => {
    const sql = db.database.prisma;
    const { id } = await rows(sql.$queryRaw<{ id: string }[]>`
      INSERT INTO conversations (id, organization_id, user_id, title) VALUES (gen_random_uuid(), 'org-leases', 'lea', 'Written twice, quickly')
      RETURNING id::text AS id`);
    // The writer's second statement lands right after the indexer's claim (the one statement that
    // counts an attempt), before its next statement: on a busy machine that window is wide (a CI
    // run once left a batch of 16 waiting out the 300 s lease after their messages were inserted).
    let changedAfterClaim = false;
    const prisma = new Proxy(sql, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== "$queryRaw") return value;
        return async (strings: TemplateStringsArray, ...values: unknown[]) => {
          const result = await (value as (...args: unknown[]) => Promise<unknown>).call(target, strings, ...values);
          if (!changedAfterClaim && strings.join("?").includes("attempts = j.attempts + 1")) {
            changedAfterClaim = true;
            await sql.$executeRaw`UPDATE conversations SET title = 'Written twice, quickly: the second text' WHERE id = ${id}::uuid`;
          }
          return result;
        };
      },
    });
    const indexer = new ConversationIndexer({ ...db.database, prisma }, embedder, new PgVectorStore(db.database), silentLogger);

    // drain() goes on until nothing is due: the first text's attempt, then the second text's.
    expect(await indexer.drain()).toBe(2);
    expect(changedAfterClaim).toBe(true);
    expect(await sql.$queryRaw<unknown[]>`SELECT 1 FROM search_index_jobs WHERE conversation_id = ${id}::uuid`).toEqual([]);
    const [vector] = await sql.$queryRaw<{ content_hash: string }[]>`SELECT content_hash FROM embedding_chunks WHERE entity_id = ${id}::uuid`;
    const [chunk] = chunkText("Written twice, quickly: the second text\n\n", DEFAULT_CHUNKING);
    expect(vector!.content_hash).toBe(createHash("sha256").update(chunk!).digest("hex"));
  });

  it("a conversation that kills its indexer each time is retried alone, its batch-mates are indexed, and it is parked after three deaths", async () => {
    const sql = db.database.prisma;
    const ids: Record<string, string> = {};
    for (const title of ["Deadlocks in the order service", "Quarterly planning notes", "A pill that kills-the-indexer"]) {
      const { id } = await rows(sql.$queryRaw<{ id: string }[]>`
        INSERT INTO conversations (id, organization_id, user_id, title) VALUES (gen_random_uuid(), 'org-leases', 'lea', ${title})
        RETURNING id::text AS id`);
      ids[title.split(" ")[1]!] = id;
    }
    const poison = ids.pill!;
    const innocents = [ids.in!, ids.planning!];
    const job = (id: string) =>
      rows(sql.$queryRaw<{ unfinished: number; parked: boolean; due: boolean; last_error: string | null }[]>`
        SELECT unfinished_attempts AS unfinished, run_after = 'infinity' AS parked, run_after <= clock_timestamp() AS due, last_error
        FROM search_index_jobs WHERE conversation_id = ${id}::uuid`);

    // Each round is a new process; one that dies is left hanging, as a killed process would be.
    const processes: DiesOn[] = [];
    for (let round = 0; round < 8 && !(await job(poison)).parked; round += 1) {
      const model = new DiesOn("kills-the-indexer");
      processes.push(model);
      const indexer = new ConversationIndexer(db.database, model, new PgVectorStore(db.database), silentLogger, { leaseSeconds: 1 });
      const outcome = await Promise.race([indexer.runOnce().then(() => "finished" as const), model.died]);
      if (outcome === "died") {
        // Counted, not timed: the next process starts once the database says the lease has run out.
        while (!(await job(poison)).due) await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }

    const parked = await job(poison);
    expect(parked).toMatchObject({ parked: true, unfinished: 3 });
    expect(parked.last_error).toMatch(/^Indexing was interrupted 3 times before it finished .* indexed again when the conversation changes\.$/);
    // Three deaths: once in the first batch, twice alone; the fourth claim parked it without embedding.
    expect(processes.filter((model) => model.embedded.some((text) => text.includes("kills-the-indexer")))).toHaveLength(3);
    expect(processes.at(-1)!.embedded).toEqual([]);
    for (const id of innocents) {
      // Indexed, each embedded at most twice (its first batch died with the poison): never taken down again.
      expect(await sql.$queryRaw<unknown[]>`SELECT 1 FROM search_index_jobs WHERE conversation_id = ${id}::uuid`).toEqual([]);
      const { vectors } = await rows(sql.$queryRaw<{ vectors: number }[]>`SELECT count(*)::int AS vectors FROM embedding_chunks WHERE entity_id = ${id}::uuid`);
      expect(vectors).toBe(1);
    }
    const innocentTexts = processes.flatMap((model) => model.embedded).filter((text) => !text.includes("kills-the-indexer"));
    expect(innocentTexts.length).toBeLessThanOrEqual(4);

    const status = await new SearchIndexStatusReader(db.database, { model: embedder.model, dimensions: embedder.dimensions, vectorStore: "pgvector" }).read({
      organizationId: "org-leases",
      userId: "lea",
      teamIds: [],
      role: "member",
      userName: null,
      userEmail: null,
    });
    // Given up on: failing, and no longer pending (nothing will happen to it until it changes).
    expect(status).toMatchObject({ pending: 0, failing: 1, lastError: parked.last_error });

    // A change to the conversation re-enqueues it with a clean count, and it is indexed (here by a healthy model).
    await sql.$executeRaw`UPDATE conversations SET title = 'A pill, swallowed' WHERE id = ${poison}::uuid`;
    expect(await job(poison)).toMatchObject({ parked: false, due: true, unfinished: 0, last_error: null });
    const healthy = new ConversationIndexer(db.database, embedder, new PgVectorStore(db.database), silentLogger);
    expect(await healthy.runOnce()).toBe(1);
    expect(healthy.counters.finished).toEqual({ indexed: 1, failed: 0, lease_lost: 0 });
    expect(await sql.$queryRaw<unknown[]>`SELECT 1 FROM search_index_jobs`).toEqual([]);
  });
});
