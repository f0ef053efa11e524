/**
 * WAL positions as numbers, and the in-process store of users' last write positions that
 * read-your-writes consults (lib/database/write-positions.ts); Redis's store is tested against
 * a real Redis in test/integration/write-positions.test.ts.
 */
import { describe, expect, it } from "@jest/globals";
import { LocalWritePositions, parseWalPosition } from "../../lib/database/write-positions.js";

describe("parseWalPosition", () => {
  it("reads pg_lsn text as one number, the part before the slash being the high 32 bits", () => {
    expect(parseWalPosition("0/0")).toBe(0n);
    expect(parseWalPosition("16/B374D848")).toBe(0x16_b374_d848n);
    // Ordered as PostgreSQL orders them, not as strings: 1/0 is past 0/FFFFFFFF.
    expect(parseWalPosition("1/0") > parseWalPosition("0/FFFFFFFF")).toBe(true);
    expect(parseWalPosition("A/1") > parseWalPosition("9/FFFFFFFF")).toBe(true);
  });

  it.each(["", "16", "16/", "/1", "G/1", "1/123456789", "1/2/3", " 1/2"])("refuses %p with a message saying what a position looks like", (text) => {
    expect(() => parseWalPosition(text)).toThrow(/not a PostgreSQL WAL position \(pg_lsn such as 16\/B374D848\)/);
  });
});

describe("LocalWritePositions", () => {
  it("keeps each user's largest position, apart for every (organization, user)", async () => {
    const positions = new LocalWritePositions(60_000);
    const ann = { organizationId: "acme", userId: "ann" };
    expect(await positions.get(ann)).toBeNull();
    await positions.record(ann, 200n);
    // A write that committed earlier but is recorded later must not move the position back.
    await positions.record(ann, 100n);
    expect(await positions.get(ann)).toBe(200n);
    await positions.record(ann, 300n);
    expect(await positions.get(ann)).toBe(300n);
    expect(await positions.get({ organizationId: "acme", userId: "bob" })).toBeNull();
    expect(await positions.get({ organizationId: "globex", userId: "ann" })).toBeNull();
  });

  it("does not confuse ids that contain the separator", async () => {
    const positions = new LocalWritePositions(60_000);
    await positions.record({ organizationId: "a:b", userId: "c" }, 7n);
    expect(await positions.get({ organizationId: "a", userId: "b:c" })).toBeNull();
    expect(await positions.get({ organizationId: "a:b", userId: "c" })).toBe(7n);
  });

  it("forgets a position after its time to live", async () => {
    const positions = new LocalWritePositions(1);
    await positions.record({ organizationId: "acme", userId: "ann" }, 5n);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await positions.get({ organizationId: "acme", userId: "ann" })).toBeNull();
  });
});
