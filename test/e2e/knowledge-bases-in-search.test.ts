/**
 * The `knowledge-bases` provider of the unified search, through the gateway: passages of a
 * BEDROCK and an S3VECTORS knowledge base (the real AWS SDK clients against our SigV4-checking
 * stand-in) come back as KnowledgeBasePassage items, fused with document chunks and loaded from
 * the knowledge-base subgraph; a teammate outside the knowledge base's team, and another
 * organization, get none of them; a failing knowledge base leaves the others answering and
 * shows in its status; vectors of another model are refused rather than compared.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { RunningStack } from "../../app/stack.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { PassageStore } from "../../subgraphs/knowledge-base/passage-store.js";
import { AwsStandIn } from "../support/aws/aws-stand-in.js";
import type { TestDatabase } from "../support/database.js";
import { startTestStack } from "../support/stack.js";
import { uploadReadyDocument } from "../support/documents.js";
import { graphql } from "../support/graphql.js";
import { tokenFor } from "../support/tenants.js";

const ACCESS_KEY_ID = "AKIASEARCHKBTEST001";
const SECRET_ACCESS_KEY = "kb-search-secret/" + "s".repeat(25);
const BEDROCK_ID = "KBSEARCH01";
const BUCKET = "acme-knowledge";
const INDEX = "support-articles";

let db: TestDatabase;
let stack: RunningStack;
let standIn: AwsStandIn;
let ada: string;
let bob: string;
let outsider: string;
const ids: Record<string, string> = {};

const gql = (token: string, query: string, variables: Record<string, unknown> = {}) => graphql(stack.gateway.url, query, variables, { token });

const SEARCH = `query($input: SearchInput!) {
  search(input: $input) {
    hits {
      score
      item {
        __typename
        ... on DocumentChunk { id text document { fileName } }
        ... on KnowledgeBasePassage { id text uri page retrievedAt knowledgeBase { id name backend { __typename } } }
      }
      explanation { provider rank nativeScore }
    }
    providers { name kind status returned error }
  }
}`;
const CREATE = `mutation($input: CreateKnowledgeBaseInput!) { createKnowledgeBase(input: $input) { id } }`;
const SET_KEYS = `mutation($id: ID!) { setKnowledgeBaseCredentials(id: $id, accessKeyId: "${ACCESS_KEY_ID}", secretAccessKey: "${SECRET_ACCESS_KEY}") { id } }`;

type Hit = { score: number; item: Record<string, any> | null; explanation: { provider: string; rank: number; nativeScore: number }[] };
const search = async (token: string, query: string, extra: Record<string, unknown> = {}) => {
  const response = await gql(token, SEARCH, { input: { query, limit: 20, ...extra } });
  expect(response.errors).toBeUndefined();
  return response.data!.search as { hits: Hit[]; providers: { name: string; status: string; returned: number; error: string | null }[] };
};
const passagesOf = (result: { hits: Hit[] }) => result.hits.map((hit) => hit.item).filter((item): item is Record<string, any> => item?.__typename === "KnowledgeBasePassage");
type Report = { name: string; status: string; returned: number; error: string | null };
const reportOf = (result: { providers: Report[] }) => result.providers.find((provider) => provider.name === "knowledge-bases")!;

beforeAll(async () => {
  standIn = await AwsStandIn.start();
  standIn.addAccessKey(ACCESS_KEY_ID, SECRET_ACCESS_KEY);
  standIn.knowledgeBases.set(BEDROCK_ID, [
    { content: { text: "Refunds for annual plans are prorated to the day of cancellation." }, score: 0.83, location: { type: "S3", s3Location: { uri: "s3://policies/refunds.pdf" } }, metadata: { "x-amz-bedrock-kb-document-page-number": 3 } },
    // Hostile remote text: a NUL byte and an unpaired surrogate, which PostgreSQL cannot store as they are.
    { content: { text: "Refund exceptions\u0000 need a manager\ud800 approval." }, score: 0.52, location: { type: "WEB", webLocation: { url: "https://policies.example.com/exceptions" } }, metadata: {} },
  ]);
  // An index filled the way Bedrock fills S3 Vectors, with vectors of the model this deployment runs.
  const embedder = new FeatureHashingEmbedder();
  const articles = [
    ["kb-1", "How to issue a refund for a duplicate charge", "s3://support/duplicate-charge.md"],
    ["kb-2", "Resetting a customer's password from the admin console", "s3://support/password.md"],
  ] as const;
  standIn.createIndex(BUCKET, INDEX, embedder.dimensions);
  const vectors = await embedder.embed(articles.map(([, text]) => text));
  articles.forEach(([key, text, uri], index) => standIn.index(BUCKET, INDEX)!.set(key, { data: vectors[index]!, metadata: { AMAZON_BEDROCK_TEXT: text, "x-amz-bedrock-kb-source-uri": uri } }));

  ({ db, stack } = await startTestStack({
    SEARCH_CACHE_TTL_SECONDS: "0", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0",
    SECRETS_ENCRYPTION_KEYS: `test-key:${randomBytes(32).toString("base64")}`,
    AWS_ENDPOINT_URL_BEDROCK_AGENT_RUNTIME: standIn.http2Endpoint,
    AWS_ENDPOINT_URL_S3VECTORS: standIn.endpoint,
  }));
  ada = await tokenFor("org-kbs", "ada", ["support"], "admin");
  bob = await tokenFor("org-kbs", "bob", []);
  outsider = await tokenFor("org-other", "otto", ["support"]);

  // Before any search: the provider keeps each caller's list of knowledge bases for a few seconds.
  const bedrock = await gql(ada, CREATE, { input: { name: "Billing policies", scope: "COMPANY", backend: "BEDROCK", region: "us-east-1", bedrockKnowledgeBaseId: BEDROCK_ID, credentialMode: "PLATFORM" } });
  expect(bedrock.errors).toBeUndefined();
  ids.bedrock = bedrock.data!.createKnowledgeBase.id;
  const vectorsBase = await gql(ada, CREATE, {
    input: { name: "Support articles", scope: "TEAM", teamId: "support", backend: "S3VECTORS", region: "us-east-1", s3VectorsBucket: BUCKET, s3VectorsIndex: INDEX, credentialMode: "PLATFORM", embeddingModel: embedder.model },
  });
  expect(vectorsBase.errors).toBeUndefined();
  ids.s3vectors = vectorsBase.data!.createKnowledgeBase.id;
  for (const id of [ids.bedrock, ids.s3vectors]) expect((await gql(ada, SET_KEYS, { id })).errors).toBeUndefined();

  ids.document = await uploadReadyDocument(stack.gateway.url, ada, "refund-faq.md", "# Refund FAQ\n\nA refund for a duplicate charge is issued to the original card within five days.");
});

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
  await standIn?.close();
});

describe("knowledge bases in the unified search", () => {
  it("is offered as a semantic provider", async () => {
    const response = await gql(ada, `{ searchProviders { name kind description } }`);
    expect(response.data!.searchProviders).toContainEqual(expect.objectContaining({ name: "knowledge-bases", kind: "SEMANTIC" }));
  });

  it("fuses Bedrock and S3 Vectors passages with document chunks, each loaded from the knowledge-base subgraph", async () => {
    const requestsBefore = standIn.requests.length;
    const result = await search(ada, "refund for a duplicate charge");
    expect(reportOf(result)).toMatchObject({ status: "OK", error: null });
    expect(result.hits.map((hit) => hit.item?.__typename)).toEqual(expect.arrayContaining(["DocumentChunk", "KnowledgeBasePassage"]));

    const passages = passagesOf(result);
    const bySource = new Map(passages.map((passage) => [passage.uri, passage]));
    expect(bySource.get("s3://policies/refunds.pdf")).toMatchObject({
      text: "Refunds for annual plans are prorated to the day of cancellation.",
      page: 3,
      knowledgeBase: { id: ids.bedrock, name: "Billing policies", backend: { __typename: "BedrockBackend" } },
    });
    expect(bySource.get("s3://support/duplicate-charge.md")).toMatchObject({
      text: "How to issue a refund for a duplicate charge",
      knowledgeBase: { id: ids.s3vectors, name: "Support articles", backend: { __typename: "S3VectorsBackend" } },
    });
    // Stored as PostgreSQL can hold it: NUL and the lone surrogate became U+FFFD, the rest kept.
    expect(bySource.get("https://policies.example.com/exceptions")!.text).toBe("Refund exceptions\ufffd need a manager\ufffd approval.");
    expect(passages.every((passage) => /^[0-9a-f]{32}$/.test(passage.id) && !Number.isNaN(Date.parse(passage.retrievedAt)))).toBe(true);

    // Nearest vector first, similarity = 1 − distance: the matching article outranks the password one.
    const s3Hits = result.hits.filter((hit) => hit.item?.knowledgeBase?.id === ids.s3vectors);
    expect(s3Hits[0]!.item!.uri).toBe("s3://support/duplicate-charge.md");
    expect(s3Hits[0]!.explanation.find((entry) => entry.provider === "knowledge-bases")!.nativeScore).toBeGreaterThan(0.5);

    // Each knowledge base asked once, signed with the organization's own key.
    const calls = standIn.requests.slice(requestsBefore);
    expect(calls.map((call) => `${call.service}:${call.operation}`).sort()).toEqual(["bedrock:Retrieve", "s3vectors:QueryVectors"]);
    expect(calls.every((call) => call.accessKeyId === ACCESS_KEY_ID)).toBe(true);
    expect(calls.find((call) => call.service === "s3vectors")!.body).toMatchObject({ vectorBucketName: BUCKET, indexName: INDEX, returnMetadata: true, returnDistance: true });
  });

  it("the same passage retrieved again is the same entity", async () => {
    const first = passagesOf(await search(ada, "refund policy")).map((passage) => passage.id).sort();
    const again = passagesOf(await search(ada, "refund policy")).map((passage) => passage.id).sort();
    expect(again).toEqual(first);
    const stored = await db.database.prisma.knowledgeBasePassage.count({ where: { organizationId: "org-kbs" } });
    // Both knowledge bases give the same two passages whatever the query: four rows for all the searches so far.
    expect(stored).toBe(4);
  });

  it("honours provider selection and weights like every provider", async () => {
    const only = await search(ada, "refund", { providers: ["knowledge-bases"] });
    expect(only.providers.filter((provider) => provider.status !== "SKIPPED").map((provider) => provider.name)).toEqual(["knowledge-bases"]);
    expect(only.hits.every((hit) => hit.item?.__typename === "KnowledgeBasePassage")).toBe(true);
    const requestsBefore = standIn.requests.length;
    const without = await search(ada, "refund", { weights: [{ provider: "knowledge-bases", weight: 0 }] });
    expect(reportOf(without).status).toBe("SKIPPED");
    expect(passagesOf(without)).toEqual([]);
    expect(standIn.requests.length).toBe(requestsBefore);
  });

  it("a teammate outside the knowledge base's team gets the company one only; another organization gets none", async () => {
    const bobs = passagesOf(await search(bob, "refund for a duplicate charge"));
    expect(bobs.length).toBeGreaterThan(0);
    expect(new Set(bobs.map((passage) => passage.knowledgeBase.id))).toEqual(new Set([ids.bedrock]));

    const theirs = await search(outsider, "refund for a duplicate charge");
    expect(passagesOf(theirs)).toEqual([]);
    expect(reportOf(theirs)).toMatchObject({ status: "OK", returned: 0 });

    // Ada's passage ids name nothing for anyone else: not for the other organization, not for Bob when it is the team's.
    const adas = passagesOf(await search(ada, "refund for a duplicate charge"));
    const teamPassage = adas.find((passage) => passage.knowledgeBase.id === ids.s3vectors)!;
    const store = new PassageStore(db.database.prisma);
    const asTenant = (organizationId: string, userId: string, teamIds: string[]) => ({ organizationId, userId, teamIds, role: "member" as const, userName: null, userEmail: null });
    expect(await store.findByIds(asTenant("org-other", "otto", ["support"]), adas.map((passage) => passage.id))).toEqual([]);
    expect(await store.findByIds(asTenant("org-kbs", "bob", []), [teamPassage.id])).toEqual([]);
    expect(await store.findByIds(asTenant("org-kbs", "ada", ["support"]), [teamPassage.id])).toHaveLength(1);
  });

  it("a throttled knowledge base leaves the others answering; when every one fails the provider says why", async () => {
    standIn.fail("bedrock", "throttling");
    try {
      const result = await search(ada, "refund for a duplicate charge");
      expect(reportOf(result).status).toBe("OK");
      expect(new Set(passagesOf(result).map((passage) => passage.knowledgeBase.id))).toEqual(new Set([ids.s3vectors]));
      // Bob may query only the Bedrock one: the provider fails, the rest of his search still answers.
      const bobs = await search(bob, "refund for a duplicate charge");
      expect(reportOf(bobs)).toMatchObject({ status: "ERROR", error: expect.stringContaining("RATE_LIMITED") });
      // (The external providers are not configured here: SKIPPED, which is not a failure.)
      expect(bobs.providers.filter((provider) => provider.name !== "knowledge-bases").every((provider) => provider.status === "OK" || provider.status === "SKIPPED")).toBe(true);
      // No alpha here, so the hashing embedder's measured default (keyword only) skips
      // documents.semantic, and says so: that is the default at work, not the failure spreading.
      // knowledge-bases, with models of its own, was still asked (its ERROR above).
      expect(bobs.providers.filter((provider) => provider.name.startsWith("documents.")).map((provider) => [provider.name, provider.status, provider.error])).toEqual([
        ["documents.keyword", "OK", null],
        ["documents.semantic", "SKIPPED", expect.stringMatching(/^the default alpha 1 \(measured for feature-hashing-256\)/)],
      ]);
      // Throttling passes: the knowledge base is not marked broken for it.
      const status = await gql(ada, `query($id: ID!) { knowledgeBase(id: $id) { status statusReason } }`, { id: ids.bedrock });
      expect(status.data!.knowledgeBase).toEqual({ status: "ACTIVE", statusReason: null });
    } finally {
      standIn.fail("bedrock", null);
    }
  });

  it("a lasting failure turns the knowledge base to ERROR with the reason, and a success back to ACTIVE", async () => {
    standIn.fail("s3vectors", "access-denied");
    const STATUS = `query($id: ID!) { knowledgeBase(id: $id) { status statusReason } }`;
    try {
      await search(ada, "password reset");
      let status: Record<string, any> = {};
      for (let attempt = 0; attempt < 40 && status.status !== "ERROR"; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        status = (await gql(ada, STATUS, { id: ids.s3vectors })).data!.knowledgeBase;
      }
      expect(status).toEqual({ status: "ERROR", statusReason: expect.stringContaining("check the key, role or policy") });
    } finally {
      standIn.fail("s3vectors", null);
    }
    await search(ada, "password reset");
    let status: Record<string, any> = {};
    for (let attempt = 0; attempt < 40 && status.status !== "ACTIVE"; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      status = (await gql(ada, STATUS, { id: ids.s3vectors })).data!.knowledgeBase;
    }
    expect(status).toEqual({ status: "ACTIVE", statusReason: null });
  });

  it("refuses to compare a query with vectors of another model, saying which", async () => {
    const other = await gql(ada, CREATE, {
      input: { name: "Legacy vectors", scope: "COMPANY", backend: "S3VECTORS", region: "us-east-1", s3VectorsBucket: BUCKET, s3VectorsIndex: INDEX, credentialMode: "PLATFORM", embeddingModel: "amazon.titan-embed-text-v2" },
    });
    expect(other.errors).toBeUndefined();
    const id = other.data!.createKnowledgeBase.id;
    expect((await gql(ada, SET_KEYS, { id })).errors).toBeUndefined();
    const answer = await gql(ada, `query($input: QueryKnowledgeBaseInput!) { queryKnowledgeBase(input: $input) { passages { text } sources { provider status error } } }`, { input: { query: "refund", knowledgeBaseId: id } });
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.queryKnowledgeBase.sources).toEqual([{ provider: "s3vectors", status: "BAD_REQUEST", error: expect.stringContaining("amazon.titan-embed-text-v2") }]);
    expect(answer.data!.queryKnowledgeBase.passages).toEqual([]);
  });

  it("deleting a knowledge base deletes its passages with it", async () => {
    const passages = passagesOf(await search(bob, "refund"));
    expect(passages.length).toBeGreaterThan(0);
    expect((await gql(ada, `mutation($id: ID!) { deleteKnowledgeBase(id: $id) { id } }`, { id: ids.bedrock })).errors).toBeUndefined();
    expect(await db.database.prisma.knowledgeBasePassage.count({ where: { knowledgeBaseId: ids.bedrock } })).toBe(0);
  });
});
