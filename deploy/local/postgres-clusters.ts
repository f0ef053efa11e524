/**
 * A PostgreSQL primary and a streaming-replication hot standby on loopback, made from the
 * machine's own PostgreSQL binaries (Debian's `postgresql-15`): the local topology
 * (deploy/local/topology.ts) and the replica tests start the same pair from here.
 *
 * The pair lives in a directory of its own, on ports of its own, so it never touches the
 * machine's main cluster (127.0.0.1:5432). The standby is made as a real deployment makes it:
 * `pg_basebackup -R` from the running primary (it writes `standby.signal` and
 * `primary_conninfo`), then started as a hot standby that streams WAL from the primary.
 * Replication lag is injected the way PostgreSQL offers it, `recovery_min_apply_delay`:
 * WAL still arrives at once, but is applied only after the delay, so the standby serves reads
 * that are exactly that far behind. pgvector, installed into the binaries' extension directory,
 * is available to both clusters.
 *
 * PostgreSQL refuses to run as root: when this runs as root (CI, these machines), every server
 * command runs as the `postgres` system user through `runuser`, and the directory is handed to it.
 */
import { execFile } from "node:child_process";
import { chmod, chown, mkdir, rm, writeFile, appendFile, readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { userInfo } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Where Debian puts a major version's server binaries; POSTGRES_BIN_DIR overrides it. */
export function postgresBinDir(): string {
  if (process.env.POSTGRES_BIN_DIR) return process.env.POSTGRES_BIN_DIR;
  for (const major of ["17", "16", "15"]) {
    const dir = `/usr/lib/postgresql/${major}/bin`;
    if (existsSync(path.join(dir, "pg_ctl"))) return dir;
  }
  throw new Error("PostgreSQL's server binaries were not found under /usr/lib/postgresql/<major>/bin: install postgresql or set POSTGRES_BIN_DIR");
}

export interface PostgresPairOptions {
  /** A directory for both clusters' data, sockets and logs (created; removed by `destroy`). */
  root: string;
  primaryPort: number;
  standbyPort: number;
  /** recovery_min_apply_delay of the standby in milliseconds (0: apply as soon as WAL arrives). */
  applyDelayMs?: number;
  /** Extra postgresql.conf lines for both clusters (e.g. `max_connections = 200`). */
  settings?: readonly string[];
}

export interface PostgresCluster {
  name: "primary" | "standby";
  port: number;
  dataDir: string;
  /** postgresql://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string;
}

export interface PostgresPair {
  primary: PostgresCluster;
  standby: PostgresCluster;
  /** Runs SQL as the superuser on one cluster through psql; returns its unaligned, tuples-only output. */
  psql(cluster: PostgresCluster, sql: string, database?: string): Promise<string>;
  /** Changes the standby's apply delay (ALTER SYSTEM + reload on the standby: no restart). */
  setApplyDelay(ms: number): Promise<void>;
  /** Waits until the standby has replayed everything the primary had written when called. */
  waitForReplay(timeoutMs?: number): Promise<void>;
  /** Stops one cluster: `fast` lets no new work in and cuts sessions; `immediate` is a crash. */
  stopCluster(cluster: PostgresCluster, mode?: "fast" | "immediate"): Promise<void>;
  startCluster(cluster: PostgresCluster): Promise<void>;
  /** Promotes the standby to a primary (pg_ctl promote) and waits until it accepts writes. */
  promoteStandby(timeoutMs?: number): Promise<void>;
  /** Stops both clusters (immediately) and removes the directory. */
  destroy(): Promise<void>;
}

const asRoot = userInfo().uid === 0;

/** Runs one of PostgreSQL's programs, as `postgres` when we are root. */
async function pgProgram(program: string, args: readonly string[], options: { timeoutMs?: number } = {}): Promise<string> {
  const binary = path.join(postgresBinDir(), program);
  const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", binary, ...args]] : [binary, [...args]];
  try {
    const { stdout } = await run(file, argv, { timeout: options.timeoutMs ?? 120_000, maxBuffer: 16 * 1024 * 1024, cwd: "/" });
    return stdout;
  } catch (error) {
    const failure = error as Error & { stderr?: string; stdout?: string };
    throw new Error(`${program} ${args.join(" ")} failed: ${failure.stderr?.trim() || failure.stdout?.trim() || failure.message}`);
  }
}

async function handToPostgres(target: string): Promise<void> {
  if (!asRoot) return;
  const { stdout } = await run("id", ["-u", "postgres"]);
  const { stdout: group } = await run("id", ["-g", "postgres"]);
  await chown(target, Number(stdout.trim()), Number(group.trim()));
}

function cluster(name: "primary" | "standby", root: string, port: number): PostgresCluster {
  return { name, port, dataDir: path.join(root, name), url: (database = "postgres") => `postgresql://postgres@127.0.0.1:${port}/${database}` };
}

function serverSettings(port: number, socketDir: string, extra: readonly string[]): string {
  return [
    "",
    "# deploy/local/postgres-clusters.ts",
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${socketDir}'`,
    "wal_level = replica",
    "max_wal_senders = 10",
    "max_replication_slots = 10",
    "hot_standby = on",
    // A standby's reads are not cancelled by the primary's vacuum while they run.
    "hot_standby_feedback = on",
    // A throwaway pair: no fsync. Commits still wait for their WAL to be written, so a
    // committed write is what the standby receives next.
    "fsync = off",
    "full_page_writes = off",
    "shared_buffers = 64MB",
    "max_connections = 200",
    "logging_collector = off",
    ...extra,
    "",
  ].join("\n");
}

async function waitUntilAccepting(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await pgProgram("pg_isready", ["-h", "127.0.0.1", "-p", String(port), "-q"], { timeoutMs: 5_000 });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`PostgreSQL on port ${port} did not accept connections within ${timeoutMs} ms: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * Makes and starts the pair: initdb and start the primary, pg_basebackup the standby from it,
 * start the standby, and wait until it streams. Takes 3–6 s on these machines.
 */
export async function startPostgresPair(options: PostgresPairOptions): Promise<PostgresPair> {
  const { root, primaryPort, standbyPort } = options;
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  await chmod(root, 0o755);
  await handToPostgres(root);
  const socketDir = path.join(root, "sockets");
  await mkdir(socketDir, { recursive: true });
  await handToPostgres(socketDir);
  const primary = cluster("primary", root, primaryPort);
  const standby = cluster("standby", root, standbyPort);
  const logFile = (c: PostgresCluster) => path.join(root, `${c.name}.log`);

  const start = async (c: PostgresCluster) => {
    await pgProgram("pg_ctl", ["-D", c.dataDir, "-l", logFile(c), "-w", "-t", "60", "start"], { timeoutMs: 90_000 });
    await waitUntilAccepting(c.port, 30_000);
  };
  const stop = async (c: PostgresCluster, mode: "fast" | "immediate" = "fast") => {
    if (!existsSync(path.join(c.dataDir, "postmaster.pid"))) return;
    await pgProgram("pg_ctl", ["-D", c.dataDir, "-m", mode, "-w", "-t", "60", "stop"], { timeoutMs: 90_000 }).catch(() => undefined);
  };
  const psql = (c: PostgresCluster, sql: string, database = "postgres") =>
    pgProgram("psql", ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(c.port), "-U", "postgres", "-d", database, "-c", sql]).then((out) => out.trim());

  await pgProgram("initdb", ["-D", primary.dataDir, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync"]);
  await appendFile(path.join(primary.dataDir, "postgresql.conf"), serverSettings(primaryPort, socketDir, options.settings ?? []));
  // Loopback only, trust as on the machine's own cluster; replication connections included.
  await writeFile(
    path.join(primary.dataDir, "pg_hba.conf"),
    ["local all all trust", "local replication all trust", "host all all 127.0.0.1/32 trust", "host replication all 127.0.0.1/32 trust", ""].join("\n"),
  );
  await start(primary);

  // The standby: a base backup of the running primary, -R writes standby.signal and primary_conninfo.
  await pgProgram("pg_basebackup", ["-h", "127.0.0.1", "-p", String(primaryPort), "-U", "postgres", "-D", standby.dataDir, "-R", "-X", "stream", "--no-sync"]);
  await appendFile(
    path.join(standby.dataDir, "postgresql.conf"),
    serverSettings(standbyPort, socketDir, [...(options.settings ?? []), `recovery_min_apply_delay = '${options.applyDelayMs ?? 0}ms'`]),
  );
  await start(standby);

  const pair: PostgresPair = {
    primary,
    standby,
    psql,
    async setApplyDelay(ms) {
      await psql(standby, `ALTER SYSTEM SET recovery_min_apply_delay = '${Math.max(0, Math.round(ms))}ms'`);
      await psql(standby, "SELECT pg_reload_conf()");
    },
    async waitForReplay(timeoutMs = 30_000) {
      const target = await psql(primary, "SELECT pg_current_wal_insert_lsn()");
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const caughtUp = await psql(standby, `SELECT coalesce(pg_last_wal_replay_lsn() >= '${target}'::pg_lsn, false)`);
        if (caughtUp === "t") return;
        if (Date.now() > deadline) throw new Error(`the standby did not replay up to ${target} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    stopCluster: stop,
    startCluster: start,
    async promoteStandby(timeoutMs = 30_000) {
      await pgProgram("pg_ctl", ["-D", standby.dataDir, "-w", "-t", String(Math.ceil(timeoutMs / 1000)), "promote"], { timeoutMs: timeoutMs + 5_000 });
      const deadline = Date.now() + timeoutMs;
      while ((await psql(standby, "SELECT pg_is_in_recovery()")) !== "f") {
        if (Date.now() > deadline) throw new Error(`the standby was still in recovery ${timeoutMs} ms after pg_ctl promote`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async destroy() {
      await stop(standby, "immediate");
      await stop(primary, "immediate");
      await rm(root, { recursive: true, force: true });
    },
  };
  // Streaming, not only started: the standby's WAL receiver is connected to the primary.
  const deadline = Date.now() + 30_000;
  while ((await psql(primary, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")) === "0") {
    if (Date.now() > deadline) throw new Error(`the standby did not start streaming from the primary within 30 s; its log:\n${await readFile(logFile(standby), "utf8").catch(() => "")}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return pair;
}
