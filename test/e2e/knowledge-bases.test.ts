/**
 * Knowledge bases through the gateway: created and listed within an organization's scopes
 * (another organization's is indistinguishable from a missing one), AWS keys stored sealed and
 * never readable back, capabilities mapped to a LOCAL knowledge base with uploaded documents and
 * to a BEDROCK one answered by the SigV4-checking stand-in, a throttled Bedrock reported while
 * the rest answers, and the knowledge query log behind knowledgeAnalytics.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import type { RunningStack } from "../../app/stack.js";
import { AwsStandIn } from "../support/aws/aws-stand-in.js";
import type { TestDatabase } from "../support/database.js";
import { startTestStack } from "../support/stack.js";
import { uploadPendingDocument, waitForReadyDocuments } from "../support/documents.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { tokenFor } from "../support/tenants.js";

const ACCESS_KEY_ID = "AKIAKNOWLEDGETEST01";
const SECRET_ACCESS_KEY = "kb-test-secret/" + "s".repeat(25);
const BEDROCK_ID = "KBTEST0001";

let db: TestDatabase;
let stack: RunningStack;
let standIn: AwsStandIn;
let ada: string;
let bob: string;
let outsider: string;
const ids: Record<string, string> = {};
const startedAt = new Date(Date.now() - 60_000);

const gql = (token: string, query: string, variables: Record<string, unknown> = {}) => graphql(stack.gateway.url, query, variables, { token });

const CREATE = `mutation($input: CreateKnowledgeBaseInput!) { createKnowledgeBase(input: $input) { id name scope teamId backend { __typename ... on BedrockBackend { knowledgeBaseId region } } credentials { mode hasStoredKeys } } }`;
const PLATFORM_QUERY = `query($capability: String!, $query: String!, $limit: Int) {
  queryPlatformKnowledge(capability: $capability, query: $query, limit: $limit) {
    passages { text score source { documentId chunkId fileName uri headingPath page } knowledgeBase { id name } }
    sources { provider status returned error knowledgeBase { id } }
  }
}`;

beforeAll(async () => {
  standIn = await AwsStandIn.start();
  standIn.addAccessKey(ACCESS_KEY_ID, SECRET_ACCESS_KEY);
  standIn.knowledgeBases.set(BEDROCK_ID, [
    { content: { text: "Refunds are issued within 5 business days to the original payment method." }, score: 0.81, location: { type: "S3", s3Location: { uri: "s3://policies/refunds.pdf" } }, metadata: { "x-amz-bedrock-kb-document-page-number": 2 } },
    { content: { text: "Unrelated passage about parking." }, score: 0.1, location: { type: "S3", s3Location: { uri: "s3://policies/parking.pdf" } }, metadata: {} },
  ]);
  ({ db, stack } = await startTestStack({
    SEARCH_CACHE_TTL_SECONDS: "0", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0",
    SECRETS_ENCRYPTION_KEYS: `test-key:${randomBytes(32).toString("base64")}`,
    AWS_ENDPOINT_URL_BEDROCK_AGENT_RUNTIME: standIn.http2Endpoint,
  }));
  ada = await tokenFor("org-kb", "ada", ["support"], "admin");
  bob = await tokenFor("org-kb", "bob", []);
  outsider = await tokenFor("org-other", "otto", ["support"], "admin");
});

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
  await standIn?.close();
});

describe("knowledge bases", () => {
  it("creates company and team knowledge bases, and refuses platform ones and other people's teams", async () => {
    const company = await gql(ada, CREATE, { input: { name: "Support handbook", scope: "COMPANY", backend: "LOCAL", category: "support" } });
    expect(company.errors).toBeUndefined();
    expect(company.data!.createKnowledgeBase).toMatchObject({ scope: "COMPANY", backend: { __typename: "LocalBackend" }, credentials: null });
    ids.local = company.data!.createKnowledgeBase.id;

    const team = await gql(ada, CREATE, { input: { name: "Support team notes", scope: "TEAM", teamId: "support", backend: "LOCAL" } });
    expect(team.errors).toBeUndefined();
    ids.team = team.data!.createKnowledgeBase.id;

    const bedrock = await gql(ada, CREATE, { input: { name: "Policies on Bedrock", scope: "COMPANY", backend: "BEDROCK", region: "us-east-1", bedrockKnowledgeBaseId: BEDROCK_ID, credentialMode: "PLATFORM" } });
    expect(bedrock.errors).toBeUndefined();
    expect(bedrock.data!.createKnowledgeBase.backend).toEqual({ __typename: "BedrockBackend", knowledgeBaseId: BEDROCK_ID, region: "us-east-1" });
    ids.bedrock = bedrock.data!.createKnowledgeBase.id;

    const platform = await gql(ada, CREATE, { input: { name: "Mine now", scope: "PLATFORM", backend: "LOCAL" } });
    expect(errorCodes(platform)).toEqual(["BAD_USER_INPUT"]);
    // An admin too must name one of their own teams (a member is refused before that: test/e2e/roles.test.ts).
    const notMyTeam = await gql(await tokenFor("org-kb", "bob", [], "admin"), CREATE, { input: { name: "Sneaky", scope: "TEAM", teamId: "support", backend: "LOCAL" } });
    expect(errorCodes(notMyTeam)).toEqual(["BAD_USER_INPUT"]);
    expect(notMyTeam.errors![0]!.extensions!.field).toBe("input.teamId");
    const noRegion = await gql(ada, CREATE, { input: { name: "No region", scope: "COMPANY", backend: "BEDROCK", bedrockKnowledgeBaseId: BEDROCK_ID, credentialMode: "PLATFORM" } });
    expect(noRegion.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "input.region" });
  });

  it("refuses a malformed region, Bedrock id, vector bucket, index or role ARN at creation, naming the field and the shape expected", async () => {
    const bedrock = { name: "Typo", scope: "COMPANY", backend: "BEDROCK", region: "us-east-1", bedrockKnowledgeBaseId: BEDROCK_ID, credentialMode: "PLATFORM" };
    const vectors = { name: "Typo", scope: "COMPANY", backend: "S3VECTORS", region: "eu-west-1", s3VectorsBucket: "acme-vectors", s3VectorsIndex: "contracts", credentialMode: "ASSUME_ROLE", roleArn: "arn:aws:iam::123456789012:role/Reader" };
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ ...bedrock, region: "US East (N. Virginia)" }, "input.region", /must be an AWS region such as us-east-1/],
      [{ ...bedrock, region: "us-east-1; drop" }, "input.region", /AWS region/],
      [{ ...bedrock, bedrockKnowledgeBaseId: "../../admin" }, "input.bedrockKnowledgeBaseId", /10 letters and digits/],
      [{ ...vectors, s3VectorsBucket: "Acme_Vectors" }, "input.s3VectorsBucket", /3 to 63 lowercase letters, digits and hyphens/],
      [{ ...vectors, s3VectorsBucket: "192.168.0.1" }, "input.s3VectorsBucket", /S3 vector bucket name/],
      [{ ...vectors, s3VectorsIndex: "-x" }, "input.s3VectorsIndex", /S3 Vectors index name/],
      [{ ...vectors, roleArn: "arn:aws:iam::12345:role/Reader" }, "input.roleArn", /arn:aws:iam::<12-digit account id>:role\/<role name>/],
      [{ ...vectors, roleArn: "arn:aws:s3:::acme-bucket" }, "input.roleArn", /IAM role ARN/],
    ];
    for (const [input, field, message] of cases) {
      const answer = await gql(ada, CREATE, { input });
      expect({ field, extensions: answer.errors?.[0]?.extensions, message: answer.errors?.[0]?.message }).toEqual({ field, extensions: expect.objectContaining({ code: "BAD_USER_INPUT", field }), message: expect.stringMatching(message) });
    }
    // Nothing was created by any of them.
    const names = (await gql(ada, `{ knowledgeBases(first: 100) { nodes { name } } }`)).data!.knowledgeBases.nodes.map((node: { name: string }) => node.name);
    expect(names).not.toContain("Typo");
    // The GovCloud, China and ISO partitions' shapes are accepted.
    const gov = await gql(ada, CREATE, { input: { ...vectors, name: "GovCloud vectors", region: "us-gov-west-1", roleArn: "arn:aws-us-gov:iam::123456789012:role/path/Reader" } });
    expect(gov.errors).toBeUndefined();
    await gql(ada, `mutation($id: ID!) { deleteKnowledgeBase(id: $id) { id } }`, { id: gov.data!.createKnowledgeBase.id });
  });

  it("lists within the caller's scope, and another organization's knowledge base is exactly a missing one", async () => {
    const list = `query($scope: KnowledgeBaseScope, $after: String) { knowledgeBases(first: 2, scope: $scope, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } } }`;
    const first = await gql(ada, list);
    expect(first.errors).toBeUndefined();
    expect(first.data!.knowledgeBases.pageInfo.hasNextPage).toBe(true);
    const second = await gql(ada, list, { after: first.data!.knowledgeBases.pageInfo.endCursor });
    const all = [...first.data!.knowledgeBases.nodes, ...second.data!.knowledgeBases.nodes].map((node: { id: string }) => node.id);
    expect(all.sort()).toEqual([ids.local, ids.team, ids.bedrock].sort());
    const teams = await gql(ada, list, { scope: "TEAM" });
    expect(teams.data!.knowledgeBases.nodes).toEqual([{ id: ids.team }]);
    // Bob is in no team: the team knowledge base is not his to see.
    const bobs = (await gql(bob, `{ knowledgeBases(first: 100) { nodes { id } } }`)).data!.knowledgeBases.nodes.map((node: { id: string }) => node.id);
    expect(bobs.sort()).toEqual([ids.local, ids.bedrock].sort());

    expect((await gql(outsider, `{ knowledgeBases { nodes { id } } }`)).data!.knowledgeBases.nodes).toEqual([]);
    const foreign = await gql(outsider, `query($id: ID!) { knowledgeBase(id: $id) { id } }`, { id: ids.local });
    const missing = await gql(outsider, `query($id: ID!) { knowledgeBase(id: $id) { id } }`, { id: "00000000-0000-4000-8000-000000000000" });
    expect({ data: foreign.data, errors: foreign.errors }).toEqual({ data: missing.data, errors: missing.errors });
    expect(foreign.data!.knowledgeBase).toBeNull();
    const deleteForeign = await gql(outsider, `mutation($id: ID!) { deleteKnowledgeBase(id: $id) { id } }`, { id: ids.local });
    expect(errorCodes(deleteForeign)).toEqual(["NOT_FOUND"]);
    const mapForeign = await gql(outsider, `mutation($id: ID!) { mapCapability(capability: "support", knowledgeBaseId: $id) { priority } }`, { id: ids.local });
    expect(errorCodes(mapForeign)).toEqual(["NOT_FOUND"]);
  });

  it("stores AWS keys sealed and never gives them back", async () => {
    const set = await gql(ada, `mutation($id: ID!, $key: String!, $secret: String!) { setKnowledgeBaseCredentials(id: $id, accessKeyId: $key, secretAccessKey: $secret) { id credentials { mode roleArn hasStoredKeys } } }`, {
      id: ids.bedrock, key: ACCESS_KEY_ID, secret: SECRET_ACCESS_KEY,
    });
    expect(set.errors).toBeUndefined();
    expect(set.data!.setKnowledgeBaseCredentials.credentials).toEqual({ mode: "USER_KEYS", roleArn: null, hasStoredKeys: true });
    const read = await gql(ada, `query($id: ID!) { knowledgeBase(id: $id) { credentials { mode hasStoredKeys } } }`, { id: ids.bedrock });
    expect(read.data!.knowledgeBase.credentials).toEqual({ mode: "USER_KEYS", hasStoredKeys: true });
    expect(JSON.stringify(read)).not.toContain(SECRET_ACCESS_KEY);
    const stored = await db.database.prisma.knowledgeBaseCredentials.findMany();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.sealedSecret).not.toContain(SECRET_ACCESS_KEY);
    expect(stored[0]!.sealedSecret).not.toContain(ACCESS_KEY_ID);
    const onLocal = await gql(ada, `mutation($id: ID!) { setKnowledgeBaseCredentials(id: $id, accessKeyId: "${ACCESS_KEY_ID}", secretAccessKey: "${SECRET_ACCESS_KEY}") { id } }`, { id: ids.local });
    expect(errorCodes(onLocal)).toEqual(["BAD_USER_INPUT"]);
  });

  it("answers a capability from a LOCAL knowledge base's documents and a Bedrock one, in priority order", async () => {
    ids.document = await uploadPendingDocument(stack.gateway.url, ada, "refund-policy.md", "# Refund policy\n\n## Timing\n\nCustomers receive refunds for cancelled orders after the warehouse confirms the return.", { knowledgeBaseId: ids.local });
    // A document outside the knowledge base, which a query scoped to it must not return.
    const outside = await uploadPendingDocument(stack.gateway.url, ada, "refund-rumours.md", "# Rumours\n\nRefunds for cancelled orders are said to take forever.");
    await waitForReadyDocuments(stack.gateway.url, ada, [ids.document, outside]);
    const listed = await gql(ada, `query($id: ID!) { knowledgeBase(id: $id) { documents { nodes { id fileName knowledgeBase { id } } } } }`, { id: ids.local });
    expect(listed.data!.knowledgeBase.documents.nodes).toEqual([{ id: ids.document, fileName: "refund-policy.md", knowledgeBase: { id: ids.local } }]);

    for (const [id, priority] of [[ids.local!, 1], [ids.bedrock!, 2]] as const) {
      const mapped = await gql(ada, `mutation($id: ID!, $priority: Int!) { mapCapability(capability: "billing-support", knowledgeBaseId: $id, priority: $priority, maxResults: 3, minScore: 0.2) { priority knowledgeBase { id } } }`, { id, priority });
      expect(mapped.errors).toBeUndefined();
    }

    const answer = await gql(bob, PLATFORM_QUERY, { capability: "billing-support", query: "refunds for cancelled orders", limit: 10 });
    expect(answer.errors).toBeUndefined();
    const { passages, sources } = answer.data!.queryPlatformKnowledge;
    expect(sources.map((source: Record<string, any>) => [source.provider, source.status, source.knowledgeBase.id])).toEqual([
      ["documents", "OK", ids.local],
      ["bedrock", "OK", ids.bedrock],
    ]);
    // Bob sees no document of Ada's that is private: the LOCAL source answers within his scope.
    expect(passages.map((passage: Record<string, any>) => passage.knowledgeBase.id)).toEqual([ids.bedrock]);

    const adas = (await gql(ada, PLATFORM_QUERY, { capability: "billing-support", query: "refunds for cancelled orders", limit: 10 })).data!.queryPlatformKnowledge;
    const order = adas.passages.map((passage: Record<string, any>) => passage.knowledgeBase.id);
    // Priority order: the LOCAL knowledge base's passages (only the one document in it), then Bedrock's one above minScore.
    expect(order[0]).toBe(ids.local);
    expect(order.filter((id: string) => id === ids.bedrock)).toEqual([ids.bedrock]);
    expect(order.at(-1)).toBe(ids.bedrock);
    expect(new Set(adas.passages.filter((passage: Record<string, any>) => passage.knowledgeBase.id === ids.local).map((passage: Record<string, any>) => passage.source.documentId))).toEqual(new Set([ids.document]));
    expect(adas.passages[0].source).toMatchObject({ documentId: ids.document, fileName: "refund-policy.md", headingPath: expect.arrayContaining(["Refund policy"]) });
    // The parking passage is under the mapping's minScore (0.2).
    expect(adas.passages.at(-1)).toMatchObject({ score: 0.81, source: { uri: "s3://policies/refunds.pdf", page: 2, documentId: null } });
    const retrieves = standIn.requests.filter((request) => request.service === "bedrock");
    expect(retrieves.length).toBe(2);
    expect(retrieves.every((request) => request.accessKeyId === ACCESS_KEY_ID)).toBe(true);
  });

  it("reports a throttled Bedrock knowledge base and still answers from the others", async () => {
    standIn.fail("bedrock", "throttling");
    try {
      const answer = await gql(ada, PLATFORM_QUERY, { capability: "billing-support", query: "refunds for cancelled orders" });
      expect(answer.errors).toBeUndefined();
      const { passages, sources } = answer.data!.queryPlatformKnowledge;
      expect(sources.map((source: Record<string, any>) => [source.provider, source.status])).toEqual([["documents", "OK"], ["bedrock", "RATE_LIMITED"]]);
      expect(sources[1].error).toMatch(/throttl|retry/i);
      expect(passages.length).toBeGreaterThan(0);
      expect(passages.every((passage: Record<string, any>) => passage.knowledgeBase.id === ids.local)).toBe(true);
    } finally {
      standIn.fail("bedrock", null);
    }
  });

  it("queries the caller's documents, or one LOCAL knowledge base's only", async () => {
    const query = `query($input: QueryKnowledgeBaseInput!) { queryKnowledgeBase(input: $input) { passages { source { documentId } knowledgeBase { id } } sources { provider status } } }`;
    const mine = await gql(ada, query, { input: { query: "refunds for cancelled orders", limit: 10 } });
    expect(mine.errors).toBeUndefined();
    expect(new Set(mine.data!.queryKnowledgeBase.passages.map((passage: Record<string, any>) => passage.source.documentId)).size).toBe(2);
    const scoped = await gql(ada, query, { input: { query: "refunds for cancelled orders", knowledgeBaseId: ids.local } });
    expect(new Set(scoped.data!.queryKnowledgeBase.passages.map((passage: Record<string, any>) => passage.source.documentId))).toEqual(new Set([ids.document]));
    // The team knowledge base has no documents: nothing to find.
    const nothing = await gql(ada, query, { input: { query: "zyxwvut quokka", knowledgeBaseId: ids.team } });
    expect(nothing.data!.queryKnowledgeBase.passages).toEqual([]);
    const foreign = await gql(outsider, query, { input: { query: "refunds", knowledgeBaseId: ids.local } });
    expect(errorCodes(foreign)).toEqual(["NOT_FOUND"]);
    const empty = await gql(ada, query, { input: { query: "   " } });
    expect(empty.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "input.query" });
  });

  it("logs every knowledge query, counts them per knowledge base, and sums them up in knowledgeAnalytics", async () => {
    const analytics = `query($from: DateTime!, $to: DateTime!) { knowledgeAnalytics(from: $from, to: $to) {
      totalQueries topQueries { query count } zeroResultQueries { query count }
      knowledgeBases { knowledgeBaseId knowledgeBase { name } queries zeroResultQueries latencyP50Ms latencyP95Ms latencyP99Ms }
      queriesPerDay { day queries zeroResultQueries failedQueries }
      providers { provider queries failedQueries latencyP50Ms latencyP95Ms latencyP99Ms } } }`;
    const range = { from: startedAt.toISOString(), to: new Date(Date.now() + 60_000).toISOString() };
    // Sources asked so far: 3 capability queries × 2 knowledge bases, and 3 queryKnowledgeBase calls of one source each.
    let result: Record<string, any> | undefined;
    for (let attempt = 0; attempt < 40; attempt++) {
      result = (await gql(ada, analytics, range)).data?.knowledgeAnalytics;
      if (result?.totalQueries >= 9) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(result!.totalQueries).toBe(9);
    expect(result!.topQueries[0]).toEqual({ query: "refunds for cancelled orders", count: 8 });
    expect(result!.zeroResultQueries).toEqual(expect.arrayContaining([{ query: "zyxwvut quokka", count: 1 }]));
    const byBase = Object.fromEntries(result!.knowledgeBases.map((row: Record<string, any>) => [row.knowledgeBaseId ?? "documents", row]));
    expect(byBase[ids.local!]).toMatchObject({ queries: 4, knowledgeBase: { name: "Support handbook" } });
    // Only the throttled call found nothing in Bedrock; Bob found nothing of Ada's private documents.
    expect(byBase[ids.local!]).toMatchObject({ zeroResultQueries: 1 });
    expect(byBase[ids.bedrock!]).toMatchObject({ queries: 3, zeroResultQueries: 1 });
    expect(byBase[ids.team!]).toMatchObject({ queries: 1, zeroResultQueries: 1 });
    expect(byBase.documents).toMatchObject({ queries: 1, zeroResultQueries: 0, knowledgeBase: null });
    expect(byBase[ids.local!].latencyP95Ms).toBeGreaterThanOrEqual(byBase[ids.local!].latencyP50Ms);
    expect(byBase[ids.local!].latencyP99Ms).toBeGreaterThanOrEqual(byBase[ids.local!].latencyP95Ms);
    // Per UTC day (the test may straddle midnight) and per provider: the throttled Bedrock call is the one failure.
    expect(result!.queriesPerDay.reduce((sum: number, day: { queries: number }) => sum + day.queries, 0)).toBe(9);
    expect(result!.queriesPerDay.reduce((sum: number, day: { failedQueries: number }) => sum + day.failedQueries, 0)).toBe(1);
    expect(result!.queriesPerDay.every((day: { day: string }) => /^\d{4}-\d{2}-\d{2}$/.test(day.day))).toBe(true);
    const byProvider = Object.fromEntries(result!.providers.map((row: Record<string, any>) => [row.provider, row]));
    expect(byProvider.documents).toMatchObject({ queries: 6, failedQueries: 0 });
    expect(byProvider.bedrock).toMatchObject({ queries: 3, failedQueries: 1 });
    expect(byProvider.bedrock.latencyP99Ms).toBeGreaterThanOrEqual(byProvider.bedrock.latencyP50Ms);

    const rows = await db.database.prisma.knowledgeQuery.findMany({ where: { organizationId: "org-kb" } });
    expect(rows).toHaveLength(9);
    expect(rows.every((row) => row.credits === 0 && row.latencyMs >= 0)).toBe(true);
    const counts = await gql(ada, `query($a: ID!, $b: ID!) { a: knowledgeBase(id: $a) { queryCount } b: knowledgeBase(id: $b) { queryCount } }`, { a: ids.local, b: ids.bedrock });
    expect(counts.data).toEqual({ a: { queryCount: 4 }, b: { queryCount: 3 } });

    expect((await gql(outsider, analytics, range)).data!.knowledgeAnalytics.totalQueries).toBe(0);
    const tooLong = await gql(ada, analytics, { from: "2026-01-01T00:00:00.000Z", to: "2026-06-01T00:00:00.000Z" });
    expect(tooLong.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "to" });
  });

  it("prices knowledge queries like searches: a document of many aliased capability queries is refused before any is asked", async () => {
    const before = standIn.requests.length;
    const aliases = Array.from({ length: 20 }, (_, index) => `q${index}: queryPlatformKnowledge(capability: "billing-support", query: "refunds", limit: 1) { tookMs }`).join("\n");
    const response = await gql(ada, `{ ${aliases} }`);
    expect(response.status).toBe(400);
    expect(errorCodes(response)).toEqual(["OPERATION_LIMIT_EXCEEDED"]);
    expect(standIn.requests.length).toBe(before);
  });

  it("refuses NUL bytes and unpaired surrogates in every new text argument, naming the field", async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      [CREATE, { input: { name: "nul\u0000name", scope: "COMPANY", backend: "LOCAL" } }, "input.name"],
      [CREATE, { input: { name: "ok", description: "lone \ud800", scope: "COMPANY", backend: "LOCAL" } }, "input.description"],
      [CREATE, { input: { name: "ok", category: "c\u0000", scope: "COMPANY", backend: "LOCAL" } }, "input.category"],
      [`mutation($c: String!, $id: ID!) { mapCapability(capability: $c, knowledgeBaseId: $id) { priority } }`, { c: "cap\u0000", id: ids.bedrock }, "capability"],
      [PLATFORM_QUERY, { capability: "cap\u0000", query: "refunds" }, "capability"],
      [PLATFORM_QUERY, { capability: "\udc00", query: "refunds" }, "capability"],
    ];
    for (const [query, variables, field] of cases) {
      const response = await gql(ada, query, variables);
      expect(response.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field });
    }
  });

  it("answers hostile text in every knowledge argument normally or with a coded client error, never a 5xx", async () => {
    const prober = await tokenFor("org-kb-props", "pat", ["t1"], "admin");
    const made = await gql(prober, CREATE, { input: { name: "Probe target", scope: "COMPANY", backend: "LOCAL" } });
    const target = made.data!.createKnowledgeBase.id;
    const hostile = fc.oneof(
      fc.string({ unit: "binary", maxLength: 300 }),
      fc.constantFrom("\u0000", "\ud800", "\udfff x", "' OR 1=1 --", "a & b | !c <-> d:*", "%_\\", "x".repeat(1001), " \t\n ", ""),
    );
    const operations = [
      (text: string) => gql(prober, PLATFORM_QUERY, { capability: text, query: text }),
      (text: string) => gql(prober, PLATFORM_QUERY, { capability: "probe", query: text }),
      (text: string) => gql(prober, `query($q: String!, $id: ID) { queryKnowledgeBase(input: { query: $q, knowledgeBaseId: $id }) { passages { score } } }`, { q: text, id: target }),
      (text: string) => gql(prober, CREATE, { input: { name: text, description: text, category: text, scope: "COMPANY", backend: "LOCAL" } }),
      (text: string) => gql(prober, `mutation($c: String!, $id: ID!) { mapCapability(capability: $c, knowledgeBaseId: $id) { priority } }`, { c: text, id: target }),
      (text: string) => gql(prober, `query($id: ID!) { knowledgeBase(id: $id) { id } }`, { id: text }),
      (text: string) => gql(prober, `query($after: String) { knowledgeBases(after: $after) { nodes { id } } }`, { after: text }),
    ];
    const clientCodes = new Set(["BAD_USER_INPUT", "NOT_FOUND", "FORBIDDEN", "OPERATION_LIMIT_EXCEEDED", "GRAPHQL_VALIDATION_FAILED", "BAD_REQUEST"]);
    await fc.assert(
      fc.asyncProperty(hostile, fc.nat(operations.length - 1), async (text, which) => {
        const response = await operations[which]!(text);
        expect(response.status).toBeLessThan(500);
        for (const code of errorCodes(response)) expect(clientCodes).toContain(code);
      }),
      { numRuns: 60, seed: 20_261_201 },
    );
  });

  it("deletes a knowledge base with its mappings, keeping its documents", async () => {
    const deleted = await gql(ada, `mutation($id: ID!) { deleteKnowledgeBase(id: $id) { id } }`, { id: ids.local });
    expect(deleted.errors).toBeUndefined();
    expect((await gql(ada, `query($id: ID!) { knowledgeBase(id: $id) { id } }`, { id: ids.local })).data!.knowledgeBase).toBeNull();
    expect((await gql(ada, `query($id: ID!) { document(id: $id) { id } }`, { id: ids.document })).data!.document).toEqual({ id: ids.document });
    const answer = (await gql(ada, PLATFORM_QUERY, { capability: "billing-support", query: "refunds" })).data!.queryPlatformKnowledge;
    expect(answer.sources.map((source: Record<string, any>) => source.provider)).toEqual(["bedrock"]);
  });
});
