/**
 * Tenant-scoped reads for hot search statements, without a transaction per call.
 *
 * `withTenantScope` (tenant-scope.ts) pays BEGIN, a set_config statement and COMMIT around every
 * search statement, because its settings are transaction-local. On PostgreSQL, searches instead
 * go through a small dedicated `pg` pool whose connections carry the same settings at session
 * level (role context_search_tenant, app.organization_id, statement_timeout and any planner
 * knobs such as hnsw.ef_search). A connection is re-pointed, with one statement that sets them
 * all, only when what it carries differs from what the call needs; otherwise the read runs alone.
 * Measured by issue 12: ten statements per search became three.
 *
 * Why this cannot leak one organization's settings into another's statement:
 * - The pool serves only these reads: owner work (migrations, the indexing queue) never runs on
 *   it, and nothing here ever runs as another role, so a connection is always either fresh (its
 *   settings unknown, so it is set before its first read) or carries exactly the recorded state.
 * - The recorded state is dropped before the set statement is sent and recorded again only
 *   after it succeeded; a connection whose set statement or any read failed (an error, a
 *   statement timeout, a lost socket) or whose work threw is destroyed, not returned to the pool.
 * - Role and organization are changed together in one statement, before the read, never folded
 *   into it: row-level security is applied when a statement is planned, by the role current then.
 * - A setting the previous call set and this call does not want is reset to its default in the
 *   same statement (set_config with NULL), so a timeout or planner knob does not linger either;
 *   the one exception is vector-index knobs, which every vector read names for itself.
 *
 * PGlite has one in-process connection shared with Prisma: there, and whenever no pool was
 * registered for the Prisma client, the same calls run in `withTenantScope`'s transaction.
 *
 * With DATABASE_READ_URL, a database has a second such pool on its replica, and each read goes to
 * one or the other as replica-reads.ts decides (read-your-writes).
 *
 * Reads take turns by organization (issue 41). A connection that comes free goes to the next
 * organization in round-robin order that has a read waiting, not to the oldest waiter: `pg.Pool`
 * hands connections out first come, first served, so an organization that sent 24 aliased
 * searches (about 70 reads) put every other organization's search behind all of them. Now another
 * organization's read waits for one read to finish, whatever the flood. No organization is capped
 * while nobody else waits (the turns are work-conserving), and waiting is bounded: past
 * `READS_WAITING_PER_ORGANIZATION` one organization's next read is OVERLOADED (retryable). On
 * PGlite, which runs one statement at a time, the scope transactions take the same turns, one at
 * a time (registerTenantReadTurns).
 */
import pg from "pg";
import { Prisma, type PrismaClient } from "../../generated/prisma/client.js";
import type { StatementCounter } from "./connect.js";
import type { Logger } from "../logger.js";
import { handleClientErrors } from "./pool-errors.js";
import { SpanKind, withSpan, withStatementSpan } from "../observability/tracing.js";
import { replicaOf, routedRead } from "./replica-reads.js";
import { FairShareQueue } from "../workers/fair-share.js";
import { tenantScopesEnabled, TENANT_ROLE, withTenantScope, type TenantScopeOptions, type TenantTransaction } from "./tenant-scope.js";

/** What a tenant read may do: read with raw SQL, like Prisma's $queryRaw and $queryRawUnsafe. */
export type TenantReader = Pick<TenantTransaction, "$queryRaw" | "$queryRawUnsafe">;

/** The tenant-read pool's readers carry this: they can send a statement by name (queryPrepared). */
const PREPARED = Symbol("tenant-reads.prepared");

/**
 * A TenantReader over one connection's `query` (text, values and, for queryPrepared, a
 * statement name): the tenant-read pool's, and benchmarks' pinned sessions.
 */
export function readerOverConnection(query: (text: string, values: unknown[], name?: string) => Promise<unknown[]>): TenantReader {
  const reader = {
    $queryRaw: (template: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) => {
      const sql = template instanceof Prisma.Sql ? template : Prisma.sql(template, ...values);
      return query(sql.text, sql.values);
    },
    $queryRawUnsafe: (text: string, ...values: unknown[]) => query(text, values),
    [PREPARED]: (name: string, sql: Prisma.Sql) => query(sql.text, sql.values, name),
  };
  // Prisma types these as PrismaPromise (lazy, batchable); ours run at once and are plain
  // promises, which is all a tenant read awaits.
  return reader as unknown as TenantReader;
}

/**
 * Reads with a named (prepared) statement where the reader is a tenant-read pool connection:
 * PostgreSQL parses and plans it on the connection's first use and, once its generic plan is
 * no costlier than the custom ones (plan_cache_mode auto, after five runs), executes the kept
 * plan. For the hot search statements whose text never varies (the keyword providers'): measured
 * by issue 12 at 10,000 conversations, 7–12% less PostgreSQL CPU per keyword statement than
 * the same text unnamed. Elsewhere (PGlite's scope transactions) an ordinary $queryRaw.
 *
 * Why it is safe with row-level security: every connection of the pool is always the tenant
 * role, and PostgreSQL re-plans a statement that depends on row security when the role differs;
 * the policies read app.organization_id through current_setting, a stable function evaluated
 * when the statement runs, never folded into a kept plan. Why `name` must stand for one text:
 * pg refuses a name reused for another statement on a connection (the pool then sends the
 * second unnamed, with a warning). Poolers in transaction mode that do not track prepared
 * statements (PgBouncer before 1.21) cannot sit between the pool and PostgreSQL.
 */
export function queryPrepared<Row>(reader: TenantReader, name: string, sql: Prisma.Sql): Promise<Row[]> {
  const prepared = (reader as { [PREPARED]?: (name: string, sql: Prisma.Sql) => Promise<Row[]> })[PREPARED];
  return prepared ? prepared(name, sql) : (reader.$queryRaw(sql) as unknown as Promise<Row[]>);
}

/** The session-level set statement: one row per setting; a NULL value resets it to its default. */
export const SESSION_SET_STATEMENT =
  "SELECT set_config(setting.name, setting.value, false) FROM unnest($1::text[], $2::text[]) AS setting(name, value)";

type Settings = Map<string, string>;

/**
 * One organization's reads waiting for a connection: a search sends a few (keyword, vector,
 * titles, highlights), 50 aliased searches and their `@defer` parts a few hundred.
 */
const READS_WAITING_PER_ORGANIZATION = 1_000;
const READS_WAITING = 10_000;

/** Turns for `maxRunning` reads at once, by organization (see the file's comment). */
export function tenantReadTurns(maxRunning: number, maxWaitMs: number): FairShareQueue {
  return new FairShareQueue({
    name: "database read",
    maxRunning,
    maxRunningPerKey: maxRunning,
    maxQueuedPerKey: READS_WAITING_PER_ORGANIZATION,
    maxQueued: READS_WAITING,
    maxWaitMs,
  });
}

/**
 * Planner knobs only a vector index scan reads, and every vector read names its own (the
 * pgvector store sets hnsw.ef_search and hnsw.iterative_scan on each search): a call that does
 * not name them leaves them on the connection instead of resetting them. Otherwise a hybrid
 * search, whose keyword and vector reads share the pool, paid about one set statement per
 * search only to switch these back and forth (issue 12: 3 data + 1 setup statements).
 */
const VECTOR_INDEX_KNOBS = ["hnsw.", "ivfflat."];
const isVectorIndexKnob = (name: string) => VECTOR_INDEX_KNOBS.some((prefix) => name.startsWith(prefix));

/** What each pooled connection carries now; absent means unknown (fresh, or mid-change). */
const carried = new WeakMap<pg.ClientBase, Settings>();

export interface TenantReadPoolOptions {
  connectionString: string;
  max: number;
  /** How long a read waits for a connection before it fails (0: no limit). */
  connectionTimeoutMillis?: number;
  statements: StatementCounter;
  logger: Logger;
}

/** The dedicated pool of session-scoped connections for one database (PostgreSQL only). */
export class TenantReadPool {
  private readonly pool: pg.Pool;
  private readonly statements: StatementCounter;
  private readonly logger: Logger;
  /** Tests only: connections destroyed after a failure, to prove none went back to the pool. */
  discarded = 0;
  /**
   * The statement timeout of a read that names none (0: none). The search subgraph sets it to
   * its providers' timeout (useTenantReadTimeout), which the keyword providers also name: when
   * reads that name a timeout and reads that name none (vector search, titles, liveness checks)
   * wanted different values, a connection switched back and forth between them, about one set
   * statement for every three reads under load (issue 12's search-path profile). It also
   * bounds those reads: every read on this pool serves a search someone may be waiting on.
   */
  defaultStatementTimeoutMs = 0;
  /** Each name queryPrepared used on this pool, with the text it stands for. */
  private readonly preparedTexts = new Map<string, string>();
  private readonly warnedNames = new Set<string>();
  /** Who gets the next free connection: one turn per organization in round-robin order. */
  readonly turns: FairShareQueue;

  constructor(options: TenantReadPoolOptions) {
    // As many turns as connections, so pg.Pool itself never has a waiter to serve first come, first served.
    this.turns = tenantReadTurns(options.max, options.connectionTimeoutMillis || 60_000);
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.max,
      connectionTimeoutMillis: options.connectionTimeoutMillis ?? 0,
      // Read results typed as Prisma's $queryRaw types them, so callers see the same values on
      // both paths: int8 as bigint and numeric as Decimal (pg's default for both is a string).
      types: { getTypeParser: prismaLikeTypeParser as typeof pg.types.getTypeParser },
    });
    this.logger = options.logger;
    handleClientErrors(this.pool, this.logger, "tenant-read");
    this.statements = options.statements;
  }

  use(): { total: number; idle: number; waiting: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  run<T>(organizationId: string, options: TenantScopeOptions, work: (reader: TenantReader) => Promise<T>): Promise<T> {
    return this.turns.run(organizationId, () => this.runNow(organizationId, options, work));
  }

  private async runNow<T>(organizationId: string, options: TenantScopeOptions, work: (reader: TenantReader) => Promise<T>): Promise<T> {
    const wanted = wantedSettings(organizationId, options.statementTimeoutMs ? options : { ...options, statementTimeoutMs: this.defaultStatementTimeoutMs });
    const client = await this.pool.connect();
    let healthy = false;
    try {
      await this.point(client, wanted);
      const result = await work(this.readerOn(client));
      healthy = true;
      return result;
    } finally {
      if (!healthy) {
        carried.delete(client);
        this.discarded += 1;
      }
      // release(true) destroys the connection: whatever state a failure left it in goes with it.
      client.release(!healthy);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async point(client: pg.PoolClient, wanted: Settings): Promise<void> {
    const current = carried.get(client);
    const names: string[] = [];
    const values: (string | null)[] = [];
    for (const [name, value] of wanted) {
      if (current?.get(name) !== value) {
        names.push(name);
        values.push(value);
      }
    }
    // Settings a previous call set that this one does not want go back to their defaults, except
    // vector-index knobs (see VECTOR_INDEX_KNOBS), which stay and stay recorded.
    const after = new Map(wanted);
    for (const [name, value] of current ?? []) {
      if (wanted.has(name)) continue;
      if (isVectorIndexKnob(name)) {
        after.set(name, value);
        continue;
      }
      names.push(name);
      values.push(null);
    }
    if (current && names.length === 0) return;
    // Unknown until the statement has succeeded: if it fails, run() destroys the connection.
    carried.delete(client);
    this.count(SESSION_SET_STATEMENT, true);
    await withStatementSpan(SESSION_SET_STATEMENT, () => client.query(SESSION_SET_STATEMENT, [names, values]));
    carried.set(client, after);
  }

  private readerOn(client: pg.PoolClient): TenantReader {
    return readerOverConnection(async (text, values, name) => {
      this.count(text, false);
      const statementName = name === undefined ? undefined : this.statementName(name, text);
      return (await withStatementSpan(text, () => client.query(statementName ? { name: statementName, text, values } : { text, values }))).rows;
    });
  }

  /**
   * The name a statement is prepared under on every connection of this pool, or undefined (sent
   * unnamed) when `name` already stands for another text here: pg refuses to reuse a name for a
   * different statement, and a caller's mistake must cost a parse, not the search.
   */
  private statementName(name: string, text: string): string | undefined {
    const known = this.preparedTexts.get(name);
    if (known === undefined) {
      this.preparedTexts.set(name, text);
      return name;
    }
    if (known === text) return name;
    if (!this.warnedNames.has(name)) {
      this.warnedNames.add(name);
      this.logger.warn(`tenant reads: statement name "${name}" already names another statement; this one is sent unnamed`);
    }
    return undefined;
  }

  private count(text: string, overhead: boolean): void {
    if (overhead) this.statements.overhead += 1;
    else this.statements.count += 1;
    if (this.statements.log.length < 1000) this.statements.log.push(text);
  }
}

function wantedSettings(organizationId: string, options: TenantScopeOptions): Settings {
  const wanted: Settings = new Map([
    ["role", TENANT_ROLE],
    ["app.organization_id", organizationId],
    // A read without a timeout must not inherit the previous call's: 0 is PostgreSQL's "none".
    ["statement_timeout", String(options.statementTimeoutMs ? Math.max(1, Math.ceil(options.statementTimeoutMs)) : 0)],
    // The pool is for searches: a write sent here by mistake fails instead of running unbatched.
    ["default_transaction_read_only", "on"],
  ]);
  for (const [name, value] of Object.entries(options.settings ?? {})) {
    if (name === "role" || name === "app.organization_id" || name === "default_transaction_read_only") throw new Error(`tenant reads: setting ${name} is the scope's own and cannot be overridden`);
    wanted.set(name, value);
  }
  return wanted;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

function prismaLikeTypeParser(oid: number, format?: string): (value: string) => unknown {
  if (format !== "binary") {
    if (oid === INT8_OID) return (value: string) => BigInt(value);
    if (oid === NUMERIC_OID) return (value: string) => new Prisma.Decimal(value);
  }
  return (pg.types.getTypeParser as (oid: number, format?: string) => (value: string) => unknown)(oid, format);
}

/** Each Prisma client opened on PostgreSQL by openDatabase, with its tenant-read pool. */
const pools = new WeakMap<PrismaClient, TenantReadPool>();
/** Each Prisma client opened on PGlite by openDatabase, with the turns its scope transactions take. */
const scopeTurns = new WeakMap<PrismaClient, FairShareQueue>();

/**
 * PGlite: tenant reads run in scope transactions on its one connection, which PGlite itself
 * serves first come, first served; these turns order them by organization instead, one at a time
 * (as PGlite runs them anyway). No tenant read runs another inside it: on one connection that
 * would already wait on itself.
 */
export function registerTenantReadTurns(prisma: PrismaClient, turns: FairShareQueue): void {
  scopeTurns.set(prisma, turns);
}

export function registerTenantReadPool(prisma: PrismaClient, pool: TenantReadPool): void {
  pools.set(prisma, pool);
}

/**
 * Bounds every tenant read on this database that names no statement timeout of its own by
 * `statementTimeoutMs` (see TenantReadPool.defaultStatementTimeoutMs). PostgreSQL only: on
 * PGlite tenant reads run in scope transactions, which set only what each call names.
 */
export function useTenantReadTimeout(prisma: PrismaClient, statementTimeoutMs: number): void {
  const pool = pools.get(prisma);
  if (pool) pool.defaultStatementTimeoutMs = statementTimeoutMs;
  const replica = replicaOf(prisma);
  if (replica) replica.tenantReads.defaultStatementTimeoutMs = statementTimeoutMs;
}

/** The tenant-read pool of a Prisma client (tests inspect it); undefined on PGlite. */
export function tenantReadPoolOf(prisma: PrismaClient): TenantReadPool | undefined {
  return pools.get(prisma);
}

let sessionReadsEnabled = true;

/**
 * Benchmarks only: runs `work` with tenant reads in `withTenantScope`'s transactions (the path
 * before issue 12), so a benchmark can compare both in the same process. Never used by the product.
 */
export async function withTransactionTenantReadsForBenchmark<T>(work: () => Promise<T>): Promise<T> {
  sessionReadsEnabled = false;
  try {
    return await work();
  } finally {
    sessionReadsEnabled = true;
  }
}

/** True inside withTransactionTenantReadsForBenchmark: providers then replay their pre-issue-12 statements too. */
export function replayingTransactionReadsForBenchmark(): boolean {
  return !sessionReadsEnabled;
}

/**
 * Runs read-only `work` as the organization's tenant (row-level security applies): on
 * PostgreSQL on a session-scoped connection with no transaction, elsewhere in a tenant scope.
 * Only reads: a write here would not be atomic with anything, and the pool is for searches.
 */
export async function withTenantReads<T>(
  prisma: PrismaClient,
  organizationId: string,
  work: (reader: TenantReader) => Promise<T>,
  options: TenantScopeOptions = {},
): Promise<T> {
  const pool = pools.get(prisma);
  if (!pool || !sessionReadsEnabled || !tenantScopesEnabled()) {
    const turns = scopeTurns.get(prisma);
    return turns ? turns.run(organizationId, () => withTenantScope(prisma, organizationId, work, options)) : withTenantScope(prisma, organizationId, work, options);
  }
  // One span per session read (when the request is traced), its statements its children, as a
  // tenant scope's are. On the replica when the request may read there (replica-reads.ts).
  const session = (on: TenantReadPool) => withSpan("db.session tenant_reads", { "db.system.name": "postgresql", "db.operation.name": "SESSION" }, () => on.run(organizationId, options, work), SpanKind.CLIENT);
  return routedRead(prisma, (replica) => session(replica.tenantReads), () => session(pool));
}
