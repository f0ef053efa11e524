/**
 * lib/database/faults.ts on real errors: what a client should retry (a pool with no connection
 * in time, a closed database) is a fault; what is a bug or a bad statement (a syntax error, a
 * unique violation, a statement timeout) is not, so it stays INTERNAL_SERVER_ERROR and is logged
 * as the bug it is instead of being hidden as "try again later".
 */
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import { openDatabase } from "../../lib/database/connect.js";
import { databaseFault, schemaBehind } from "../../lib/database/faults.js";
import { silentLogger } from "../../lib/logger.js";
import { createTestDatabase, usingPostgres, type TestDatabase } from "../support/database.js";

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  // On PGlite the last test closed it already.
  await db?.dispose().catch(() => undefined);
});

async function failureOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error("expected the statement to fail, and it succeeded");
}

it("does not take a bad statement for an unavailable database", async () => {
  const prisma = db.database.prisma;
  expect(databaseFault(await failureOf(() => prisma.$queryRawUnsafe("SELEC 1")))).toBeNull();
  await prisma.$executeRawUnsafe("CREATE TABLE classifier_probe (id int PRIMARY KEY)");
  await prisma.$executeRawUnsafe("INSERT INTO classifier_probe VALUES (1)");
  expect(databaseFault(await failureOf(() => prisma.$executeRawUnsafe("INSERT INTO classifier_probe VALUES (1)")))).toBeNull();
  const timedOut = await failureOf(() => prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe("SET LOCAL statement_timeout = 1");
    await tx.$queryRawUnsafe("SELECT pg_sleep(1)");
  }));
  expect(databaseFault(timedOut)).toBeNull();
});

it("takes a write refused as read-only for one: what a hot standby answers before its promotion", async () => {
  const prisma = db.database.prisma;
  await prisma.$executeRawUnsafe("CREATE TABLE IF NOT EXISTS classifier_read_only (id int)");
  const refused = await failureOf(() => prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe("SET TRANSACTION READ ONLY");
    await tx.$executeRawUnsafe("INSERT INTO classifier_read_only VALUES (1)");
  }));
  expect(databaseFault(refused)).toEqual({ reason: "25006" });
});

(usingPostgres ? it : it.skip)("takes a pool that found no connection in time for one", async () => {
  const narrow = await openDatabase({ url: db.url!, pgliteDataDir: "", poolSize: 1, connectTimeoutMs: 100, logger: silentLogger });
  try {
    let release!: () => void;
    let held!: () => void;
    const taken = new Promise<void>((resolve) => (held = resolve));
    const holding = narrow.withSession(() => {
      held();
      return new Promise<void>((resolve) => (release = resolve));
    });
    await taken;
    const starved = await failureOf(() => narrow.prisma.$queryRaw`SELECT 1`);
    release();
    await holding;
    expect(databaseFault(starved)).not.toBeNull();
  } finally {
    await narrow.close();
  }
});

it("takes a missing table or column for a schema behind the code, and nothing else for one", async () => {
  // What a standby that has not replayed a migration answers (replica-reads.ts reads again on
  // the primary). This test file's database is its own, so it may drop what it likes.
  const prisma = db.database.prisma;
  await prisma.$executeRawUnsafe("ALTER TABLE knowledge_bases DROP COLUMN external_id");
  const missingColumn = await failureOf(() => prisma.knowledgeBase.findMany({ take: 1 }));
  expect(schemaBehind(missingColumn)).not.toBeNull();
  await prisma.$executeRawUnsafe("DROP TABLE idempotency_keys");
  const missingTable = await failureOf(() => prisma.idempotencyKey.findMany({ take: 1 }));
  expect(schemaBehind(missingTable)).not.toBeNull();
  // The same through raw statements, as the tenant-read pool's providers send them.
  expect(schemaBehind(await failureOf(() => prisma.$queryRawUnsafe("SELECT no_such_column FROM knowledge_bases")))).not.toBeNull();
  expect(schemaBehind(await failureOf(() => prisma.$queryRawUnsafe("SELECT 1 FROM no_such_table")))).not.toBeNull();
  // Neither an unavailable database nor a bad statement is one, and a missing table is not a fault.
  expect(schemaBehind(await failureOf(() => prisma.$queryRawUnsafe("SELEC 1")))).toBeNull();
  expect(schemaBehind(await failureOf(() => prisma.$queryRawUnsafe("SELECT 1/0")))).toBeNull();
  expect(databaseFault(missingTable)).toBeNull();
});

// Last: on PGlite it closes the file's database (a second in-memory one would cost seconds to boot).
it("takes a closed database for one", async () => {
  const closed = usingPostgres ? await openDatabase({ url: db.url!, pgliteDataDir: "", poolSize: 1, logger: silentLogger }) : db.database;
  await closed.close();
  expect(databaseFault(await failureOf(() => closed.prisma.$queryRaw`SELECT 1`))).not.toBeNull();
});
