/**
 * The search subgraph under hostile input, against a real database: NUL and other control
 * characters in the query text, a query log batch poisoned by one bad row, forged cursors that
 * try to widen the provider window, and provider failures whose messages must stay one line a
 * user can read.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";
import { encodeCursor } from "../../lib/graphql/pagination.js";
import { startSubgraph, type RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { silentLogger } from "../../lib/logger.js";
import { ConversationStore } from "../../subgraphs/conversations/conversation-store.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { searchSubgraph, type SearchSubgraph } from "../../subgraphs/search/index.js";
import type { ProviderHit, ProviderRequest, SearchProvider } from "../../lib/retrieval/search-provider.js";
import { QueryLog, type QueryLogEntry } from "../../subgraphs/search/query-log.js";
import { NoResultCache } from "../../lib/cache/result-cache.js";
import { MAX_WINDOW, SearchService } from "../../subgraphs/search/search-service.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { recordingLogger } from "../support/recording-logger.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let search: SearchSubgraph;
let server: RunningSubgraph;
let token: string;
const acme = { organizationId: "acme", userId: "ann", teamIds: [], role: "member" as const, userName: null, userEmail: null };
const ids: Record<string, string> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  const store = new ConversationStore(db.database.prisma);
  const config = loadConfig({ SEARCH_INDEXER: "false" });
  search = await searchSubgraph({ database: db.database, config, logger: silentLogger, embedder: new FeatureHashingEmbedder(), cache: new NoResultCache() });
  server = await startSubgraph(search, { host: "127.0.0.1", port: 0, auth: TEST_AUTH, production: false, logger: silentLogger });
  token = await tokenFor("acme", "ann");
  ids.deadlock = (await store.create(acme, "Fixing a deadlock in the order service", [{ role: "user", content: "Our order service deadlocks under load", tokenCount: 1 }])).id;
  ids.lisbon = (await store.create(acme, "Lisbon itinerary", [{ role: "user", content: "Four days in Lisbon", tokenCount: 1 }])).id;
  await search.indexer.drain();
});

afterAll(async () => {
  await server?.stop();
  await db?.dispose();
});

const SEARCH = `query($input: SearchInput!) { search(input: $input) { hits { score item { ... on Conversation { id } } } providers { name status error } } }`;

describe("control characters in the query", () => {
  it.each([
    ["a NUL byte between words", "deadlock\u0000order"],
    ["a NUL byte at the end", "deadlock\u0000"],
    ["bell and escape", "\u0007deadlock\u001b order\u001b"],
    ["C1 controls and DEL", "deadlock\u0085\u009b\u007forder"],
    ["tabs and newlines", "deadlock\t\r\norder"],
    ["a lone high surrogate", "deadlock \ud800 order"],
    ["a lone low surrogate", "\udc00deadlock"],
  ])("treats %s as spaces: every provider answers and the match comes first", async (_name, query) => {
    for (const alpha of [1, 0.5]) {
      const result = await search.service.search(acme, { query, alpha, limit: 5 });
      // The external providers are not configured here (their own tests cover them).
      expect(result.providers.filter((provider) => !/^(web|slack|linkedin)\./.test(provider.name)).map((provider) => [provider.name, provider.status, provider.error])).toEqual([
        ["conversations.keyword", "OK", null],
        ["conversations.semantic", alpha === 1 ? "SKIPPED" : "OK", alpha === 1 ? expect.any(String) : null],
        ["documents.keyword", "OK", null],
        ["documents.semantic", alpha === 1 ? "SKIPPED" : "OK", alpha === 1 ? expect.any(String) : null],
        ["knowledge-bases", alpha === 1 ? "SKIPPED" : "OK", alpha === 1 ? expect.any(String) : null],
      ]);
      if (alpha === 1) expect(result.hits[0]?.ref.id).toBe(ids.deadlock);
    }
  });

  it("answers the same over HTTP, and refuses a query of nothing but control characters as empty", async () => {
    const ok = await graphql(server.url, SEARCH, { input: { query: "deadlock\u0000", alpha: 1 } }, { token });
    expect(ok.errors).toBeUndefined();
    expect(ok.data!.search.hits[0].item.id).toBe(ids.deadlock);
    expect(ok.data!.search.providers[0]).toEqual({ name: "conversations.keyword", status: "OK", error: null });

    const empty = await graphql(server.url, SEARCH, { input: { query: "\u0000\u0001 \u0000" } }, { token });
    expect(errorCodes(empty)).toEqual(["BAD_USER_INPUT"]);
    expect(empty.errors![0]!.extensions!.field).toBe("input.query");
  });

  it("logs the searches, NUL or not", async () => {
    await search.queryLog.flush();
    db.database.statements.reset();
    await search.service.search(acme, { query: "lisbon\u0000 trip", alpha: 1 });
    await search.queryLog.flush();
    const rows = await db.database.prisma.searchQuery.findMany({ where: { organizationId: "acme", query: { startsWith: "lisbon" } } });
    expect(rows.map((row) => row.query)).toEqual(["lisbon  trip"]);
  });
});

describe("the query log", () => {
  const entry = (organizationId: string, query: string, extra: Partial<QueryLogEntry> = {}): QueryLogEntry => ({
    organizationId,
    userId: "u",
    query,
    alpha: 0.5,
    providers: [{ name: "conversations.keyword", status: "OK", tookMs: 1, returned: 1, error: null }],
    results: 1,
    topScore: 0.5,
    cacheHit: false,
    tookMs: 3,
    ...extra,
  });
  const queriesOf = async (organizationId: string) =>
    (await db.database.prisma.searchQuery.findMany({ where: { organizationId }, orderBy: { query: "asc" } })).map((row) => row.query);

  it("writes every organization's rows of a batch in which one row carries NUL bytes", async () => {
    const logger = recordingLogger();
    const log = new QueryLog(db.database, logger);
    log.record(entry("log-a", "first"));
    log.record(entry("log-b", "nul\u0000query", { providers: [{ name: "p\u0000", status: "ERROR", tookMs: 1, returned: 0, error: "bad\u0000byte" }] }));
    log.record(entry("log-a", "second"));
    await log.flush();
    expect(await queriesOf("log-a")).toEqual(["first", "second"]);
    expect(await queriesOf("log-b")).toEqual(["nul query"]);
    expect(logger.lines).toEqual([]);
  });

  it("loses only the row the database refuses when a batch fails for any other reason", async () => {
    const logger = recordingLogger();
    const log = new QueryLog(db.database, logger);
    const createMany = db.database.prisma.searchQuery.createMany.bind(db.database.prisma.searchQuery);
    const spy = jest.spyOn(db.database.prisma.searchQuery, "createMany").mockImplementation(((args: { data: { query: string }[] }) => {
      if (args.data.some((row) => row.query === "refused")) return Promise.reject(new Error("simulated refusal of one row"));
      return createMany(args as never);
    }) as never);
    try {
      for (let i = 0; i < 7; i++) log.record(entry("log-c", `row ${i}`));
      log.record(entry("log-d", "refused"));
      log.record(entry("log-d", "kept"));
      await log.flush();
    } finally {
      spy.mockRestore();
    }
    expect(await queriesOf("log-c")).toEqual(Array.from({ length: 7 }, (_, i) => `row ${i}`));
    expect(await queriesOf("log-d")).toEqual(["kept"]);
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toMatch(/could not write 1 of 9 search query log entries: simulated refusal of one row/);
  });
});

/** Records the windows it is asked for. */
class RecordingProvider implements SearchProvider {
  readonly latency = "LOCAL" as const;
  readonly name = "recording.keyword";
  readonly kind = "KEYWORD" as const;
  readonly description = "records requests";
  windows: number[] = [];
  constructor(private readonly size: number) {}
  async search(request: ProviderRequest): Promise<ProviderHit[]> {
    this.windows.push(request.window);
    return Array.from({ length: Math.min(this.size, request.window) }, (_, i) => ({ ref: { typename: "Conversation", id: `c${i}` }, nativeScore: 1 / (i + 1) }));
  }
}

describe("forged cursors", () => {
  const provider = new RecordingProvider(3_000);
  const service = new SearchService({ providers: [provider], cache: new NoResultCache(), cacheTtlSeconds: 0, providerTimeoutMs: 2_000, queryLog: null });
  const input = { query: "q", limit: 20 };

  /** A real cursor's list hash, so the forgery passes the "same search" check and only its numbers are wrong. */
  async function listHash(): Promise<string> {
    const first = await service.search(acme, input);
    const [, hash] = JSON.parse(Buffer.from(first.pageInfo.endCursor!, "base64url").toString("utf8")) as [string, string];
    return hash;
  }

  it.each([
    ["a window of 1e9", (hash: string) => [hash, 20, [[1e9, 0]]]],
    ["a window just past the cap", (hash: string) => [hash, 20, [[MAX_WINDOW + 1, 0]]]],
    ["a negative window", (hash: string) => [hash, 20, [[-40, 0]]]],
    ["a zero window", (hash: string) => [hash, 20, [[0, 0]]]],
    ["a huge position", (hash: string) => [hash, 1e12, [[40, 0]]]],
    ["a negative position", (hash: string) => [hash, -5, [[40, 0]]]],
    ["a fractional window", (hash: string) => [hash, 20, [[40.5, 0]]]],
    ["windows that shrink", (hash: string) => [hash, 60, [[80, 0], [40, 20]]]],
    ["a segment that starts after the position", (hash: string) => [hash, 20, [[40, 0], [80, 500]]]],
    ["a thousand segments", (hash: string) => [hash, 20, Array.from({ length: 1_000 }, () => [2, 0])]],
  ])("refuses %s with BAD_USER_INPUT and never asks a provider for more than the cap", async (_name, forge) => {
    const after = encodeCursor("s", forge(await listHash()));
    provider.windows = [];
    await expect(service.search(acme, { ...input, after })).rejects.toMatchObject({ extensions: { code: "BAD_USER_INPUT", field: "input.after" } });
    expect(provider.windows).toEqual([]);
  });

  it("still pages with genuine cursors up to the cap and no further", async () => {
    provider.windows = [];
    let after: string | null = null;
    let pages = 0;
    for (; pages < 100; pages++) {
      const result = await service.search(acme, { query: "q", limit: 100, after });
      if (!result.pageInfo.hasNextPage) break;
      after = result.pageInfo.endCursor;
    }
    expect(pages).toBeLessThan(100);
    expect(Math.max(...provider.windows)).toBe(MAX_WINDOW);
  });
});

describe("provider failures", () => {
  class FailingProvider implements SearchProvider {
    readonly latency = "LOCAL" as const;
    readonly kind = "KEYWORD" as const;
    readonly description = "fails";
    constructor(readonly name: string, private readonly error: () => unknown) {}
    async search(): Promise<ProviderHit[]> {
      throw this.error();
    }
  }
  const prismaStyle = () => {
    const error = new Error("\nInvalid `prisma.$queryRaw()` invocation:\n\n\nRaw query failed. Code: `22021`. Message: `invalid byte sequence for encoding \"UTF8\": 0x00`");
    error.name = "PrismaClientKnownRequestError";
    return Object.assign(error, { code: "P2010", meta: { code: "22021" } });
  };

  it.each([
    ["a Prisma raw query error", prismaStyle],
    ["the real database's refusal of a NUL byte", null],
    ["a statement timeout", () => Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" })],
    ["an error with SQL and a stack in its message", () => new Error("syntax error at or near \"SELECT\"\nSELECT * FROM keyword_postings WHERE x\n    at Object.<anonymous> (/srv/app.js:1:1)")],
    ["a thrown string", () => "boom"],
    ["an empty error", () => new Error("")],
  ])("reports %s as one line a user can read: no SQL, no Prisma prefix, no stack", async (_name, makeError) => {
    const failing: SearchProvider = makeError
      ? new FailingProvider("failing.keyword", makeError)
      : {
          name: "failing.keyword",
          kind: "KEYWORD",
          latency: "LOCAL",
          description: "asks the database for a NUL byte",
          async search() {
            await db.database.prisma.$queryRaw`SELECT to_tsvector('english'::regconfig, ${"a\u0000b"})`;
            return [];
          },
        };
    const logger = recordingLogger();
    const service = new SearchService({ providers: [failing], cache: new NoResultCache(), cacheTtlSeconds: 0, providerTimeoutMs: 2_000, queryLog: null, logger });
    const result = await service.search(acme, { query: "anything" });
    const [report] = result.providers;
    expect(report!.status).toBe("ERROR");
    const message = report!.error!;
    expect(message.length).toBeGreaterThan(3);
    expect(message.length).toBeLessThanOrEqual(200);
    expect(message).not.toMatch(/[\r\n]/);
    expect(message).not.toMatch(/prisma|\$queryRaw|invocation|SELECT|keyword_postings|\bat .*:\d+:\d+|0x00|P2010/i);
    // The detail goes to the server's log, for whoever runs it.
    expect(logger.lines.some((line) => line.startsWith("warn") && line.includes("failing.keyword"))).toBe(true);
  });
});
