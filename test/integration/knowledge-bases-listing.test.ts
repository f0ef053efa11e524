/**
 * The `knowledge-bases` provider lists the caller's remote knowledge bases once per
 * (organization, teams) at a time: when its brief cache entry expires under load, every search
 * in flight would otherwise send the same listing statement. Most organizations have none, so
 * for them this statement is all the provider costs.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { silentLogger } from "../../lib/logger.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { KnowledgeBaseStore } from "../../subgraphs/knowledge-base/knowledge-base-store.js";
import { PassageStore } from "../../subgraphs/knowledge-base/passage-store.js";
import { KnowledgeBasesProvider } from "../../subgraphs/knowledge-base/search/knowledge-bases-provider.js";
import type { RemoteKnowledgeBases } from "../../subgraphs/knowledge-base/remote-knowledge-bases.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

let db: TestDatabase;

const tenant = (organizationId: string, teamIds: string[] = []): TenantContext => ({ organizationId, userId: "ada", teamIds, role: "member" as const, userName: null, userEmail: null });
/** Listing statements sent: Prisma's findMany on knowledge_bases. */
const listings = () => db.database.statements.log.filter((sql) => sql.includes(`FROM "public"."knowledge_bases"`)).length;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.dispose();
});

describe("knowledge-bases provider listing", () => {
  it("sends one listing for many concurrent searches of one caller, one per (organization, teams), none while cached", async () => {
    // No remote knowledge base exists, so the provider never asks a remote or stores passages.
    const unused = {} as RemoteKnowledgeBases;
    const provider = new KnowledgeBasesProvider(new KnowledgeBaseStore(db.database.prisma), unused, new PassageStore(db.database.prisma), silentLogger);
    const ask = (who: TenantContext) => provider.search({ tenant: who, query: "anything", window: 10, signal: new AbortController().signal });
    db.database.statements.reset();
    const answers = await Promise.all([
      ...Array.from({ length: 25 }, () => ask(tenant("org-a"))),
      ...Array.from({ length: 25 }, () => ask(tenant("org-a", ["team-1"]))),
      ...Array.from({ length: 25 }, () => ask(tenant("org-b"))),
    ]);
    expect(answers.every((hits) => hits.length === 0)).toBe(true);
    expect(listings()).toBe(3);
    await ask(tenant("org-a"));
    expect(listings()).toBe(3);
  });
});
