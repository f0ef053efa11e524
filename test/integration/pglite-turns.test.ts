/**
 * lib/database/pglite-turns.ts: on the embedded PGlite, whose statements run on this thread, a
 * request that arrives while another request's statements run one after another is read between
 * them, not after the last one (the second search of a `@defer` operation could not join the
 * first one's provider calls when it was read late). On PostgreSQL every statement is a round
 * trip over a socket, so the same holds without any help; the test runs on both.
 */
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

/** Far more statements than the turns a loopback request needs to be connected, sent and read. */
const STATEMENTS = 200;

let db: TestDatabase;
let server: http.Server;
let url: string;
/** How many statements of the running chain had finished when the server read a request. */
let finishedWhenRead: number | null = null;
let finished = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  server = http.createServer((_request, response) => {
    finishedWhenRead ??= finished;
    response.end("read");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await db?.dispose();
});

async function chainOfStatements(statement: () => Promise<unknown>): Promise<void> {
  finished = 0;
  finishedWhenRead = null;
  const answered = fetch(url).then((response) => response.text());
  for (let index = 0; index < STATEMENTS; index++) {
    await statement();
    finished += 1;
  }
  expect(await answered).toBe("read");
}

it("reads a request that arrives during a chain of statements before the chain ends", async () => {
  await chainOfStatements(() => db.database.prisma.$queryRaw`SELECT 1`);
  expect(finishedWhenRead).not.toBeNull();
  expect(finishedWhenRead!).toBeLessThan(STATEMENTS);
});

it("does the same between the statements of one transaction", async () => {
  await db.database.prisma.$transaction(async (tx) => {
    await chainOfStatements(() => tx.$queryRaw`SELECT 1`);
  });
  expect(finishedWhenRead!).toBeLessThan(STATEMENTS);
});
