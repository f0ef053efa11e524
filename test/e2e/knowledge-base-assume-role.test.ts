/**
 * Credential mode ASSUME_ROLE end to end, through the gateway and the knowledge-base
 * subgraph's GraphQL: a BEDROCK knowledge base that names a role in the customer's account is
 * queried by capability; at the SigV4-checking stand-in, STS AssumeRole was signed with the
 * platform's key (the SDK's default chain: here the environment) and the Bedrock Retrieve with
 * the temporary credentials STS returned for that role; a second query reuses them (no second
 * AssumeRole); a role STS refuses makes that source ACCESS_DENIED with a line the user can act
 * on, while the other sources still answer, and the refusal is kept for a minute so that the
 * queries after it cost no STS call; the external id an organization sets is sent with
 * AssumeRole.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startStack, type RunningStack } from "../../app/stack.js";
import { loadConfig } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { AwsStandIn } from "../support/aws/aws-stand-in.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

const PLATFORM = { accessKeyId: "AKIAPLATFORMROLES001", secretAccessKey: "platform-role-test-secret-0123456789ab" };
const TRUSTING_ROLE = "arn:aws:iam::210987654321:role/ContextSearchReader";
const REFUSING_ROLE = "arn:aws:iam::210987654321:role/NotTrustingUs";
const EXTERNAL_ID_ROLE = "arn:aws:iam::210987654321:role/WantsOurExternalId";
const EXTERNAL_ID = "org-roles:7f3c2a/ctx-search";
const ROLE_KB = "KBROLE0001";
const PLATFORM_KB = "KBPLAT0001";
const REGION = "eu-west-1";

let db: TestDatabase;
let stack: RunningStack;
let standIn: AwsStandIn;
let ada: string;
const ids: Record<string, string> = {};
const savedEnv = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY, token: process.env.AWS_SESSION_TOKEN };

const gql = (query: string, variables: Record<string, unknown> = {}) => graphql(stack.gateway.url, query, variables, { token: ada });

const CREATE = `mutation($input: CreateKnowledgeBaseInput!) { createKnowledgeBase(input: $input) { id credentials { mode roleArn hasStoredKeys } } }`;
const MAP = `mutation($capability: String!, $id: ID!, $priority: Int!) { mapCapability(capability: $capability, knowledgeBaseId: $id, priority: $priority) { priority } }`;
const ASK = `query($capability: String!, $query: String!) {
  queryPlatformKnowledge(capability: $capability, query: $query, limit: 10) {
    passages { text knowledgeBase { id } }
    sources { provider status returned error knowledgeBase { id } }
  }
}`;

const retrievesOf = (knowledgeBaseId: string) => standIn.requests.filter((request) => request.service === "bedrock" && request.path === `/knowledgebases/${knowledgeBaseId}/retrieve`);
const stsCalls = () => standIn.requests.filter((request) => request.service === "sts");

async function createBedrock(name: string, knowledgeBaseId: string, credentials: Record<string, string>): Promise<string> {
  const created = await gql(CREATE, { input: { name, scope: "COMPANY", backend: "BEDROCK", region: REGION, bedrockKnowledgeBaseId: knowledgeBaseId, ...credentials } });
  expect(created.errors).toBeUndefined();
  return created.data!.createKnowledgeBase.id;
}

async function map(capability: string, entries: Array<[string, number]>): Promise<void> {
  for (const [id, priority] of entries) expect((await gql(MAP, { capability, id, priority })).errors).toBeUndefined();
}

beforeAll(async () => {
  standIn = await AwsStandIn.start();
  standIn.addAccessKey(PLATFORM.accessKeyId, PLATFORM.secretAccessKey);
  standIn.roles.set(TRUSTING_ROLE, {});
  standIn.roles.set(EXTERNAL_ID_ROLE, { externalId: EXTERNAL_ID });
  standIn.knowledgeBases.set(ROLE_KB, [{ content: { text: "Customer contracts renew every twelve months unless cancelled." }, score: 0.77, location: { type: "S3", s3Location: { uri: "s3://customer/contracts.pdf" } } }]);
  standIn.knowledgeBases.set(PLATFORM_KB, [{ content: { text: "Platform policy: contracts are reviewed by legal before renewal." }, score: 0.66, location: { type: "S3", s3Location: { uri: "s3://platform/legal.pdf" } } }]);
  // The platform's identity, as a deployment hands it to the SDK's default chain.
  process.env.AWS_ACCESS_KEY_ID = PLATFORM.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = PLATFORM.secretAccessKey;
  delete process.env.AWS_SESSION_TOKEN;
  db = await createTestDatabase();
  const config = loadConfig({
    GATEWAY_PORT: "0", CONVERSATIONS_PORT: "0", SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0",
    EMBEDDER: "hashing", SEARCH_CACHE_TTL_SECONDS: "0", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0", SEARCH_INDEXER: "false",
    AWS_ENDPOINT_URL_BEDROCK_AGENT_RUNTIME: standIn.http2Endpoint,
    AWS_ENDPOINT_URL_STS: standIn.endpoint,
  });
  stack = await startStack({ config: { ...config, auth: { ...TEST_AUTH, usingDevSecret: false } }, database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false } });
  ada = await tokenFor("org-roles", "ada", [], "admin");
});

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
  await standIn?.close();
  for (const [name, value] of [["AWS_ACCESS_KEY_ID", savedEnv.id], ["AWS_SECRET_ACCESS_KEY", savedEnv.secret], ["AWS_SESSION_TOKEN", savedEnv.token]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe("a BEDROCK knowledge base with credential mode ASSUME_ROLE", () => {
  it("is created with its role, which it shows back", async () => {
    const created = await gql(CREATE, { input: { name: "Customer contracts", scope: "COMPANY", backend: "BEDROCK", region: REGION, bedrockKnowledgeBaseId: ROLE_KB, credentialMode: "ASSUME_ROLE", roleArn: TRUSTING_ROLE } });
    expect(created.errors).toBeUndefined();
    expect(created.data!.createKnowledgeBase.credentials).toEqual({ mode: "ASSUME_ROLE", roleArn: TRUSTING_ROLE, hasStoredKeys: false });
    ids.role = created.data!.createKnowledgeBase.id;
    ids.platform = await createBedrock("Platform legal", PLATFORM_KB, { credentialMode: "PLATFORM" });
    await map("contracts", [[ids.role!, 1], [ids.platform!, 2]]);
    // Creating and mapping call no AWS service.
    expect(standIn.requests).toEqual([]);
  });

  it("answers after AssumeRole signed with the platform's key, its Retrieve signed with the temporary credentials STS returned", async () => {
    const answer = await gql(ASK, { capability: "contracts", query: "when do contracts renew" });
    expect(answer.errors).toBeUndefined();
    const { passages, sources } = answer.data!.queryPlatformKnowledge;
    expect(sources.map((source: Record<string, any>) => [source.knowledgeBase.id, source.status, source.returned, source.error])).toEqual([
      [ids.role, "OK", 1, null],
      [ids.platform, "OK", 1, null],
    ]);
    expect(passages.map((passage: Record<string, any>) => passage.text)).toEqual(["Customer contracts renew every twelve months unless cancelled.", "Platform policy: contracts are reviewed by legal before renewal."]);

    expect(stsCalls()).toHaveLength(1);
    expect(stsCalls()[0]).toMatchObject({ operation: "AssumeRole", accessKeyId: PLATFORM.accessKeyId, sessionToken: undefined, body: { RoleArn: TRUSTING_ROLE } });
    expect(String(stsCalls()[0]!.body.RoleSessionName)).toMatch(/^context-search-org-roles-[0-9a-f]{16}$/);
    expect(standIn.issuedRoleCredentials).toHaveLength(1);
    const issued = standIn.issuedRoleCredentials[0]!;
    expect(issued).toMatchObject({ roleArn: TRUSTING_ROLE, accessKeyId: expect.stringMatching(/^ASIA/) });
    expect(retrievesOf(ROLE_KB)).toEqual([expect.objectContaining({ region: REGION, accessKeyId: issued.accessKeyId, sessionToken: issued.sessionToken })]);
    // The platform-mode knowledge base beside it is signed with the platform's own key.
    expect(retrievesOf(PLATFORM_KB)).toEqual([expect.objectContaining({ accessKeyId: PLATFORM.accessKeyId, sessionToken: undefined })]);
  });

  it("reuses the role's credentials for the next query: no second AssumeRole", async () => {
    const answer = await gql(ASK, { capability: "contracts", query: "contract renewal" });
    expect(answer.data!.queryPlatformKnowledge.sources.map((source: Record<string, any>) => source.status)).toEqual(["OK", "OK"]);
    expect(stsCalls()).toHaveLength(1);
    const issued = standIn.issuedRoleCredentials[0]!;
    expect(retrievesOf(ROLE_KB).map((request) => [request.accessKeyId, request.sessionToken])).toEqual([
      [issued.accessKeyId, issued.sessionToken],
      [issued.accessKeyId, issued.sessionToken],
    ]);
  });

  it("a role STS refuses is ACCESS_DENIED with a clear error, calls no Bedrock, and the other sources still answer", async () => {
    ids.refused = await createBedrock("Not trusting us", ROLE_KB, { credentialMode: "ASSUME_ROLE", roleArn: REFUSING_ROLE });
    await map("contracts-refused", [[ids.refused!, 1], [ids.role!, 2], [ids.platform!, 3]]);
    const retrievesBefore = retrievesOf(ROLE_KB).length;
    const stsBefore = stsCalls().length;

    const answer = await gql(ASK, { capability: "contracts-refused", query: "when do contracts renew" });
    expect(answer.errors).toBeUndefined();
    const { passages, sources } = answer.data!.queryPlatformKnowledge;
    expect(sources.map((source: Record<string, any>) => [source.knowledgeBase.id, source.status])).toEqual([
      [ids.refused, "ACCESS_DENIED"],
      [ids.role, "OK"],
      [ids.platform, "OK"],
    ]);
    const refused = sources[0];
    expect(refused.returned).toBe(0);
    expect(refused.error).toContain(`assuming role ${REFUSING_ROLE}`);
    expect(refused.error).toMatch(/check the key, role or policy/);
    expect(refused.error).not.toMatch(/AKIA|ASIA|secret|\n|\bat .*\.js/i);
    expect(passages.map((passage: Record<string, any>) => passage.knowledgeBase.id)).toEqual([ids.role, ids.platform]);

    // STS was asked for the refused role (once) and nothing was sent to Bedrock under it; the trusting role's credentials are still cached.
    expect(stsCalls().slice(stsBefore).map((request) => request.body.RoleArn)).toEqual([REFUSING_ROLE]);
    expect(stsCalls().slice(stsBefore)[0]!.accessKeyId).toBe(PLATFORM.accessKeyId);
    expect(retrievesOf(ROLE_KB).length).toBe(retrievesBefore + 1);
    expect(retrievesOf(ROLE_KB).at(-1)!.accessKeyId).toBe(standIn.issuedRoleCredentials[0]!.accessKeyId);
    expect(standIn.issuedRoleCredentials).toHaveLength(1);
  });

  it("a refused role is refused again for the window without calling STS: N queries, 1 AssumeRole", async () => {
    const stsBefore = stsCalls().length;
    const errors: string[] = [];
    for (let query = 0; query < 4; query += 1) {
      const answer = await gql(ASK, { capability: "contracts-refused", query: "when do contracts renew" });
      expect(answer.errors).toBeUndefined();
      const [refused, ...others] = answer.data!.queryPlatformKnowledge.sources;
      expect(refused.status).toBe("ACCESS_DENIED");
      expect(others.map((source: Record<string, any>) => source.status)).toEqual(["OK", "OK"]);
      errors.push(refused.error);
    }
    expect(stsCalls().length).toBe(stsBefore);
    for (const error of errors) {
      expect(error).toContain(`assuming role ${REFUSING_ROLE}`);
      expect(error).toMatch(/check the key, role or policy.*asked again in \d+ s, or at once if the role ARN or external id changes/);
    }
  });
});

describe("the external id of an ASSUME_ROLE knowledge base", () => {
  it("is set at creation, shown back, and sent to STS with AssumeRole", async () => {
    const created = await gql(CREATE.replace("roleArn hasStoredKeys", "roleArn externalId hasStoredKeys"), {
      input: { name: "Wants an external id", scope: "COMPANY", backend: "BEDROCK", region: REGION, bedrockKnowledgeBaseId: ROLE_KB, credentialMode: "ASSUME_ROLE", roleArn: EXTERNAL_ID_ROLE, externalId: EXTERNAL_ID },
    });
    expect(created.errors).toBeUndefined();
    expect(created.data!.createKnowledgeBase.credentials).toEqual({ mode: "ASSUME_ROLE", roleArn: EXTERNAL_ID_ROLE, externalId: EXTERNAL_ID, hasStoredKeys: false });
    await map("external-id", [[created.data!.createKnowledgeBase.id, 1]]);
    const stsBefore = stsCalls().length;
    const answer = await gql(ASK, { capability: "external-id", query: "when do contracts renew" });
    expect(answer.data!.queryPlatformKnowledge.sources.map((source: Record<string, any>) => [source.status, source.returned])).toEqual([["OK", 1]]);
    const calls = stsCalls().slice(stsBefore);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.body).toMatchObject({ RoleArn: EXTERNAL_ID_ROLE, ExternalId: EXTERNAL_ID });
  });

  it("is refused with BAD_USER_INPUT naming input.externalId when malformed, or without ASSUME_ROLE", async () => {
    const base = { name: "Bad external id", scope: "COMPANY", backend: "BEDROCK", region: REGION, bedrockKnowledgeBaseId: ROLE_KB };
    for (const [input, message] of [
      [{ ...base, credentialMode: "ASSUME_ROLE", roleArn: EXTERNAL_ID_ROLE, externalId: "x" }, /2 to 1224 characters/],
      [{ ...base, credentialMode: "ASSUME_ROLE", roleArn: EXTERNAL_ID_ROLE, externalId: "spaces are not allowed" }, /2 to 1224 characters of letters, digits and _\+=,\.@:\/-/],
      [{ ...base, credentialMode: "ASSUME_ROLE", roleArn: EXTERNAL_ID_ROLE, externalId: "a".repeat(1225) }, /got 1225 characters/],
      [{ ...base, credentialMode: "PLATFORM", externalId: EXTERNAL_ID }, /only with credential mode ASSUME_ROLE/],
    ] as const) {
      const refused = await gql(CREATE, { input });
      expect(refused.data?.createKnowledgeBase ?? null).toBeNull();
      expect(refused.errors?.[0]).toMatchObject({ extensions: { code: "BAD_USER_INPUT", field: "input.externalId" } });
      expect(refused.errors![0]!.message).toMatch(message);
    }
  });

  it("setKnowledgeBaseRole switches a refused knowledge base to another role and external id, asked at once", async () => {
    const SET_ROLE = `mutation($id: ID!, $roleArn: String!, $externalId: String) { setKnowledgeBaseRole(id: $id, roleArn: $roleArn, externalId: $externalId) { credentials { mode roleArn externalId hasStoredKeys } } }`;
    const bad = await gql(SET_ROLE, { id: ids.refused, roleArn: EXTERNAL_ID_ROLE, externalId: "x" });
    expect(bad.errors?.[0]).toMatchObject({ extensions: { code: "BAD_USER_INPUT", field: "externalId" } });
    // Still refused (and still from memory) until the setting changes.
    const before = await gql(ASK, { capability: "contracts-refused", query: "when do contracts renew" });
    expect(before.data!.queryPlatformKnowledge.sources[0].status).toBe("ACCESS_DENIED");

    const changed = await gql(SET_ROLE, { id: ids.refused, roleArn: EXTERNAL_ID_ROLE, externalId: EXTERNAL_ID });
    expect(changed.errors).toBeUndefined();
    expect(changed.data!.setKnowledgeBaseRole.credentials).toEqual({ mode: "ASSUME_ROLE", roleArn: EXTERNAL_ID_ROLE, externalId: EXTERNAL_ID, hasStoredKeys: false });
    const after = await gql(ASK, { capability: "contracts-refused", query: "when do contracts renew" });
    expect(after.data!.queryPlatformKnowledge.sources.map((source: Record<string, any>) => [source.knowledgeBase.id, source.status])).toEqual([
      [ids.refused, "OK"],
      [ids.role, "OK"],
      [ids.platform, "OK"],
    ]);
  });
});
