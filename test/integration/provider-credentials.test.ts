/**
 * Which external providers an organization stored keys for is read once per organization at a
 * time: every unified search asks every external provider for it, so when the brief cache
 * expires under load, the searches in flight must share one read instead of each sending its
 * own (the search-path benchmark counted 2.85 such lookups per search at 50 connections).
 * A key stored or removed while a read is in flight must not be hidden by that older read.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";
import { SecretKeyring } from "../../lib/secrets/keyring.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { ProviderCredentials } from "../../subgraphs/external-search/provider-credentials.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

let db: TestDatabase;
let credentials: ProviderCredentials;

const tenant = (organizationId: string): TenantContext => ({ organizationId, userId: "ada", teamIds: [], role: "member" as const, userName: null, userEmail: null });
const lookups = () => db.database.statements.log.filter((sql) => sql.includes("external_provider_credentials") && sql.includes("SELECT")).length;

beforeAll(async () => {
  db = await createTestDatabase();
  const keyring = SecretKeyring.parse(`test:${randomBytes(32).toString("base64")}`);
  credentials = new ProviderCredentials(db.database.prisma, loadConfig({}).externalSearch, keyring);
});

afterAll(async () => {
  await db?.dispose();
});

describe("ProviderCredentials.ownProviders", () => {
  it("sends one read for many concurrent searches of one organization, and one per organization", async () => {
    db.database.statements.reset();
    const answers = await Promise.all([
      ...Array.from({ length: 30 }, () => credentials.ownProviders(tenant("org-a"))),
      ...Array.from({ length: 30 }, () => credentials.ownProviders(tenant("org-b"))),
    ]);
    expect(answers.every((providers) => providers.size === 0)).toBe(true);
    expect(lookups()).toBe(2);
    // Cached now: no statement at all.
    await credentials.ownProviders(tenant("org-a"));
    expect(lookups()).toBe(2);
  });

  it("shows a key stored while a read was in flight", async () => {
    const organization = tenant("org-c");
    const inFlight = credentials.ownProviders(organization);
    await credentials.store(organization, { provider: "SERPER", apiKey: "serper-key-0123456789abcdef" });
    await inFlight;
    expect([...(await credentials.ownProviders(organization))]).toEqual(["SERPER"]);
    await credentials.remove(organization, "SERPER");
    expect([...(await credentials.ownProviders(organization))]).toEqual([]);
  });
});
