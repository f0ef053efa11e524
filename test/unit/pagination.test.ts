import { describe, expect, it } from "@jest/globals";
import { decodeCursor, encodeCursor, requireUuid, toConnection, validatePageSize } from "../../lib/graphql/pagination.js";

describe("cursors", () => {
  it("round-trip and are opaque URL-safe strings", () => {
    const cursor = encodeCursor("c", ["2026-01-01T00:00:00.000Z", "0193c8a4-0000-7000-8000-000000000000"]);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, "c", "after", (parts) => parts)).toEqual(["2026-01-01T00:00:00.000Z", "0193c8a4-0000-7000-8000-000000000000"]);
  });

  it.each([["not base64!"], ["e30"], [encodeCursor("m", [1])], ["x".repeat(600)]])("rejects %s as BAD_USER_INPUT on the named field", (cursor) => {
    expect(() => decodeCursor(cursor, "c", "after", (parts) => parts)).toThrow(/^after: is not a valid cursor/);
  });
});

describe("page sizes and ids", () => {
  it("accepts 1..100 and names the field otherwise", () => {
    expect(validatePageSize(undefined, "first", 20)).toBe(20);
    expect(validatePageSize(100, "first", 20)).toBe(100);
    expect(() => validatePageSize(0, "first", 20)).toThrow(/^first: must be between 1 and 100, got 0/);
    expect(() => validatePageSize(101, "first", 20)).toThrow(/got 101/);
  });

  it("requires UUIDs and normalizes their case", () => {
    expect(requireUuid("0193C8A4-0000-7000-8000-00000000000A", "id")).toBe("0193c8a4-0000-7000-8000-00000000000a");
    expect(() => requireUuid("1 OR 1=1", "id")).toThrow(/^id: must be a UUID/);
  });

  it("builds a connection from take = first + 1 rows", () => {
    const connection = toConnection([1, 2, 3], 2, false, (n) => `c${n}`);
    expect(connection.nodes).toEqual([1, 2]);
    expect(connection.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false, startCursor: "c1", endCursor: "c2" });
    expect(toConnection([], 2, true, String).pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null });
  });
});
