/**
 * Another organization's ordinary query while an attacker hammers the gateway, one attack class
 * at a time: `conversations(first: 5) { nodes { id title } }` of the benchmark organization, one
 * request in flight, first with no attack (baseline), then during each attack, then with no attack
 * again (drift). The ratio under attack / baseline (p50 and p99), measured in one run against the
 * same servers, is issue 8's measure of whether a hostile request costs only its sender.
 *
 * The attacker runs from a process of its own (bench/attack-generator.mjs), the victim from the
 * load generator's, so neither client takes the servers' event loop. Each attack is bounded in
 * time (the victim's run plus a short lead and tail) and in requests. Every attacker signs in as
 * an organization of its own, so one attack's spent rate budget does not refuse the next.
 *
 * The goal (issue 19): while any attack class runs, the victim's p50 ≤ 1.5× and p99 ≤ 2× its
 * baseline (GOAL); the table says of each class whether it met it.
 *
 * Rate limits are on with one-second windows (budgets scaled down from the defaults so that a
 * run of a few seconds spends an attacker's many times over, and the victim's single connection
 * never reaches its own); both response caches are off, so every victim query does real work.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { RateLimitSettings } from "../../lib/graphql/rate-limit.js";
import { DEFAULT_OPERATION_LIMITS } from "../../lib/graphql/operation-limits.js";
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { silentLogger } from "../../lib/logger.js";
import { signToken } from "../../lib/tenancy/token.js";
import { startGateway, type RunningGateway } from "../../gateway/server.js";
import { sampleConversationIds } from "../corpus.js";
import { graphqlBody, runLoad, warmUp, type LoadOptions, type LoadResult } from "../load.js";
import { databaseLabel, entryHeading, formatCount, formatErrors, formatMs, formatRatio, formatRate, renderConditions, renderWarnings, type EntryBase } from "../report.js";
import { baseConditions, sleep, type Scenario, type ScenarioContext } from "../scenario.js";
import { benchConfig, benchToken, settle, startBenchSubgraphs, type BenchSubgraphs } from "../stack.js";
import { ratio, round } from "../stats.js";

/** Under attack / baseline, at most. */
export const GOAL = { p50: 1.5, p99: 2 } as const;

const ATTACK_GENERATOR = fileURLToPath(new URL("../attack-generator.mjs", import.meta.url));

const VICTIM_QUERY = `query HostileLoadVictim { conversations(first: 5) { nodes { id title } } }`;

/**
 * Budgets per one-second window: above what the victim's single connection can send (about 140
 * requests a second at its idle latency), below what a flood gets through on 2 cores, so the
 * flooding organization is refused (429) for most of its run while the victim never is (its
 * errors column would show it).
 */
const RATE_LIMIT: RateLimitSettings = { windowSeconds: 1, organizationPoints: 250, userPoints: 250, anonymousPoints: 250, redisUrl: null };

export interface AttackRequest {
  headers: Record<string, string>;
  body: string;
  /** Where it goes, when not the gateway's /graphql. */
  url?: string;
  /** Streamed without a Content-Length. */
  chunked?: boolean;
}

export interface Attack {
  name: string;
  description: string;
  concurrency: number;
  /** At most this many requests, whatever the time. */
  maxRequests: number;
  requests: AttackRequest[];
}

export interface AttackOutcome {
  durationSeconds: number;
  sent: number;
  completed: number;
  networkErrors: number;
  /** Responses by HTTP status. */
  statuses: Record<string, number>;
  /** Responses by their first `extensions.code` ("data" for a normal answer). */
  codes: Record<string, number>;
  latencyMs: { p50: number | null; p99: number | null };
  firstError: string | null;
}

export interface HostilePhase {
  attack: string;
  description: string;
  concurrency: number;
  attacker: AttackOutcome;
  victim: LoadResult;
  /** Under this attack / baseline. */
  ratios: { p50: number; p99: number };
  /** Seconds the servers needed to go quiet after the attack stopped. */
  settleSeconds: number;
}

export interface HostileLoadEntry extends EntryBase {
  victimQuery: string;
  baseline: LoadResult;
  baselineAfter: LoadResult;
  phases: HostilePhase[];
  /** Baseline after / before, p50: how far the machine drifted during the scenario. */
  baselineDrift: number;
  serverWarnings: { count: number; samples: string[] };
}

/** What an attack scenario runs: the victim's requests and the attack classes, prepared before anything is measured. */
export interface AttackScenarioSpec {
  name: "hostile" | "fair-shares";
  title: string;
  /** The victim's query, as the report names it. */
  victimQuery: string;
  /** The victim's request bodies (taken in turn). */
  victimBodies(database: BenchDatabase): Promise<string[]>;
  attackClasses(setup: AttackSetup): Promise<Attack[]>;
  /** Rate limits of the run (default: budgets of 250 points per one-second window). */
  rateLimit?: RateLimitSettings;
}

export interface AttackSetup {
  auth: BenchSubgraphs["config"]["auth"];
  database: BenchDatabase;
  gatewayUrl: string;
  searchSubgraphUrl: string;
  tokenOf(organizationId: string): Promise<Record<string, string>>;
}

type BenchDatabase = ScenarioContext["bench"]["database"];

export const hostileLoadScenario: Scenario<HostileLoadEntry> = attackScenario({
  name: "hostile",
  title: "Another organization's queries under attack",
  victimQuery: VICTIM_QUERY,
  victimBodies: async () => [graphqlBody(VICTIM_QUERY)],
  async attackClasses(setup) {
    const [victimConversationId] = await sampleConversationIds(setup.database, 1);
    return attackClasses(setup, victimConversationId!);
  },
});

/** A scenario that measures the victim's latency under each attack class against its baseline, in one run. */
export function attackScenario(spec: AttackScenarioSpec): Scenario<HostileLoadEntry> {
  return {
    name: spec.name,
    title: spec.title,
    async run(context) {
      const { database } = context.bench;
      const config = benchConfig({ cacheTtlSeconds: 0 });
      const rateLimit = spec.rateLimit ?? RATE_LIMIT;
      const subgraphs = await startBenchSubgraphs(database, config, rateLimit);
      let gateway: RunningGateway | null = null;
      const attacker = new AttackGenerator();
      try {
        gateway = await startGateway({
          supergraphSdl: subgraphs.supergraphSdl,
          host: config.host,
          port: 0,
          queryPlanner: "rust",
          corsOrigins: config.gateway.corsOrigins,
          production: false,
          upstreamTimeoutMs: config.gateway.upstreamTimeoutMs,
          logger: silentLogger,
          runtimeLogLevel: false,
          deduplicateInflightRequests: false,
          auth: config.auth,
          responseCache: null,
          operationLimits: DEFAULT_OPERATION_LIMITS,
          rateLimit,
          mcp: {},
        });
        const victim: LoadOptions = { url: gateway.url, token: await benchToken(config), bodies: await spec.victimBodies(database), connections: 1, durationSeconds: context.options.durationSeconds };
        const tokenOf = async (organizationId: string) => ({ authorization: `Bearer ${await signToken({ organizationId, userId: "mallory", teamIds: [], name: "Mallory" }, config.auth, "2h")}` });
        context.log("  preparing the attacks…");
        const attacks = await spec.attackClasses({ auth: config.auth, database, gatewayUrl: gateway.url, searchSubgraphUrl: subgraphs.searchServer.url, tokenOf });
        const leadMs = Math.min(500, context.options.durationSeconds * 250);

        await warmUp(victim, Math.min(3, Math.max(0.5, context.options.durationSeconds / 3)));
        context.log("  baseline…");
        const baseline = await runLoad(victim);
        const phases: HostilePhase[] = [];
        for (const attack of attacks) {
          context.log(`  under attack: ${attack.name}…`);
          const attackRun = attacker.run({
            url: gateway.url,
            requests: attack.requests,
            concurrency: attack.concurrency,
            durationMs: context.options.durationSeconds * 1_000 + 2 * leadMs,
            maxRequests: attack.maxRequests,
            timeoutMs: 30_000,
          });
          await sleep(leadMs);
          const underAttack = await runLoad(victim);
          const outcome = await attackRun;
          const settleSeconds = await settle(subgraphs, database, 300, 30_000);
          phases.push({
            attack: attack.name,
            description: attack.description,
            concurrency: attack.concurrency,
            attacker: outcome,
            victim: underAttack,
            ratios: { p50: ratio(underAttack.latencyMs.p50, baseline.latencyMs.p50), p99: ratio(underAttack.latencyMs.p99, baseline.latencyMs.p99) },
            settleSeconds,
          });
        }
        context.log("  baseline again…");
        const baselineAfter = await runLoad(victim);

        return {
          database: context.bench.kind,
          size: context.size,
          run: context.run,
          conditions: baseConditions(context, {
            "victim query": spec.victimQuery,
            victim: `the benchmark organization, 1 connection (one request in flight), ${context.options.durationSeconds} s per run, through the gateway (Rust planner, in-flight merging off, response cache off, search result cache off)`,
            attacker: `its own process and organization per attack class, running ${leadMs} ms before and after the victim's run`,
            "rate limits": `on: ${rateLimit.organizationPoints} points per organization, ${rateLimit.userPoints} per user, ${rateLimit.anonymousPoints} per anonymous IP, per ${rateLimit.windowSeconds} s window (in memory)`,
            "operation limits": "the defaults (lib/graphql/operation-limits.ts)",
          }),
          corpus: context.corpus,
          profiles: [],
          victimQuery: spec.victimQuery,
          baseline,
          baselineAfter,
          phases,
          baselineDrift: ratio(baselineAfter.latencyMs.p50, baseline.latencyMs.p50),
          serverWarnings: subgraphs.warnings,
        };
      } finally {
        await attacker.stop();
        await gateway?.stop();
        await subgraphs.stop();
      }
    },

    renderSection(file) {
      const table = renderMarkdownTable(
        ["database", "conversations", "attack", "attacker in flight", "attacker requests (per s)", "how the attack was answered", "victim p50", "victim p99", "ratio p50", "ratio p99", `goal (p50 ≤ ${GOAL.p50}×, p99 ≤ ${GOAL.p99}×)`, "victim errors"],
        file.entries.flatMap((entry) => [
          [databaseLabel(entry.database), formatCount(entry.size), "none (baseline)", "–", "–", "–", formatMs(entry.baseline.latencyMs.p50), formatMs(entry.baseline.latencyMs.p99), "1.00×", "1.00×", "–", formatErrors(entry.baseline.errors)],
          ...entry.phases.map((phase) => [
            databaseLabel(entry.database),
            formatCount(entry.size),
            phase.attack,
            String(phase.concurrency),
            `${formatCount(phase.attacker.sent)} (${formatRate(phase.attacker.completed / Math.max(phase.attacker.durationSeconds, 0.001))})`,
            answeredAs(phase.attacker),
            formatMs(phase.victim.latencyMs.p50),
            formatMs(phase.victim.latencyMs.p99),
            formatRatio(phase.ratios.p50),
            formatRatio(phase.ratios.p99),
            meetsGoal(phase) ? "met" : Number.isFinite(phase.ratios.p50) && Number.isFinite(phase.ratios.p99) ? "missed" : "missed (victim got no answer)",
            formatErrors(phase.victim.errors),
          ]),
          [databaseLabel(entry.database), formatCount(entry.size), "none (baseline after)", "–", "–", "–", formatMs(entry.baselineAfter.latencyMs.p50), formatMs(entry.baselineAfter.latencyMs.p99), formatRatio(entry.baselineDrift), formatRatio(ratio(entry.baselineAfter.latencyMs.p99, entry.baseline.latencyMs.p99)), "–", formatErrors(entry.baselineAfter.errors)],
        ]),
      );
      const details = file.entries.map((entry) =>
        [
          `**${entryHeading(entry)}** — attacks, in order: ${entry.phases.map((phase) => `*${phase.attack}*: ${phase.description}`).join("; ")}.`,
          "",
          renderWarnings(entry.serverWarnings),
          renderConditions(entry),
        ]
          .filter((line, index) => line !== "" || index === 1)
          .join("\n"),
      );
      const goalLines = file.entries.map((entry) => {
        const met = entry.phases.filter(meetsGoal).map((phase) => phase.attack);
        const missed = entry.phases.filter((phase) => !meetsGoal(phase)).map((phase) => phase.attack);
        return `Goal (victim p50 ≤ ${GOAL.p50}×, p99 ≤ ${GOAL.p99}× its baseline while the attack runs), ${entryHeading(entry)}: met by ${met.length} of ${entry.phases.length} attack classes${met.length ? ` (${met.join("; ")})` : ""}; missed by ${missed.join("; ") || "none"}.`;
      });
      return [...goalLines, "", table, "", "Ratios are the victim's latency under each attack over its baseline in the same run. 'How the attack was answered': HTTP statuses and first error codes of the attacker's responses.", "", ...details.flatMap((detail) => [detail, ""])].join("\n");
    },
  };
}

/** NaN ratios (a victim that got no answer during the attack) miss the goal too. */
export function meetsGoal(phase: Pick<HostilePhase, "ratios">): boolean {
  const { p50, p99 } = phase.ratios;
  return Number.isFinite(p50) && Number.isFinite(p99) && p50 <= GOAL.p50 && p99 <= GOAL.p99;
}

function answeredAs(outcome: AttackOutcome): string {
  const statuses = Object.entries(outcome.statuses).map(([status, count]) => `${status} × ${formatCount(count)}`);
  const codes = Object.entries(outcome.codes).map(([code, count]) => `${code} ${formatCount(count)}`);
  const network = outcome.networkErrors ? [`${formatCount(outcome.networkErrors)} network errors`] : [];
  return [...statuses, ...network].join(", ") + (codes.length ? ` (${codes.join(", ")})` : "");
}

/** The attack classes of issue 8, each with its requests prepared before anything is measured. */
async function attackClasses(setup: AttackSetup, victimConversationId: string): Promise<Attack[]> {
  const { auth, tokenOf } = setup;
  const fragmentBomb = `{ ...F0 } ${Array.from({ length: 40 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join(" ")} fragment F40 on Query { __typename }`;
  const aliases = `{ ${Array.from({ length: 10_000 }, (_, i) => `a${i}: conversations(first: 1) { totalCount }`).join(" ")} }`;
  const searchAliases = `{ ${Array.from({ length: 1_000 }, (_, i) => `s${i}: search(input: { query: "deadlock ${i}" }) { tookMs }`).join(" ")} }`;
  const deepNesting = `{ ${"conversations { ".repeat(5_000)}id${" }".repeat(5_000)} }`;
  const append = JSON.stringify({
    query: `mutation($id: ID!, $messages: [MessageInput!]!) { appendMessages(conversationId: $id, messages: $messages) { messages { position } } }`,
    variables: { id: victimConversationId, messages: Array.from({ length: 100 }, () => ({ role: "USER", content: "a".repeat(100_000) })) },
  });
  // Different texts, so no cache anywhere could answer them all.
  const nulSearches = Array.from({ length: 50 }, (_, i) => graphqlBody(`query($input: SearchInput!) { search(input: $input) { hits { score } providers { status } } }`, { input: { query: `dead\u0000lock ${i} order\u0000service` } }));
  const wrongSecret = { ...auth, jwtSecret: "not-the-gateway-secret-but-long-enough-0123456789" };
  const badTokens = [
    ...(await Promise.all(Array.from({ length: 100 }, (_, i) => signToken({ organizationId: `forged-${i}`, userId: `u${i}`, teamIds: [] }, wrongSecret, "2h")))),
    ...Array.from({ length: 50 }, (_, i) => `${Buffer.from('{"alg":"none","typ":"JWT"}').toString("base64url")}.${Buffer.from(JSON.stringify({ sub: `u${i}`, org: "bench-org" })).toString("base64url")}.`),
    ...Array.from({ length: 50 }, (_, i) => `garbage-${i}-${"x".repeat(i * 20)}`),
  ];
  const ordinary = graphqlBody(VICTIM_QUERY);
  const nulHeaders = await tokenOf("attacker-nul");
  return [
    { name: "fragment bomb, no token", description: "40 fragments each spreading the next twice (1.6 KB), without a token", concurrency: 8, maxRequests: 200_000, requests: [{ headers: {}, body: graphqlBody(fragmentBomb) }] },
    { name: "10,000 aliases", description: "10,000 aliases of conversations(first: 1) { totalCount }, with a valid token", concurrency: 4, maxRequests: 20_000, requests: [{ headers: await tokenOf("attacker-aliases"), body: graphqlBody(aliases) }] },
    { name: "1,000 aliases of search", description: "1,000 aliased searches, with a valid token", concurrency: 4, maxRequests: 50_000, requests: [{ headers: await tokenOf("attacker-search-aliases"), body: graphqlBody(searchAliases) }] },
    { name: "deep nesting", description: "5,000 nested selections, with a valid token", concurrency: 8, maxRequests: 100_000, requests: [{ headers: await tokenOf("attacker-nesting"), body: graphqlBody(deepNesting) }] },
    {
      name: "100 × 100,000 letters to a foreign id",
      description: "appendMessages of 100 messages of 100,000 repeated letters each (10 MB) to the victim organization's conversation, with the attacker's valid token",
      concurrency: 2,
      maxRequests: 500,
      requests: [{ headers: await tokenOf("attacker-append"), body: append }],
    },
    { name: "NUL-byte search", description: "searches whose text holds NUL bytes, 50 different texts, with a valid token", concurrency: 8, maxRequests: 100_000, requests: nulSearches.map((body) => ({ headers: nulHeaders, body })) },
    { name: "bad tokens", description: "the victim's query with 200 different bad tokens (wrong secret, alg none, garbage)", concurrency: 16, maxRequests: 500_000, requests: badTokens.map((token) => ({ headers: { authorization: `Bearer ${token}` }, body: ordinary })) },
    { name: "rate-limit exhaustion", description: "one organization floods the victim's own query, far past its budget", concurrency: 16, maxRequests: 500_000, requests: [{ headers: await tokenOf("attacker-flood"), body: ordinary }] },
    ...(await costClasses(tokenOf, setup)),
  ];
}

/**
 * Issue 19's classes: requests that cost others far more than they paid, each now charged by what
 * it is (bytes read, MCP messages and what they return, the operation's estimated cost) or refused
 * before it costs anything (the body limit, /readyz's shared probe).
 */
async function costClasses(tokenOf: (organizationId: string) => Promise<Record<string, string>>, { gatewayUrl, searchSubgraphUrl }: { gatewayUrl: string; searchSubgraphUrl: string }): Promise<Attack[]> {
  const mcpUrl = gatewayUrl.replace(/\/graphql$/, "/mcp");
  const mcpHeaders = async (organizationId: string) => ({ ...(await tokenOf(organizationId)), accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-03-26" });
  const schemaReads = JSON.stringify(Array.from({ length: 10 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "resources/read", params: { uri: "schema://supergraph" } })));
  const toolSearches = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "search", arguments: { query: `deadlock ${i}` } } })));
  const aliasedSearches = (count: number) => graphqlBody(`{ ${Array.from({ length: count }, (_, i) => `s${i}: search(input: { query: "deadlock ${i}" }) { tookMs }`).join(" ")} }`);
  const upload = JSON.stringify({
    query: `mutation($input: UploadDocumentInput!) { uploadDocument(input: $input) { id } }`,
    variables: { input: { fileName: "big.txt", contentBase64: Buffer.alloc(13_000_000, "a").toString("base64") } },
  });
  return [
    { name: "MCP resources/read", description: "POST /mcp with a batch of 10 reads of the schema resource (the largest batch admitted), with a valid token", concurrency: 4, maxRequests: 20_000, requests: [{ url: mcpUrl, headers: await mcpHeaders("attacker-mcp-read"), body: schemaReads }] },
    { name: "MCP batch of 100 searches", description: "POST /mcp with a batch of 100 tools/call search (refused: 10 at most), with a valid token", concurrency: 2, maxRequests: 2_000, requests: [{ url: mcpUrl, headers: await mcpHeaders("attacker-mcp-batch"), body: toolSearches }] },
    { name: "chunked 15 MB comment", description: "a query that is 15 MB of comment, streamed without a Content-Length, with a valid token", concurrency: 2, maxRequests: 500, requests: [{ chunked: true, headers: await tokenOf("attacker-chunked"), body: graphqlBody(`{ __typename } #${"a".repeat(15_000_000)}`) }] },
    { name: "50 aliases to the search subgraph", description: "50 aliased searches sent straight to the search subgraph (no gateway: the subgraph charges the same budgets), with a valid token", concurrency: 4, maxRequests: 5_000, requests: [{ url: searchSubgraphUrl, headers: await tokenOf("attacker-direct"), body: aliasedSearches(50) }] },
    { name: "24 aliases of search", description: "24 aliased searches (the most the gateway admits) through the gateway, with a valid token", concurrency: 4, maxRequests: 5_000, requests: [{ headers: await tokenOf("attacker-24-aliases"), body: aliasedSearches(24) }] },
    { name: "anonymous /readyz flood", description: "POST /readyz without a token", concurrency: 16, maxRequests: 500_000, requests: [{ url: gatewayUrl.replace(/\/graphql$/, "/readyz"), headers: {}, body: "" }] },
    { name: "13 MB upload", description: "uploadDocument of a 13 MB file (17.3 MB of base64), with a valid token", concurrency: 2, maxRequests: 500, requests: [{ headers: await tokenOf("attacker-upload"), body: upload }] },
  ];
}

/** The attacker's process (bench/attack-generator.mjs), one run at a time. */
class AttackGenerator {
  private child: ChildProcess | null = null;
  private nextId = 1;

  run(options: { url: string; requests: AttackRequest[]; concurrency: number; durationMs: number; maxRequests: number; timeoutMs: number }): Promise<AttackOutcome> {
    this.child ??= fork(ATTACK_GENERATOR, [], { execArgv: [], serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const child = this.child;
    const id = this.nextId++;
    return new Promise<AttackOutcome>((resolve, reject) => {
      const onMessage = (reply: { id: number; ok: boolean; result?: AttackOutcome; error?: string }) => {
        if (reply.id !== id) return;
        child.off("message", onMessage);
        child.off("exit", onExit);
        if (reply.ok && reply.result) resolve({ ...reply.result, durationSeconds: round(reply.result.durationSeconds, 2) });
        else reject(new Error(`attack generator failed: ${reply.error}`));
      };
      const onExit = (code: number | null) => reject(new Error(`attack generator exited with code ${code} before reporting`));
      child.on("message", onMessage);
      child.once("exit", onExit);
      child.send({ id, options });
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.disconnect();
    await exited;
  }
}
