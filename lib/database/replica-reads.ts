/**
 * Reads from a hot standby (DATABASE_READ_URL), with read-your-writes.
 *
 * What goes where: search provider reads (the tenant-read pool, tenant-reads.ts) and the entity
 * loads of the DataLoaders (`withTenantLoads`) may go to the replica; everything else — writes,
 * a mutation's own reads, idempotency, credits, the indexing queue, the query log, and every
 * read outside a request — runs on the primary as before. One object per database (ReplicaReads,
 * made by openDatabase) decides; nothing else knows a replica exists.
 *
 * The read-your-writes rule: when a mutation's tenant scopes have committed, the primary's
 * current WAL position (`pg_current_wal_lsn()`, at or past the commit's end) is recorded for the
 * caller's (organization, user) before the response is sent. A later read of that user goes to
 * the replica only if the replica's `pg_last_wal_replay_lsn()` has reached the recorded
 * position; otherwise to the primary. Other users read from the replica and may see the state
 * of up to the replica's lag ago.
 *
 * Why a recorded position, not a token the client carries back: the product's clients are
 * browsers, MCP agents and other teams' routers that pass no such token through a supergraph,
 * and a position kept per user covers every client of that user at once. Why not "the primary
 * for N seconds after a write": the position says exactly when the replica has the write, so a
 * healthy replica serves the user again within milliseconds, and a lagging one never serves it
 * stale however long the lag.
 *
 * Bounds, and where each failure goes (never to a stale read without saying so):
 * - Positions live in Redis when REDIS_URL is set (every instance sees them) and always also in
 *   this process; each lives DATABASE_READ_MAX_LAG_SECONDS.
 * - A replica that has WAL it has not applied and whose last applied commit is older than that,
 *   or that is not streaming from its primary, is "lagging": no read goes to it. So a position
 *   can expire only once the replica is within the bound of the write, or bypassed.
 * - Redis down: a lookup that fails sends that user's reads to the primary (counted in
 *   `decisions.positionsUnavailable`). A record that fails is kept in this process only, and
 *   logged: another instance that then reaches Redis again can serve that user a read up to the
 *   replica's lag old; docs/replica-reads.md says so.
 * - The primary's position unreadable after a write: the user is recorded at the highest
 *   position, i.e. the primary for the TTL.
 * - The replica unreachable, or a read on it failing for a database fault, a recovery conflict,
 *   or a table or column it does not have yet (a migration it has not replayed: new code reaches
 *   the replica's schema before the migration's WAL does): the read is run again on the primary
 *   (reads only, so running again is safe), and no read goes to the replica for DOWN_BACKOFF_MS;
 *   then one probe decides again.
 *
 * The replica's replay position costs one query per process every PROBE_CACHE_MS at most, shared
 * by every read that needs it, and a request looks up its caller's position once (read-session.ts).
 */
import type pg from "pg";
import type { PrismaClient } from "../../generated/prisma/client.js";
import { throttledWarning, type Logger } from "../logger.js";
import type { StatementCounter } from "./connect.js";
import { databaseFault, schemaBehind } from "./faults.js";
import { currentReadSession, type ReadCaller, type ReadSession } from "./read-session.js";
import type { TenantReadPool } from "./tenant-reads.js";
import { withTenantScope, type TenantScopeOptions, type TenantTransaction } from "./tenant-scope.js";
import { LocalWritePositions, parseWalPosition, type WalPosition, type WritePositions } from "./write-positions.js";

/** How long one replay-position probe is shared by the reads that need it. */
export const PROBE_CACHE_MS = 10;
/** How long the replica is left alone after it failed. */
export const DOWN_BACKOFF_MS = 1_000;
/** A position past any the primary will write: "read from the primary until it expires". */
const UNKNOWN_POSITION: WalPosition = 0xffff_ffff_ffff_ffffn;

/**
 * One statement: where replay is, whether WAL is waiting to be applied, how old the last applied
 * commit is, and whether the standby streams from its primary (a cut-off standby cannot say how
 * far behind it is).
 */
const PROBE_STATEMENT = `SELECT pg_last_wal_replay_lsn()::text AS replayed,
  coalesce(pg_last_wal_receive_lsn() > pg_last_wal_replay_lsn(), false) AS pending,
  extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000 AS applied_age_ms,
  pg_is_in_recovery() AS in_recovery,
  coalesce((SELECT status = 'streaming' FROM pg_stat_wal_receiver LIMIT 1), false) AS streaming`;

interface ReplicaState {
  /** Null when the server is not in recovery (a promoted standby): then no position is proven. */
  replayed: WalPosition | null;
  lagging: boolean;
}

/** Why a request's reads went where they did: counted once per request and replica. */
export interface RouteDecisions {
  replica: number;
  /** The caller wrote and the replica has not replayed it yet. */
  notReplayed: number;
  /** The replica failed recently (or its probe did). */
  replicaDown: number;
  /** The replica is past the max lag, or not streaming. */
  lagging: number;
  /** The store of write positions (Redis) could not answer. */
  positionsUnavailable: number;
  /** A mutation's own reads. */
  writing: number;
  /** Reads outside a request (no caller). */
  noCaller: number;
}

export interface ReplicaReadsOptions {
  /** The replica's tenant-read pool (search reads). */
  tenantReads: TenantReadPool;
  /** A Prisma client on the replica (entity loads). */
  prisma: PrismaClient;
  /** A small pool on the replica for the replay probe. */
  probePool: pg.Pool;
  /** Reads the primary's current WAL position (`pg_current_wal_lsn()` as text). */
  primaryPosition(): Promise<string>;
  /** Shared positions (Redis), or null: this process only. */
  sharedPositions: WritePositions | null;
  maxLagMs: number;
  statements: StatementCounter;
  location: string;
  logger: Logger;
}

export class ReplicaReads {
  readonly tenantReads: TenantReadPool;
  readonly prisma: PrismaClient;
  /** Statements sent to the replica (reads and their scope overhead), apart from the primary's. */
  readonly statements: StatementCounter;
  readonly location: string;
  readonly decisions: RouteDecisions = { replica: 0, notReplayed: 0, replicaDown: 0, lagging: 0, positionsUnavailable: 0, writing: 0, noCaller: 0 };
  /** Reads that failed on the replica and were run again on the primary. */
  fallbacks = 0;
  /** Replay probes sent (one per PROBE_CACHE_MS at most, however many reads). */
  probes = 0;
  private readonly options: ReplicaReadsOptions;
  private readonly localPositions: LocalWritePositions;
  private probed: { at: number; settled: boolean; state: Promise<ReplicaState | null> } | null = null;
  private downUntil = 0;
  private readonly warnFailure: (message: string) => void;

  constructor(options: ReplicaReadsOptions) {
    this.options = options;
    this.warnFailure = throttledWarning(options.logger);
    this.tenantReads = options.tenantReads;
    this.prisma = options.prisma;
    this.statements = options.statements;
    this.location = options.location;
    this.localPositions = new LocalWritePositions(options.maxLagMs);
  }

  /** Whether this request's reads may go to the replica now (see the module header). */
  async mayServe(session: ReadSession | undefined): Promise<boolean> {
    if (!session?.caller) return this.decided("noCaller");
    if (session.writing) return this.decided("writing");
    if (Date.now() < this.downUntil) return this.decided("replicaDown");
    let decision = session.routes.get(this);
    if (!decision) {
      decision = this.decide(session.caller);
      session.routes.set(this, decision);
    }
    return decision;
  }

  /** Records the primary's position now as the caller's last write (after a mutation's commits). */
  async recordWrite(caller: ReadCaller): Promise<void> {
    let position = UNKNOWN_POSITION;
    try {
      position = parseWalPosition(await this.options.primaryPosition());
    } catch (error) {
      this.warn(`could not read the primary's WAL position after a write; ${caller.userId}'s reads stay on the primary for ${this.options.maxLagMs} ms`, error);
    }
    await this.localPositions.record(caller, position);
    try {
      await this.options.sharedPositions?.record(caller, position);
    } catch (error) {
      this.warn("could not share a write position through Redis: this instance keeps it, other instances may serve that user reads up to the replica's lag old", error);
    }
  }

  /** Runs a read on the replica; a fault there marks it down and runs the read on the primary. */
  async read<T>(onReplica: () => Promise<T>, onPrimary: () => Promise<T>): Promise<T> {
    try {
      return await onReplica();
    } catch (error) {
      if (!isReplicaFault(error)) throw error;
      this.markDown(error);
      this.fallbacks += 1;
      return onPrimary();
    }
  }

  /** The decisions and fallbacks under the names metrics give them (snake case). */
  routeCounts(): Record<string, number> {
    const d = this.decisions;
    return { replica: d.replica, not_replayed: d.notReplayed, replica_down: d.replicaDown, lagging: d.lagging, positions_unavailable: d.positionsUnavailable, writing: d.writing, no_caller: d.noCaller, fallback: this.fallbacks };
  }

  async close(): Promise<void> {
    await this.prisma.$disconnect();
    await this.tenantReads.close();
    await this.options.probePool.end();
    await this.options.sharedPositions?.close();
    await this.localPositions.close();
  }

  private async decide(caller: ReadCaller): Promise<boolean> {
    const state = await this.replicaState();
    if (!state) return this.decided("replicaDown");
    if (state.lagging) return this.decided("lagging");
    let written: WalPosition | null;
    try {
      const [local, shared] = await Promise.all([this.localPositions.get(caller), this.options.sharedPositions?.get(caller) ?? null]);
      written = local === null ? shared : shared === null || local > shared ? local : shared;
    } catch (error) {
      this.warn("could not look up a write position in Redis: that user's reads go to the primary", error);
      return this.decided("positionsUnavailable");
    }
    if (written === null) return this.decided("replica");
    if (state.replayed !== null && state.replayed >= written) return this.decided("replica");
    return this.decided("notReplayed");
  }

  private decided(reason: keyof RouteDecisions): boolean {
    this.decisions[reason] += 1;
    return reason === "replica";
  }

  /** The replica's state, probed at most once per PROBE_CACHE_MS and shared while in flight; null when it is down. */
  private replicaState(): Promise<ReplicaState | null> {
    const now = Date.now();
    if (this.probed && (!this.probed.settled || now - this.probed.at < PROBE_CACHE_MS)) return this.probed.state;
    const probed = { at: now, settled: false, state: this.probe() };
    this.probed = probed;
    // While the probe runs, later reads share it; once answered, it serves for PROBE_CACHE_MS.
    void probed.state.then(() => {
      probed.at = Date.now();
      probed.settled = true;
    });
    return probed.state;
  }

  private async probe(): Promise<ReplicaState | null> {
    this.probes += 1;
    try {
      const { rows } = await this.options.probePool.query<{ replayed: string | null; pending: boolean; applied_age_ms: number | string | null; in_recovery: boolean; streaming: boolean }>(PROBE_STATEMENT);
      const row = rows[0]!;
      if (!row.in_recovery) return { replayed: null, lagging: false };
      const appliedAgeMs = row.applied_age_ms === null ? Infinity : Number(row.applied_age_ms);
      return {
        replayed: row.replayed === null ? null : parseWalPosition(row.replayed),
        lagging: !row.streaming || (row.pending && appliedAgeMs > this.options.maxLagMs),
      };
    } catch (error) {
      this.markDown(error);
      return null;
    }
  }

  private markDown(error: unknown): void {
    this.downUntil = Date.now() + DOWN_BACKOFF_MS;
    this.probed = null;
    this.warn(`replica ${this.location} failed; reads go to the primary for ${DOWN_BACKOFF_MS} ms, then it is probed again`, error);
  }

  private warn(message: string, error: unknown): void {
    this.warnFailure(`${message}: ${(error as Error)?.message ?? String(error)}`);
  }
}

/**
 * Failures the primary does not share: the replica unavailable, a read cancelled because it
 * conflicts with WAL the standby must apply (SQLSTATE 40001, "conflict with recovery"), or a
 * schema the standby has not caught up with yet (schemaBehind).
 */
function isReplicaFault(error: unknown): boolean {
  if (databaseFault(error) || schemaBehind(error)) return true;
  for (let current = error as { message?: unknown; cause?: unknown } | undefined, depth = 0; current && depth < 8; current = current.cause as typeof current, depth += 1) {
    if (typeof current.message === "string" && /conflict with recovery/i.test(current.message)) return true;
  }
  return false;
}

/** Each primary Prisma client opened by openDatabase with a replica. */
const replicas = new WeakMap<object, ReplicaReads>();

export function registerReplica(primary: PrismaClient, replica: ReplicaReads): void {
  replicas.set(primary, replica);
}

/** The replica routing of a primary's Prisma client; undefined without DATABASE_READ_URL. */
export function replicaOf(primary: PrismaClient): ReplicaReads | undefined {
  return replicas.get(primary);
}

/**
 * Runs a read on the replica when the current request may read there (see the module header),
 * otherwise (or when the replica fails) on the primary.
 */
export async function routedRead<T>(primary: PrismaClient, onReplica: (replica: ReplicaReads) => Promise<T>, onPrimary: () => Promise<T>): Promise<T> {
  const replica = replicas.get(primary);
  if (!replica || !(await replica.mayServe(currentReadSession()))) return onPrimary();
  return replica.read(() => onReplica(replica), onPrimary);
}

/**
 * A DataLoader's entity load in the organization's tenant scope: on the replica when the request
 * may read there, otherwise on the primary. Reads only.
 */
export function withTenantLoads<T>(primary: PrismaClient, organizationId: string, work: (db: TenantTransaction) => Promise<T>, options: TenantScopeOptions = {}): Promise<T> {
  return routedRead(
    primary,
    (replica) => withTenantScope(replica.prisma, organizationId, work, options),
    () => withTenantScope(primary, organizationId, work, options),
  );
}

/**
 * After a mutation (the subgraph server calls this before answering): records, for the caller,
 * the write position of every primary the request's tenant scopes ran on that has a replica.
 */
export async function recordSessionWrites(session: ReadSession): Promise<void> {
  if (!session.writing || !session.caller) return;
  const caller = session.caller;
  await Promise.all([...session.scopedOn].map((primary) => replicas.get(primary)?.recordWrite(caller)));
}
