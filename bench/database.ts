/**
 * A fresh, migrated database for one benchmark run, thrown away afterwards: an in-memory PGlite
 * for small corpora, a PGlite in a temporary folder for large ones (WASM memory is capped at a
 * few GB, and 100k conversations with their postings and vectors need more), or a new
 * PostgreSQL database created next to the one DATABASE_URL names and dropped at the end.
 * Benchmarks never touch a database that holds anyone's data.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { openDatabase, type Database } from "../lib/database/connect.js";
import { migrate } from "../lib/database/migrate.js";

export type DatabaseKind = "pglite" | "postgres";

/** Where PostgreSQL is looked for when DATABASE_URL is unset: the local server CI uses. */
export const DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test";

/** Above this many conversations PGlite keeps its files on disk instead of in WASM memory. */
export const PGLITE_IN_MEMORY_MAX_CONVERSATIONS = 20_000;

export interface BenchDatabase {
  kind: DatabaseKind;
  database: Database;
  /** What the report says about where the data lived, without passwords. */
  description: string;
  /** PostgreSQL's version string, or PGlite's. */
  serverVersion: string;
  dispose(): Promise<void>;
}

export function postgresBaseUrl(env: Record<string, string | undefined> = process.env): string {
  return env.DATABASE_URL?.trim() || DEFAULT_POSTGRES_URL;
}

/** Whether the PostgreSQL server answers at all: `--database auto` uses it only then. */
export async function postgresReachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export interface OpenOptions {
  conversations: number;
  postgresUrl: string;
  poolSize: number;
  /** Close it but do not drop it (or delete its folder): for looking at the data afterwards. */
  keep?: boolean;
  /** A PostgreSQL database kept by an earlier run, opened as it is and kept again. */
  reuse?: string | null;
  log?: (line: string) => void;
}

export async function openBenchDatabase(kind: DatabaseKind, options: OpenOptions): Promise<BenchDatabase> {
  return kind === "pglite" ? openPGliteDatabase(options) : openPostgresDatabase(options);
}

async function openPGliteDatabase({ conversations, keep, log }: OpenOptions): Promise<BenchDatabase> {
  // Kept data needs a folder to stay in.
  const inMemory = conversations <= PGLITE_IN_MEMORY_MAX_CONVERSATIONS && !keep;
  const folder = inMemory ? null : fs.mkdtempSync(path.join(os.tmpdir(), "bench-pglite-"));
  const database = await openDatabase({ url: null, pgliteDataDir: folder ?? "", inMemory });
  try {
    await migrate(database);
  } catch (error) {
    await database.close();
    throw error;
  }
  const [row] = await database.prisma.$queryRaw<{ version: string }[]>`SELECT version() AS version`;
  return {
    kind: "pglite",
    database,
    description: inMemory ? "PGlite 0.4.6 in memory" : `PGlite 0.4.6 in a temporary folder (${folder})`,
    serverVersion: row?.version ?? "unknown",
    async dispose() {
      await database.close();
      if (folder && keep) log?.(`kept the PGlite data in ${folder} (PGLITE_DATA_DIR=${folder})`);
      else if (folder) fs.rmSync(folder, { recursive: true, force: true });
    },
  };
}

async function openPostgresDatabase({ postgresUrl: baseUrl, poolSize, keep: keepAsked, reuse, log }: OpenOptions): Promise<BenchDatabase> {
  const name = reuse ?? `bench_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const keep = keepAsked || Boolean(reuse);
  if (!reuse) await withAdminClient(baseUrl, (admin) => admin.query(`CREATE DATABASE "${name}"`));
  const url = withDatabaseName(baseUrl, name);
  let database: Database | null = null;
  try {
    database = await openDatabase({ url, pgliteDataDir: "", poolSize });
    await migrate(database);
    const [row] = await database.prisma.$queryRaw<{ version: string }[]>`SELECT version() AS version`;
    const opened = database;
    return {
      kind: "postgres",
      database: opened,
      description: reuse ? `PostgreSQL, database ${name} kept by an earlier run (corpus loaded then), pool of ${poolSize} connections` : `PostgreSQL, throwaway database ${name} (dropped afterwards), pool of ${poolSize} connections`,
      serverVersion: row?.version ?? "unknown",
      async dispose() {
        await opened.close();
        if (keep) log?.(`kept PostgreSQL database ${name} (drop it with: DROP DATABASE "${name}")`);
        else await dropDatabase(baseUrl, name);
      },
    };
  } catch (error) {
    await database?.close().catch(() => undefined);
    if (!reuse) await dropDatabase(baseUrl, name).catch(() => undefined);
    throw error;
  }
}

async function dropDatabase(baseUrl: string, name: string): Promise<void> {
  await withAdminClient(baseUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

async function withAdminClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function withDatabaseName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}
