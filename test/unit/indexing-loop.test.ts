/**
 * The loop both indexers run (lib/retrieval/indexing-loop.ts): rounds until the queue is empty,
 * then the vacuum if due and the idle pause, which a poke cuts short; a failing round is logged
 * and the loop goes on; stop() ends it and is seen by the batch in progress; drain() runs rounds
 * until one finds nothing. The database here only records what it was asked.
 */
import { describe, expect, it } from "@jest/globals";
import type { Database } from "../../lib/database/connect.js";
import { IndexingLoop } from "../../lib/retrieval/indexing-loop.js";
import { recordingLogger } from "../support/recording-logger.js";

function recordingDatabase(fail = false): Database & { sql: string[] } {
  const sql: string[] = [];
  const session = {
    exec: async () => {},
    query: async (text: string) => {
      sql.push(text);
      if (fail) throw new Error("vacuum refused");
      return [];
    },
  };
  return { sql, withSession: (work: (s: typeof session) => unknown) => work(session) } as unknown as Database & { sql: string[] };
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
  expect(condition()).toBe(true);
};

describe("IndexingLoop", () => {
  it("works the queue down, vacuums once enough was done, and sleeps until poked", async () => {
    const queue = [3, 2, 0];
    let rounds = 0;
    const database = recordingDatabase();
    const loop = new IndexingLoop(async () => ((rounds += 1), queue.shift() ?? 0), { name: "test indexing", idleMs: 60_000, logger: recordingLogger(), database, churnedTables: ["a", "b"], vacuumAfterJobs: 5 });
    loop.start();
    await until(() => rounds === 3);
    expect(database.sql).toEqual(["VACUUM (ANALYZE) a, b"]);
    // Asleep for a minute unless poked.
    queue.push(1, 0);
    loop.poke();
    await until(() => rounds === 5);
    expect(database.sql).toHaveLength(1); // 1 job since the last vacuum: not due
    await loop.stop();
    expect(loop.stopping).toBe(true);
  });

  it("logs a failing round and keeps going, and a failing vacuum too", async () => {
    const logger = recordingLogger();
    let rounds = 0;
    const loop = new IndexingLoop(
      async () => {
        rounds += 1;
        if (rounds === 1) throw new Error("database gone");
        return rounds === 2 ? 1 : 0;
      },
      { name: "test indexing", idleMs: 1, logger, database: recordingDatabase(true), churnedTables: ["a"], vacuumAfterJobs: 1 },
    );
    loop.start();
    await until(() => rounds >= 4);
    await loop.stop();
    expect(logger.lines).toContain("warn test indexing round failed: database gone");
    expect(logger.lines).toContain("warn vacuum after test indexing failed: vacuum refused");
  });

  it("lets the batch in progress see stop(), and drains until a round finds nothing", async () => {
    let seenStopping: boolean | null = null;
    let release!: () => void;
    const loop: IndexingLoop = new IndexingLoop(
      async () => {
        await new Promise<void>((resolve) => (release = resolve));
        seenStopping = loop.stopping;
        return 0;
      },
      { name: "test indexing", idleMs: 1, logger: recordingLogger(), database: recordingDatabase(), churnedTables: ["a"], vacuumAfterJobs: null },
    );
    loop.start();
    await until(() => release !== undefined);
    const stopped = loop.stop();
    release();
    await stopped;
    expect(seenStopping).toBe(true);

    const batches = [4, 4, 1, 0, 7];
    const progress: number[] = [];
    const draining = new IndexingLoop(async () => batches.shift() ?? 0, { name: "drain", idleMs: 1, logger: recordingLogger(), database: recordingDatabase(), churnedTables: ["a"], vacuumAfterJobs: null });
    expect(await draining.drain((done) => progress.push(done))).toBe(9);
    expect(progress).toEqual([4, 8, 9]);
    expect(batches).toEqual([7]);
  });
});
