/**
 * setKnowledgeBaseCredentials before anything is stored: a deployment without
 * SECRETS_ENCRYPTION_KEYS says so with a code, and malformed keys are refused naming the field.
 */
import { describe, expect, it } from "@jest/globals";
import { GraphQLError } from "graphql";
import { SecretKeyring } from "../../lib/secrets/keyring.js";
import { knowledgeBaseResolvers, type KnowledgeContext } from "../../subgraphs/knowledge-base/knowledge-base-resolvers.js";
import { OrganizationSettingsStore } from "../../subgraphs/knowledge-base/organization-settings.js";

// An admin: who may store keys is test/e2e/roles.test.ts's subject; this file checks the keys themselves.
const tenant = { organizationId: "org-a", userId: "u1", teamIds: [], role: "admin" as const, userName: null, userEmail: null };
const ID = "01a230dd-be5e-7519-92dc-9ecc27bdfe9e";

function contextWith(keyring: SecretKeyring | null, stored: string[]): KnowledgeContext {
  return {
    requireTenant: () => tenant,
    keyring,
    knowledgeBases: { setUserKeys: async (_tenant: unknown, id: string, sealed: string) => (stored.push(sealed), { id }) },
    // An admin's permission is settled without reading the settings, so the store needs no database.
    organizationSettings: new OrganizationSettingsStore(null as never),
    knowledgeBaseLoaders: () => ({ hasStoredKeys: { prime() {} }, knowledgeBaseById: { load: async (id: string) => ({ id, scope: "COMPANY", teamId: null }) } }),
  } as unknown as KnowledgeContext;
}

const set = (context: KnowledgeContext, accessKeyId: string, secretAccessKey: string) =>
  knowledgeBaseResolvers.Mutation.setKnowledgeBaseCredentials(null, { id: ID, accessKeyId, secretAccessKey }, context);

async function codeOf(work: Promise<unknown>): Promise<{ code: unknown; field: unknown; message: string }> {
  try {
    await work;
  } catch (error) {
    if (error instanceof GraphQLError) return { code: error.extensions.code, field: error.extensions.field, message: error.message };
    throw error;
  }
  throw new Error("expected an error");
}

describe("setKnowledgeBaseCredentials", () => {
  it("refuses with SECRETS_NOT_CONFIGURED when no keyring is configured, storing nothing", async () => {
    const stored: string[] = [];
    const refused = await codeOf(set(contextWith(null, stored), "AKIAKNOWLEDGETEST01", "s".repeat(40)));
    expect(refused.code).toBe("SECRETS_NOT_CONFIGURED");
    expect(refused.message).toMatch(/SECRETS_ENCRYPTION_KEYS/);
    expect(stored).toEqual([]);
  });

  it("names the malformed field and seals a good key under the organization's context", async () => {
    const keyring = new SecretKeyring([{ id: "k1", key: Buffer.alloc(32, 7) }]);
    const stored: string[] = [];
    expect(await codeOf(set(contextWith(keyring, stored), "not a key", "s".repeat(40)))).toMatchObject({ code: "BAD_USER_INPUT", field: "accessKeyId" });
    expect(await codeOf(set(contextWith(keyring, stored), "AKIAKNOWLEDGETEST01", "short"))).toMatchObject({ code: "BAD_USER_INPUT", field: "secretAccessKey" });
    await set(contextWith(keyring, stored), "AKIAKNOWLEDGETEST01", "s".repeat(40));
    expect(stored).toHaveLength(1);
    expect(stored[0]).not.toContain("s".repeat(40));
    expect(JSON.parse(keyring.open(stored[0]!, "org:org-a/aws-credentials"))).toMatchObject({ accessKeyId: "AKIAKNOWLEDGETEST01" });
  });
});
