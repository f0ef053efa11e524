/**
 * Faults and deploys under load on the multi-instance topology (issue 22, item 4), on the real
 * engines of deploy/local/topology.ts: two of every app process behind HAProxy, PgBouncer, a
 * PostgreSQL primary with a streaming standby, Redis.
 *
 * A bounded loopback load runs throughout: 50 clients (each pausing DRILL_THINK_MS after each answer), each a user of the demo organization
 * with a token of its own, mixing searches (60 %), reads of their own latest conversation
 * (10 %) and writes (30 %: create a conversation, or append a message to their own), every write
 * with an Idempotency-Key. A client retries a write that failed with a retryable error (HTTP
 * 503, SUBGRAPH_UNAVAILABLE, SERVICE_UNAVAILABLE, SHUTTING_DOWN, OVERLOADED, a lost connection) with the
 * same key, as our clients are told to; it never retries a read. Meanwhile:
 *   (a) kill -9 one instance of each tier in turn, wait until HAProxy takes it out, start it again;
 *   (b) a rolling restart: every instance in turn gets SIGTERM, exits after its drain, starts again
 *       and is UP before the next;
 *   (c) the primary stopped and the standby promoted (HAProxy's PostgreSQL listener fails over to
 *       it; no app process, PgBouncer or HAProxy is restarted): how long until writes succeed.
 * Counted per phase: reads, failed reads, degraded reads (a provider ERROR or TIMEOUT), writes,
 * writes acknowledged, write attempts that failed retryably, writes given up, writes failed with
 * a non-retryable error. At the end every acknowledged write is looked up on the (new) primary:
 * a lost write is one acknowledged and not there. Goals: 0 failed reads and 0 lost writes in
 * (a), 0 failed requests in (b).
 *
 * The gateway's response cache and the search result cache are off (TTL 0), so every read reaches
 * the subgraphs and the database, and rate limits are lifted: what is measured is the topology.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { loadConfig } from "../../lib/config.js";
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { DEMO_ORGANIZATION } from "../../lib/demo-data/organization.js";
import { signToken } from "../../lib/tenancy/token.js";
import { startTopology, TIERS, type Tier, type Topology } from "../../deploy/local/topology.js";
import { entryHeading, formatCount, renderConditions, type EntryBase } from "../report.js";
import { baseConditions, sleep, type Scenario } from "../scenario.js";

export const DRILL_CLIENTS = 50;
/**
 * Each client waits this long after each answer: 50 clients offer at most 100 requests a
 * second, a bounded load that 2 shared cores carry (back to back, they saturated the machine
 * and every write ran into the gateway's 10 s upstream timeout: a capacity test, not this one).
 */
export const DRILL_THINK_MS = 500;
/** Ports 20200-20234: apart from `npm run topology` (20000) and the topology test (20100). */
export const DRILL_BASE_PORT = 20_200;

/** What the drill's topology runs with: nothing cached, no rate limit in the way. */
export const DRILL_ENV: Record<string, string> = {
  GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0",
  SEARCH_CACHE_TTL_SECONDS: "0",
  RATE_LIMIT_ORGANIZATION_POINTS: "100000000",
  RATE_LIMIT_USER_POINTS: "100000000",
  RATE_LIMIT_ANONYMOUS_POINTS: "100000000",
};

const SEARCHES = ["deadlock", "order service", "billing retries", "kubernetes rollout", "postgres index", "rate limit", "cache invalidation", "memory leak", "onboarding", "release notes"];

const SEARCH_QUERY = `query DrillSearch($q: String!) { search(input: { query: $q, limit: 5 }) { hits { score item { ... on Conversation { id title } } } providers { name status } } }`;
const READ_QUERY = `query DrillRead($id: ID!) { conversation(id: $id) { id messageCount } }`;
const CREATE_MUTATION = `mutation DrillCreate($input: CreateConversationInput!) { createConversation(input: $input) { id } }`;
const APPEND_MUTATION = `mutation DrillAppend($id: ID!, $messages: [MessageInput!]!) { appendMessages(conversationId: $id, messages: $messages) { messages { id } } }`;

/** Codes a client is told to retry on. */
const RETRYABLE_CODES = new Set(["SUBGRAPH_UNAVAILABLE", "SERVICE_UNAVAILABLE", "SHUTTING_DOWN", "OVERLOADED"]);
const WRITE_ATTEMPTS = 5;
const WRITE_RETRY_DELAY_MS = 300;

export interface DrillCounts {
  reads: number;
  failedReads: number;
  /** Answered, but a provider reported ERROR or TIMEOUT (the search went on without it). */
  degradedReads: number;
  writes: number;
  acknowledgedWrites: number;
  /** Attempts that failed with a retryable error (the client tried again with the same key). */
  retryableWriteFailures: number;
  /** Writes still failing after every attempt (all of them retryable failures). */
  abandonedWrites: number;
  /** Writes that failed with an error that is not retryable: never expected. */
  nonRetryableWriteFailures: number;
}

const ZERO: DrillCounts = { reads: 0, failedReads: 0, degradedReads: 0, writes: 0, acknowledgedWrites: 0, retryableWriteFailures: 0, abandonedWrites: 0, nonRetryableWriteFailures: 0 };

export function countsBetween(before: DrillCounts, after: DrillCounts): DrillCounts {
  return Object.fromEntries(Object.entries(after).map(([key, value]) => [key, value - before[key as keyof DrillCounts]])) as unknown as DrillCounts;
}

interface GraphQLAnswer {
  status: number;
  /** The start of a body that is not JSON (HAProxy's own error pages). */
  text?: string;
  body: { data?: Record<string, any> | null; errors?: { message: string; extensions?: { code?: string } }[] } | null;
  /** A transport failure (connection refused or reset, timeout): no HTTP answer at all. */
  transportError?: string;
}

async function post(url: string, token: string, query: string, variables: Record<string, unknown>, idempotencyKey?: string): Promise<GraphQLAnswer> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}`, ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}) },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let body: GraphQLAnswer["body"] = null;
    try {
      body = JSON.parse(text) as GraphQLAnswer["body"];
    } catch {
      body = null;
    }
    return body ? { status: response.status, body } : { status: response.status, body, text: text.slice(0, 200).replace(/\s+/g, " ") };
  } catch (error) {
    return { status: 0, body: null, transportError: (error as Error).cause ? String(((error as Error).cause as Error).message ?? (error as Error).cause) : (error as Error).message };
  }
}

function describe(answer: GraphQLAnswer): string {
  if (answer.transportError) return `transport: ${answer.transportError}`;
  const errors = answer.body?.errors?.map((e) => `${e.extensions?.code ?? "?"}: ${e.message.slice(0, 120)}`).join("; ");
  return `HTTP ${answer.status}${errors ? ` ${errors}` : ""}${answer.text ? ` ${answer.text}` : ""}`;
}

function isRetryable(answer: GraphQLAnswer): boolean {
  if (answer.transportError || answer.status === 502 || answer.status === 503 || answer.status === 504) return true;
  const errors = answer.body?.errors ?? [];
  return errors.length > 0 && errors.every((error) => RETRYABLE_CODES.has(error.extensions?.code ?? ""));
}

/**
 * The drill's traffic: `clients` loops against the topology's gateway frontend until stopped.
 * Counts are cumulative; a phase's are the difference of two snapshots.
 */
export class DrillTraffic {
  private counts: DrillCounts = { ...ZERO };
  private running = false;
  private loops: Promise<void>[] = [];
  /** Every acknowledged write: conversation ids created, message ids appended. */
  readonly acknowledged = { conversations: [] as string[], messages: [] as string[] };
  /** Each kind of failure seen (its description, numbers and ids left out) and how often: for the report and for whoever reads a failed test. */
  readonly failures = new Map<string, number>();

  private constructor(
    private readonly url: string,
    private readonly tokens: string[],
    private readonly thinkMs: number,
  ) {}

  static async create(topology: Topology, clients = DRILL_CLIENTS, thinkMs = DRILL_THINK_MS): Promise<DrillTraffic> {
    const auth = loadConfig({ JWT_SECRET: topology.jwtSecret }).auth;
    const tokens = await Promise.all(Array.from({ length: clients }, (_, i) => signToken({ userId: `drill-user-${i}`, organizationId: DEMO_ORGANIZATION.id, teamIds: [], role: "member", name: `Drill user ${i}` }, auth, "1d")));
    return new DrillTraffic(topology.gatewayUrl, tokens, thinkMs);
  }

  snapshot(): DrillCounts {
    return { ...this.counts };
  }

  start(): void {
    this.running = true;
    // Started 20 ms apart: 50 first writes at the same instant is a thundering herd, not the load.
    this.loops = this.tokens.map((token, client) => sleep(client * 20).then(() => this.client(token, client)));
  }

  async stop(): Promise<DrillCounts> {
    this.running = false;
    await Promise.all(this.loops);
    return this.snapshot();
  }

  private sample(line: string) {
    const kind = line.replace(/\b[0-9a-f-]{36}\b/g, "<id>").replace(/attempt \d+/, "attempt n").slice(0, 240);
    if (this.failures.size < 100 || this.failures.has(kind)) this.failures.set(kind, (this.failures.get(kind) ?? 0) + 1);
  }

  /** The kinds of failure seen, most frequent first, each with its count. */
  get samples(): string[] {
    return [...this.failures].sort((a, b) => b[1] - a[1]).map(([kind, count]) => `${count}× ${kind}`);
  }

  /**
   * Waits until `writes` more writes have been acknowledged: as a warm-up (the clients' first
   * writes done, their users known; `forget` then drops the failures seen so far), or to show
   * that writes go on after a fault.
   */
  async awaitWrites(writes: number, options: { forget?: boolean; timeoutMs?: number } = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? 120_000;
    const target = this.counts.acknowledgedWrites + writes;
    const deadline = Date.now() + timeoutMs;
    while (this.counts.acknowledgedWrites < target) {
      if (Date.now() > deadline) throw new Error(`only ${this.counts.acknowledgedWrites} of ${target} writes acknowledged within ${timeoutMs} ms; failures: ${this.samples.slice(0, 5).join(" | ")}`);
      await sleep(100);
    }
    if (options.forget) this.failures.clear();
  }

  private async client(token: string, client: number): Promise<void> {
    let conversation: string | null = null;
    let sequence = 0;
    while (this.running) {
      const roll = Math.random();
      if (roll < 0.6) {
        await this.read(token, SEARCH_QUERY, { q: SEARCHES[(client + sequence) % SEARCHES.length] }, (data) => {
          if (!Array.isArray(data.search?.hits)) return "no hits list";
          if ((data.search.providers as { status: string }[]).some((p) => p.status === "ERROR" || p.status === "TIMEOUT")) this.counts.degradedReads += 1;
          return null;
        });
      } else if (roll < 0.7 && conversation) {
        const id = conversation;
        await this.read(token, READ_QUERY, { id }, (data) => (data.conversation?.id === id ? null : "its own acknowledged conversation was not found"));
      } else if (!conversation || roll < 0.8) {
        const key = `drill-${client}-${sequence}-${randomUUID()}`;
        const data = await this.write(token, CREATE_MUTATION, { input: { title: `Drill conversation ${client}/${sequence}`, messages: [{ role: "USER", content: `first message of drill client ${client}` }] } }, key);
        const id = data?.createConversation?.id as string | undefined;
        if (id) {
          this.acknowledged.conversations.push(id);
          conversation = id;
        }
      } else {
        const key = `drill-${client}-${sequence}-${randomUUID()}`;
        const data = await this.write(token, APPEND_MUTATION, { id: conversation, messages: [{ role: "ASSISTANT", content: `answer ${sequence} to drill client ${client}` }] }, key);
        for (const message of (data?.appendMessages?.messages as { id: string }[] | undefined) ?? []) this.acknowledged.messages.push(message.id);
      }
      sequence += 1;
      if (this.running) await sleep(this.thinkMs);
    }
  }

  private async read(token: string, query: string, variables: Record<string, unknown>, check: (data: Record<string, any>) => string | null): Promise<void> {
    this.counts.reads += 1;
    const answer = await post(this.url, token, query, variables);
    const problem = answer.status === 200 && answer.body?.data && !answer.body.errors ? check(answer.body.data) : describe(answer);
    if (problem) {
      this.counts.failedReads += 1;
      this.sample(`read failed: ${problem}`);
    }
  }

  private async write(token: string, query: string, variables: Record<string, unknown>, key: string): Promise<Record<string, any> | null> {
    this.counts.writes += 1;
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt += 1) {
      const answer = await post(this.url, token, query, variables, key);
      if (answer.status === 200 && answer.body?.data && !answer.body.errors) {
        this.counts.acknowledgedWrites += 1;
        return answer.body.data;
      }
      if (!isRetryable(answer)) {
        this.counts.nonRetryableWriteFailures += 1;
        this.sample(`write failed (not retryable): ${describe(answer)}`);
        return null;
      }
      this.counts.retryableWriteFailures += 1;
      this.sample(`write attempt ${attempt} failed (retryable): ${describe(answer)}`);
      if (attempt < WRITE_ATTEMPTS) await sleep(WRITE_RETRY_DELAY_MS * attempt);
    }
    this.counts.abandonedWrites += 1;
    return null;
  }

  /** Every acknowledged write looked up on the database the apps write to (the new primary after a failover). */
  async lostWrites(databaseUrl: string): Promise<{ conversations: number; messages: number; checked: number }> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const found = async (table: string, ids: string[]) => {
        if (ids.length === 0) return 0;
        const { rows } = await client.query<{ count: string }>(`SELECT count(*) FROM ${table} WHERE id::text = ANY($1::text[])`, [ids]);
        return Number(rows[0]!.count);
      };
      const { conversations, messages } = this.acknowledged;
      return {
        conversations: conversations.length - (await found("conversations", conversations)),
        messages: messages.length - (await found("messages", messages)),
        checked: conversations.length + messages.length,
      };
    } finally {
      await client.end();
    }
  }
}

export interface PhaseResult extends DrillCounts {
  phase: string;
  /** What happened, e.g. "kill -9 search-1". */
  action: string;
  /** Milliseconds from the signal until HAProxy had the instance DOWN (kill -9), or until it was UP again (restart). */
  takenOutMs?: number;
  backUpMs?: number;
}

/** (a): kill -9 one instance of each tier in turn, under the running traffic. */
export async function killEachTier(topology: Topology, traffic: DrillTraffic, options: { tiers?: readonly Tier[]; restart: boolean; holdMs?: number; index?: number; log?: (line: string) => void }): Promise<PhaseResult[]> {
  const results: PhaseResult[] = [];
  for (const tier of options.tiers ?? TIERS) {
    const instance = topology.instance(tier, options.index ?? 1);
    const before = traffic.snapshot();
    const killedAt = performance.now();
    await instance.kill("SIGKILL");
    await topology.waitUntilDown(instance.name);
    const takenOutMs = Math.round(performance.now() - killedAt);
    await sleep(options.holdMs ?? 2_000);
    let backUpMs: number | undefined;
    if (options.restart) {
      const restartAt = performance.now();
      await instance.start();
      backUpMs = Math.round(performance.now() - restartAt);
    }
    const result = { phase: "kill -9", action: `kill -9 ${instance.name}`, ...countsBetween(before, traffic.snapshot()), takenOutMs, ...(backUpMs !== undefined ? { backUpMs } : {}) };
    options.log?.(`   ${result.action}: DOWN in ${takenOutMs} ms${backUpMs !== undefined ? `, UP again ${backUpMs} ms after its start` : ""}; ${formatPhase(result)}`);
    results.push(result);
  }
  return results;
}

/** (b): every instance in turn: SIGTERM, its drain and exit, started again, UP before the next. */
export async function rollingRestart(topology: Topology, traffic: DrillTraffic, log?: (line: string) => void): Promise<PhaseResult> {
  const before = traffic.snapshot();
  for (const instance of topology.instances) {
    const exit = await instance.kill("SIGTERM");
    if (exit.code !== 0) log?.(`   ${instance.name} exited with ${JSON.stringify(exit)} after SIGTERM`);
    await instance.start();
  }
  const result: PhaseResult = { phase: "rolling restart", action: `SIGTERM + start, ${topology.instances.length} instances in turn`, ...countsBetween(before, traffic.snapshot()) };
  log?.(`   ${result.action}: ${formatPhase(result)}`);
  return result;
}

export interface FailoverResult extends PhaseResult {
  /** From stopping the primary until a probe write through the gateway succeeded again. */
  writesBackMs: number;
  /** Of which: stopping the primary and promoting the standby (pg_ctl). */
  promotionMs: number;
}

/** (c): the primary stopped, the standby promoted; a probe write every 100 ms until one succeeds. */
export async function failOver(topology: Topology, traffic: DrillTraffic, log?: (line: string) => void): Promise<FailoverResult> {
  const auth = loadConfig({ JWT_SECRET: topology.jwtSecret }).auth;
  const token = await signToken({ userId: "drill-failover-probe", organizationId: DEMO_ORGANIZATION.id, teamIds: [], role: "member" }, auth, "1h");
  const before = traffic.snapshot();
  const stoppedAt = performance.now();
  await topology.failover();
  const promotionMs = Math.round(performance.now() - stoppedAt);
  let writesBackMs = -1;
  for (let probe = 0; writesBackMs < 0; probe += 1) {
    const answer = await post(topology.gatewayUrl, token, CREATE_MUTATION, { input: { title: `failover probe ${probe}` } }, `failover-probe-${probe}-${randomUUID()}`);
    if (answer.status === 200 && answer.body?.data?.createConversation?.id) writesBackMs = Math.round(performance.now() - stoppedAt);
    else if (performance.now() - stoppedAt > 120_000) throw new Error(`writes did not succeed within 120 s of the failover; last answer ${describe(answer)}`);
    else await sleep(100);
  }
  // A little traffic on the new primary before the phase is closed.
  await sleep(2_000);
  const result: FailoverResult = { phase: "failover", action: "primary stopped, standby promoted", ...countsBetween(before, traffic.snapshot()), writesBackMs, promotionMs };
  log?.(`   ${result.action}: writes back after ${writesBackMs} ms (promotion ${promotionMs} ms); ${formatPhase(result)}`);
  return result;
}

function formatPhase(counts: DrillCounts): string {
  return `${counts.reads} reads (${counts.failedReads} failed, ${counts.degradedReads} degraded), ${counts.writes} writes (${counts.acknowledgedWrites} acknowledged, ${counts.retryableWriteFailures} retryable failed attempts, ${counts.abandonedWrites} abandoned, ${counts.nonRetryableWriteFailures} not retryable)`;
}

export interface TopologyFaultsEntry extends EntryBase {
  clients: number;
  startupMs: number;
  phases: (PhaseResult | FailoverResult)[];
  lost: { conversations: number; messages: number; checked: number };
  samples: string[];
}

export const topologyFaultsScenario: Scenario<TopologyFaultsEntry> = {
  name: "topology-faults",
  title: "Faults and deploys under load on the multi-instance topology (HAProxy, 2 of each instance, PgBouncer, primary + standby)",
  async run(context) {
    const topology = await startTopology({ basePort: DRILL_BASE_PORT, env: DRILL_ENV, log: (line) => context.log(`   ${line}`) });
    try {
      context.log(`   topology up in ${topology.startupMs} ms`);
      const traffic = await DrillTraffic.create(topology);
      traffic.start();
      // Every client's first write done (its user known to the database) before anything is counted.
      await traffic.awaitWrites(100, { forget: true });
      const phases: (PhaseResult | FailoverResult)[] = [];
      let before = traffic.snapshot();
      await sleep(Math.max(5, context.options.durationSeconds) * 1_000);
      phases.push({ phase: "steady", action: `${Math.max(5, context.options.durationSeconds)} s, no fault`, ...countsBetween(before, traffic.snapshot()) });
      phases.push(...(await killEachTier(topology, traffic, { restart: true, log: context.log })));
      phases.push(await rollingRestart(topology, traffic, context.log));
      phases.push(await failOver(topology, traffic, context.log));
      before = traffic.snapshot();
      await traffic.stop();
      const lost = await traffic.lostWrites(topology.databaseUrl);
      context.log(`   acknowledged writes checked on the new primary: ${lost.checked}, lost: ${lost.conversations + lost.messages}`);
      return {
        database: "postgres",
        size: context.size,
        run: context.run,
        conditions: {
          ...baseConditions(context, {}),
          database: "PostgreSQL 15 primary + streaming hot standby (deploy/local/postgres-clusters.ts), PgBouncer 1.18 session mode, HAProxy 2.6",
          "demo conversations": 300,
          clients: DRILL_CLIENTS,
          "gateway response cache": "off",
          "search result cache": "off",
        },
        corpus: context.corpus,
        profiles: [],
        clients: DRILL_CLIENTS,
        startupMs: topology.startupMs,
        phases,
        lost,
        samples: traffic.samples,
      };
    } finally {
      await topology.stop();
    }
  },
  renderSection(file) {
    return file.entries
      .map((entry) =>
        [
          `### ${entryHeading(entry)}`,
          "",
          renderConditions(entry),
          "",
          `Topology started in ${(entry.startupMs / 1000).toFixed(1)} s; ${entry.clients} clients throughout. Acknowledged writes checked on the new primary at the end: ${formatCount(entry.lost.checked)}, lost: **${entry.lost.conversations + entry.lost.messages}**.`,
          "",
          renderMarkdownTable(
            ["phase", "action", "reads", "failed reads", "degraded reads", "writes", "acknowledged", "retryable failed attempts", "abandoned", "not retryable", "taken out (ms)", "back (ms)"],
            entry.phases.map((p) => [
              p.phase,
              p.action,
              formatCount(p.reads),
              String(p.failedReads),
              String(p.degradedReads),
              formatCount(p.writes),
              formatCount(p.acknowledgedWrites),
              String(p.retryableWriteFailures),
              String(p.abandonedWrites),
              String(p.nonRetryableWriteFailures),
              p.takenOutMs !== undefined ? String(p.takenOutMs) : "",
              "writesBackMs" in p ? `writes after ${p.writesBackMs}` : p.backUpMs !== undefined ? String(p.backUpMs) : "",
            ]),
          ),
          ...(entry.samples.length > 0 ? ["", "First failures seen:", "", ...entry.samples.slice(0, 10).map((line) => `- \`${line}\``)] : []),
        ].join("\n"),
      )
      .join("\n\n");
  },
};
