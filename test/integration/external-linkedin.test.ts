/**
 * The LinkedIn client of the external-search subgraph (fetch through boundedFetch) against our
 * local stand-in of LinkedIn's REST API (test/support/external/linkedin-stand-in.ts): the
 * headers and finders it sends, what it makes of organizations and posts, each failure as its
 * kind (an expired token UNAUTHORIZED and never retried, a throttle RATE_LIMITED with its
 * Retry-After), hostile fields cleaned. No database: the client keeps nothing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { ExternalApiError } from "../../lib/external-apis/errors.js";
import { ProviderPolicies } from "../../lib/external-apis/policies.js";
import { loadConfig } from "../../lib/config.js";
import { validateCredentials } from "../../subgraphs/external-search/provider-credentials.js";
import { rankPostsByWords } from "../../subgraphs/external-search/search.js";
import { LinkedInClient, littleTextToText } from "../../subgraphs/external-search/providers/linkedin.js";
import { LinkedInStandIn } from "../support/external/linkedin-stand-in.js";

const ADMIN_TOKEN = "AQV-acme-admin-token-0123456789";
const MEMBER_TOKEN = "AQV-plain-member-token-0123456789";
const ACME = { token: ADMIN_TOKEN, linkedInOrganization: "10001" };
const MAX_RESPONSE_BYTES = 256 * 1024;

async function failureOf(call: Promise<unknown>): Promise<ExternalApiError> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!("error" in outcome)) throw new Error(`expected the call to fail, it returned ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(ExternalApiError);
  return outcome.error as ExternalApiError;
}

const options = (limit = 10, deadlineMs = 5_000) => ({ signal: AbortSignal.timeout(deadlineMs), limit });

describe("LinkedIn client against the LinkedIn stand-in", () => {
  let standIn: LinkedInStandIn;
  let client: LinkedInClient;

  beforeAll(async () => {
    standIn = await LinkedInStandIn.start();
    standIn.tokens.set(ADMIN_TOKEN, new Set(["10001"]));
    standIn.tokens.set(MEMBER_TOKEN, new Set());
    standIn.oversizedBytes = 1024 * 1024;
    client = new LinkedInClient({ baseUrl: standIn.baseUrl, version: "202611", maxResponseBytes: MAX_RESPONSE_BYTES });
  });
  afterEach(() => {
    standIn.fault = undefined;
    standIn.retryAfterSeconds = 30;
    standIn.expiredTokens.clear();
    standIn.requests.length = 0;
  });
  afterAll(() => standIn.close());

  it("reads an organization's published feed posts with LinkedIn's headers and the author finder", async () => {
    const posts = await client.organizationPosts("10001", ACME, options(20));
    expect(standIn.requests).toHaveLength(1);
    const [request] = standIn.requests;
    expect(request!.headers.authorization).toBe(`Bearer ${ADMIN_TOKEN}`);
    expect(request!.headers["linkedin-version"]).toBe("202611");
    expect(request!.headers["x-restli-protocol-version"]).toBe("2.0.0");
    expect(request!.path).toBe("/rest/posts?author=urn%3Ali%3Aorganization%3A10001&q=author&count=20&sortBy=LAST_MODIFIED");
    // The draft and the ad's dark post (feedDistribution NONE) are not page posts.
    expect(posts.map((post) => post.urn)).toEqual(["urn:li:share:7100000000000000001", "urn:li:ugcPost:7100000000000000002"]);
    expect(posts[0]).toEqual({
      urn: "urn:li:share:7100000000000000001",
      organizationId: "10001",
      text: "How to descale your espresso machine with citric acid: a step-by-step guide from our service team. #coffee with @Acme Espresso Machines",
      articleTitle: "Descaling, explained",
      url: "https://www.linkedin.com/feed/update/urn:li:share:7100000000000000001/",
      publishedAt: new Date(1764500100000),
    });
    expect(posts[1]!.text).toBe("Our new grinder ships in January (pre-orders open today).");
  });

  it("asks for at most 100 posts, LinkedIn's page size", async () => {
    await client.organizationPosts("10001", ACME, options(500));
    expect(standIn.requests[0]!.path).toContain("&count=100&");
  });

  it("looks organizations up by id and by vanity name (case-insensitive), the description only for the page's administrator", async () => {
    const byId = await client.organizationById("10001", ACME, options());
    expect(byId).toEqual({ linkedInId: "10001", name: "Acme Espresso Machines", vanityName: "acme-espresso", website: "https://acme-espresso.example/", description: "We build espresso machines for offices and small cafés." });
    expect(standIn.requests[0]!.path).toBe("/rest/organizations/10001");
    const byName = await client.organizationByVanityName("ACME-Espresso", ACME, options());
    expect(byName).toEqual(byId);
    expect(standIn.requests[1]!.path).toBe("/rest/organizations?q=vanityName&vanityName=ACME-Espresso");
    const asMember = await client.organizationById("10001", { token: MEMBER_TOKEN, linkedInOrganization: "10001" }, options());
    expect(asMember).toMatchObject({ name: "Acme Espresso Machines", description: null });
    expect(await client.organizationById("999", ACME, options())).toBeNull();
    expect(await client.organizationByVanityName("nobody-here", ACME, options())).toBeNull();
  });

  it("an expired or unknown token is UNAUTHORIZED, says it expired or was revoked, and is not retryable", async () => {
    standIn.expiredTokens.add(ADMIN_TOKEN);
    const expired = await failureOf(client.organizationPosts("10001", ACME, options()));
    expect(expired).toMatchObject({ kind: "UNAUTHORIZED", httpStatus: 401, retryable: false });
    expect(expired.message).toMatch(/^linkedin: refused the organization's token \(HTTP 401\): it expired or was revoked/);
    expect(expired.message).not.toContain(ADMIN_TOKEN);
    const unknown = await failureOf(client.organizationById("10001", { token: "AQV-never-issued-0000000000", linkedInOrganization: "10001" }, options()));
    expect(unknown).toMatchObject({ kind: "UNAUTHORIZED", httpStatus: 401 });
  });

  it("the posts of a page the token's member does not administer are UNAUTHORIZED (403), naming the permission", async () => {
    const error = await failureOf(client.organizationPosts("20002", ACME, options()));
    expect(error).toMatchObject({ kind: "UNAUTHORIZED", httpStatus: 403 });
    expect(error.message).toContain("r_organization_social");
  });

  it("a throttle is RATE_LIMITED with LinkedIn's Retry-After", async () => {
    standIn.fault = "rate-limited";
    expect(await failureOf(client.organizationPosts("10001", ACME, options()))).toMatchObject({ kind: "RATE_LIMITED", httpStatus: 429, retryAfterMs: 30_000, retryable: true });
    standIn.retryAfterSeconds = null;
    expect((await failureOf(client.organizationPosts("10001", ACME, options()))).retryAfterMs).toBeUndefined();
  });

  it("a body that is not JSON is BAD_RESPONSE, an oversized one TOO_LARGE, a 500 UPSTREAM_ERROR, silence TIMEOUT", async () => {
    standIn.fault = "malformed-json";
    expect((await failureOf(client.organizationPosts("10001", ACME, options()))).kind).toBe("BAD_RESPONSE");
    expect((await failureOf(client.organizationById("10001", ACME, options()))).kind).toBe("BAD_RESPONSE");
    standIn.fault = "oversized";
    expect((await failureOf(client.organizationPosts("10001", ACME, options()))).kind).toBe("TOO_LARGE");
    standIn.fault = "internal";
    expect((await failureOf(client.organizationPosts("10001", ACME, options()))).kind).toBe("UPSTREAM_ERROR");
    standIn.fault = "hang";
    expect((await failureOf(client.organizationPosts("10001", ACME, options(10, 300)))).kind).toBe("TIMEOUT");
  });

  it("cleans hostile posts and drops those it cannot link or date", async () => {
    standIn.fault = "hostile";
    const posts = await client.organizationPosts("10001", ACME, options());
    expect(posts).toHaveLength(1);
    expect(posts[0]!.text).toBe("Descale now\uFFFD today");
    expect(posts[0]!.articleTitle).toBe("Guide");
  });

  it("refuses ids that are not numbers before sending anything", async () => {
    expect((await failureOf(client.organizationPosts("1 OR 1=1", ACME, options()))).kind).toBe("BAD_REQUEST");
    expect((await failureOf(client.organizationById("../admin", ACME, options()))).kind).toBe("BAD_REQUEST");
    expect(standIn.requests).toHaveLength(0);
  });

  it("under the resilience policies, an expired token is tried once and a throttle again after its Retry-After", async () => {
    const policies = new ProviderPolicies({ defaults: { attemptTimeoutMs: 5_000, deadlineMs: 15_000, maxRetries: 1 } });
    standIn.expiredTokens.add(ADMIN_TOKEN);
    const expired = await policies.settle("linkedin", "org-a", (signal) => client.organizationPosts("10001", ACME, { signal, limit: 10 }));
    expect(expired).toMatchObject({ status: "ERROR", kind: "UNAUTHORIZED", attempts: 1 });
    expect(standIn.requests).toHaveLength(1);
    standIn.expiredTokens.clear();
    standIn.requests.length = 0;

    standIn.fault = "rate-limited";
    standIn.retryAfterSeconds = 1;
    const throttled = await policies.settle("linkedin", "org-b", (signal) => client.organizationPosts("10001", ACME, { signal, limit: 10 }));
    expect(throttled).toMatchObject({ status: "ERROR", kind: "RATE_LIMITED", attempts: 2 });
    expect(standIn.requests).toHaveLength(2);
    standIn.requests.length = 0;

    // A Retry-After past the call's deadline is not waited for: one request, and the reason says so.
    standIn.retryAfterSeconds = 60;
    const tooLong = await policies.settle("linkedin", "org-c", (signal) => client.organizationPosts("10001", ACME, { signal, limit: 10 }));
    expect(tooLong).toMatchObject({ status: "ERROR", kind: "RATE_LIMITED", attempts: 1 });
    expect(tooLong.status === "ERROR" && tooLong.message).toContain("Retry-After");
    expect(standIn.requests).toHaveLength(1);
  });
});

describe("LinkedIn's little text format", () => {
  it("resolves mentions, hashtags and escapes, and leaves other text alone", () => {
    expect(littleTextToText("Hi @[Jane \\(PM\\)](urn:li:person:abc123) {hashtag|\\#|Coffee} 2 \\* 3 \\\\ done")).toBe("Hi @Jane (PM) #Coffee 2 * 3 \\ done");
    expect(littleTextToText("plain [text](not a urn)")).toBe("plain [text](not a urn)");
    expect(littleTextToText(42)).toBe("");
  });
});

describe("LinkedIn settings, credentials and matching", () => {
  it("reads LINKEDIN_VERSION as YYYYMM and names the variable when it is not", () => {
    expect(loadConfig({}).externalSearch.linkedin).toMatchObject({ baseUrl: "https://api.linkedin.com/rest", version: "202611", credits: 1, cacheTtlSeconds: 900 });
    expect(loadConfig({ LINKEDIN_VERSION: "202701" }).externalSearch.linkedin.version).toBe("202701");
    expect(() => loadConfig({ LINKEDIN_VERSION: "2026-11" })).toThrow(/LINKEDIN_VERSION/);
    expect(() => loadConfig({ LINKEDIN_VERSION: "202613" })).toThrow(/LINKEDIN_VERSION/);
  });

  it("stores a token with the page's numeric id, from digits or a URN, and nothing else", () => {
    expect(validateCredentials({ provider: "LINKEDIN", token: ADMIN_TOKEN, linkedInOrganization: "urn:li:organization:10001" })).toEqual({ token: ADMIN_TOKEN, linkedInOrganization: "10001" });
    expect(() => validateCredentials({ provider: "LINKEDIN", token: ADMIN_TOKEN, linkedInOrganization: "urn:li:person:10001" })).toThrow(/linkedInOrganization|LinkedIn organization id/);
    expect(() => validateCredentials({ provider: "LINKEDIN", token: "has a space in it 0123456789", linkedInOrganization: "1" })).toThrow(/printable/);
    expect(() => validateCredentials({ provider: "SLACK", token: "xoxp-0123456789abcdef", linkedInOrganization: "1" })).toThrow(/does not take linkedInOrganization/);
  });

  it("ranks posts by how many of the query's words (stemmed) they hold, then the newer first; posts without any are no hits", () => {
    const post = (id: string, text: string, day: number) => ({ id, urn: `urn:li:share:${day}`, organizationId: "1", text, articleTitle: null, url: "https://www.linkedin.com/", publishedAt: new Date(Date.UTC(2026, 10, day)) });
    const posts = [post("a", "Espresso news", 1), post("b", "Descaling the espresso machines", 2), post("c", "The grinder", 3), post("d", "espresso espresso", 4)];
    expect(rankPostsByWords(posts, "descale espresso machine").map(({ post }) => post.id)).toEqual(["b", "d", "a"]);
    expect(rankPostsByWords(posts, "the of and")).toEqual([]);
  });
});
