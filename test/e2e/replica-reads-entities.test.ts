/**
 * The entity loads of saved searches, knowledge bases, knowledge-base passages and external
 * results read from a real hot standby (DATABASE_READ_URL) like the conversations' and
 * documents' loads do (replica-reads.test.ts), with read-your-writes: a PostgreSQL primary and
 * a streaming standby with replication lag injected (recovery_min_apply_delay), statements
 * counted per server through the pools they went through.
 *
 * Results and passages are written by a search (a query, not a mutation) and loaded by the
 * gateway's next call: that write must count as the caller's write too.
 *
 * PostgreSQL's server binaries are needed, so it runs in CI's PostgreSQL pass (DATABASE_URL set).
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { openDatabase, type Database } from "../../lib/database/connect.js";
import { migrate } from "../../lib/database/migrate.js";
import { withReadSession, type ReadCaller } from "../../lib/database/read-session.js";
import { recordSessionWrites } from "../../lib/database/replica-reads.js";
import { silentLogger } from "../../lib/logger.js";
import { startPostgresPair, type PostgresPair } from "../../deploy/local/postgres-clusters.js";
import { ExternalResultStore } from "../../subgraphs/external-search/result-store.js";
import { KnowledgeBaseStore } from "../../subgraphs/knowledge-base/knowledge-base-store.js";
import { PassageStore } from "../../subgraphs/knowledge-base/passage-store.js";
import { SavedSearchStore } from "../../subgraphs/search/saved-search-store.js";
import { usingPostgres } from "../support/database.js";

const PRIMARY_PORT = 21532;
const STANDBY_PORT = 21533;
const DATABASE = "replica_entities";
/** Long enough that the reads right after a write certainly come before the standby applies it. */
const APPLY_DELAY_MS = 3_000;

const tenant = (organizationId: string, userId: string) => ({ organizationId, userId, teamIds: [], role: "member" as const, userName: null, userEmail: null });
const ann = tenant("acme", "ann");
const ben = tenant("acme", "ben");
const cy = tenant("acme", "cy");
const asCaller = (t: { organizationId: string; userId: string }): ReadCaller => ({ organizationId: t.organizationId, userId: t.userId });

let root: string;
let pair: PostgresPair;
let database: Database;
let savedSearches: SavedSearchStore;
let knowledgeBases: KnowledgeBaseStore;
let passages: PassageStore;
let results: ExternalResultStore;

/**
 * One request of `caller`, as the subgraph server runs it: a read session, `mutation` marking it
 * a mutation, and the write positions recorded before it answers.
 */
async function request<T>(caller: ReadCaller, work: () => Promise<T>, options: { mutation?: boolean } = {}): Promise<{ result: T; primary: number; replica: number }> {
  const primaryBefore = database.statements.count;
  const replicaBefore = database.replica!.statements.count;
  const result = await withReadSession(caller, async (session) => {
    if (options.mutation) session.writing = true;
    const value = await work();
    await recordSessionWrites(session);
    return value;
  });
  return { result, primary: database.statements.count - primaryBefore, replica: database.replica!.statements.count - replicaBefore };
}

(usingPostgres ? describe : describe.skip)("entity loads of saved searches, knowledge bases, passages and external results on a hot standby", () => {
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "replica-entities-"));
    // mkdtemp makes it 0700; as root, the clusters run as `postgres`, which must reach inside.
    await chmod(root, 0o755);
    pair = await startPostgresPair({ root: path.join(root, "pair"), primaryPort: PRIMARY_PORT, standbyPort: STANDBY_PORT });
    await pair.psql(pair.primary, `CREATE DATABASE ${DATABASE}`);
    // Without Redis: positions kept in this process, which is the one reading here.
    database = await openDatabase({
      url: pair.primary.url(DATABASE),
      pgliteDataDir: "",
      poolSize: 4,
      logger: silentLogger,
      replica: { url: pair.standby.url(DATABASE), maxLagSeconds: 30, redisUrl: null, redisKeyPrefix: "test-replica-entities:" },
    });
    await migrate(database);
    // The scenarios below start from a standby that has the schema (the last one is about one that has not).
    await pair.waitForReplay();
    savedSearches = new SavedSearchStore(database.prisma);
    knowledgeBases = new KnowledgeBaseStore(database.prisma);
    passages = new PassageStore(database.prisma);
    results = new ExternalResultStore(database.prisma);
  }, 120_000);

  afterAll(async () => {
    await database?.close().catch(() => undefined);
    await pair?.destroy().catch(() => undefined);
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("loads each entity from the standby for a reader who has not written, and from the primary for its writer until the standby has the write", async () => {
    await pair.setApplyDelay(APPLY_DELAY_MS);
    // Mutations: a saved search and a knowledge base, each by ann.
    const saved = (await request(asCaller(ann), () => savedSearches.create(ann, { name: "Deadlocks", query: "deadlock", alpha: 0.5, providers: null, weights: [], filter: null, typoTolerance: true }), { mutation: true })).result;
    const handbook = (await request(asCaller(ann), () => knowledgeBases.create(ann, { name: "Handbook", description: null, scope: "COMPANY", category: null, backend: "LOCAL" }), { mutation: true })).result;
    // Cy runs a search (a query, no mutation) that stores what it retrieved: web results and passages.
    const [web] = (await request(asCaller(cy), () => results.saveWebResults(cy, [{ url: "https://example.com/deadlocks", title: "Deadlocks explained", snippet: "Lock in id order", position: 1, provider: "serper", fetchedAt: new Date() }]))).result;
    const [passageId] = (await request(asCaller(cy), () => passages.upsert(cy, [{ knowledgeBaseId: handbook.id, text: "Take locks in id order.", uri: null, page: null }]))).result;

    // Each writer's next request finds their writes at once: the standby has not applied them, so the primary serves them.
    const annLoads = await request(asCaller(ann), async () => ({
      saved: await savedSearches.findByIds(ann, [saved.id]),
      knowledgeBase: await knowledgeBases.findByIds(ann, [handbook.id]),
    }));
    expect(annLoads.result.saved.map((s) => s.name)).toEqual(["Deadlocks"]);
    expect(annLoads.result.knowledgeBase.map((kb) => kb.name)).toEqual(["Handbook"]);
    expect(annLoads.replica).toBe(0);
    expect(annLoads.primary).toBeGreaterThan(0);
    // Cy's search wrote the rows that the gateway now loads as entities (a request of its own).
    const cyLoads = await request(asCaller(cy), async () => ({
      result: await results.findByIds(cy, [web!.id]),
      passage: await passages.findByIds(cy, [passageId!]),
    }));
    expect(cyLoads.result.result.map((r) => r.id)).toEqual([web!.id]);
    expect(cyLoads.result.passage.map((p) => p.text)).toEqual(["Take locks in id order."]);
    expect(cyLoads.replica).toBe(0);
    expect(cyLoads.primary).toBeGreaterThan(0);

    // Ben, a colleague who wrote nothing, is served by the standby, which has not applied them yet.
    const benLoads = await request(asCaller(ben), async () => ({
      knowledgeBase: await knowledgeBases.findByIds(ben, [handbook.id]),
      result: await results.findByIds(ben, [web!.id]),
      passage: await passages.findByIds(ben, [passageId!]),
    }));
    expect(benLoads.result).toEqual({ knowledgeBase: [], result: [], passage: [] });
    expect(benLoads.primary).toBe(0);
    expect(benLoads.replica).toBeGreaterThan(0);
    expect(database.replica!.decisions.notReplayed).toBeGreaterThan(0);

    // Once replayed, both are served by the standby, and see the rows.
    await pair.setApplyDelay(0);
    await pair.waitForReplay();
    for (const reader of [ann, ben, cy]) {
      const loads = await request(asCaller(reader), async () => ({
        saved: await savedSearches.findByIds(reader, [saved.id]),
        knowledgeBase: await knowledgeBases.findByIds(reader, [handbook.id]),
        result: await results.findByIds(reader, [web!.id]),
        passage: await passages.findByIds(reader, [passageId!]),
      }));
      // A saved search is its owner's alone, on the standby too.
      expect(loads.result.saved.map((s) => s.id)).toEqual(reader === ann ? [saved.id] : []);
      expect(loads.result.knowledgeBase.map((kb) => kb.id)).toEqual([handbook.id]);
      expect(loads.result.result.map((r) => r.id)).toEqual([web!.id]);
      expect(loads.result.passage.map((p) => p.id)).toEqual([passageId]);
      expect(loads.primary).toBe(0);
      expect(loads.replica).toBeGreaterThan(0);
    }

    // Another organization sees none of them on the standby.
    const globex = tenant("globex", "gus");
    const other = await request(asCaller(globex), async () => ({
      knowledgeBase: await knowledgeBases.findByIds(globex, [handbook.id]),
      result: await results.findByIds(globex, [web!.id]),
      passage: await passages.findByIds(globex, [passageId!]),
    }));
    expect(other.result).toEqual({ knowledgeBase: [], result: [], passage: [] });
    expect(other.replica).toBeGreaterThan(0);
  }, 90_000);

  it("reads again on the primary when the standby has not replayed a migration yet, instead of failing the request", async () => {
    // What a deploy looks like from the standby: the new code's statements reach it before the
    // migration's WAL is applied (here held back by an apply delay, in production by the lag).
    await pair.psql(pair.primary, `CREATE DATABASE ${DATABASE}_behind`);
    await pair.waitForReplay();
    const behind = await openDatabase({
      url: pair.primary.url(`${DATABASE}_behind`),
      pgliteDataDir: "",
      poolSize: 2,
      logger: silentLogger,
      replica: { url: pair.standby.url(`${DATABASE}_behind`), maxLagSeconds: 30, redisUrl: null, redisKeyPrefix: "test-replica-entities-behind:" },
    });
    try {
      await pair.setApplyDelay(60_000);
      await migrate(behind);
      const store = new KnowledgeBaseStore(behind.prisma);
      const handbook = await store.create(ann, { name: "Handbook", description: null, scope: "COMPANY", category: null, backend: "LOCAL" });
      const replica = behind.replica!;
      const fallbacksBefore = replica.fallbacks;
      // Ben wrote nothing, so his load is routed to the standby, which has no such table yet.
      const loaded = await withReadSession(asCaller(ben), () => store.findByIds(ben, [handbook.id]));
      expect(loaded.map((kb) => kb.name)).toEqual(["Handbook"]);
      expect(replica.fallbacks).toBe(fallbacksBefore + 1);
      expect(replica.decisions.replica).toBeGreaterThan(0);
    } finally {
      await pair.setApplyDelay(0);
      await behind.close();
    }
  }, 90_000);

  it("a mutation's own reads of these entities stay on the primary", async () => {
    const { result, replica } = await request(asCaller(ben), () => savedSearches.create(ben, { name: "Mine", query: "locks", alpha: 0.5, providers: null, weights: [], filter: null, typoTolerance: true }).then((s) => savedSearches.require(ben, s.id)), { mutation: true });
    expect(result.name).toBe("Mine");
    expect(replica).toBe(0);
  });
});
