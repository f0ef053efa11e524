/**
 * Roles through the gateway, on the real stack: every mutation of the supergraph, called by a
 * member and an admin of one organization, an admin of another organization, and nobody. The
 * table below has one row per mutation (or per variant of one); a mutation the supergraph gains
 * without a row fails the first test, so a new mutation cannot ship without a decision about
 * who may call it. Each cell gets fresh fixtures made by the organization's own people, so the
 * cells do not depend on one another.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Kind, parse, type ObjectTypeDefinitionNode } from "graphql";
import type { RunningStack } from "../../app/stack.js";
import type { TestDatabase } from "../support/database.js";
import { graphql, type GraphQLResponse } from "../support/graphql.js";
import { startTestStack } from "../support/stack.js";
import { signToken } from "../../lib/tenancy/token.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

type Caller = "member" | "admin" | "otherAdmin" | "anonymous";
/** `ok`: no error and the field answered; otherwise the error code the caller gets. */
type Outcome = "ok" | "FORBIDDEN" | "NOT_FOUND" | "UNAUTHENTICATED" | "BAD_USER_INPUT";

interface Row {
  /** The Mutation field this row calls. */
  field: string;
  /** Shown in the test name when a field has several rows. */
  variant?: string;
  document: string;
  /** Fresh fixtures of the acting organization (made by its member and admin), as the operation's variables. */
  variables(): Promise<Record<string, unknown>>;
  expect: Record<Exclude<Caller, "anonymous">, Outcome>;
}

const ORG = "org-roles";
const OTHER_ORG = "org-roles-other";
const TEAM = "team-roles";

let db: TestDatabase;
let stack: RunningStack;
const tokens = {} as Record<Exclude<Caller, "anonymous">, string>;

const call = (caller: Caller, document: string, variables: Record<string, unknown> = {}) =>
  graphql(stack.gateway.url, document, variables, { token: caller === "anonymous" ? null : tokens[caller] });

async function data(caller: Caller, document: string, variables: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const response = await call(caller, document, variables);
  if (response.errors) throw new Error(`fixture failed: ${JSON.stringify(response.errors)}`);
  return response.data!;
}

const CREATE_KB = `mutation($input: CreateKnowledgeBaseInput!) { createKnowledgeBase(input: $input) { id } }`;
const companyBase = (backend: "LOCAL" | "BEDROCK" = "LOCAL") => ({
  name: `Handbook ${randomBytes(4).toString("hex")}`,
  scope: "COMPANY",
  backend,
  ...(backend === "BEDROCK" ? { region: "us-east-1", bedrockKnowledgeBaseId: "KBROLES001", credentialMode: "PLATFORM" } : {}),
});
const adminsKnowledgeBase = async (backend: "LOCAL" | "BEDROCK" = "LOCAL") => (await data("admin", CREATE_KB, { input: companyBase(backend) })).createKnowledgeBase.id as string;
const membersConversation = async () => (await data("member", `mutation { createConversation(input: { title: "Mine" }) { id } }`)).createConversation.id as string;
/** The searchId of a search the member just ran (its log row is written when a click names it). */
const membersSearch = async () => (await data("member", `query { search(input: { query: "refund policy", alpha: 1 }) { searchId } }`)).search.searchId as string;
const membersSavedSearch = async () =>
  (await data("member", `mutation($name: String!) { saveSearch(input: { name: $name, query: "refund policy", alpha: 1 }) { id } }`, { name: `Saved ${randomBytes(4).toString("hex")}` })).saveSearch.id as string;

/** The organization's own people may, others may not: the rule of every organization-wide change. */
const ADMINS_ONLY = { member: "FORBIDDEN", admin: "ok", otherAdmin: "ok" } as const;
/** Everyone for themselves. */
const EVERYONE = { member: "ok", admin: "ok", otherAdmin: "ok" } as const;

const ROWS: Row[] = [
  {
    field: "createConversation",
    document: `mutation { createConversation(input: { title: "Notes" }) { id } }`,
    variables: async () => ({}),
    expect: EVERYONE,
  },
  {
    field: "renameConversation",
    document: `mutation($id: ID!) { renameConversation(id: $id, title: "Renamed") { id } }`,
    variables: async () => ({ id: await membersConversation() }),
    // Conversations are their owner's: an admin does not get to change a member's.
    expect: { member: "ok", admin: "FORBIDDEN", otherAdmin: "NOT_FOUND" },
  },
  {
    field: "appendMessages",
    document: `mutation($id: ID!) { appendMessages(conversationId: $id, messages: [{ role: USER, content: "hello" }]) { conversation { id } } }`,
    variables: async () => ({ id: await membersConversation() }),
    expect: { member: "ok", admin: "FORBIDDEN", otherAdmin: "NOT_FOUND" },
  },
  {
    field: "deleteConversation",
    document: `mutation($id: ID!) { deleteConversation(id: $id) { id } }`,
    variables: async () => ({ id: await membersConversation() }),
    expect: { member: "ok", admin: "FORBIDDEN", otherAdmin: "NOT_FOUND" },
  },
  {
    field: "uploadDocument",
    document: `mutation($content: String!) { uploadDocument(input: { fileName: "notes.txt", contentBase64: $content }) { id } }`,
    variables: async () => ({ content: Buffer.from(`Notes ${randomBytes(8).toString("hex")}`).toString("base64") }),
    expect: EVERYONE,
  },
  {
    field: "uploadDocuments",
    // The files as the gateway passes a multipart request's parts on (lib/graphql/upload.ts);
    // the multipart path itself: test/e2e/graphql-multipart-uploads.test.ts.
    document: `mutation($files: [Upload!]!) { uploadDocuments(files: $files) { id } }`,
    variables: async () => ({ files: [{ fileName: "notes.txt", contentBase64: Buffer.from(`Notes ${randomBytes(8).toString("hex")}`).toString("base64") }] }),
    expect: EVERYONE,
  },
  {
    field: "deleteDocument",
    document: `mutation($id: ID!) { deleteDocument(id: $id) { id } }`,
    variables: async () => {
      const content = Buffer.from(`Private ${randomBytes(8).toString("hex")}`).toString("base64");
      return { id: (await data("member", `mutation($content: String!) { uploadDocument(input: { fileName: "private.txt", contentBase64: $content }) { id } }`, { content })).uploadDocument.id };
    },
    // A private document is its owner's alone: to anyone else it does not exist.
    expect: { member: "ok", admin: "NOT_FOUND", otherAdmin: "NOT_FOUND" },
  },
  {
    field: "setDocumentSharing",
    document: `mutation($id: ID!) { setDocumentSharing(id: $id, teamId: null) { id } }`,
    variables: async () => {
      const content = Buffer.from(`Private ${randomBytes(8).toString("hex")}`).toString("base64");
      return { id: (await data("member", `mutation($content: String!) { uploadDocument(input: { fileName: "private.txt", contentBase64: $content }) { id } }`, { content })).uploadDocument.id };
    },
    // Only the owner shares or unshares; to anyone who cannot see a private document it does not exist.
    expect: { member: "ok", admin: "NOT_FOUND", otherAdmin: "NOT_FOUND" },
  },
  {
    field: "createKnowledgeBase",
    variant: "COMPANY",
    document: CREATE_KB,
    variables: async () => ({ input: companyBase() }),
    expect: ADMINS_ONLY,
  },
  {
    field: "createKnowledgeBase",
    variant: "TEAM, members not allowed (the default)",
    document: CREATE_KB,
    variables: async () => ({ input: { name: `Team notes ${randomBytes(4).toString("hex")}`, scope: "TEAM", teamId: TEAM, backend: "LOCAL" } }),
    expect: ADMINS_ONLY,
  },
  {
    field: "setKnowledgeBaseCredentials",
    document: `mutation($id: ID!) { setKnowledgeBaseCredentials(id: $id, accessKeyId: "AKIAROLESTEST0001", secretAccessKey: "roles-test-secret-0123456789") { id credentials { mode } } }`,
    variables: async () => ({ id: await adminsKnowledgeBase("BEDROCK") }),
    expect: { member: "FORBIDDEN", admin: "ok", otherAdmin: "NOT_FOUND" },
  },
  {
    field: "setKnowledgeBaseRole",
    document: `mutation($id: ID!) { setKnowledgeBaseRole(id: $id, roleArn: "arn:aws:iam::123456789012:role/RolesTest", externalId: "roles-test-1") { id credentials { mode } } }`,
    variables: async () => ({ id: await adminsKnowledgeBase("BEDROCK") }),
    expect: { member: "FORBIDDEN", admin: "ok", otherAdmin: "NOT_FOUND" },
  },
  {
    field: "deleteKnowledgeBase",
    document: `mutation($id: ID!) { deleteKnowledgeBase(id: $id) { id } }`,
    variables: async () => ({ id: await adminsKnowledgeBase() }),
    expect: { member: "FORBIDDEN", admin: "ok", otherAdmin: "NOT_FOUND" },
  },
  {
    field: "mapCapability",
    document: `mutation($id: ID!) { mapCapability(capability: "billing-support", knowledgeBaseId: $id) { capability } }`,
    variables: async () => ({ id: await adminsKnowledgeBase() }),
    expect: { member: "FORBIDDEN", admin: "ok", otherAdmin: "NOT_FOUND" },
  },
  {
    field: "setOrganizationSettings",
    // Sets the default again, so that no cell changes what the others see.
    document: `mutation { setOrganizationSettings(input: { membersManageTeamKnowledgeBases: false }) { membersManageTeamKnowledgeBases } }`,
    variables: async () => ({}),
    expect: ADMINS_ONLY,
  },
  {
    field: "setExternalProviderCredentials",
    document: `mutation { setExternalProviderCredentials(input: { provider: SERPER, apiKey: "serper-roles-test-key" }) { provider hasOwnCredentials } }`,
    variables: async () => ({}),
    expect: ADMINS_ONLY,
  },
  {
    field: "deleteExternalProviderCredentials",
    document: `mutation { deleteExternalProviderCredentials(provider: SERPER) { provider hasOwnCredentials } }`,
    variables: async () => ({}),
    expect: ADMINS_ONLY,
  },
  {
    field: "setCreditBudget",
    document: `mutation { setCreditBudget(monthlyBudget: 250.5) { monthlyBudget } }`,
    variables: async () => ({}),
    expect: ADMINS_ONLY,
  },
  {
    field: "saveSearch",
    document: `mutation($name: String!) { saveSearch(input: { name: $name, query: "refunds" }) { id } }`,
    variables: async () => ({ name: `Search ${randomBytes(4).toString("hex")}` }),
    expect: EVERYONE,
  },
  {
    field: "renameSavedSearch",
    document: `mutation($id: ID!, $name: String!) { renameSavedSearch(id: $id, name: $name) { id } }`,
    variables: async () => ({ id: await membersSavedSearch(), name: `Renamed ${randomBytes(4).toString("hex")}` }),
    // Saved searches are private to their user, admins included.
    expect: { member: "ok", admin: "NOT_FOUND", otherAdmin: "NOT_FOUND" },
  },
  {
    field: "deleteSavedSearch",
    document: `mutation($id: ID!) { deleteSavedSearch(id: $id) { id } }`,
    variables: async () => ({ id: await membersSavedSearch() }),
    expect: { member: "ok", admin: "NOT_FOUND", otherAdmin: "NOT_FOUND" },
  },
  {
    field: "runSavedSearch",
    document: `mutation($id: ID!) { runSavedSearch(id: $id, limit: 5) { savedSearch { id } } }`,
    variables: async () => ({ id: await membersSavedSearch() }),
    expect: { member: "ok", admin: "NOT_FOUND", otherAdmin: "NOT_FOUND" },
  },
  {
    field: "recordSearchClick",
    document: `mutation($input: RecordSearchClickInput!) { recordSearchClick(input: $input) { firstClick } }`,
    variables: async () => ({ input: { searchId: await membersSearch(), position: 1, itemId: "conversation-1", itemKind: "CONVERSATION" } }),
    // Anyone of the organization may say what they opened from its searches; another organization's search is unknown.
    expect: { member: "ok", admin: "ok", otherAdmin: "NOT_FOUND" },
  },
];

function outcome(field: string, response: GraphQLResponse): Outcome | string {
  if (!response.errors) return response.data?.[field] ? "ok" : "no data and no error";
  return String(response.errors[0]!.extensions?.code);
}

beforeAll(async () => {
  ({ db, stack } = await startTestStack({
    SEARCH_CACHE_TTL_SECONDS: "0",
    GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0",
    SECRETS_ENCRYPTION_KEYS: `test-key:${randomBytes(32).toString("base64")}`,
  }));
  // A user id nobody was ever given: the hostile test's member.
  tokens.member = await tokenFor(ORG, "never-seen-member", [TEAM]);
  tokens.admin = await tokenFor(ORG, "ada-admin", [TEAM], "admin");
  tokens.otherAdmin = await tokenFor(OTHER_ORG, "oscar-admin", [TEAM], "admin");
});

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
});

describe("who may call each mutation", () => {
  it("has a row for every mutation of the supergraph, and no row for a mutation it lacks", () => {
    const supergraph = parse(stack.supergraphSdl);
    const mutation = supergraph.definitions.find((node): node is ObjectTypeDefinitionNode => node.kind === Kind.OBJECT_TYPE_DEFINITION && node.name.value === "Mutation");
    const fields = (mutation?.fields ?? []).map((field) => field.name.value).sort();
    expect(fields.length).toBeGreaterThan(15);
    expect([...new Set(ROWS.map((row) => row.field))].sort()).toEqual(fields);
  });

  describe.each(ROWS.map((row) => [row.variant ? `${row.field} (${row.variant})` : row.field, row] as const))("%s", (_name, row) => {
    it.each(["member", "admin", "otherAdmin"] as const)("as %s", async (caller) => {
      const response = await call(caller, row.document, await row.variables());
      expect({ caller, outcome: outcome(row.field, response) }).toEqual({ caller, outcome: row.expect[caller] });
      if (row.expect[caller] === "FORBIDDEN") expect(response.errors![0]!.message).toMatch(/requires the admin role; your token's role is member|Only the owner/);
    });

    it("without a token: UNAUTHENTICATED", async () => {
      const response = await call("anonymous", row.document, await row.variables());
      expect(outcome(row.field, response)).toBe("UNAUTHENTICATED");
    });
  });
});

describe("the role claim at the gateway", () => {
  it("refuses a role that is not exactly member or admin with 401, naming the claim, before any subgraph is asked", async () => {
    const token = await signToken({ organizationId: ORG, userId: "typo", role: "Admin" as never }, TEST_AUTH);
    const response = await graphql(stack.gateway.url, `mutation { setCreditBudget(monthlyBudget: 1) { monthlyBudget } }`, {}, { token });
    expect(response.status).toBe(401);
    expect(response.errors?.[0]).toMatchObject({ message: expect.stringMatching(/`role` must be one of "member", "admin"/), extensions: expect.objectContaining({ code: "UNAUTHENTICATED" }) });
  });
});

describe("what a FORBIDDEN answer says", () => {
  it("names what was tried and the role it needs", async () => {
    const response = await call("member", CREATE_KB, { input: companyBase() });
    expect(response.errors).toEqual([
      expect.objectContaining({
        message: "Creating an organization-wide (COMPANY) knowledge base requires the admin role; your token's role is member.",
        extensions: expect.objectContaining({ code: "FORBIDDEN" }),
      }),
    ]);
  });
});

describe("team knowledge bases, when the organization lets members manage them", () => {
  it("lets a member create and delete their own team's and store its AWS keys, still not another team's or a company one, and only in that organization", async () => {
    const settings = `{ organizationSettings { membersManageTeamKnowledgeBases } }`;
    expect((await data("member", settings)).organizationSettings.membersManageTeamKnowledgeBases).toBe(false);
    const teamBase = (teamId: string) => ({ input: { name: `Team ${randomBytes(4).toString("hex")}`, scope: "TEAM", teamId, backend: "LOCAL" } });
    expect(outcome("createKnowledgeBase", await call("member", CREATE_KB, teamBase(TEAM)))).toBe("FORBIDDEN");

    await data("admin", `mutation { setOrganizationSettings(input: { membersManageTeamKnowledgeBases: true }) { membersManageTeamKnowledgeBases } }`);
    try {
      expect((await data("member", settings)).organizationSettings.membersManageTeamKnowledgeBases).toBe(true);
      // Another organization's setting is its own.
      expect((await data("otherAdmin", settings)).organizationSettings.membersManageTeamKnowledgeBases).toBe(false);

      const created = await call("member", CREATE_KB, teamBase(TEAM));
      expect(outcome("createKnowledgeBase", created)).toBe("ok");
      expect(outcome("createKnowledgeBase", await call("member", CREATE_KB, { input: companyBase() }))).toBe("FORBIDDEN");
      // The setting covers the member's own teams only.
      expect(outcome("createKnowledgeBase", await call("member", CREATE_KB, teamBase("someone-elses-team")))).toBe("FORBIDDEN");

      const companyId = await adminsKnowledgeBase();
      const remove = `mutation($id: ID!) { deleteKnowledgeBase(id: $id) { id } }`;
      expect(outcome("deleteKnowledgeBase", await call("member", remove, { id: companyId }))).toBe("FORBIDDEN");
      expect(outcome("deleteKnowledgeBase", await call("member", remove, { id: created.data!.createKnowledgeBase.id }))).toBe("ok");
      // The team's own AWS keys too, but not the company's.
      const bedrock = (scope: "TEAM" | "COMPANY") => ({ input: { ...companyBase("BEDROCK"), scope, ...(scope === "TEAM" ? { teamId: TEAM } : {}) } });
      const teamBedrock = (await data("member", CREATE_KB, bedrock("TEAM"))).createKnowledgeBase.id;
      const companyBedrock = (await data("admin", CREATE_KB, bedrock("COMPANY"))).createKnowledgeBase.id;
      const setKeys = `mutation($id: ID!) { setKnowledgeBaseCredentials(id: $id, accessKeyId: "AKIAROLESTEST0002", secretAccessKey: "roles-team-secret-0123456789") { credentials { mode } } }`;
      expect(outcome("setKnowledgeBaseCredentials", await call("member", setKeys, { id: teamBedrock }))).toBe("ok");
      expect(outcome("setKnowledgeBaseCredentials", await call("member", setKeys, { id: companyBedrock }))).toBe("FORBIDDEN");
      // Setting it is still the admin's.
      expect(outcome("setOrganizationSettings", await call("member", `mutation { setOrganizationSettings(input: { membersManageTeamKnowledgeBases: false }) { updatedAt } }`))).toBe("FORBIDDEN");
    } finally {
      await data("admin", `mutation { setOrganizationSettings(input: { membersManageTeamKnowledgeBases: false }) { membersManageTeamKnowledgeBases } }`);
    }
  });
});

describe("organization-wide reports", () => {
  it("knowledgeAnalytics is the admin's; a member gets FORBIDDEN", async () => {
    const query = `query($from: DateTime!, $to: DateTime!) { knowledgeAnalytics(from: $from, to: $to) { totalQueries } }`;
    const range = { from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date().toISOString() };
    expect(outcome("knowledgeAnalytics", await call("member", query, range))).toBe("FORBIDDEN");
    expect(outcome("knowledgeAnalytics", await call("admin", query, range))).toBe("ok");
  });

  it("searchAnalytics is the admin's; a member gets FORBIDDEN", async () => {
    const query = `{ searchAnalytics(range: { relative: LAST_24_HOURS }) { totalSearches } }`;
    expect(outcome("searchAnalytics", await call("member", query))).toBe("FORBIDDEN");
    expect(outcome("searchAnalytics", await call("admin", query))).toBe("ok");
  });

  it("credits: a member reads the budget and balance, and only an admin the usage by day and provider", async () => {
    await data("admin", `mutation { setCreditBudget(monthlyBudget: 100) { monthlyBudget } }`);
    expect((await data("member", `{ credits { monthlyBudget balance } }`)).credits).toEqual({ monthlyBudget: 100, balance: 100 });
    const usage = await call("member", `{ credits { monthlyBudget usage { day } } }`);
    expect(usage.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(usage.errors?.[0]?.message).toMatch(/requires the admin role; your token's role is member/);
    expect((await data("admin", `{ credits { usage { day } } }`)).credits.usage).toEqual([]);
  });
});

describe("setCreditBudget", () => {
  it.each([
    ["a negative budget", -1],
    ["more than 3 decimals", 1.0005],
    ["a budget past 10^10", 1e10],
  ])("refuses %s with BAD_USER_INPUT naming the argument", async (_name, monthlyBudget) => {
    const response = await call("admin", `mutation($budget: Float) { setCreditBudget(monthlyBudget: $budget) { monthlyBudget } }`, { budget: monthlyBudget });
    expect(response.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "monthlyBudget" });
  });

  it("null returns to the deployment's default (no cap here)", async () => {
    await data("admin", `mutation { setCreditBudget(monthlyBudget: 12.345) { monthlyBudget } }`);
    expect((await data("admin", `{ credits { monthlyBudget } }`)).credits.monthlyBudget).toBe(12.345);
    expect((await data("admin", `mutation { setCreditBudget(monthlyBudget: null) { monthlyBudget balance } }`)).setCreditBudget).toEqual({ monthlyBudget: null, balance: null });
  });
});

describe("MCP tools", () => {
  it("expose no field that needs the admin role (a member's agent can call every tool)", () => {
    const adminOnly = [...ROWS.filter((row) => row.expect.member === "FORBIDDEN" && row.expect.admin === "ok").map((row) => row.field), "knowledgeAnalytics", "searchAnalytics", "usage"];
    const toolsDir = new URL("../../gateway/mcp/tools/", import.meta.url);
    const used = fs.readdirSync(toolsDir).flatMap((file) => [...fs.readFileSync(new URL(file, toolsDir), "utf8").matchAll(/\b([a-zA-Z]+)\s*[({]/g)].map((match) => match[1]));
    expect(adminOnly.length).toBeGreaterThan(5);
    expect(adminOnly.filter((field) => used.includes(field))).toEqual([]);
  });
});
