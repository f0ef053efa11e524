/**
 * The knowledge query log: batched rows, one bad row never costs the others theirs, hostile
 * text is made storable, and query counts rise as the tables' owner — platform knowledge bases
 * too, which no tenant scope may write — and each organization reads only its own count of a
 * platform knowledge base (the shared one would let it watch the others' activity).
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { recordingLogger } from "../support/recording-logger.js";
import { KnowledgeBaseStore } from "../../subgraphs/knowledge-base/knowledge-base-store.js";
import { createKnowledgeBaseLoaders } from "../../subgraphs/knowledge-base/knowledge-base-resolvers.js";
import { resolvers } from "../../subgraphs/knowledge-base/resolvers.js";
import { PassageStore } from "../../subgraphs/knowledge-base/passage-store.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { KnowledgeQueryLog, type KnowledgeQueryEntry } from "../../subgraphs/knowledge-base/knowledge-query-log.js";
import { fuseByRank } from "../../subgraphs/knowledge-base/knowledge-queries.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.dispose();
});

const entry = (overrides: Partial<KnowledgeQueryEntry>): KnowledgeQueryEntry => ({
  organizationId: "org-log",
  userId: "u1",
  knowledgeBaseId: null,
  query: "refunds",
  results: 1,
  topScore: 0.5,
  provider: "documents",
  credits: 0,
  latencyMs: 12,
  ...overrides,
});

describe("knowledge query log", () => {
  it("writes a batch in which one row is refused, losing only that row, and counts platform knowledge bases as the owner", async () => {
    const store = new KnowledgeBaseStore(db.database.prisma);
    const platform = await store.createPlatform({ name: "Platform handbook", description: null, category: null, backend: "LOCAL" });
    const logger = recordingLogger();
    const lines = logger.lines;
    const log = new KnowledgeQueryLog(db.database, logger);
    log.record(entry({ knowledgeBaseId: platform.id, query: "nul\u0000byte and lone \ud800 surrogate" }));
    // Not a UUID: PostgreSQL refuses this row alone.
    log.record(entry({ knowledgeBaseId: "not-a-uuid" }));
    log.record(entry({ knowledgeBaseId: platform.id, results: 0, topScore: Number.NaN, latencyMs: Number.POSITIVE_INFINITY }));
    await log.flush();

    const rows = await db.database.prisma.knowledgeQuery.findMany({ where: { organizationId: "org-log" }, orderBy: { createdAt: "asc" } });
    expect(rows).toHaveLength(2);
    expect(rows.map((row) => row.query)).toEqual(expect.arrayContaining(["nul byte and lone \ufffd surrogate", "refunds"]));
    expect(rows.find((row) => row.results === 0)).toMatchObject({ topScore: null, latencyMs: 0 });
    expect(lines.some((line) => /could not write 1 of 3 knowledge query log entries/.test(line))).toBe(true);
    const counted = await db.database.prisma.knowledgeBase.findUniqueOrThrow({ where: { id: platform.id } });
    expect(counted.queryCount).toBe(2);
  });
});

describe("a platform knowledge base's queryCount", () => {
  it("is each organization's own count, read under its own scope; the owner's column counts everyone", async () => {
    const store = new KnowledgeBaseStore(db.database.prisma);
    const platform = await store.createPlatform({ name: "Shared glossary", description: null, category: null, backend: "LOCAL" });
    const log = new KnowledgeQueryLog(db.database, recordingLogger());
    const asked = (organizationId: string) => entry({ organizationId, knowledgeBaseId: platform.id, knowledgeBaseOrganizationId: platform.organizationId });
    for (const organizationId of ["org-watched", "org-watched", "org-watched", "org-watcher"]) log.record(asked(organizationId));
    await log.flush();
    log.record(asked("org-watcher"));
    await log.flush();

    const tenant = (organizationId: string): TenantContext => ({ organizationId, userId: "u1", teamIds: [], role: "member", userName: null, userEmail: null });
    const passages = new PassageStore(db.database.prisma);
    const countFor = async (organizationId: string) => {
      const loaders = createKnowledgeBaseLoaders(store, passages, tenant(organizationId));
      const base = await loaders.knowledgeBaseById.load(platform.id);
      expect(base).not.toBeNull();
      const context = { requireTenant: () => tenant(organizationId), knowledgeBaseLoaders: () => loaders };
      return (resolvers.KnowledgeBase as unknown as { queryCount(base: unknown, args: unknown, context: unknown): Promise<number> }).queryCount(base, {}, context);
    };
    expect(await countFor("org-watched")).toBe(3);
    expect(await countFor("org-watcher")).toBe(2);
    expect(await countFor("org-quiet")).toBe(0);
    expect((await db.database.prisma.knowledgeBase.findUniqueOrThrow({ where: { id: platform.id } })).queryCount).toBe(5);
  });
});

describe("fuseByRank", () => {
  it("scores the first of every list 1, counts a list's repeat once, and breaks ties by id", () => {
    const fused = fuseByRank([
      { weight: 0.5, ids: ["a", "b", "b"] },
      { weight: 0.5, ids: ["a", "c"] },
    ]);
    expect(fused.map((hit) => hit.id)).toEqual(["a", "b", "c"]);
    expect(fused[0]!.score).toBeCloseTo(1);
    expect(fused[1]!.score).toBeCloseTo(fused[2]!.score);
    expect(fuseByRank([{ weight: 0, ids: ["a"] }])).toEqual([]);
  });
});
