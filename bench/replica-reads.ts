/**
 * `npx tsx bench/replica-reads.ts [requests]`: what reading from a replica costs and where the
 * statements go. A PostgreSQL primary and a streaming standby (deploy/local/postgres-clusters.ts,
 * ports 23440/23441), the conversations subgraph twice over HTTP — one instance with
 * DATABASE_READ_URL, one without — and the same entity reads through each, interleaved, as a
 * user who never writes; then the same with a user who renames a conversation before every read
 * (read-your-writes: their reads go to the primary until the standby has replayed).
 * Prints per-request times, their ratio, and the statements each server received; writes
 * bench/results/replica-reads.json. On a shared 2-core machine the times are noisy: the ratio is
 * the figure, measured in one process against the baseline instance.
 */
import { mkdtemp, rm, chmod, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadConfig } from "../lib/config.js";
import { openDatabase, type Database } from "../lib/database/connect.js";
import { migrate } from "../lib/database/migrate.js";
import { startSubgraph, type RunningSubgraph } from "../lib/graphql/subgraph-server.js";
import { silentLogger } from "../lib/logger.js";
import { signToken } from "../lib/tenancy/token.js";
import { conversationsSubgraph } from "../subgraphs/conversations/index.js";
import { ConversationStore } from "../subgraphs/conversations/conversation-store.js";
import { startPostgresPair } from "../deploy/local/postgres-clusters.js";

const REQUESTS = Number(process.argv[2] ?? 400);
const AUTH = { jwtSecret: "bench-secret-that-is-long-enough-for-hs256!!", issuer: null, audience: null, subgraphSigningSecret: "bench-subgraph-signing-secret-long-enough-0123" };
const READ = `query($id: ID!) { conversation(id: $id) { title messages(first: 5) { nodes { content } } } }`;
const RENAME = `mutation($id: ID!, $title: String!) { renameConversation(id: $id, title: $title) { id } }`;

async function post(url: string, query: string, variables: Record<string, unknown>, token: string): Promise<void> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables }) });
  const body = (await response.json()) as { errors?: unknown[] };
  if (body.errors) throw new Error(`request failed: ${JSON.stringify(body.errors).slice(0, 300)}`);
}

const root = await mkdtemp(path.join(tmpdir(), "replica-bench-"));
await chmod(root, 0o755);
const pair = await startPostgresPair({ root: path.join(root, "pair"), primaryPort: 23440, standbyPort: 23441 });
const servers: RunningSubgraph[] = [];
const databases: Database[] = [];
try {
  await pair.psql(pair.primary, "CREATE DATABASE bench");
  const redisUrl = loadConfig().search.redisUrl;
  const open = (replica: boolean) =>
    openDatabase({
      url: pair.primary.url("bench"),
      pgliteDataDir: "",
      poolSize: 4,
      logger: silentLogger,
      replica: replica ? { url: pair.standby.url("bench"), maxLagSeconds: 30, redisUrl, redisKeyPrefix: `bench-replica-${process.pid}:` } : null,
    });
  const [routed, baseline] = [await open(true), await open(false)];
  databases.push(routed, baseline);
  await migrate(baseline);
  const store = new ConversationStore(baseline.prisma);
  const owner = { organizationId: "org-a", userId: "alice", teamIds: [], role: "member" as const, userName: null, userEmail: null };
  const ids: string[] = [];
  for (let i = 0; i < 50; i++) {
    const conversation = await store.create(owner, `Conversation ${i}`, [1, 2, 3].map((n) => ({ role: "user" as const, content: `message ${n} of ${i}`, tokenCount: 3 })));
    ids.push(conversation.id);
  }
  await pair.waitForReplay();
  for (const database of [routed, baseline]) servers.push(await startSubgraph(conversationsSubgraph(database), { host: "127.0.0.1", port: 0, auth: AUTH, production: false, logger: silentLogger }));
  const [routedServer, baselineServer] = servers as [RunningSubgraph, RunningSubgraph];
  const token = (userId: string) => signToken({ organizationId: "org-a", userId, teamIds: [], role: "member" }, AUTH);
  const [reader, writer] = [await token("bob"), await token("alice")];

  // Warm both (connections, prepared plans, JIT), then interleave so load on the machine hits both alike.
  for (let i = 0; i < 50; i++) for (const server of servers) await post(server.url, READ, { id: ids[i % ids.length] }, reader);
  const elapsed = { routed: 0, baseline: 0 };
  const before = { primary: routed.statements.count, replica: routed.replica!.statements.count, probes: routed.replica!.probes };
  for (let i = 0; i < REQUESTS; i++) {
    for (const [name, server] of [["routed", routedServer], ["baseline", baselineServer]] as const) {
      const started = performance.now();
      await post(server.url, READ, { id: ids[i % ids.length] }, reader);
      elapsed[name] += performance.now() - started;
    }
  }
  const reads = {
    msPerRequestWithReplica: +(elapsed.routed / REQUESTS).toFixed(3),
    msPerRequestPrimaryOnly: +(elapsed.baseline / REQUESTS).toFixed(3),
    ratio: +(elapsed.routed / elapsed.baseline).toFixed(3),
    statementsOnPrimary: routed.statements.count - before.primary,
    statementsOnReplica: routed.replica!.statements.count - before.replica,
    replayProbes: routed.replica!.probes - before.probes,
  };

  // A writer: rename, then read at once, through the routed instance; with the standby applying
  // at once, then 1 s behind (recovery_min_apply_delay).
  const writes = 50;
  const readYourWrites: Record<string, { renamesThenReads: number; readsOnReplica: number; readsOnPrimaryNotYetReplayed: number }> = {};
  for (const applyDelayMs of [0, 1_000]) {
    await pair.setApplyDelay(applyDelayMs);
    const decisions = { ...routed.replica!.decisions };
    for (let i = 0; i < writes; i++) {
      await post(routedServer.url, RENAME, { id: ids[0], title: `Renamed ${applyDelayMs} ${i}` }, writer);
      await post(routedServer.url, READ, { id: ids[0] }, writer);
    }
    const after = routed.replica!.decisions;
    readYourWrites[`applyDelay${applyDelayMs}ms`] = { renamesThenReads: writes, readsOnReplica: after.replica - decisions.replica, readsOnPrimaryNotYetReplayed: after.notReplayed - decisions.notReplayed };
  }
  const result = { requests: REQUESTS, redis: Boolean(redisUrl), reads, readYourWrites, machine: "shared 2-core VM, other tests running", measuredAt: new Date().toISOString() };
  console.log(JSON.stringify(result, null, 2));
  await writeFile(path.resolve("bench/results/replica-reads.json"), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  for (const server of servers) await server.stop().catch(() => undefined);
  for (const database of databases) await database.close().catch(() => undefined);
  await pair.destroy().catch(() => undefined);
  await rm(root, { recursive: true, force: true });
}
