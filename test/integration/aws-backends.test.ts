/**
 * The AWS backends (credential modes, Bedrock retrieval, S3 Vectors) with the real SDK v3
 * clients against a local stand-in (test/support/aws/aws-stand-in.ts) that checks each
 * request's SigV4 signature and the access key it was signed with. No database needed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import { randomBytes } from "node:crypto";
import { retrieve } from "../../lib/aws/bedrock-knowledge-base.js";
import { AwsCredentialSource, sealUserKeys } from "../../lib/aws/credentials.js";
import { AwsBackendError } from "../../lib/aws/errors.js";
import { indexNameFor, S3VectorsStore } from "../../lib/aws/s3-vectors-store.js";
import { SecretKeyring } from "../../lib/secrets/keyring.js";
import { AwsStandIn } from "../support/aws/aws-stand-in.js";
import type { AwsStandInFault } from "../support/aws/aws-stand-in.js";

const PLATFORM = { accessKeyId: "AKIAPLATFORM00000001", secretAccessKey: "platform-secret-key-0123456789abcdef" };
const USER = { accessKeyId: "AKIAUSERACME00000001", secretAccessKey: "acme-secret-key-0123456789abcdefghij" };
const ROLE_ARN = "arn:aws:iam::123456789012:role/ContextSearchRetrieval";
const KB_ID = "KB12345678";
const REGION = "eu-west-1";

let standIn: AwsStandIn;
const keyring = new SecretKeyring([{ id: "k1", key: randomBytes(32) }]);

beforeAll(async () => {
  standIn = await AwsStandIn.start();
  standIn.addAccessKey(PLATFORM.accessKeyId, PLATFORM.secretAccessKey);
  standIn.addAccessKey(USER.accessKeyId, USER.secretAccessKey);
  standIn.roles.set(ROLE_ARN, { externalId: "acme-external-7" });
  standIn.knowledgeBases.set(KB_ID, [
    {
      content: { type: "TEXT", text: "Refunds are processed within 5 business days." },
      location: { type: "S3", s3Location: { uri: "s3://acme-kb/policies/refunds.pdf" } },
      score: 0.8123,
      metadata: { "x-amz-bedrock-kb-source-uri": "s3://acme-kb/policies/refunds.pdf", "x-amz-bedrock-kb-chunk-id": "1%3A0%3Aabc", category: "billing" },
    },
    {
      content: { type: "TEXT", text: "Our support team answers within a day." },
      location: { type: "WEB", webLocation: { url: "https://acme.example/support" } },
      score: 0.61,
      metadata: { category: "support" },
    },
    {
      content: { type: "TEXT", text: "Custom ingested note." },
      location: { type: "CUSTOM", customDocumentLocation: { id: "note-42" } },
      score: 0.4,
    },
  ]);
});

afterAll(async () => {
  await standIn.close();
});

beforeEach(() => {
  standIn.requests.length = 0;
  standIn.fail("bedrock", null);
  standIn.fail("s3vectors", null);
  standIn.fail("sts", null);
});

function retrieveWith(credentials: ReturnType<AwsCredentialSource["providerFor"]>, overrides: Partial<Parameters<typeof retrieve>[0]> = {}) {
  return retrieve({ knowledgeBaseId: KB_ID, region: REGION, query: "how long do refunds take", numberOfResults: 5, credentials, timeoutMs: 10_000, endpoint: standIn.http2Endpoint, ...overrides });
}

describe("credential modes", () => {
  it("platform mode signs with the configured platform keys", async () => {
    const source = new AwsCredentialSource({ platformKeys: PLATFORM });
    await retrieveWith(source.providerFor({ mode: "platform" }, "acme"));
    expect(standIn.requests).toEqual([expect.objectContaining({ service: "bedrock", operation: "Retrieve", region: REGION, accessKeyId: PLATFORM.accessKeyId, sessionToken: undefined })]);
  });

  it("platform mode without configured keys uses the SDK's default chain (here: the environment)", async () => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = PLATFORM.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = PLATFORM.secretAccessKey;
    try {
      const source = new AwsCredentialSource();
      await retrieveWith(source.providerFor({ mode: "platform" }, "acme"));
      expect(standIn.requests.map((request) => request.accessKeyId)).toEqual([PLATFORM.accessKeyId]);
    } finally {
      for (const [name, value] of [["AWS_ACCESS_KEY_ID", saved.id], ["AWS_SECRET_ACCESS_KEY", saved.secret]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it("user-keys mode opens the organization's sealed keys and signs with them", async () => {
    const sealed = sealUserKeys(keyring, "acme", USER);
    expect(sealed).not.toContain(USER.secretAccessKey);
    const source = new AwsCredentialSource({ keyring, platformKeys: PLATFORM });
    await retrieveWith(source.providerFor({ mode: "user-keys", sealedKeys: sealed }, "acme"));
    expect(standIn.requests.map((request) => request.accessKeyId)).toEqual([USER.accessKeyId]);
  });

  it("a tampered sealed value, or one of another organization, fails clearly and reaches no AWS service", async () => {
    const sealed = sealUserKeys(keyring, "acme", USER);
    const tampered = sealed.slice(0, -2) + (sealed.endsWith("A") ? "BB" : "AA");
    const source = new AwsCredentialSource({ keyring, platformKeys: PLATFORM });
    for (const [value, organization] of [[tampered, "acme"], [sealed, "globex"]] as const) {
      const failure = await retrieveWith(source.providerFor({ mode: "user-keys", sealedKeys: value }, organization)).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(AwsBackendError);
      expect((failure as AwsBackendError).status).toBe("ACCESS_DENIED");
      expect((failure as AwsBackendError).message).toMatch(/stored AWS keys do not open.*enter them again/);
      expect((failure as AwsBackendError).message).not.toContain(USER.secretAccessKey);
    }
    expect(standIn.requests).toEqual([]);
  });

  it("assume-role calls STS once for many requests, signs with the temporary key, and again near expiry", async () => {
    let clock = Date.now();
    standIn.now = () => clock;
    try {
      const source = new AwsCredentialSource({ platformKeys: PLATFORM, sts: { region: "us-east-1", endpoint: standIn.endpoint }, now: () => clock });
      const provider = source.providerFor({ mode: "assume-role", roleArn: ROLE_ARN, externalId: "acme-external-7" }, "acme");
      await Promise.all(Array.from({ length: 8 }, () => retrieveWith(provider)));
      await retrieveWith(provider);
      const sts = standIn.requests.filter((request) => request.service === "sts");
      expect(sts).toHaveLength(1);
      expect(sts[0]).toMatchObject({ operation: "AssumeRole", accessKeyId: PLATFORM.accessKeyId, region: "us-east-1" });
      expect(sts[0]!.body).toMatchObject({ RoleArn: ROLE_ARN, ExternalId: "acme-external-7", DurationSeconds: "3600" });
      expect(String(sts[0]!.body.RoleSessionName)).toMatch(/^context-search-acme-[0-9a-f]{16}$/);
      const bedrock = standIn.requests.filter((request) => request.service === "bedrock");
      expect(bedrock).toHaveLength(9);
      expect(new Set(bedrock.map((request) => request.accessKeyId)).size).toBe(1);
      expect(bedrock[0]!.accessKeyId).toMatch(/^ASIA/);
      expect(bedrock.every((request) => request.sessionToken)).toBe(true);

      // 4 minutes before expiry is inside the 5-minute margin: a new AssumeRole.
      clock += (60 - 4) * 60 * 1000;
      await retrieveWith(provider);
      const after = standIn.requests.filter((request) => request.service === "sts");
      expect(after).toHaveLength(2);
      const last = standIn.requests.at(-1)!;
      expect(last.service).toBe("bedrock");
      expect(last.accessKeyId).not.toBe(bedrock[0]!.accessKeyId);
    } finally {
      standIn.now = Date.now;
    }
  });

  it("a role that does not trust us (wrong external id) is ACCESS_DENIED; the refusal is kept for the window (one STS call for N queries), then asked again", async () => {
    let clock = Date.now();
    const source = new AwsCredentialSource({ platformKeys: PLATFORM, sts: { endpoint: standIn.endpoint }, refusalTtlMs: 60_000, now: () => clock });
    const provider = source.providerFor({ mode: "assume-role", roleArn: ROLE_ARN, externalId: "wrong-id" }, "acme");
    const refusalOf = (work: Promise<unknown>) => work.then(() => { throw new Error("expected STS to refuse"); }, (error: unknown) => error as AwsBackendError);
    const first = await refusalOf(retrieveWith(provider));
    expect(first).toMatchObject({ status: "ACCESS_DENIED" });
    expect(first.message).toContain(`assuming role ${ROLE_ARN}`);
    // STS saw the external id we were given, and refused it.
    expect(standIn.requests.filter((request) => request.service === "sts").map((request) => request.body.ExternalId)).toEqual(["wrong-id"]);

    // Ten more queries in the window, some at once: the same error, no STS call.
    clock += 59_000;
    const again = await Promise.all(Array.from({ length: 10 }, () => refusalOf(retrieveWith(provider))));
    for (const failure of again) {
      expect(failure).toBeInstanceOf(AwsBackendError);
      expect(failure).toMatchObject({ status: "ACCESS_DENIED", code: "AWS_ACCESS_DENIED" });
      expect(failure.message).toContain(first.message);
      expect(failure.message).toMatch(/asked again in 1 s, or at once if the role ARN or external id changes/);
    }
    expect(standIn.operations("sts")).toEqual(["AssumeRole"]);

    // A corrected external id is another key: asked at once (and trusted), while the wrong one stays refused.
    await retrieveWith(source.providerFor({ mode: "assume-role", roleArn: ROLE_ARN, externalId: "acme-external-7" }, "acme"));
    expect(standIn.operations("sts")).toEqual(["AssumeRole", "AssumeRole"]);
    // So is the same role for another organization: a refusal is never shared across organizations.
    await expect(retrieveWith(source.providerFor({ mode: "assume-role", roleArn: ROLE_ARN, externalId: "wrong-id" }, "globex"))).rejects.toMatchObject({ status: "ACCESS_DENIED" });
    expect(standIn.operations("sts")).toEqual(["AssumeRole", "AssumeRole", "AssumeRole"]);

    // After the window: STS is asked again.
    clock += 1_001;
    await expect(retrieveWith(provider)).rejects.toMatchObject({ status: "ACCESS_DENIED" });
    expect(standIn.operations("sts")).toEqual(["AssumeRole", "AssumeRole", "AssumeRole", "AssumeRole"]);
    expect(standIn.operations("bedrock")).toEqual(["Retrieve"]);
  });

  it("a refused role is not remembered with refusalTtlMs 0, nor when STS fails in a passing way (throttled)", async () => {
    const source = new AwsCredentialSource({ platformKeys: PLATFORM, sts: { endpoint: standIn.endpoint }, refusalTtlMs: 0 });
    const refused = source.providerFor({ mode: "assume-role", roleArn: ROLE_ARN, externalId: "wrong-id" }, "acme");
    for (let attempt = 0; attempt < 2; attempt += 1) await expect(retrieveWith(refused)).rejects.toMatchObject({ status: "ACCESS_DENIED" });
    expect(standIn.operations("sts")).toEqual(["AssumeRole", "AssumeRole"]);

    standIn.requests.length = 0;
    const remembering = new AwsCredentialSource({ platformKeys: PLATFORM, sts: { endpoint: standIn.endpoint } });
    const provider = remembering.providerFor({ mode: "assume-role", roleArn: ROLE_ARN, externalId: "acme-external-7" }, "acme");
    standIn.fail("sts", "throttling");
    await expect(retrieveWith(provider)).rejects.toMatchObject({ status: "RATE_LIMITED" });
    standIn.fail("sts", null);
    await retrieveWith(provider);
    expect(standIn.operations("sts").length).toBeGreaterThanOrEqual(2);
    expect(standIn.operations("bedrock")).toEqual(["Retrieve"]);
  });

  it("an external id STS would refuse by its shape is refused before any call, naming the rule", async () => {
    const source = new AwsCredentialSource({ platformKeys: PLATFORM, sts: { endpoint: standIn.endpoint } });
    for (const externalId of ["x", "has space", "é-accent", "a".repeat(1225)]) {
      expect(() => source.providerFor({ mode: "assume-role", roleArn: ROLE_ARN, externalId }, "acme")).toThrow(/the external id must be an AWS external id: 2 to 1224 characters/);
    }
    expect(standIn.requests).toEqual([]);
  });

  it("a key the service does not know is refused by the stand-in (the key really is checked)", async () => {
    const source = new AwsCredentialSource({ platformKeys: { accessKeyId: "AKIAUNKNOWN000000001", secretAccessKey: "unknown-secret-0123456789abcdef" } });
    await expect(retrieveWith(source.providerFor({ mode: "platform" }, "acme"))).rejects.toMatchObject({ status: "ACCESS_DENIED" });
  });

  it("a wrong secret for a known key id fails the signature check", async () => {
    const source = new AwsCredentialSource({ platformKeys: { accessKeyId: PLATFORM.accessKeyId, secretAccessKey: "not-the-platform-secret-000000" } });
    await expect(retrieveWith(source.providerFor({ mode: "platform" }, "acme"))).rejects.toMatchObject({ status: "ACCESS_DENIED", awsErrorName: "SignatureDoesNotMatch" });
  });
});

describe("Bedrock knowledge-base retrieval", () => {
  const source = new AwsCredentialSource({ platformKeys: PLATFORM });
  const credentials = source.providerFor({ mode: "platform" }, "acme");

  it("sends the bounded query, result count, filter and search type, and maps a realistic response", async () => {
    const passages = await retrieveWith(credentials, {
      query: `  ${"refund ".repeat(400)}  `,
      numberOfResults: 500,
      searchType: "HYBRID",
      filter: { equals: { key: "category", value: "billing" } },
    });
    const body = standIn.requests[0]!.body as { retrievalQuery: { text: string }; retrievalConfiguration: { vectorSearchConfiguration: Record<string, unknown> } };
    expect(body.retrievalQuery.text).toHaveLength(1000);
    expect(body.retrievalConfiguration.vectorSearchConfiguration).toEqual({ numberOfResults: 100, overrideSearchType: "HYBRID", filter: { equals: { key: "category", value: "billing" } } });
    expect(passages).toEqual([
      { text: "Refunds are processed within 5 business days.", score: 0.8123, source: { type: "s3", uri: "s3://acme-kb/policies/refunds.pdf" }, metadata: expect.objectContaining({ category: "billing" }) },
      { text: "Our support team answers within a day.", score: 0.61, source: { type: "web", url: "https://acme.example/support" }, metadata: { category: "support" } },
      { text: "Custom ingested note.", score: 0.4, source: { type: "custom", id: "note-42" }, metadata: {} },
    ]);
  });

  const cases: Array<[AwsStandInFault, string, boolean]> = [
    ["throttling", "RATE_LIMITED", true],
    ["access-denied", "ACCESS_DENIED", false],
    ["validation", "BAD_REQUEST", false],
    ["not-found", "NOT_FOUND", false],
    ["internal", "ERROR", false],
    ["hang", "TIMEOUT", true],
  ];
  it.each(cases)("a %s answer is %s (retryable %s), with one readable line and no secrets", async (fault, status, retryable) => {
    standIn.fail("bedrock", fault);
    const failure = (await retrieveWith(credentials, { timeoutMs: 300 }).catch((error: unknown) => error)) as AwsBackendError;
    expect(failure).toBeInstanceOf(AwsBackendError);
    expect({ status: failure.status, retryable: failure.retryable }).toEqual({ status, retryable });
    expect(failure.message).toMatch(new RegExp(`^Bedrock knowledge base ${KB_ID} \\(${REGION}\\): `));
    expect(failure.message).not.toMatch(/\n|\bat .*\.js|AKIA|secret/i);
  });

  it("a caller's abort is a TIMEOUT too", async () => {
    standIn.fail("bedrock", "hang");
    const controller = new AbortController();
    const pending = retrieveWith(credentials, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(pending).rejects.toMatchObject({ status: "TIMEOUT" });
  });

  it("refuses malformed ids and empty queries before calling AWS", async () => {
    await expect(retrieveWith(credentials, { knowledgeBaseId: "../../x" })).rejects.toMatchObject({ status: "BAD_REQUEST" });
    await expect(retrieveWith(credentials, { query: "   " })).rejects.toMatchObject({ status: "BAD_REQUEST" });
    expect(standIn.requests).toEqual([]);
  });
});

describe("S3 Vectors store", () => {
  const bucket = "context-search-test";
  const model = "test-model@v1";
  const source = new AwsCredentialSource({ keyring });
  let store: S3VectorsStore;

  function unit(dimensions: number, hot: number): number[] {
    return Array.from({ length: dimensions }, (_, i) => (i === hot ? 1 : 0.01));
  }

  beforeAll(async () => {
    store = new S3VectorsStore({
      vectorBucketName: bucket,
      region: REGION,
      credentials: source.providerFor({ mode: "user-keys", sealedKeys: sealUserKeys(keyring, "acme", USER) }, "acme"),
      endpoint: standIn.endpoint,
    });
    await store.ensureReady(model, 8);
  });

  afterAll(async () => {
    await store.close();
  });

  it("creates a cosine index once, signed with the store's credentials", async () => {
    await store.ensureReady(model, 8);
    const index = standIn.index(bucket, indexNameFor("context-search", model));
    expect(index).toBeDefined();
    await expect(store.ensureReady(model, 16)).rejects.toThrow(/8 dimensions/);
  });

  it("writes 250 chunks as 100 + 100 + 50, with entity and chunk in keys and metadata", async () => {
    const chunks = Array.from({ length: 250 }, (_, chunkIndex) => ({ chunkIndex, contentHash: `h${chunkIndex}`, vector: unit(8, chunkIndex % 8) }));
    await store.replaceEntity("acme", "document_chunk", "doc-big", model, chunks);
    const puts = standIn.requests.filter((request) => request.operation === "PutVectors");
    expect(puts.map((request) => (request.body.vectors as unknown[]).length)).toEqual([100, 100, 50]);
    expect(puts.every((request) => request.accessKeyId === USER.accessKeyId)).toBe(true);
    const first = (puts[0]!.body.vectors as Array<{ key: string; metadata: Record<string, unknown> }>)[0]!;
    expect(first.key).toMatch(/^o[0-9a-f]{32}\/document_chunk\/doc-big\/1$/);
    expect(first.metadata).toEqual({ organizationId: "acme", entityType: "document_chunk", entityId: "doc-big", chunkIndex: 1, chunkCount: 250, contentHash: "h1" });
    expect(standIn.index(bucket, indexNameFor("context-search", model))!.size).toBe(250);
  });

  it("queries return only the caller's organization, best chunk per entity, similarity = 1 - distance", async () => {
    await store.replaceEntity("acme", "document_chunk", "acme-doc", model, [{ chunkIndex: 0, contentHash: "a", vector: unit(8, 3) }]);
    await store.replaceEntity("globex", "document_chunk", "globex-doc", model, [{ chunkIndex: 0, contentHash: "g", vector: unit(8, 3) }]);
    standIn.requests.length = 0;
    const acme = await store.search("acme", model, unit(8, 3), { limit: 10 });
    const query = standIn.requests.find((request) => request.operation === "QueryVectors")!;
    expect(query.body.filter).toEqual({ $and: [{ organizationId: { $eq: "acme" } }, { entityType: { $in: ["conversation", "document_chunk"] } }] });
    expect(acme.map((match) => match.entityId).sort()).toEqual(["acme-doc", "doc-big"]);
    expect(acme[0]!.score).toBeCloseTo(1, 5);
    const globex = await store.search("globex", model, unit(8, 3), { limit: 10 });
    expect(globex.map((match) => match.entityId)).toEqual(["globex-doc"]);
    expect(await store.search("initech", model, unit(8, 3), { limit: 10 })).toEqual([]);
  });

  it("replacing with fewer chunks deletes the stale ones; delete removes every chunk, not another organization's", async () => {
    const index = standIn.index(bucket, indexNameFor("context-search", model))!;
    await store.replaceEntity("acme", "document_chunk", "doc-big", model, [{ chunkIndex: 0, contentHash: "n", vector: unit(8, 1) }, { chunkIndex: 1, contentHash: "n1", vector: unit(8, 2) }]);
    expect([...index.keys()].filter((key) => key.includes("/doc-big/"))).toHaveLength(2);
    // Same entity id in another organization: untouched by acme's delete.
    await store.replaceEntity("globex", "document_chunk", "doc-big", model, [{ chunkIndex: 0, contentHash: "g", vector: unit(8, 1) }]);
    standIn.requests.length = 0;
    await store.deleteEntity("acme", "document_chunk", "doc-big");
    const deletes = standIn.requests.filter((request) => request.operation === "DeleteVectors");
    expect(deletes.flatMap((request) => request.body.keys as string[])).toHaveLength(2);
    expect((await store.search("acme", model, unit(8, 1), { limit: 10 })).map((match) => match.entityId)).toEqual(["acme-doc"]);
    expect((await store.search("globex", model, unit(8, 1), { limit: 10 })).map((match) => match.entityId)).toContain("doc-big");
  });

  it("a throttled S3 Vectors call is RATE_LIMITED after the SDK's retries", async () => {
    standIn.fail("s3vectors", "throttling");
    await expect(store.search("acme", model, unit(8, 1), { limit: 3 })).rejects.toMatchObject({ status: "RATE_LIMITED", retryable: true });
    expect(standIn.operations("s3vectors")).toEqual(["QueryVectors", "QueryVectors", "QueryVectors"]);
  });
});
