/**
 * Knowledge bases against a real database: who sees which (platform for everyone, company for
 * the organization, team for its members), another organization's indistinguishable from a
 * missing one, secrets kept out of listings, platform rows readable but not writable by
 * tenants, capability mappings in priority order, and the query log's tenancy.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { GraphQLError } from "graphql";
import { withTenantScope } from "../../lib/database/tenant-scope.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { DocumentStore } from "../../subgraphs/knowledge-base/document-store.js";
import { PassageStore } from "../../subgraphs/knowledge-base/passage-store.js";
import { KnowledgeBaseStore, PLATFORM_ORGANIZATION_ID, type KnowledgeBase, type NewKnowledgeBase } from "../../subgraphs/knowledge-base/knowledge-base-store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

const tenant = (organizationId: string, userId: string, teamIds: string[] = []): TenantContext => ({ organizationId, userId, teamIds, role: "member" as const, userName: null, userEmail: null });
const ann = tenant("acme", "ann", ["support"]);
const bob = tenant("acme", "bob", ["sales"]);
const gus = tenant("globex", "gus", ["support"]);

const local = (name: string, extra: Partial<NewKnowledgeBase> = {}): NewKnowledgeBase => ({ name, description: null, scope: "COMPANY", category: null, backend: "LOCAL", ...extra });

async function codeOf(promise: Promise<unknown>): Promise<{ code: unknown; message: string }> {
  const error = (await promise.then(() => null, (e: unknown) => e)) as GraphQLError | null;
  if (!error) throw new Error("expected the call to fail");
  return { code: error.extensions?.code, message: error.message };
}

let db: TestDatabase;
let store: KnowledgeBaseStore;
let platformGuides: KnowledgeBase;
let platformPolicies: KnowledgeBase;
let acmeHandbook: KnowledgeBase;
let acmeSupport: KnowledgeBase;
let acmeBedrock: KnowledgeBase;
let globexSecret: KnowledgeBase;

beforeAll(async () => {
  db = await createTestDatabase();
  store = new KnowledgeBaseStore(db.database.prisma);
  platformGuides = await store.createPlatform(local("Platform guides", { category: "guides" }));
  platformPolicies = await store.createPlatform({ ...local("Platform policies"), backend: "BEDROCK", awsRegion: "eu-west-1", bedrockKnowledgeBaseId: "KB12345678", credentialMode: "PLATFORM" });
  acmeHandbook = await store.create(ann, local("Acme handbook"));
  acmeSupport = await store.create(ann, local("Support playbooks", { scope: "TEAM", teamId: "support" }));
  acmeBedrock = await store.create(ann, {
    ...local("Acme contracts"),
    backend: "S3VECTORS",
    awsRegion: "us-east-1",
    s3VectorsBucket: "acme-vectors",
    s3VectorsIndex: "contracts",
    credentialMode: "USER_KEYS",
    sealedSecret: "v1.k1.sealed-value-for-test",
  });
  globexSecret = await store.create(gus, local("Globex merger files", { scope: "TEAM", teamId: "support" }));
});
afterAll(async () => db?.dispose());

describe("visibility", () => {
  it("lists platform, company and the caller's teams' knowledge bases, platform first", async () => {
    expect((await store.list(ann)).map((kb) => kb.name)).toEqual(["Platform guides", "Platform policies", "Acme contracts", "Acme handbook", "Support playbooks"]);
    expect((await store.list(bob)).map((kb) => kb.name)).toEqual(["Platform guides", "Platform policies", "Acme contracts", "Acme handbook"]);
    expect((await store.list(gus)).map((kb) => kb.name)).toEqual(["Platform guides", "Platform policies", "Globex merger files"]);
  });

  it("reads a batch by ids in one statement; another organization's or another team's is NOT_FOUND like a missing id", async () => {
    db.database.statements.reset();
    const found = await store.findByIds(bob, [platformGuides.id, acmeHandbook.id, acmeSupport.id, globexSecret.id]);
    expect(db.database.statements.count).toBe(1);
    expect(found.map((kb) => kb.id).sort()).toEqual([platformGuides.id, acmeHandbook.id].sort());
    const missing = "01900000-0000-7000-8000-00000000abcd";
    for (const id of [globexSecret.id, acmeSupport.id, missing]) {
      expect(await codeOf(store.get(bob, id))).toEqual({ code: "NOT_FOUND", message: `KnowledgeBase ${id} was not found` });
    }
  });

  it("never returns a secret with a knowledge base, and opens the sealed keys only for the owning organization", async () => {
    const listed = await store.list(ann);
    for (const kb of listed) expect(JSON.stringify(kb)).not.toContain("sealed");
    expect(await store.sealedCredentials(ann, acmeBedrock.id)).toBe("v1.k1.sealed-value-for-test");
    expect(await store.sealedCredentials(gus, acmeBedrock.id)).toBeNull();
    const leaked = await withTenantScope(db.database.prisma, "globex", (tx) => tx.$queryRawUnsafe<unknown[]>(`SELECT * FROM knowledge_base_credentials`));
    expect(leaked).toEqual([]);
  });

  it("lets every organization read platform rows under row-level security, but not change them", async () => {
    const seen = await withTenantScope(db.database.prisma, "globex", (tx) => tx.$queryRawUnsafe<{ organization_id: string }[]>(`SELECT DISTINCT organization_id FROM knowledge_bases ORDER BY 1`));
    expect(seen.map((row) => row.organization_id)).toEqual([PLATFORM_ORGANIZATION_ID, "globex"]);
    const changed = await withTenantScope(db.database.prisma, "globex", (tx) => tx.$executeRawUnsafe(`UPDATE knowledge_bases SET name = 'hijacked'`));
    expect(changed).toBe(1); // its own only
    expect((await store.get(ann, platformGuides.id)).name).toBe("Platform guides");
    await expect(
      withTenantScope(db.database.prisma, "globex", (tx) =>
        tx.$executeRawUnsafe(`INSERT INTO knowledge_bases (id, organization_id, name, scope, backend) VALUES (gen_random_uuid(), '${PLATFORM_ORGANIZATION_ID}', 'forged', 'PLATFORM', 'LOCAL')`),
      ),
    ).rejects.toThrow(/row-level security/);
    await withTenantScope(db.database.prisma, "globex", (tx) => tx.$executeRawUnsafe(`UPDATE knowledge_bases SET name = 'Globex merger files'`));
  });
});

describe("bad input", () => {
  it("names what is missing or wrong", async () => {
    expect((await codeOf(store.create(ann, local("x", { scope: "PLATFORM" })))).message).toMatch(/^scope: PLATFORM knowledge bases are curated/);
    expect((await codeOf(store.create(ann, local("x", { scope: "TEAM", teamId: "sales" })))).message).toMatch(/^teamId: a TEAM knowledge base needs one of your teams \(support\)/);
    expect((await codeOf(store.create(ann, local("x", { backend: "BEDROCK", awsRegion: "eu-west-1", credentialMode: "PLATFORM" })))).message).toBe("bedrockKnowledgeBaseId: is required for a BEDROCK knowledge base.");
    expect((await codeOf(store.create(ann, local("x", { backend: "S3VECTORS", awsRegion: "eu-west-1", s3VectorsBucket: "b", s3VectorsIndex: "i", credentialMode: "ASSUME_ROLE" })))).message).toBe("roleArn: is required with credential mode ASSUME_ROLE.");
    expect((await codeOf(store.create(ann, local("x", { category: "c".repeat(101) })))).code).toBe("BAD_USER_INPUT");
  });

  it("adds documents only to a LOCAL knowledge base the uploader can see", async () => {
    const documents = new DocumentStore(db.database.prisma);
    const upload = (knowledgeBaseId: string) => ({ fileName: "a.md", mediaType: "text/markdown", format: "markdown" as const, category: null, sizeBytes: 1, contentHash: "a".repeat(64), teamId: null, knowledgeBaseId });
    expect((await documents.create(ann, upload(acmeSupport.id))).document.knowledgeBaseId).toBe(acmeSupport.id);
    expect((await codeOf(documents.create(bob, upload(acmeSupport.id)))).code).toBe("NOT_FOUND");
    expect((await codeOf(documents.create(gus, upload(acmeHandbook.id)))).code).toBe("NOT_FOUND");
    expect((await codeOf(documents.create(ann, upload(acmeBedrock.id)))).message).toMatch(/^knowledgeBaseId: .* only to a LOCAL knowledge base/);
  });
});

describe("capability mappings", () => {
  it("returns the organization's and the platform's mappings in priority order, the organization's first on a tie", async () => {
    await store.mapCapability(ann, { capability: "support", knowledgeBaseId: acmeHandbook.id, priority: 2, maxResults: 5, minScore: 0.2 });
    await store.mapCapability(ann, { capability: "support", knowledgeBaseId: platformGuides.id, priority: 1, maxResults: 3, minScore: 0 });
    await store.mapCapability(ann, { capability: "support", knowledgeBaseId: acmeSupport.id, priority: 3, maxResults: 10, minScore: 0.5 });
    await withTenantScope(db.database.prisma, PLATFORM_ORGANIZATION_ID, (tx) =>
      tx.knowledgeBaseCapability.create({ data: { organizationId: PLATFORM_ORGANIZATION_ID, capability: "support", knowledgeBaseId: platformPolicies.id, priority: 2 } }),
    );
    const order = async (who: TenantContext) => (await store.capabilityMappings(who, "support")).map((m) => [m.knowledgeBase.name, m.priority, m.maxResults]);
    expect(await order(ann)).toEqual([
      ["Platform guides", 1, 3],
      ["Acme handbook", 2, 5],
      ["Platform policies", 2, 5],
      ["Support playbooks", 3, 10],
    ]);
    // Bob is not in the support team: that mapping is not his to query.
    expect((await order(bob)).map(([name]) => name)).toEqual(["Platform guides", "Acme handbook", "Platform policies"]);
    // Globex sees only the platform's own mapping.
    expect((await order(gus)).map(([name]) => name)).toEqual(["Platform policies"]);

    await store.mapCapability(ann, { capability: "support", knowledgeBaseId: acmeHandbook.id, priority: 0, maxResults: 7, minScore: 0.2 });
    expect((await order(ann))[0]).toEqual(["Acme handbook", 0, 7]);
  });

  it("refuses mapping to a knowledge base the caller cannot see, and out-of-range limits", async () => {
    expect((await codeOf(store.mapCapability(ann, { capability: "x", knowledgeBaseId: globexSecret.id, priority: 0, maxResults: 5, minScore: 0 }))).code).toBe("NOT_FOUND");
    expect((await codeOf(store.mapCapability(ann, { capability: "x", knowledgeBaseId: acmeHandbook.id, priority: 0, maxResults: 101, minScore: 0 }))).message).toMatch(/^maxResults: must be an integer from 1 to 100/);
    expect((await codeOf(store.mapCapability(ann, { capability: "x", knowledgeBaseId: acmeHandbook.id, priority: 0, maxResults: 5, minScore: 2 }))).message).toMatch(/^minScore: must be between 0 and 1/);
  });
});

describe("knowledge query log", () => {
  it("keeps each organization's queries to itself", async () => {
    for (const [who, query] of [[ann, "refund policy"], [gus, "merger timeline"]] as const) {
      await withTenantScope(db.database.prisma, who.organizationId, (tx) =>
        tx.knowledgeQuery.create({ data: { organizationId: who.organizationId, userId: who.userId, knowledgeBaseId: platformGuides.id, query, results: 2, topScore: 0.8, provider: "local", latencyMs: 12 } }),
      );
    }
    const acmeQueries = await withTenantScope(db.database.prisma, "acme", (tx) => tx.$queryRawUnsafe<{ query: string }[]>(`SELECT query FROM knowledge_queries`));
    expect(acmeQueries).toEqual([{ query: "refund policy" }]);
  });
});

describe("remote knowledge bases and their health", () => {
  it("lists the BEDROCK and S3VECTORS knowledge bases the caller may query (and the platform's LOCAL ones), bounded", async () => {
    // Not the organization's own LOCAL ones ("Acme handbook"): its documents providers rank those.
    expect((await store.listSearchable(ann, 10)).map((kb) => kb.name)).toEqual(["Platform guides", "Platform policies", "Acme contracts"]);
    expect((await store.listSearchable(ann, 1)).map((kb) => kb.name)).toEqual(["Platform guides"]);
    expect((await store.listSearchable(gus, 10)).map((kb) => kb.name)).toEqual(["Platform guides", "Platform policies"]);
  });

  it("marks an organization's own knowledge base ERROR and back, and cannot touch the platform's or another organization's", async () => {
    await store.setHealth(ann, acmeBedrock.id, "access denied");
    expect(await store.get(ann, acmeBedrock.id)).toMatchObject({ status: "ERROR", statusReason: "access denied" });
    await store.setHealth(ann, acmeBedrock.id, null);
    expect(await store.get(ann, acmeBedrock.id)).toMatchObject({ status: "ACTIVE", statusReason: null });
    await store.setHealth(ann, platformPolicies.id, "nope");
    await store.setHealth(ann, globexSecret.id, "nope");
    expect(await store.get(ann, platformPolicies.id)).toMatchObject({ status: "ACTIVE", statusReason: null });
    expect(await store.get(gus, globexSecret.id)).toMatchObject({ status: "ACTIVE", statusReason: null });
  });

  it("counts a LOCAL knowledge base's documents still being indexed, within the caller's scope", async () => {
    const documents = new DocumentStore(db.database.prisma);
    const syncing = await store.create(ann, local("Being filled", { scope: "TEAM", teamId: "support" }));
    const upload = (who: TenantContext, name: string, teamId: string | null) =>
      documents.create(who, { fileName: name, mediaType: "text/plain", format: "text", category: null, sizeBytes: 5, contentHash: name.padEnd(64, "0").slice(0, 64).replace(/[^0-9a-f]/g, "a"), teamId, knowledgeBaseId: syncing.id, text: "hello" });
    await upload(ann, "private.txt", null);
    await upload(ann, "shared.txt", "support");
    const counts = async (who: TenantContext) => (await store.documentsIndexing(who, [syncing.id, acmeHandbook.id])).get(syncing.id) ?? 0;
    expect(await counts(ann)).toBe(2);
    // A teammate counts the shared one only; another organization nothing.
    expect(await counts(tenant("acme", "cat", ["support"]))).toBe(1);
    expect(await counts(gus)).toBe(0);
  });
});

describe("passages retrieved from remote knowledge bases", () => {
  it("stores each passage once per organization, cleaned, and shows it only where its knowledge base is visible", async () => {
    const passages = new PassageStore(db.database.prisma);
    const rows = [
      { knowledgeBaseId: acmeBedrock.id, text: "Contract renewals need 30 days' notice.", uri: "s3://contracts/renewals.pdf", page: 4 },
      { knowledgeBaseId: acmeBedrock.id, text: "Bad\u0000text\udc00 here" + "x".repeat(9_000), uri: null, page: -3 },
    ];
    const ids = await passages.upsert(ann, rows);
    expect(await passages.upsert(ann, rows)).toEqual(ids);
    // The same passage retrieved by another organization is another row, not a shared one.
    const [platformId] = await passages.upsert(gus, [{ knowledgeBaseId: platformPolicies.id, text: "Platform passage", uri: null, page: null }]);
    const [annPlatformId] = await passages.upsert(ann, [{ knowledgeBaseId: platformPolicies.id, text: "Platform passage", uri: null, page: null }]);
    expect(platformId).not.toBe(annPlatformId);

    const stored = await passages.findByIds(ann, [...ids, platformId!, annPlatformId!, "not-an-id"]);
    expect(stored.map((passage) => passage.id).sort()).toEqual([...ids, annPlatformId!].sort());
    const cleaned = stored.find((passage) => passage.id === ids[1])!;
    expect(cleaned.text.startsWith("Bad\ufffdtext\ufffd here")).toBe(true);
    expect(cleaned.text.length).toBe(8_000);
    expect(cleaned.page).toBeNull();
    expect(await passages.findByIds(gus, ids)).toEqual([]);
    expect((await passages.findByIds(gus, [platformId!])).map((passage) => passage.text)).toEqual(["Platform passage"]);
  });

  it("drops passages a day after their last retrieval", async () => {
    const passages = new PassageStore(db.database.prisma);
    const [old] = await passages.upsert(bob, [{ knowledgeBaseId: platformPolicies.id, text: "Old passage", uri: null, page: null }]);
    await db.database.prisma.knowledgeBasePassage.update({ where: { organizationId_id: { organizationId: bob.organizationId, id: old! } }, data: { retrievedAt: new Date(Date.now() - 25 * 3_600_000) } });
    await passages.upsert(bob, [{ knowledgeBaseId: platformPolicies.id, text: "New passage", uri: null, page: null }]);
    expect(await db.database.prisma.knowledgeBasePassage.findUnique({ where: { organizationId_id: { organizationId: bob.organizationId, id: old! } } })).toBeNull();
  });
});
