/**
 * `@defer` at the query's root split into operations of their own (gateway/root-defer.ts): which
 * shapes are split, what each part's operation holds (only the variables and fragments it uses),
 * and the parts an execution yields, run here on graphql-js over a small schema whose fields
 * answer after set delays.
 */
import { afterEach, describe, expect, it, jest } from "@jest/globals";
import { buildSchema, execute, parse, print, type DocumentNode } from "graphql";
import { executeRootDefer, splitRootDefer } from "../../gateway/root-defer.js";
import { useFakeClock } from "../support/fake-clock.js";

const schema = buildSchema(`type Query { fast(q: String): String, slow(q: String): String, broken: String }`);
const delays: Record<string, number> = { fast: 5, slow: 60 };
const rootValue = {
  fast: ({ q }: { q?: string }) => new Promise((resolve) => setTimeout(() => resolve(`fast ${q ?? ""}`), delays.fast)),
  slow: ({ q }: { q?: string }) => new Promise((resolve) => setTimeout(() => resolve(`slow ${q ?? ""}`), delays.slow)),
  broken: () => {
    throw new Error("broken on purpose");
  },
};

const compact = (document: DocumentNode) => print(document).replace(/\s+/g, " ");

describe("splitRootDefer", () => {
  it("splits root fragments into one operation each, with only the variables and fragments each uses", () => {
    const document = parse(`
      query Streamed($a: String, $b: String, $c: String) {
        fast(q: $a)
        ... @defer(label: "one") { slow(q: $b) ...Slow }
        ... on Query @defer { fast(q: $c) }
      }
      fragment Slow on Query { slow }
      fragment Unused on Query { fast }
    `);
    const split = splitRootDefer(document, "Streamed")!;
    expect(compact(split.initial)).toBe("query Streamed($a: String) { fast(q: $a) }");
    expect(split.deferred.map((part) => part.label)).toEqual(["one", undefined]);
    expect(compact(split.deferred[0]!.document)).toBe("query Streamed($b: String) { ... { slow(q: $b) ...Slow } } fragment Slow on Query { slow }");
    expect(compact(split.deferred[1]!.document)).toBe("query Streamed($c: String) { ... on Query { fast(q: $c) } }");
    // Once per document and operation.
    expect(splitRootDefer(document, "Streamed")).toBe(split);
  });

  it.each([
    ["a nested @defer", `query { fast ... @defer { slow ... @defer { broken } } }`],
    ["@defer on a named fragment", `query { fast ...F @defer } fragment F on Query { slow }`],
    ["@defer with if:", `query($d: Boolean) { fast ... @defer(if: $d) { slow } }`],
    ["another directive beside @defer", `query($s: Boolean!) { fast ... @defer @skip(if: $s) { slow } }`],
    ["@defer inside a named fragment", `query { fast ...F } fragment F on Query { ... @defer { slow } }`],
    ["nothing outside the deferred fragments", `query { ... @defer { slow } }`],
    ["a mutation, whose root fields run in order", `mutation { ... @defer { x } y }`],
  ])("leaves %s to the streaming planner", (_, source) => {
    expect(splitRootDefer(parse(source), undefined)).toBeNull();
  });

  it("picks the named operation of several, and splits nothing without a name to pick by", () => {
    const document = parse(`query A { fast } query B { fast ... @defer { slow } }`);
    expect(splitRootDefer(document, "A")).toBeNull();
    expect(splitRootDefer(document, "B")).not.toBeNull();
    expect(splitRootDefer(document, undefined)).toBeNull();
  });
});

describe("executeRootDefer", () => {
  const run = async (source: string, variableValues: Record<string, unknown> = {}) => {
    const document = parse(source);
    const split = splitRootDefer(document, undefined)!;
    const parts = [];
    for await (const part of executeRootDefer(split, { document, variables: variableValues, context: { caller: "test" } }, (request) =>
      execute({ schema, rootValue, document: request.document, variableValues: request.variables as Record<string, unknown> }),
    )) {
      parts.push(part);
    }
    return parts;
  };

  afterEach(() => {
    jest.useRealTimers();
  });

  it("yields the first part when it is done, then each deferred part as it finishes, in finishing order", async () => {
    // The fields' delays on Jest's fake clock: which part finishes first is then the delays'
    // doing, never the machine's.
    useFakeClock();
    const running = run(`query($q: String) { fast(q: $q) ... @defer(label: "slow") { slow(q: $q) } ... @defer(label: "quick") { alsoFast: fast(q: "x") } }`, { q: "hi" });
    await jest.advanceTimersByTimeAsync(delays.slow!);
    const parts = await running;
    expect(parts).toEqual([
      { data: { fast: "fast hi" }, hasNext: true },
      { incremental: [{ data: { alsoFast: "fast x" }, path: [], label: "quick" }], hasNext: true },
      { incremental: [{ data: { slow: "slow hi" }, path: [], label: "slow" }], hasNext: false },
    ]);
  });

  it("carries a deferred part's errors in its own payload", async () => {
    const parts = await run(`query { fast ... @defer(label: "b") { broken } }`);
    expect(parts[0]).toEqual({ data: { fast: "fast " }, hasNext: true });
    expect(parts[1]!.hasNext).toBe(false);
    expect(parts[1]!.incremental![0]!.data).toEqual({ broken: null });
    expect(parts[1]!.incremental![0]!.errors!.map((error) => error.message)).toEqual(["broken on purpose"]);
  });

  it("gives every part a context of its own that reads through to the request's", async () => {
    const contexts: unknown[] = [];
    const document = parse(`query { fast ... @defer { slow } }`);
    const request = { document, context: { caller: "test" } };
    for await (const part of executeRootDefer(splitRootDefer(document, undefined)!, request, (partRequest) => {
      contexts.push(partRequest.context);
      return execute({ schema, rootValue, document: partRequest.document });
    })) void part;
    expect(contexts).toHaveLength(2);
    expect(contexts[0]).not.toBe(contexts[1]);
    expect(contexts.every((context) => context !== request.context && (context as { caller: string }).caller === "test")).toBe(true);
  });
});
