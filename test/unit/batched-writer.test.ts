/**
 * The batched writer behind the query logs and the document usage counts: it writes at a size or
 * after an interval, one write at a time, isolates a refused row by halving, keeps memory bounded
 * while the sink is stalled, and flush() waits for everything recorded before it.
 */
import { afterEach, describe, expect, it, jest } from "@jest/globals";
import { BatchedWriter, type BatchedWriterOptions } from "../../lib/database/batched-writer.js";
import { recordingLogger } from "../support/recording-logger.js";
import { useFakeClock } from "../support/fake-clock.js";

/** A sink that keeps every write it accepts, refuses writes holding a "poison" row, and can be held shut. */
function recordingSink() {
  const writes: string[][] = [];
  const attempts: string[][] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  let gate: Promise<void> = Promise.resolve();
  let open = () => {};
  return {
    writes,
    attempts,
    get mostInFlight() {
      return mostInFlight;
    },
    get written() {
      return writes.flat();
    },
    /** Until release(), every write waits. */
    stall() {
      gate = new Promise((resolve) => (open = resolve));
    },
    release: () => open(),
    async write(rows: string[]) {
      attempts.push([...rows]);
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      try {
        await gate;
        if (rows.some((row) => row.startsWith("poison"))) throw new Error(`refused: ${rows.find((row) => row.startsWith("poison"))}`);
        writes.push([...rows]);
      } finally {
        inFlight -= 1;
      }
    },
  };
}

function writerWith(sink: ReturnType<typeof recordingSink>, options: Partial<BatchedWriterOptions<string>> = {}) {
  const logger = recordingLogger();
  const writer = new BatchedWriter<string>({
    rowsName: "test rows",
    logger,
    write: (rows) => sink.write(rows),
    maxBatch: 4,
    // Long enough that only size or flush() starts a write, unless a test says otherwise.
    flushIntervalMs: 60_000,
    maxBuffered: 20,
    whenFull: "drop-oldest",
    ...options,
  });
  return { writer, logger };
}

const rows = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** `flushing` must still be pending while the sink is stalled, and settle once it is released. */
async function expectHeldUntilReleased(flushing: Promise<void>, sink: ReturnType<typeof recordingSink>): Promise<void> {
  let flushed = false;
  const done = flushing.then(() => (flushed = true));
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(flushed).toBe(false);
  sink.release();
  await done;
}

describe("BatchedWriter", () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it("writes a full batch at once, without a flush, and leaves fewer rows waiting", async () => {
    const sink = recordingSink();
    const { writer } = writerWith(sink);
    for (const row of rows("r", 6)) writer.record(row);
    await settle();
    expect(sink.writes).toEqual([["r0", "r1", "r2", "r3"]]);
    expect(writer.counts).toMatchObject({ buffered: 2, written: 4 });
    await writer.flush();
    expect(sink.writes).toEqual([["r0", "r1", "r2", "r3"], ["r4", "r5"]]);
  });

  it("writes what waits once the interval has passed", async () => {
    // On Jest's fake clock (setImmediate stays real, for settle()): the interval is exact, and
    // no loaded machine can stretch it past a test's patience.
    useFakeClock();
    const sink = recordingSink();
    const { writer } = writerWith(sink, { flushIntervalMs: 20 });
    writer.record("a");
    writer.record("b");
    await jest.advanceTimersByTimeAsync(19);
    expect(sink.attempts).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    await settle();
    expect(sink.writes).toEqual([["a", "b"]]);
  });

  it("loses only a refused row: the batch is retried in halves down to that row, and the loss is logged once", async () => {
    const sink = recordingSink();
    const { writer, logger } = writerWith(sink, { maxBatch: 16, maxBuffered: 16 });
    const batch = rows("r", 16);
    batch[5] = "poison5";
    for (const row of batch) writer.record(row);
    await writer.flush();
    expect(sink.written.sort()).toEqual(batch.filter((row) => row !== "poison5").sort());
    expect(writer.counts).toMatchObject({ written: 15, refused: 1 });
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toMatch(/^error could not write 1 of 16 test rows: refused: poison5/);
    // The batch, then one half per level down to the row: log2(16) + 1 refusals.
    expect(sink.attempts.filter((attempt) => attempt.includes("poison5")).length).toBe(5);
  });

  it("isolates two neighbouring refused rows at the front of a batch too", async () => {
    const sink = recordingSink();
    const { writer } = writerWith(sink, { maxBatch: 16, maxBuffered: 16 });
    const batch = ["poison0", "poison1", ...rows("r", 14)];
    for (const row of batch) writer.record(row);
    await writer.flush();
    expect(sink.written.sort()).toEqual(rows("r", 14).sort());
    expect(writer.counts).toMatchObject({ written: 14, refused: 2 });
  });

  it("stops trying a batch row by row when the sink refuses everything", async () => {
    const logger = recordingLogger();
    let attempts = 0;
    const writer = new BatchedWriter<string>({
      rowsName: "test rows",
      logger,
      write: async () => {
        attempts += 1;
        throw new Error("connection refused");
      },
      maxBatch: 200,
      flushIntervalMs: 60_000,
      maxBuffered: 200,
      whenFull: "drop-oldest",
    });
    for (const row of rows("r", 200)) writer.record(row);
    await writer.flush();
    expect(writer.counts).toMatchObject({ written: 0, refused: 200 });
    // Halving all the way would be 399 statements against a database that is down.
    expect(attempts).toBe(Math.ceil(Math.log2(200)) + 4);
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toMatch(/could not write 200 of 200 test rows: connection refused \(the sink refused 12 writes in a row/);
  });

  it("keeps memory bounded under a stalled sink: one write in flight, at most maxBuffered waiting, the oldest dropped, counted and logged", async () => {
    const sink = recordingSink();
    sink.stall();
    const { writer, logger } = writerWith(sink, { maxBatch: 4, maxBuffered: 20, whenFull: "drop-oldest" });
    const all = rows("r", 1_000);
    for (const row of all) writer.record(row);
    await settle();
    expect(sink.attempts).toEqual([["r0", "r1", "r2", "r3"]]);
    expect(writer.counts).toMatchObject({ buffered: 20, dropped: 1_000 - 4 - 20 });
    // Logged when dropping starts, not once per dropped row.
    expect(logger.lines).toEqual(["warn 20 test rows are waiting to be written: dropping the oldest until writes catch up"]);

    sink.release();
    await writer.flush();
    expect(sink.mostInFlight).toBe(1);
    expect(sink.written).toEqual([...all.slice(0, 4), ...all.slice(-20)]);
    expect(logger.lines[1]).toBe(`warn dropped ${1_000 - 24} test rows while writes were behind`);
  });

  it("drops the newest instead when told to", async () => {
    const sink = recordingSink();
    sink.stall();
    const { writer } = writerWith(sink, { maxBatch: 4, maxBuffered: 20, whenFull: "drop-newest" });
    const all = rows("r", 100);
    for (const row of all) writer.record(row);
    sink.release();
    await writer.flush();
    expect(sink.written).toEqual(all.slice(0, 24));
    expect(writer.counts).toMatchObject({ written: 24, dropped: 76, buffered: 0 });
  });

  it("flush() waits for the write in flight and for everything recorded before it", async () => {
    const sink = recordingSink();
    sink.stall();
    const { writer } = writerWith(sink, { maxBatch: 4 });
    for (const row of rows("r", 10)) writer.record(row);
    await expectHeldUntilReleased(writer.flush(), sink);
    expect(sink.written).toEqual(rows("r", 10));
    expect(sink.writes.map((write) => write.length)).toEqual([4, 4, 2]);
    expect(writer.counts.buffered).toBe(0);
  });

  it("flush() waits for a batch already in flight even when nothing else waits", async () => {
    const sink = recordingSink();
    sink.stall();
    const { writer } = writerWith(sink, { maxBatch: 4 });
    for (const row of rows("r", 4)) writer.record(row);
    expect(writer.counts.buffered).toBe(0);
    await expectHeldUntilReleased(writer.flush(), sink);
    expect(sink.written).toEqual(rows("r", 4));
  });

  it("flush() does not wait for rows recorded after it", async () => {
    const sink = recordingSink();
    const { writer } = writerWith(sink, { maxBatch: 4 });
    writer.record("before");
    const flushing = writer.flush();
    sink.stall();
    for (const row of rows("after", 8)) writer.record(row);
    await flushing;
    expect(sink.written).toEqual(["before"]);
    sink.release();
    await writer.flush();
    expect(sink.written).toEqual(["before", ...rows("after", 8)]);
  });

  it("writes rows of different groups apart and tells afterWrite only the rows that were written", async () => {
    const sink = recordingSink();
    const afterWrites: string[][] = [];
    const { writer } = writerWith(sink, {
      maxBatch: 10,
      groupKey: (row) => row.slice(-1),
      afterWrite: async (written) => void afterWrites.push([...written]),
    });
    for (const row of ["a-x", "b-y", "poison-x", "c-x", "d-y"]) writer.record(row);
    await writer.flush();
    expect(sink.writes).toEqual([["a-x"], ["c-x"], ["b-y", "d-y"]]);
    expect(afterWrites).toEqual([["a-x", "c-x", "b-y", "d-y"]]);
  });

  it("refuses settings that cannot work, saying what it got", () => {
    const sink = recordingSink();
    expect(() => writerWith(sink, { maxBatch: 0 })).toThrow(/maxBatch to be a whole number of at least 1, but got: 0/);
    expect(() => writerWith(sink, { maxBatch: 10, maxBuffered: 5 })).toThrow(/maxBuffered to be a whole number of at least maxBatch \(10\), but got: 5/);
  });
});
