/**
 * Admission by fair share (lib/workers/fair-share.ts): per-key and overall running bounds,
 * round-robin between keys, bounded waiting (per key, overall, in time), and a failing job
 * freeing its slot. Jobs are promises the test settles, so every order below is exact.
 */
import { describe, expect, it } from "@jest/globals";
import { GraphQLError } from "graphql";
import { FairShareQueue, type FairShareOptions } from "../../lib/workers/fair-share.js";

function queue(options: Partial<FairShareOptions> = {}): FairShareQueue {
  return new FairShareQueue({ name: "test work", maxRunning: 2, maxRunningPerKey: 1, maxQueuedPerKey: 4, maxQueued: 16, maxWaitMs: 60_000, ...options });
}

/** A job that runs until the test settles it, recording when it started. */
function heldJob(started: string[], label: string) {
  let settle!: (value: string) => void;
  let fail!: (error: Error) => void;
  const done = new Promise<string>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  return {
    job: () => {
      started.push(label);
      return done;
    },
    finish: () => settle(label),
    fail: (error: Error) => fail(error),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

async function refusal(promise: Promise<unknown>): Promise<GraphQLError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(GraphQLError);
  return error as GraphQLError;
}

describe("FairShareQueue", () => {
  it("keeps one key's jobs behind each other while another key's job takes the free slot", async () => {
    const shares = queue();
    const started: string[] = [];
    const a1 = heldJob(started, "a1");
    const a2 = heldJob(started, "a2");
    const b1 = heldJob(started, "b1");
    const runs = [shares.run("a", a1.job), shares.run("a", a2.job), shares.run("b", b1.job)];
    await tick();
    // a2 waits for a1 although a slot is free; b1 takes it.
    expect(started).toEqual(["a1", "b1"]);
    expect([shares.runningCount(), shares.runningCount("a"), shares.waitingCount("a")]).toEqual([2, 1, 1]);
    b1.finish();
    await tick();
    expect(started).toEqual(["a1", "b1"]);
    a1.finish();
    await tick();
    expect(started).toEqual(["a1", "b1", "a2"]);
    a2.finish();
    expect(await Promise.all(runs)).toEqual(["a1", "a2", "b1"]);
    expect([shares.runningCount(), shares.waitingCount()]).toEqual([0, 0]);
  });

  it("takes waiting keys in turn, so a key with many jobs waiting does not starve one with few", async () => {
    const shares = queue({ maxRunning: 1, maxRunningPerKey: 1 });
    const started: string[] = [];
    const labels = [["x", "x0"], ["a", "a1"], ["a", "a2"], ["a", "a3"], ["b", "b1"], ["c", "c1"]] as const;
    const held = new Map<string, ReturnType<typeof heldJob>>(labels.map(([, label]) => [label, heldJob(started, label)]));
    const runs = labels.map(([key, label]) => shares.run(key, held.get(label)!.job));
    // One slot: finish whatever runs, and see who gets it next.
    while (started.length < labels.length) {
      held.get(started.at(-1)!)!.finish();
      await tick();
    }
    held.get(started.at(-1)!)!.finish();
    await Promise.all(runs);
    // Each waiting key once before any key twice: b and c do not wait for all of a's jobs.
    expect(started).toEqual(["x0", "a1", "b1", "c1", "a2", "a3"]);
  });

  it("refuses with OVERLOADED past a key's waiting bound and the overall one, and others still get in", async () => {
    const shares = queue({ maxRunning: 1, maxQueuedPerKey: 1, maxQueued: 2 });
    const started: string[] = [];
    const running = heldJob(started, "a1");
    const waiting = heldJob(started, "a2");
    const runs = [shares.run("a", running.job), shares.run("a", waiting.job)];
    const perKey = await refusal(shares.run("a", heldJob(started, "a3").job));
    expect(perKey.extensions.code).toBe("OVERLOADED");
    expect(perKey.message).toMatch(/Your organization already has 1 test work job\(s\) running and 1 waiting/);
    const other = heldJob(started, "b1");
    runs.push(shares.run("b", other.job));
    const overall = await refusal(shares.run("c", heldJob(started, "c1").job));
    expect(overall.message).toMatch(/busy with test work \(2 jobs waiting\)/);
    for (const job of [running, other, waiting]) {
      job.finish();
      await tick();
    }
    await Promise.all(runs);
    expect(started).toEqual(["a1", "a2", "b1"]);
  });

  it("gives up a job that waited past maxWaitMs, and a failing job frees its slot", async () => {
    const shares = queue({ maxRunning: 1, maxWaitMs: 30 });
    const started: string[] = [];
    const stuck = heldJob(started, "a1");
    const run = shares.run("a", stuck.job);
    const gaveUp = await refusal(shares.run("b", heldJob(started, "b1").job));
    expect(gaveUp.message).toMatch(/No test work slot was free within 0.03 s/);
    expect(shares.waitingCount()).toBe(0);
    stuck.fail(new Error("parser crashed"));
    await expect(run).rejects.toThrow("parser crashed");
    expect(await shares.run("b", async () => "after")).toBe("after");
    expect(started).toEqual(["a1"]);
  });
});
