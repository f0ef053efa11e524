/**
 * `npm run topology`: the multi-instance deployment of docs/deployment.md on one machine, from
 * the same files a real deployment uses (deploy/haproxy.cfg, deploy/pgbouncer.ini.template) and
 * the machine's own engines:
 *
 *   clients ─▶ HAProxy :B ─▶ gateway ×2 ─▶ HAProxy :B+1..4 ─▶ each subgraph ×2 ─▶ PgBouncer (session)
 *                                                                               │      └▶ HAProxy :B+34 ─▶ primary (standby as backup)
 *                                                                               └▶ Redis
 *   PostgreSQL primary ──streaming replication──▶ hot standby (deploy/local/postgres-clusters.ts)
 *
 * `startTopology()` starts it all, waits until HAProxy reports every server UP by its health
 * check, and returns the URLs and a handle on each instance (kill it, restart it) for tests and
 * benchmarks; the CLI entry prints the URLs and a token and stops everything on SIGINT/SIGTERM.
 * Every process is a child of this one and every file lives under one temporary directory,
 * removed on stop.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { execFile } from "node:child_process";
import { composeFromConfig } from "../../lib/composition/compose.js";
import { readSupergraphConfig } from "../../lib/composition/supergraph-config.js";
import { loadConfig } from "../../lib/config.js";
import { PROJECT_ROOT, productScriptArguments } from "../../lib/project-files.js";
import { openDatabase } from "../../lib/database/connect.js";
import { migrate } from "../../lib/database/migrate.js";
import { seedDemoOrganization } from "../../app/demo-seed.js";
import { DEMO_ORGANIZATION, DEMO_TEAMS, DEMO_USERS } from "../../lib/demo-data/organization.js";
import { signToken } from "../../lib/tenancy/token.js";
import { startPostgresPair, type PostgresPair } from "./postgres-clusters.js";

const run = promisify(execFile);

/** The repository's root: processes run from it (scripts/, supergraph.yaml, the built web app). */
export const REPOSITORY_ROOT = PROJECT_ROOT;
const HAPROXY_CONFIG = path.join(REPOSITORY_ROOT, "deploy/haproxy.cfg");
const PGBOUNCER_TEMPLATE = path.join(REPOSITORY_ROOT, "deploy/pgbouncer.ini.template");

export const SUBGRAPH_TIERS = ["conversations", "search", "knowledge-base", "external-search"] as const;
export type SubgraphTier = (typeof SUBGRAPH_TIERS)[number];
export type Tier = "gateway" | SubgraphTier;
export const TIERS: readonly Tier[] = ["gateway", ...SUBGRAPH_TIERS];
/** Instances per tier: two, as deploy/haproxy.cfg lists them. */
export const INSTANCES_PER_TIER = 2;
const DATABASE_NAME = "context_search";

/**
 * Ports, from a base B: HAProxy's gateway frontend B and subgraph frontends B+1..B+4, gateways
 * B+10.., subgraph instances B+20.., the PostgreSQL primary B+30 and standby B+31, PgBouncer
 * B+32, Redis B+33, HAProxy's PostgreSQL listener B+34.
 */
export function topologyPorts(base: number) {
  const subgraphFrontend = Object.fromEntries(SUBGRAPH_TIERS.map((tier, i) => [tier, base + 1 + i])) as Record<SubgraphTier, number>;
  const instance = (tier: Tier, index: number) => (tier === "gateway" ? base + 10 + index : base + 20 + SUBGRAPH_TIERS.indexOf(tier) * INSTANCES_PER_TIER + index);
  return { gatewayFrontend: base, subgraphFrontend, instance, primary: base + 30, standby: base + 31, pgbouncer: base + 32, redis: base + 33, postgresFrontend: base + 34 };
}

export interface TopologyOptions {
  /** First port of the 35 the topology uses (default 20000). */
  basePort?: number;
  /** HS256 secret the processes verify tokens with (default: a random one, printed by the CLI as a token). */
  jwtSecret?: string;
  /** Environment for every gateway and subgraph process, over the topology's own (e.g. EMBEDDER, SEARCH_INDEXER). */
  env?: Record<string, string>;
  /** Demo conversations to seed (default 300, as `npm start`); 0 seeds nothing. */
  demoConversations?: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

export interface InstanceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface TopologyInstance {
  tier: Tier;
  /** 1 or 2: its `server` line in deploy/haproxy.cfg (`search-2`). */
  index: number;
  /** HAProxy's name for it, `<tier>-<index>`. */
  name: string;
  port: number;
  /** Its own GraphQL URL (bypassing HAProxy). */
  url: string;
  running(): boolean;
  pid(): number | undefined;
  /** The last 256 KB of what it wrote to stdout and stderr. */
  output(): string;
  /** Sends the signal and waits until the process has exited. */
  kill(signal: "SIGKILL" | "SIGTERM"): Promise<InstanceExit>;
  /** Starts it again (after kill) and waits until HAProxy's health check has it UP. */
  start(): Promise<void>;
}

/** One server as HAProxy's `show stat` reports it. */
export interface ServerState {
  backend: string;
  server: string;
  /** UP, DOWN, NOLB (draining), MAINT, "UP 1/2" (going down), ... */
  status: string;
  /** The last health check's result (L7OK, L4CON, ...), also while the next one is running. */
  checkStatus: string;
  /** Whether a health check was running when HAProxy answered (it then prefixes the last result with "* "). */
  checkRunning: boolean;
  /** Sessions (requests, on HTTP backends) it was given since HAProxy started. */
  sessions: number;
  /** Times a request to it was retried / redispatched elsewhere. */
  retries: number;
  redispatches: number;
}

export interface Topology {
  root: string;
  ports: ReturnType<typeof topologyPorts>;
  /** HAProxy's gateway frontend: where clients send GraphQL. */
  gatewayUrl: string;
  /** HAProxy's frontend for each subgraph tier (the gateways' routing URLs). */
  subgraphUrls: Record<SubgraphTier, string>;
  /** What the app processes use: PgBouncer's writable database. */
  databaseUrl: string;
  /** PgBouncer's database on the hot standby (for DATABASE_READ_URL). */
  replicaUrl: string;
  redisUrl: string;
  postgres: PostgresPair;
  jwtSecret: string;
  instances: TopologyInstance[];
  instance(tier: Tier, index: number): TopologyInstance;
  /** Milliseconds from the call to everything UP. */
  startupMs: number;
  /** Each server of each backend, from HAProxy's stats socket. */
  servers(): Promise<ServerState[]>;
  /** A command on HAProxy's admin socket (`show stat`, `disable server postgres/primary`, ...). */
  haproxy(command: string): Promise<string>;
  /** Waits until every listed HAProxy server (all when none are listed) is UP with a passed check. */
  waitUntilUp(names?: readonly string[], timeoutMs?: number): Promise<void>;
  /** Waits until HAProxy has taken the server out (DOWN). */
  waitUntilDown(name: string, timeoutMs?: number): Promise<void>;
  /**
   * Fails the database over: stops the primary, promotes the standby, and fences the old primary
   * out of HAProxy's PostgreSQL listener (so it could not come back as a second primary). No app
   * process and neither PgBouncer nor HAProxy is restarted.
   */
  failover(): Promise<void>;
  /** The pids of HAProxy and PgBouncer (for CPU accounting per tier; bench/tier-cpu.ts). */
  supportPids(): { haproxy: number | undefined; pgbouncer: number | undefined };
  stop(): Promise<void>;
}

/** A running child with its output kept (bounded) and its exit as a promise. */
interface Child {
  process: ChildProcess;
  output(): string;
  exited: Promise<InstanceExit>;
}

const OUTPUT_LIMIT = 256 * 1024;

function startChild(command: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd = REPOSITORY_ROOT): Child {
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > OUTPUT_LIMIT) output = output.slice(-OUTPUT_LIMIT);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<InstanceExit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  // A spawn failure (binary missing) is an exit too; its message goes to the output.
  child.once("error", (error) => keep(Buffer.from(`\n${command}: ${error.message}\n`)));
  return { process: child, output: () => output, exited };
}

/** Waits until `pattern` appears in the child's output; fails with the output if it exits first. */
async function waitForOutput(child: Child, pattern: RegExp, what: string, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited: InstanceExit | null = null;
  void child.exited.then((exit) => (exited = exit));
  while (!pattern.test(child.output())) {
    if (exited) throw new Error(`${what} exited (${JSON.stringify(exited)}) before it was ready:\n${child.output().slice(-4000)}`);
    if (Date.now() > deadline) throw new Error(`${what} was not ready within ${timeoutMs} ms:\n${child.output().slice(-4000)}`);
    await sleep(50);
  }
}

/** Waits until something accepts TCP connections on the loopback port (PgBouncer logs to its file, not to us). */
async function waitUntilListening(port: number, child: Child, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const connects = () =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
  while (!(await connects())) {
    if (child.process.exitCode !== null || child.process.signalCode !== null) throw new Error(`${what} exited before it listened on ${port}:\n${child.output().slice(-4000)}`);
    if (Date.now() > deadline) throw new Error(`${what} did not listen on ${port} within ${timeoutMs} ms:\n${child.output().slice(-4000)}`);
    await sleep(50);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function stopChild(child: Child, signal: NodeJS.Signals = "SIGTERM", graceMs = 15_000): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill(signal);
  const timer = setTimeout(() => child.process.kill("SIGKILL"), graceMs);
  await child.exited;
  clearTimeout(timer);
}

/** Replaces every `${NAME}` with its value; a name without one is an error, not an empty string. */
export function substitute(template: string, values: Record<string, string>): string {
  return template.replace(/\$\{([A-Z0-9_]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for \${${name}} in the template`);
    return value;
  });
}

/** Sends one command to HAProxy's stats socket and returns its answer. */
function haproxyCommand(socketPath: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let answer = "";
    socket.setTimeout(5_000, () => socket.destroy(new Error(`HAProxy's stats socket did not answer "${command}"`)));
    socket.on("connect", () => socket.end(`${command}\n`));
    socket.on("data", (chunk) => (answer += chunk.toString()));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}

/** Parses `show stat` CSV into the servers of each backend (frontend and backend summary rows left out). */
export function parseServerStates(csv: string): ServerState[] {
  const lines = csv.split("\n").filter((line) => line.length > 0);
  const header = lines[0]?.replace(/^# /, "").split(",") ?? [];
  const column = (name: string) => header.indexOf(name);
  const [pxname, svname, status, checkStatus, stot, wretr, wredis] = ["pxname", "svname", "status", "check_status", "stot", "wretr", "wredis"].map(column) as number[];
  return lines
    .slice(1)
    .map((line) => line.split(","))
    .filter((fields) => fields[svname!] !== "FRONTEND" && fields[svname!] !== "BACKEND")
    .map((fields) => ({
      backend: fields[pxname!]!,
      server: fields[svname!]!,
      status: fields[status!]!,
      // HAProxy's management guide: a check in progress reports the last known status prefixed
      // with "* " (seen in CI as "* L7OK" on an UP server).
      checkStatus: fields[checkStatus!]!.replace(/^\* /, ""),
      checkRunning: fields[checkStatus!]!.startsWith("* "),
      sessions: Number(fields[stot!] || 0),
      retries: Number(fields[wretr!] || 0),
      redispatches: Number(fields[wredis!] || 0),
    }));
}

const asRoot = os.userInfo().uid === 0;

async function handToPostgres(target: string): Promise<void> {
  if (!asRoot) return;
  const uid = Number((await run("id", ["-u", "postgres"])).stdout.trim());
  const gid = Number((await run("id", ["-g", "postgres"])).stdout.trim());
  await chown(target, uid, gid);
}

export async function startTopology(options: TopologyOptions = {}): Promise<Topology> {
  const startedAt = performance.now();
  const log = options.log ?? (() => undefined);
  const ports = topologyPorts(options.basePort ?? 20_000);
  const jwtSecret = options.jwtSecret ?? randomBytes(32).toString("base64url");
  const root = await mkdtemp(path.join(os.tmpdir(), "context-search-topology-"));
  await chmod(root, 0o755);
  const children: Child[] = [];
  const instances: TopologyInstance[] = [];
  let postgres: PostgresPair | null = null;
  const stop = async () => {
    // Clients first (gateways), then what they call, then the engines.
    await Promise.all(instances.filter((i) => i.tier === "gateway").map((i) => (i.running() ? i.kill("SIGTERM") : null)));
    await Promise.all(instances.filter((i) => i.tier !== "gateway").map((i) => (i.running() ? i.kill("SIGTERM") : null)));
    await Promise.all(children.map((child) => stopChild(child)));
    await postgres?.destroy();
    await rm(root, { recursive: true, force: true });
  };

  try {
    log("PostgreSQL primary and hot standby ...");
    postgres = await startPostgresPair({ root: path.join(root, "postgres"), primaryPort: ports.primary, standbyPort: ports.standby, settings: ["max_connections = 300"] });
    await postgres.psql(postgres.primary, `CREATE DATABASE ${DATABASE_NAME}`);

    log("Redis, HAProxy, PgBouncer ...");
    const redis = startChild("redis-server", ["--port", String(ports.redis), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", root], process.env);
    children.push(redis);

    const socketPath = path.join(root, "haproxy.sock");
    const address = (port: number) => `127.0.0.1:${port}`;
    const haproxyEnv: Record<string, string> = {
      HAPROXY_STATS_SOCKET: socketPath,
      GATEWAY_BIND: address(ports.gatewayFrontend),
      POSTGRES_BIND: address(ports.postgresFrontend),
      POSTGRES_PRIMARY: address(ports.primary),
      POSTGRES_STANDBY: address(ports.standby),
    };
    for (const tier of TIERS) {
      const variable = tier.toUpperCase().replace("-", "_");
      if (tier !== "gateway") haproxyEnv[`${variable}_BIND`] = address(ports.subgraphFrontend[tier]);
      for (let index = 1; index <= INSTANCES_PER_TIER; index += 1) haproxyEnv[`${variable}_${index}`] = address(ports.instance(tier, index));
    }
    const haproxy = startChild("haproxy", ["-f", HAPROXY_CONFIG, "-db"], { ...process.env, ...haproxyEnv });
    children.push(haproxy);

    const bouncerDir = path.join(root, "pgbouncer");
    await mkdir(bouncerDir);
    await handToPostgres(bouncerDir);
    const authFile = path.join(bouncerDir, "userlist.txt");
    await writeFile(authFile, '"postgres" ""\n');
    const bouncerIni = path.join(bouncerDir, "pgbouncer.ini");
    await writeFile(
      bouncerIni,
      substitute(await readFile(PGBOUNCER_TEMPLATE, "utf8"), {
        DATABASE_NAME,
        PRIMARY_HOST: "127.0.0.1",
        PRIMARY_PORT: String(ports.postgresFrontend),
        STANDBY_HOST: "127.0.0.1",
        STANDBY_PORT: String(ports.standby),
        PGBOUNCER_LISTEN_ADDR: "127.0.0.1",
        PGBOUNCER_PORT: String(ports.pgbouncer),
        PGBOUNCER_SOCKET_DIR: bouncerDir,
        PGBOUNCER_PID_FILE: path.join(bouncerDir, "pgbouncer.pid"),
        PGBOUNCER_LOG_FILE: path.join(bouncerDir, "pgbouncer.log"),
        PGBOUNCER_AUTH_TYPE: "trust",
        PGBOUNCER_AUTH_FILE: authFile,
        PGBOUNCER_ADMIN_USER: "postgres",
        // 8 app processes × (pool 10 + tenant reads 5) = 120, plus migrations' and the seed's sessions.
        PGBOUNCER_POOL_SIZE: "160",
        PGBOUNCER_MAX_CLIENT_CONN: "1000",
      }),
    );
    for (const file of [authFile, bouncerIni]) await handToPostgres(file);
    // PgBouncer will not run as root; -u switches to postgres once it has read its files.
    const pgbouncer = startChild("pgbouncer", [...(asRoot ? ["-u", "postgres"] : []), bouncerIni], process.env);
    children.push(pgbouncer);
    await waitForOutput(redis, /Ready to accept connections/, "redis-server", 30_000);

    const databaseUrl = `postgresql://postgres@127.0.0.1:${ports.pgbouncer}/${DATABASE_NAME}`;
    const replicaUrl = `postgresql://postgres@127.0.0.1:${ports.pgbouncer}/${DATABASE_NAME}_replica`;
    const redisUrl = `redis://127.0.0.1:${ports.redis}`;
    const servers = async () => parseServerStates(await haproxyCommand(socketPath, "show stat"));
    const waitUntil = async (accept: (states: ServerState[]) => boolean, what: string, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      let states: ServerState[] = [];
      for (;;) {
        states = await servers().catch(() => []);
        if (states.length > 0 && accept(states)) return;
        if (Date.now() > deadline) {
          throw new Error(`${what} within ${timeoutMs} ms; HAProxy reports ${states.map((s) => `${s.backend}/${s.server} ${s.status} ${s.checkStatus}`).join(", ")}\n${haproxy.output().slice(-2000)}`);
        }
        await sleep(100);
      }
    };
    const isUp = (state: ServerState) => state.status === "UP" && /^L[47]OK$/.test(state.checkStatus);
    const waitUntilUp = (names?: readonly string[], timeoutMs = 120_000) =>
      waitUntil((states) => states.filter((s) => !names || names.includes(s.server)).every((s) => isUp(s) || (s.backend === "postgres" && s.server === "standby")), `servers ${names?.join(", ") ?? "(all)"} were not UP`, timeoutMs);
    const waitUntilDown = (name: string, timeoutMs = 60_000) => waitUntil((states) => states.some((s) => s.server === name && s.status.startsWith("DOWN")), `${name} was not taken out`, timeoutMs);

    // The database through the whole path the apps use (PgBouncer, HAProxy): migrated and seeded once.
    await waitUntilUp(["primary"], 30_000);
    await waitUntilListening(ports.pgbouncer, pgbouncer, "pgbouncer");
    log("migrations and the demo organization ...");
    const database = await openDatabase({ url: databaseUrl, pgliteDataDir: "", poolSize: 2 });
    try {
      await migrate(database);
      if ((options.demoConversations ?? 300) > 0) await seedDemoOrganization(database, { conversations: options.demoConversations ?? 300 });
    } finally {
      await database.close();
    }

    const randomSigningSecret = randomBytes(32).toString("base64url");
    const appEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => ({
      ...process.env,
      NODE_OPTIONS: "",
      NODE_ENV: "development",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      JWT_SECRET: jwtSecret,
      SUBGRAPH_SIGNING_SECRET: randomSigningSecret,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      // A key prefix of its own: a Redis shared with something else keeps the two apart.
      REDIS_KEY_PREFIX: "topology:",
      DEMO_SEED: "false",
      EMBEDDER: "hashing",
      // HAProxy's health checks are anonymous requests from one address: two gateways checked
      // every second spend 120 of the anonymous budget a minute (docs/deployment.md).
      RATE_LIMIT_ANONYMOUS_POINTS: "100000",
      // Under HAProxy's probe budget (timeout check 3s in deploy/haproxy.cfg): a busy instance
      // whose database check waits for a pooled connection is slow, not down.
      READINESS_TIMEOUT_MS: "2500",
      ...options.env,
      ...extra,
    });
    const supergraphPath = path.join(root, "supergraph.graphql");
    const makeInstance = (tier: Tier, index: number): TopologyInstance => {
      const port = ports.instance(tier, index);
      const name = `${tier}-${index}`;
      let child: Child | null = null;
      const launch = async () => {
        if (tier === "gateway") {
          child = startChild(process.execPath, productScriptArguments("scripts/start-gateway.ts", "--supergraph", supergraphPath), appEnv({ GATEWAY_PORT: String(port) }));
          await waitForOutput(child, /gateway listening on/, name);
        } else {
          child = startChild(process.execPath, productScriptArguments("scripts/start-subgraph.ts", tier), appEnv({ [`${tier.toUpperCase().replace("-", "_")}_PORT`]: String(port) }));
          await waitForOutput(child, new RegExp(`${tier} subgraph listening on`), name);
        }
      };
      const instance: TopologyInstance = {
        tier,
        index,
        name,
        port,
        url: `http://127.0.0.1:${port}/graphql`,
        running: () => child !== null && child.process.exitCode === null && child.process.signalCode === null,
        pid: () => child?.process.pid,
        output: () => child?.output() ?? "",
        async kill(signal) {
          if (!child) throw new Error(`${name} is not running`);
          const exiting = child.exited;
          if (instance.running()) child.process.kill(signal);
          return exiting;
        },
        async start() {
          if (instance.running()) throw new Error(`${name} is already running`);
          await launch();
          await waitUntilUp([name]);
        },
      };
      (instance as TopologyInstance & { launch(): Promise<void> }).launch = launch;
      return instance;
    };
    for (const tier of TIERS) for (let index = 1; index <= INSTANCES_PER_TIER; index += 1) instances.push(makeInstance(tier, index));
    const launch = (instance: TopologyInstance) => (instance as TopologyInstance & { launch(): Promise<void> }).launch();

    log("subgraphs (2 of each) ...");
    // One by one, their migrations wait on one advisory lock anyway, and 8 Node processes
    // compiling TypeScript at once on a small machine take longer together than in turn.
    const subgraphInstances = instances.filter((i) => i.tier !== "gateway");
    for (let i = 0; i < subgraphInstances.length; i += INSTANCES_PER_TIER) await Promise.all(subgraphInstances.slice(i, i + INSTANCES_PER_TIER).map(launch));

    // The gateways' supergraph: composed as `npm run compose` does, with each routing URL at HAProxy.
    const subgraphUrls = Object.fromEntries(SUBGRAPH_TIERS.map((tier) => [tier, `http://127.0.0.1:${ports.subgraphFrontend[tier]}/graphql`])) as Record<SubgraphTier, string>;
    const routing = Object.fromEntries(SUBGRAPH_TIERS.map((tier) => [`${tier.toUpperCase().replace("-", "_")}_URL`, subgraphUrls[tier]]));
    await writeFile(supergraphPath, await composeFromConfig(readSupergraphConfig(path.join(REPOSITORY_ROOT, "supergraph.yaml"), routing)));
    log("gateways (2) ...");
    await Promise.all(instances.filter((i) => i.tier === "gateway").map(launch));
    await waitUntilUp();

    const topology: Topology = {
      root,
      ports,
      gatewayUrl: `http://127.0.0.1:${ports.gatewayFrontend}/graphql`,
      subgraphUrls,
      databaseUrl,
      replicaUrl,
      redisUrl,
      postgres,
      jwtSecret,
      instances,
      instance(tier, index) {
        const found = instances.find((i) => i.tier === tier && i.index === index);
        if (!found) throw new Error(`no instance ${tier}-${index}`);
        return found;
      },
      startupMs: Math.round(performance.now() - startedAt),
      servers,
      haproxy: (command) => haproxyCommand(socketPath, command),
      waitUntilUp,
      waitUntilDown,
      supportPids: () => ({ haproxy: haproxy.process.pid, pgbouncer: pgbouncer.process.pid }),
      async failover() {
        const pair = postgres!;
        await pair.stopCluster(pair.primary, "fast");
        await pair.promoteStandby();
        // Fenced: the old primary stays out of rotation even if it is started again.
        await haproxyCommand(socketPath, "disable server postgres/primary");
      },
      stop,
    };
    return topology;
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}

/** The CLI: start, print where everything is, stop on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const basePort = process.env.TOPOLOGY_BASE_PORT ? Number(process.env.TOPOLOGY_BASE_PORT) : 20_000;
  if (!Number.isInteger(basePort) || basePort < 1024 || basePort > 65_500) throw new Error(`TOPOLOGY_BASE_PORT must be a port from 1024 to 65500, got "${process.env.TOPOLOGY_BASE_PORT}"`);
  const topology = await startTopology({ basePort, log: (line) => process.stdout.write(`${line}\n`) });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${signal}: stopping every process and removing ${topology.root} ...\n`);
    topology.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`stopping failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  const user = DEMO_USERS[0];
  const auth = loadConfig({ JWT_SECRET: topology.jwtSecret }).auth;
  const token = await signToken(
    { userId: user.id, organizationId: DEMO_ORGANIZATION.id, teamIds: DEMO_TEAMS.filter((team) => (team.members as readonly string[]).includes(user.id)).map((team) => team.id), role: "admin", name: user.name, email: user.email },
    auth,
    "1d",
  );
  const { ports } = topology;
  process.stdout.write(
    [
      "",
      `Topology up in ${(topology.startupMs / 1000).toFixed(1)} s (files in ${topology.root})`,
      `  GraphQL through HAProxy (2 gateways): ${topology.gatewayUrl}`,
      ...Object.entries(topology.subgraphUrls).map(([tier, url]) => `  ${tier} through HAProxy (2 instances): ${url}`),
      `  instances: ${topology.instances.map((i) => `${i.name} :${i.port}`).join(", ")}`,
      `  PostgreSQL primary :${ports.primary}, hot standby :${ports.standby}, PgBouncer :${ports.pgbouncer} (${topology.databaseUrl}), HAProxy's PostgreSQL listener :${ports.postgresFrontend}`,
      `  Redis: ${topology.redisUrl}`,
      `  HAProxy's servers: echo "show stat" | socat stdio ${path.join(topology.root, "haproxy.sock")}`,
      "",
      `Token for ${user.name} in ${DEMO_ORGANIZATION.name} (an admin, valid a day):`,
      `  ${token}`,
      "",
      `  curl -s ${topology.gatewayUrl} -H 'content-type: application/json' -H 'authorization: Bearer ${token}' \\`,
      `    -d '{"query":"{ conversations(first: 3) { totalCount nodes { id title } } }"}'`,
      "",
      "Ctrl-C stops everything.",
      "",
    ].join("\n"),
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
