/**
 * The demo organization's judged questions (lib/evaluation/demo-judged-queries.json) at default
 * settings: no alpha, no fusion method, no weights, as the web app and a first GraphQL query ask.
 * Each must put first what a person would open, and none may be called a weak match; questions
 * the demo holds nothing about must be (SearchResult.weakMatches). Through the search service with every provider
 * of the one-process stack (the keyword ones answer at the default alpha), on the seeded demo.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { NoResultCache } from "../../lib/cache/result-cache.js";
import { loadConfig } from "../../lib/config.js";
import { DEMO_ORGANIZATION, DEMO_TEAMS, DEMO_USERS } from "../../lib/demo-data/organization.js";
import { judgeFirstHits, loadDemoJudgedQueries, loadDemoOutsideQueries, type JudgedItem } from "../../lib/evaluation/judged-queries.js";
import { silentLogger } from "../../lib/logger.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { searchSubgraph, type SearchSubgraph } from "../../subgraphs/search/index.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { DEMO_ORGANIZATION_SEEDED } from "../support/demo-organization.js";

let db: TestDatabase;
let search: SearchSubgraph;
const ada = DEMO_USERS[0]!;
const tenant: TenantContext = {
  organizationId: DEMO_ORGANIZATION.id,
  userId: ada.id,
  teamIds: DEMO_TEAMS.filter((team) => (team.members as readonly string[]).includes(ada.id)).map((team) => team.id),
  role: "admin",
  userName: ada.name,
  userEmail: ada.email,
};

async function firstItem(query: string): Promise<JudgedItem | undefined> {
  const [hit] = (await search.service.search(tenant, { query, limit: 1 })).hits;
  if (!hit) return undefined;
  if (hit.ref.typename === "DocumentChunk") {
    const chunk = await db.database.prisma.documentChunk.findFirstOrThrow({ where: { organizationId: DEMO_ORGANIZATION.id, id: hit.ref.id }, select: { document: { select: { fileName: true } } } });
    return { kind: "document", fileName: chunk.document.fileName };
  }
  if (hit.ref.typename === "Conversation") {
    const conversation = await db.database.prisma.conversation.findFirstOrThrow({ where: { organizationId: DEMO_ORGANIZATION.id, id: hit.ref.id }, select: { title: true } });
    return { kind: "conversation", title: conversation.title };
  }
  return { kind: "other" };
}

beforeAll(async () => {
  db = await createTestDatabase({ startingPoint: DEMO_ORGANIZATION_SEEDED });
  const config = loadConfig({ ...process.env, SEARCH_INDEXER: "false", SEARCH_PROVIDER_TIMEOUT_MS: "60000" });
  search = await searchSubgraph({ database: db.database, config, logger: silentLogger, cache: new NoResultCache() });
  await search.start?.();
  // The seed leaves its documents PENDING for the indexer (off here: drained once, now).
  await search.domains.documents.indexer.drain();
}, 300_000);

afterAll(async () => {
  await search?.stop?.();
  await db?.dispose();
  await closeWorkerPools();
});

describe("judged demo questions at default settings", () => {
  it("puts what a person would open first, for each of the 20 but the known misses", async () => {
    const queries = loadDemoJudgedQueries();
    expect(queries).toHaveLength(20);
    const outcomes = await judgeFirstHits(queries, firstItem);
    const missed = outcomes.filter((outcome) => !outcome.passed);
    // Exactly the misses the data names: a fixed one is a test to update, a new one a failure.
    expect(missed.map((outcome) => outcome.query)).toEqual(queries.filter((judged) => judged.miss).map((judged) => judged.query));
    expect(missed.length).toBeLessThanOrEqual(1);
  }, 120_000);

  it("says nothing matched well for the questions the demo holds nothing about, and never for the judged ones", async () => {
    const weak = async (query: string) => (await search.service.search(tenant, { query, limit: 1 })).weakMatches;
    for (const judged of loadDemoJudgedQueries()) expect([judged.query, await weak(judged.query)]).toEqual([judged.query, false]);
    const outside = loadDemoOutsideQueries();
    const strongAnyway: string[] = [];
    for (const question of outside) if (!(await weak(question.query))) strongAnyway.push(question.query);
    // Exactly the misses the data names, as above.
    expect(strongAnyway).toEqual(outside.filter((question) => question.miss).map((question) => question.query));
    expect(outside.length - strongAnyway.length).toBeGreaterThanOrEqual(4);
  }, 120_000);
});
