/**
 * LinkedIn through the gateway, with the real client against our local stand-in of LinkedIn's
 * REST API (test/support/external/linkedin-stand-in.ts), on a real database: `search` returns
 * LinkedInPost hits (with highlights) for an organization that stored its token; each
 * organization's calls carry its own token and read its own page, never another's; credits are
 * charged per call, 0 for a failure, nothing for a cached answer or a dry run (which calls
 * nothing); an expired token and a throttle are reported with their reasons; bad input is a
 * coded error naming the field.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import type { RunningStack } from "../../app/stack.js";
import { LinkedInStandIn } from "../support/external/linkedin-stand-in.js";
import type { TestDatabase } from "../support/database.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { startTestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

const ACME_TOKEN = "AQV-acme-linkedin-access-token-0001";
const GLOBEX_TOKEN = "AQV-globex-linkedin-access-token-0002";
const CREDITS_PER_CALL = 2;

let db: TestDatabase;
let stack: RunningStack;
let linkedin: LinkedInStandIn;
let ada: string;
let gus: string;
let nia: string;

const gql = (token: string, query: string, variables: Record<string, unknown> = {}) => graphql(stack.gateway.url, query, variables, { token });
const CALLS = `calls { provider status reason credits estimatedCredits returned }`;
const SEARCH = `query($input: SearchInput!) {
  search(input: $input) {
    hits { item { __typename ... on LinkedInPost { id urn text url articleTitle publishedAt organizationId } } highlights { text matches { start end } } }
    providers { name status error }
  }
}`;
const POSTS = `query($organization: ID, $limit: Int, $dryRun: Boolean) { linkedInPosts(organization: $organization, limit: $limit, dryRun: $dryRun) { posts { id urn text url } ${CALLS} credits estimatedCredits dryRun } }`;
const LINKEDIN_SPENT = `{ credits { spentThisMonth usage { provider calls credits } } }`;
const STORE = `mutation($input: ExternalProviderCredentialsInput!) { setExternalProviderCredentials(input: $input) { provider configured hasOwnCredentials } }`;

type Report = { name: string; status: string; error: string | null };
const linkedInReport = (providers: Report[]) => providers.find((provider) => provider.name === "linkedin.posts")!;
const linkedInCredits = async (token: string): Promise<number> => {
  const usage: { provider: string; credits: number }[] = (await gql(token, LINKEDIN_SPENT)).data!.credits.usage;
  return usage.filter((row) => row.provider === "LINKEDIN").reduce((sum, row) => sum + row.credits, 0);
};

beforeAll(async () => {
  linkedin = await LinkedInStandIn.start();
  linkedin.tokens.set(ACME_TOKEN, new Set(["10001"]));
  linkedin.tokens.set(GLOBEX_TOKEN, new Set(["20002"]));
  ({ db, stack } = await startTestStack({
    SEARCH_CACHE_TTL_SECONDS: "0",
    GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0",
    SECRETS_ENCRYPTION_KEYS: `test-key:${randomBytes(32).toString("base64")}`,
    LINKEDIN_API_URL: linkedin.baseUrl,
    LINKEDIN_CREDITS: String(CREDITS_PER_CALL),
    LINKEDIN_CACHE_TTL_SECONDS: "600",
    SEARCH_PROVIDER_TIMEOUT_MS: "5000",
    EXTERNAL_ATTEMPT_TIMEOUT_MS: "3000",
    EXTERNAL_CALL_TIMEOUT_MS: "4500",
  }));
  ada = await tokenFor("org-acme", "ada", [], "admin");
  gus = await tokenFor("org-globex", "gus", [], "admin");
  nia = await tokenFor("org-none", "nia", [], "admin");
  for (const [token, input] of [
    [ada, { provider: "LINKEDIN", token: ACME_TOKEN, linkedInOrganization: "urn:li:organization:10001" }],
    [gus, { provider: "LINKEDIN", token: GLOBEX_TOKEN, linkedInOrganization: "20002" }],
  ] as const) {
    const stored = await gql(token, STORE, { input });
    expect(stored.errors).toBeUndefined();
    expect(stored.data!.setExternalProviderCredentials).toEqual({ provider: "LINKEDIN", configured: true, hasOwnCredentials: true });
  }
});

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
  await linkedin?.close();
});

beforeEach(() => {
  linkedin.fault = undefined;
  linkedin.expiredTokens.clear();
  linkedin.retryAfterSeconds = 30;
});

describe("LinkedIn through the gateway", () => {
  it("search returns the organization's matching LinkedIn posts, highlighted, from one call with its own token, charged once and then cached", async () => {
    linkedin.requests.length = 0;
    const before = await linkedInCredits(ada);
    const response = await gql(ada, SEARCH, { input: { query: "descale espresso machine", providers: ["linkedin.posts"], alpha: 1 } });
    expect(response.errors).toBeUndefined();
    const { hits, providers } = response.data!.search;
    expect(linkedInReport(providers)).toMatchObject({ status: "OK", error: null });
    expect(hits).toHaveLength(1);
    expect(hits[0].item).toMatchObject({
      __typename: "LinkedInPost",
      urn: "urn:li:share:7100000000000000001",
      url: "https://www.linkedin.com/feed/update/urn:li:share:7100000000000000001/",
      articleTitle: "Descaling, explained",
      organizationId: "10001",
    });
    expect(hits[0].item.text).toContain("descale your espresso machine");
    const marked = hits[0].highlights[0].matches.map(({ start, end }: { start: number; end: number }) => hits[0].highlights[0].text.slice(start, end).toLowerCase());
    expect(marked).toEqual(expect.arrayContaining(["descale", "espresso", "machine"]));
    expect(linkedin.tokensSeen()).toEqual([ACME_TOKEN]);
    expect(linkedin.requests[0]!.path).toContain("author=urn%3Ali%3Aorganization%3A10001");
    expect(await linkedInCredits(ada)).toBe(before + CREDITS_PER_CALL);

    // Another query reads the same cached page of posts: no call, nothing spent.
    const again = await gql(ada, SEARCH, { input: { query: "grinder pre-orders", providers: ["linkedin.posts"], alpha: 1 } });
    expect(again.data!.search.hits.map((hit: { item: { urn: string } }) => hit.item.urn)).toEqual(["urn:li:ugcPost:7100000000000000002"]);
    expect(linkedin.requests).toHaveLength(1);
    expect(await linkedInCredits(ada)).toBe(before + CREDITS_PER_CALL);
  });

  it("never uses one organization's token or page for another: each sees only its own posts", async () => {
    linkedin.requests.length = 0;
    const globex = await gql(gus, SEARCH, { input: { query: "descale espresso machine", providers: ["linkedin.posts"], alpha: 1 } });
    expect(globex.errors).toBeUndefined();
    expect(globex.data!.search.hits.map((hit: { item: { urn: string } }) => hit.item.urn)).toEqual(["urn:li:share:7200000000000000001"]);
    expect(linkedin.tokensSeen()).toEqual([GLOBEX_TOKEN]);
    expect(linkedin.requests[0]!.path).toContain("author=urn%3Ali%3Aorganization%3A20002");
    // Acme's answer (from its cache) holds nothing of Globex's page, and no call went out for it.
    const acme = await gql(ada, SEARCH, { input: { query: "descale espresso machine", providers: ["linkedin.posts"], alpha: 1 } });
    expect(acme.data!.search.hits.map((hit: { item: { urn: string } }) => hit.item.urn)).toEqual(["urn:li:share:7100000000000000001"]);
    expect(JSON.stringify(acme.data)).not.toContain("Globex");
    expect(linkedin.tokensSeen()).toEqual([GLOBEX_TOKEN]);
    // An organization without a token: SKIPPED, not configured, and no call.
    linkedin.requests.length = 0;
    const none = await gql(nia, SEARCH, { input: { query: "descale espresso machine", providers: ["linkedin.posts"], alpha: 1 } });
    expect(linkedInReport(none.data!.search.providers)).toMatchObject({ status: "SKIPPED", error: expect.stringContaining("not configured") });
    expect(linkedin.requests).toHaveLength(0);
  });

  it("a dry run calls nothing and spends nothing, and says what a call would cost", async () => {
    linkedin.requests.length = 0;
    const before = await linkedInCredits(ada);
    const response = await gql(ada, POSTS, { organization: "10001", limit: 7, dryRun: true });
    expect(response.errors).toBeUndefined();
    expect(response.data!.linkedInPosts).toMatchObject({ posts: [], credits: 0, estimatedCredits: CREDITS_PER_CALL, dryRun: true, calls: [{ provider: "LINKEDIN", status: "SKIPPED", reason: expect.stringContaining("dry run") }] });
    expect(linkedin.requests).toHaveLength(0);
    expect(await linkedInCredits(ada)).toBe(before);
  });

  it("looks organizations up by vanity name and by id, and reads a page's posts", async () => {
    const byName = await gql(ada, `{ linkedInOrganization(vanityName: "Acme-Espresso") { organization { id linkedInId name vanityName pageUrl website description } ${CALLS} credits } }`);
    expect(byName.errors).toBeUndefined();
    expect(byName.data!.linkedInOrganization.organization).toMatchObject({
      linkedInId: "10001",
      name: "Acme Espresso Machines",
      vanityName: "acme-espresso",
      pageUrl: "https://www.linkedin.com/company/acme-espresso/",
      website: "https://acme-espresso.example/",
      description: "We build espresso machines for offices and small cafés.",
    });
    expect(byName.data!.linkedInOrganization.credits).toBe(CREDITS_PER_CALL);
    const missing = await gql(ada, `{ linkedInOrganization(id: "424242") { organization { id } ${CALLS} } }`);
    expect(missing.data!.linkedInOrganization).toMatchObject({ organization: null, calls: [{ status: "OK", returned: 0 }] });
    const posts = await gql(ada, POSTS, { organization: "urn:li:organization:10001", limit: 1 });
    expect(posts.data!.linkedInPosts.posts.map((post: { urn: string }) => post.urn)).toEqual(["urn:li:share:7100000000000000001"]);
  });

  it("an expired token is an ERROR saying so, tried once and charged nothing; a throttle past the deadline likewise", async () => {
    linkedin.expiredTokens.add(ACME_TOKEN);
    linkedin.requests.length = 0;
    const before = await linkedInCredits(ada);
    const expired = await gql(ada, POSTS, { organization: "10001", limit: 3 });
    expect(expired.data!.linkedInPosts).toMatchObject({
      posts: [],
      credits: 0,
      calls: [{ status: "ERROR", credits: 0, reason: expect.stringContaining("expired or was revoked") }],
    });
    expect(linkedin.requests).toHaveLength(1);
    linkedin.expiredTokens.clear();

    linkedin.fault = "rate-limited";
    linkedin.requests.length = 0;
    const throttled = await gql(ada, POSTS, { organization: "10001", limit: 4 });
    expect(throttled.data!.linkedInPosts.calls[0]).toMatchObject({ status: "ERROR", credits: 0, reason: expect.stringContaining("Retry-After") });
    expect(linkedin.requests).toHaveLength(1);
    expect(await linkedInCredits(ada)).toBe(before);
    const stored = await db.database.prisma.externalCall.findMany({ where: { organizationId: "org-acme", provider: "LINKEDIN", status: "ERROR" } });
    expect(stored.length).toBeGreaterThanOrEqual(2);
    expect(stored.every((call) => Number(call.credits) === 0)).toBe(true);
  });

  it("refuses bad input with a coded error naming the field", async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      [`{ linkedInOrganization(id: "1", vanityName: "x") { dryRun } }`, {}, "vanityName"],
      [`{ linkedInOrganization { dryRun } }`, {}, "id"],
      [`{ linkedInOrganization(vanityName: "a/b") { dryRun } }`, {}, "vanityName"],
      [`{ linkedInOrganization(id: "urn:li:person:1") { dryRun } }`, {}, "id"],
      [POSTS, { organization: "1 OR 1=1" }, "organization"],
      [POSTS, { limit: 0 }, "limit"],
      [POSTS, { limit: 101 }, "limit"],
      [STORE, { input: { provider: "LINKEDIN", token: ACME_TOKEN } }, "input.linkedInOrganization"],
      [STORE, { input: { provider: "LINKEDIN", token: "short", linkedInOrganization: "10001" } }, "input.token"],
      [STORE, { input: { provider: "LINKEDIN", apiKey: "0123456789", token: ACME_TOKEN, linkedInOrganization: "10001" } }, "input.apiKey"],
    ];
    for (const [query, variables, field] of cases) {
      const response = await gql(ada, query, variables);
      expect({ query, codes: errorCodes(response) }).toEqual({ query, codes: ["BAD_USER_INPUT"] });
      expect(response.errors![0]!.extensions!.field).toBe(field);
    }
    // The token is never shown back, nor stored in the clear.
    expect(JSON.stringify(await gql(ada, `{ externalProviders { provider configured hasOwnCredentials } }`))).not.toContain(ACME_TOKEN);
    const rows = await db.database.prisma.externalProviderCredentials.findMany({ where: { provider: "LINKEDIN" } });
    expect(rows).toHaveLength(2);
    expect(rows.every((row) => !row.sealedSecret.includes(ACME_TOKEN) && !row.sealedSecret.includes(GLOBEX_TOKEN))).toBe(true);
  });
});
