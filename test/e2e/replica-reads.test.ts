/**
 * Reads from a real hot standby (DATABASE_READ_URL), with replication lag injected
 * (recovery_min_apply_delay): a PostgreSQL 15 primary and a streaming standby made by
 * deploy/local/postgres-clusters.ts on this helper's ports, two "instances" (each its own
 * Database and conversations subgraph over HTTP, sharing write positions through Redis when
 * REDIS_URL is set), and the search subgraph's providers. Statements are counted per server
 * through the pools they are routed through (database.statements for the primary,
 * database.replica.statements for the standby).
 *
 * PostgreSQL's server binaries are needed, so it runs in CI's PostgreSQL pass (DATABASE_URL set).
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadConfig } from "../../lib/config.js";
import { openDatabase, type Database } from "../../lib/database/connect.js";
import { migrate } from "../../lib/database/migrate.js";
import { withReadSession } from "../../lib/database/read-session.js";
import { PROBE_CACHE_MS } from "../../lib/database/replica-reads.js";
import { withTenantReads } from "../../lib/database/tenant-reads.js";
import { startSubgraph, type RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import { NoResultCache } from "../../lib/cache/result-cache.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { conversationsSubgraph } from "../../subgraphs/conversations/index.js";
import { searchSubgraph, type SearchSubgraph } from "../../subgraphs/search/index.js";
import { startPostgresPair, type PostgresPair } from "../../deploy/local/postgres-clusters.js";
import { usingPostgres } from "../support/database.js";
import { graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

const PRIMARY_PORT = 23432;
const STANDBY_PORT = 23433;
const DATABASE = "replica_reads";
/** Long enough that the reads right after a write certainly come before the standby applies it. */
const APPLY_DELAY_MS = 3_000;
const redisUrl = loadConfig().search.redisUrl;

interface Instance {
  database: Database;
  conversations: RunningSubgraph;
}

let root: string;
let pair: PostgresPair;
const instances: Instance[] = [];
let search: SearchSubgraph | undefined;
let alice: string; // org-a, writes
let bob: string; // org-a, reads what alice wrote
let mallory: string; // org-b
const tenant = (organizationId: string, userId: string) => ({ organizationId, userId, teamIds: [], role: "member" as const, userName: null, userEmail: null });

async function openInstance(keyPrefix: string): Promise<Database> {
  return openDatabase({
    url: pair.primary.url(DATABASE),
    pgliteDataDir: "",
    poolSize: 4,
    logger: silentLogger,
    replica: { url: pair.standby.url(DATABASE), maxLagSeconds: 30, redisUrl, redisKeyPrefix: keyPrefix },
  });
}

const title = async (subgraph: RunningSubgraph, token: string, id: string) => {
  const response = await graphql(subgraph.url, `query($id: ID!) { conversation(id: $id) { title } }`, { id }, { token });
  expect(response.errors).toBeUndefined();
  return (response.data!.conversation as { title: string } | null)?.title ?? null;
};

/** Statements each server received while `work` ran, as counted by the pools they went through. */
async function counted<T>(database: Database, work: () => Promise<T>): Promise<{ result: T; primary: number; replica: number; primaryStatements: string[] }> {
  const primaryBefore = database.statements.count;
  const primaryLogged = database.statements.log.length;
  const replicaBefore = database.replica!.statements.count;
  const result = await work();
  const primaryStatements = database.statements.log.slice(primaryLogged).filter((text) => !/^(BEGIN|COMMIT|SELECT set_config|-- Implicit)/.test(text));
  return { result, primary: database.statements.count - primaryBefore, replica: database.replica!.statements.count - replicaBefore, primaryStatements };
}

(usingPostgres ? describe : describe.skip)("reads from a hot standby with read-your-writes", () => {
  let conversationId: string;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "replica-reads-"));
    // mkdtemp makes it 0700; as root, the clusters run as `postgres`, which must reach inside.
    await chmod(root, 0o755);
    pair = await startPostgresPair({ root: path.join(root, "pair"), primaryPort: PRIMARY_PORT, standbyPort: STANDBY_PORT });
    await pair.psql(pair.primary, `CREATE DATABASE ${DATABASE}`);
    // Both instances share one key prefix (as a deployment does); it is this run's own.
    const keyPrefix = `test-replica-${randomBytes(4).toString("hex")}:`;
    for (let i = 0; i < 2; i++) {
      const database = await openInstance(keyPrefix);
      if (i === 0) await migrate(database);
      const conversations = await startSubgraph(conversationsSubgraph(database), { host: "127.0.0.1", port: 0, auth: TEST_AUTH, production: false, logger: silentLogger });
      instances.push({ database, conversations });
    }
    alice = await tokenFor("org-a", "alice");
    bob = await tokenFor("org-a", "bob");
    mallory = await tokenFor("org-b", "mallory");
    const created = await graphql(instances[0]!.conversations.url, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, { input: { title: "Deadlock in the order service", messages: [{ role: "USER", content: "Our order service deadlocks under load" }] } }, { token: alice });
    expect(created.errors).toBeUndefined();
    conversationId = (created.data!.createConversation as { id: string }).id;
    await pair.waitForReplay();
  }, 120_000);

  afterAll(async () => {
    await search?.stop?.();
    for (const instance of instances) {
      await instance.conversations.stop().catch(() => undefined);
      await instance.database.close().catch(() => undefined);
    }
    await pair?.destroy().catch(() => undefined);
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("(e) runs migrations only on the primary: the standby has them by WAL and refuses to run them", async () => {
    // Migrating went through the primary's session: nothing was sent to the replica.
    expect(instances[0]!.database.replica!.statements.count).toBe(0);
    const applied = (c: typeof pair.primary) => pair.psql(c, "SELECT string_agg(migration_name, ',' ORDER BY migration_name) FROM _prisma_migrations", DATABASE);
    const onPrimary = await applied(pair.primary);
    expect(onPrimary.split(",").length).toBeGreaterThan(10);
    expect(await applied(pair.standby)).toBe(onPrimary);
    // Pointed at the standby as if it were the primary, migrating fails: it is read-only.
    const standbyAsPrimary = await openDatabase({ url: pair.standby.url(DATABASE), pgliteDataDir: "", poolSize: 1, logger: silentLogger });
    try {
      await expect(migrate(standbyAsPrimary)).rejects.toThrow(/read-only|recovery/);
    } finally {
      await standbyAsPrimary.close();
    }
  });

  it("(a) sends other users' entity loads and search provider reads to the replica, not the primary", async () => {
    const b = instances[1]!.database;
    const load = await counted(b, () => title(instances[1]!.conversations, bob, conversationId));
    expect(load.result).toBe("Deadlock in the order service");
    expect(load.replica).toBeGreaterThan(0);
    expect(load.primary).toBe(0);

    // The search subgraph's providers: index on the primary, let the standby replay it, search as bob.
    search = await searchSubgraph({ database: b, config: loadConfig({ SEARCH_INDEXER: "false" }), logger: silentLogger, embedder: new FeatureHashingEmbedder(), cache: new NoResultCache() });
    await search.start!();
    await search.indexer.drain();
    await pair.waitForReplay();
    const logged = b.replica!.statements.log.length;
    const searched = await counted(b, () => withReadSession({ organizationId: "org-a", userId: "bob" }, () => search!.service.search(tenant("org-a", "bob"), { query: "order service deadlock", limit: 5, alpha: 1 })));
    expect(searched.result.hits.map((hit) => hit.ref.id)).toContain(conversationId);
    expect(searched.replica).toBeGreaterThan(0);
    // The keyword provider's BM25 statement ran on the standby.
    expect(b.replica!.statements.log.slice(logged).some((text) => text.includes("keyword_postings"))).toBe(true);
    // Twenty users' reads started together share one replay probe and one look-up each: no
    // per-read probe (the probe is shared while in flight, then kept PROBE_CACHE_MS).
    const replica = b.replica!;
    await new Promise((resolve) => setTimeout(resolve, 2 * PROBE_CACHE_MS));
    const [probesBefore, onReplicaBefore] = [replica.probes, replica.decisions.replica];
    const users = Array.from({ length: 20 }, (_, i) => `reader-${i}`);
    const counts = await Promise.all(
      users.map((userId) =>
        withReadSession({ organizationId: "org-a", userId }, () =>
          withTenantReads(b.prisma, "org-a", (reader) => reader.$queryRawUnsafe<{ visible: bigint }[]>("SELECT count(*) AS visible FROM conversations")),
        ),
      ),
    );
    expect(counts.flat()).toEqual(users.map(() => ({ visible: 1n })));
    expect(replica.probes - probesBefore).toBe(1);
    expect(replica.decisions.replica - onReplicaBefore).toBe(20);
    // The search subgraph's /metrics shows the same counts.
    const scraped = await search.metrics!.registry.metrics();
    expect(scraped).toContain(`database_replica_routes{route="replica",subgraph="search"} ${replica.decisions.replica}`);
    // Its background work (the query log's writer) would otherwise count on the primary in the tests below.
    await search.stop?.();
    search = undefined;
  });

  it("(b) a user who renamed a conversation reads the new title at once, from any instance; a colleague reads the replica's old one until replay", async () => {
    await pair.setApplyDelay(APPLY_DELAY_MS);
    const [a, b] = instances as [Instance, Instance];
    const renamed = await graphql(a.conversations.url, `mutation($id: ID!, $title: String!) { renameConversation(id: $id, title: $title) { title } }`, { id: conversationId, title: "Deadlock fixed: lock in id order" }, { token: alice });
    expect(renamed.errors).toBeUndefined();
    // Alice's next read, through the other instance when Redis shares her write position.
    const reader = redisUrl ? b : a;
    const own = await counted(reader.database, () => title(reader.conversations, alice, conversationId));
    expect(own.result).toBe("Deadlock fixed: lock in id order");
    expect(own.primary).toBeGreaterThan(0);
    expect(own.replica).toBe(0);
    // Bob reads the standby, which holds the rename's WAL but has not applied it yet.
    const colleague = await counted(b.database, () => title(b.conversations, bob, conversationId));
    expect(colleague.result).toBe("Deadlock in the order service");
    expect(colleague.replica).toBeGreaterThan(0);
    expect(reader.database.replica!.decisions.notReplayed).toBeGreaterThan(0);
    // The search providers' path (the tenant-read pool) follows the same rule as the loaders.
    const providerRead = (database: Database, userId: string) =>
      counted(database, () =>
        withReadSession({ organizationId: "org-a", userId }, () =>
          withTenantReads(database.prisma, "org-a", (sql) => sql.$queryRawUnsafe<{ title: string }[]>("SELECT title FROM conversations WHERE id = $1::uuid", conversationId)),
        ),
      );
    const [aliceSearch, bobSearch] = [await providerRead(reader.database, "alice"), await providerRead(b.database, "bob")];
    expect(aliceSearch).toMatchObject({ result: [{ title: "Deadlock fixed: lock in id order" }], primary: 1, replica: 0 });
    expect(bobSearch).toMatchObject({ result: [{ title: "Deadlock in the order service" }], primary: 0, replica: 1 });

    await pair.setApplyDelay(0);
    await pair.waitForReplay();
    // Once replayed, both read the new title from the standby.
    for (const token of [alice, bob]) {
      const read = await counted(b.database, () => title(b.conversations, token, conversationId));
      expect(read.result).toBe("Deadlock fixed: lock in id order");
      expect(read.replica).toBeGreaterThan(0);
      expect(read.primaryStatements).toEqual([]);
    }
  }, 60_000);

  it("(b) a created and then a deleted conversation: the author sees each at once, a colleague only after replay", async () => {
    // Another organization, so the counts of org-a's rows in the tests below stay as they are.
    const [carol, dave] = [await tokenFor("org-c", "carol"), await tokenFor("org-c", "dave")];
    const [a, b] = instances as [Instance, Instance];
    const reader = redisUrl ? b : a;
    await pair.setApplyDelay(APPLY_DELAY_MS);
    const created = await graphql(a.conversations.url, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, { input: { title: "Quarterly planning" } }, { token: carol });
    expect(created.errors).toBeUndefined();
    const id = (created.data!.createConversation as { id: string }).id;
    expect(await title(reader.conversations, carol, id)).toBe("Quarterly planning");
    expect(await title(b.conversations, dave, id)).toBeNull();
    await pair.waitForReplay();
    expect(await title(b.conversations, dave, id)).toBe("Quarterly planning");

    const deleted = await graphql(a.conversations.url, `mutation($id: ID!) { deleteConversation(id: $id) { id } }`, { id }, { token: carol });
    expect(deleted.errors).toBeUndefined();
    expect(await title(reader.conversations, carol, id)).toBeNull();
    expect(await title(b.conversations, dave, id)).toBe("Quarterly planning");
    await pair.setApplyDelay(0);
    await pair.waitForReplay();
    expect(await title(b.conversations, dave, id)).toBeNull();
  }, 60_000);

  it("(c) row-level security holds on the standby: another organization's reads there see none of org-a's rows", async () => {
    const b = instances[1]!;
    const byId = await counted(b.database, () => title(b.conversations, mallory, conversationId));
    expect(byId.result).toBeNull();
    expect(byId.replica).toBeGreaterThan(0);
    // Without any organization filter: the policies alone decide, under the tenant role, on the standby.
    const unfiltered = await counted(b.database, () =>
      withReadSession({ organizationId: "org-b", userId: "mallory" }, () =>
        withTenantReads(b.database.prisma, "org-b", (reader) =>
          reader.$queryRawUnsafe<{ visible: bigint; role: string; organization: string; standby: boolean }[]>(
            "SELECT (SELECT count(*) FROM conversations) AS visible, current_user AS role, current_setting('app.organization_id') AS organization, pg_is_in_recovery() AS standby",
          ),
        ),
      ),
    );
    expect(unfiltered.replica).toBeGreaterThan(0);
    expect(unfiltered.result).toEqual([{ visible: 0n, role: "context_search_tenant", organization: "org-b", standby: true }]);
    // The same statement for org-a on the standby sees its row: the 0 above is the policy, not an empty replica.
    const own = await withReadSession({ organizationId: "org-a", userId: "bob" }, () =>
      withTenantReads(b.database.prisma, "org-a", (reader) => reader.$queryRawUnsafe<{ visible: bigint }[]>("SELECT count(*) AS visible FROM conversations")),
    );
    expect(own).toEqual([{ visible: 1n }]);
  });

  it("(d) the standby down: reads fall back to the primary and return to the standby once it is back", async () => {
    const b = instances[1]!;
    const replica = b.database.replica!;
    await pair.stopCluster(pair.standby, "fast");
    const fallbacksBefore = replica.fallbacks + replica.decisions.replicaDown;
    const during = await counted(b.database, () => title(b.conversations, bob, conversationId));
    expect(during.result).toBe("Deadlock fixed: lock in id order");
    expect(during.primary).toBeGreaterThan(0);
    expect(replica.fallbacks + replica.decisions.replicaDown).toBeGreaterThan(fallbacksBefore);

    await pair.startCluster(pair.standby);
    // Every read answers meanwhile; the standby serves again after its back-off and one probe.
    let backOnReplica = false;
    for (let attempt = 0; attempt < 100 && !backOnReplica; attempt++) {
      const read = await counted(b.database, () => title(b.conversations, bob, conversationId));
      expect(read.result).toBe("Deadlock fixed: lock in id order");
      backOnReplica = read.replica > 0;
      if (!backOnReplica) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(backOnReplica).toBe(true);
  }, 60_000);

  it("Redis unreachable: a user's write position cannot be looked up, so their reads go to the primary, never stale", async () => {
    const unreachable = await openDatabase({
      url: pair.primary.url(DATABASE),
      pgliteDataDir: "",
      poolSize: 2,
      logger: silentLogger,
      // A port of this helper's range where nothing listens.
      replica: { url: pair.standby.url(DATABASE), maxLagSeconds: 30, redisUrl: "redis://127.0.0.1:23999", redisKeyPrefix: "test-replica-unreachable:" },
    });
    try {
      const read = await counted(unreachable, () =>
        withReadSession({ organizationId: "org-a", userId: "bob" }, () =>
          withTenantReads(unreachable.prisma, "org-a", (reader) => reader.$queryRawUnsafe<{ visible: bigint }[]>("SELECT count(*) AS visible FROM conversations")),
        ),
      );
      expect(read.result).toEqual([{ visible: 1n }]);
      expect(read.primary).toBe(1);
      expect(read.replica).toBe(0);
      expect(unreachable.replica!.decisions.positionsUnavailable).toBe(1);
    } finally {
      await unreachable.close();
    }
  });
});
