/**
 * What one search sends PostgreSQL, recorded at the client, and replayed with plain `pg`: the
 * SQL ceiling a search path is measured against (bench/scenarios/search-path.ts).
 *
 * The recorder wraps `pg.Client.prototype.query` for as long as a capture is open. Every path to
 * PostgreSQL in this product goes through a `pg` Client (Prisma's adapter, its pool's
 * `pool.query`, `withSession`, any plain-pg fast path), so the capture is generic: whatever
 * statements a search sends, with their parameters, in order, per connection, transaction
 * control and `set_config` included. Nothing here knows how many statements a search sends
 * today. It is a benchmark-only hook: installed by the benchmark, removed when it is done,
 * never imported by the product.
 */
import pg from "pg";
import { summarizeLatencies, round, type LatencySummary } from "./stats.js";

export interface CapturedStatement {
  text: string;
  values?: unknown[];
  /** The name it was prepared under (queryPrepared), so the replay prepares it too. */
  name?: string;
}

/**
 * One search's statements, grouped by the connection that sent them (connections in the order
 * they sent their first statement). Within a connection the order is the order sent, so a
 * transaction (BEGIN … set_config … COMMIT) stays whole when it is replayed.
 */
export interface CapturedSearch {
  connections: CapturedStatement[][];
}

/** Where the captured statements went: the replay connects there too. */
export interface ConnectionTarget {
  host?: string;
  port?: number;
  database?: string;
  user?: string;
  password?: string;
}

export interface StatementRecorder {
  /** Starts recording one search; statements sent before this are not kept. */
  begin(): void;
  /** Stops recording and returns what was sent since `begin`. */
  end(): CapturedSearch;
  /** The connection parameters of the first client seen, or null if none sent anything. */
  target(): ConnectionTarget | null;
  /**
   * Statements sent by any pg client of this process since the recorder was installed, captured
   * or not: a phase's difference over its completed searches is what a search sends under load.
   */
  sent(): number;
  /** Starts counting every statement sent by its shape (see `statementShape`), until `endTally`. */
  beginTally(): void;
  /** The statement shapes sent since `beginTally`, most frequent first. */
  endTally(): { shape: string; count: number }[];
  /** Restores pg's own `query`. */
  dispose(): void;
}

type QueryFunction = (this: pg.Client, ...args: unknown[]) => unknown;
let active = false;

export function recordStatements(): StatementRecorder {
  if (active) throw new Error("a statement recorder is already installed");
  active = true;
  const prototype = pg.Client.prototype as unknown as { query: QueryFunction };
  const original = prototype.query;
  let current: Map<object, CapturedStatement[]> | null = null;
  let target: ConnectionTarget | null = null;
  let sent = 0;
  let tally: Map<string, number> | null = null;
  prototype.query = function recordingQuery(this: pg.Client, ...args: unknown[]) {
    sent += 1;
    if (tally) {
      const statement = describeStatement(args[0], args[1]);
      const shape = statement ? statementShape(statement.text, 70) : "(not a text query)";
      tally.set(shape, (tally.get(shape) ?? 0) + 1);
    }
    if (current) {
      const statement = describeStatement(args[0], args[1]);
      if (statement) {
        let list = current.get(this);
        if (!list) current.set(this, (list = []));
        list.push(statement);
      }
      target ??= connectionTarget(this);
    }
    return original.apply(this, args);
  };
  return {
    begin() {
      current = new Map();
    },
    end() {
      const connections = current ? [...current.values()] : [];
      current = null;
      return { connections };
    },
    target: () => target,
    sent: () => sent,
    beginTally() {
      tally = new Map();
    },
    endTally() {
      const counts = [...(tally ?? new Map<string, number>()).entries()].map(([shape, count]) => ({ shape, count }));
      tally = null;
      return counts.sort((a, b) => b.count - a.count || a.shape.localeCompare(b.shape));
    },
    dispose() {
      if (prototype.query !== original) prototype.query = original;
      current = null;
      active = false;
    },
  };
}

/** pg's query(text, values?, callback?) and query({ text, values }, …) forms, and Submittables (they carry `text`). */
function describeStatement(first: unknown, second: unknown): CapturedStatement | null {
  if (typeof first === "string") return Array.isArray(second) ? { text: first, values: [...second] } : { text: first };
  if (first && typeof first === "object" && typeof (first as { text?: unknown }).text === "string") {
    const config = first as { text: string; values?: unknown; name?: unknown };
    const values = Array.isArray(config.values) ? config.values : Array.isArray(second) ? second : undefined;
    const name = typeof config.name === "string" ? { name: config.name } : {};
    return values ? { text: config.text, values: [...values], ...name } : { text: config.text, ...name };
  }
  return null;
}

function connectionTarget(client: pg.Client): ConnectionTarget {
  const parameters = (client as unknown as { connectionParameters?: Record<string, unknown> }).connectionParameters ?? {};
  const pick = (key: string) => (typeof parameters[key] === "string" ? (parameters[key] as string) : undefined);
  return {
    host: pick("host"),
    port: typeof parameters.port === "number" ? parameters.port : undefined,
    database: pick("database"),
    user: pick("user"),
    password: pick("password"),
  };
}

// ---------------------------------------------------------------------------------------------
// Classifying statements (for the keyword share and the report)

/** Transaction control and session settings: kept around a statement replayed on its own, so it runs in the same scope. */
export function isControlStatement(text: string): boolean {
  const head = text.trimStart().slice(0, 40).toUpperCase();
  return (
    head.startsWith("BEGIN") ||
    head.startsWith("COMMIT") ||
    head.startsWith("ROLLBACK") ||
    head.startsWith("START TRANSACTION") ||
    head.startsWith("SET ") ||
    head.startsWith("RESET ") ||
    text.includes("set_config(")
  );
}

/**
 * The BM25 keyword queries: they score from a `*keyword_postings` table, directly or through a
 * `keyword_search_*` SQL function.
 */
export function isKeywordStatement(text: string): boolean {
  return (text.includes("keyword_postings") || text.includes("keyword_search_")) && !isControlStatement(text);
}

/**
 * The keyword statements of each search alone, each in its own connection's scope (the BEGIN,
 * set_config and COMMIT around it kept, everything else dropped): row-level security needs the
 * scope, or the query would see no rows and cost nothing.
 */
export function keywordOnly(searches: readonly CapturedSearch[]): CapturedSearch[] {
  return searches.map((search) => ({
    connections: search.connections
      .filter((statements) => statements.some((statement) => isKeywordStatement(statement.text)))
      .map((statements) => statements.filter((statement) => isKeywordStatement(statement.text) || isControlStatement(statement.text))),
  }));
}

/** A statement's shape for the report: whitespace collapsed, cut short. */
export function statementShape(text: string, max = 90): string {
  const collapsed = text.slice(0, 2_000).split(/\s+/).filter(Boolean).join(" ");
  return collapsed.length > max ? `${collapsed.slice(0, max - 1)}…` : collapsed;
}

// ---------------------------------------------------------------------------------------------
// Replay

export interface ReplayResult {
  connections: number;
  durationSeconds: number;
  /** Whole searches replayed (all their statements answered). */
  completed: number;
  searchesPerSecond: number;
  statementsPerSearch: number;
  latencyMs: LatencySummary;
  errors: number;
  firstError: string | null;
  /** CPU time of this process (the replaying client: protocol and row parsing) per search. */
  nodeCpuMsPerSearch: number;
}

export interface ReplayClients {
  clients: pg.Client[];
  close(): Promise<void>;
}

export async function openReplayClients(target: ConnectionTarget, count: number): Promise<ReplayClients> {
  const clients: pg.Client[] = [];
  try {
    for (let index = 0; index < count; index += 1) {
      const client = new pg.Client({ ...target, application_name: "bench-sql-replay" });
      // A dropped connection must fail the replay, not kill the process.
      client.on("error", () => undefined);
      await client.connect();
      clients.push(client);
    }
  } catch (error) {
    await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
    throw error;
  }
  return {
    clients,
    close: async () => void (await Promise.all(clients.map((client) => client.end().catch(() => undefined)))),
  };
}

/**
 * Every client replays whole searches, one after another, each search's statements in order on
 * that one client (connection groups one after the other), taking the next search of the list
 * in turn, until the time is up. A statement the product sent by name (queryPrepared) is
 * replayed under the same name, so each replaying connection prepares it once as the product's
 * do; the others go unnamed, parsed and planned each time in both.
 */
export async function replaySearches(clients: readonly pg.Client[], searches: readonly CapturedSearch[], durationSeconds: number): Promise<ReplayResult> {
  if (searches.length === 0) throw new Error("nothing to replay: no search was captured");
  let next = 0;
  let completed = 0;
  let errors = 0;
  let firstError: string | null = null;
  let statements = 0;
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + durationSeconds * 1000;
  await Promise.all(
    clients.map(async (client) => {
      while (performance.now() < deadline) {
        const search = searches[next++ % searches.length]!;
        const searchStarted = performance.now();
        let sent = 0;
        try {
          for (const connection of search.connections) {
            for (const statement of connection) {
              await client.query(statement.values ? { text: statement.text, values: statement.values, ...(statement.name ? { name: statement.name } : {}) } : statement.text);
              sent += 1;
            }
          }
        } catch (error) {
          errors += 1;
          firstError ??= (error as Error).message;
          // A failed statement leaves its transaction aborted; the next search needs a clean session.
          await client.query("ROLLBACK").catch(() => undefined);
          continue;
        }
        latencies.push(performance.now() - searchStarted);
        completed += 1;
        statements += sent;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    connections: clients.length,
    durationSeconds: round(seconds, 2),
    completed,
    searchesPerSecond: round(completed / Math.max(seconds, 0.001), 1),
    statementsPerSearch: round(statements / Math.max(completed, 1), 2),
    latencyMs: summarizeLatencies(latencies),
    errors,
    firstError,
    nodeCpuMsPerSearch: round((cpu.user + cpu.system) / 1000 / Math.max(completed, 1), 3),
  };
}
