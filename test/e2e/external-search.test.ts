/**
 * The external-search subgraph through the gateway, its real clients (fetch, the `openai`
 * package, @slack/web-api) against our local stand-ins of Serper, DataForSEO, Perplexity and
 * Slack: web and Slack hits fused with conversations in `search`; webSearch's merge and
 * duplicate collapsing; credits charged in the ledger, cached answers free, dry runs spending
 * nothing; a hanging provider TIMEOUT while the rest answer; an open breaker and a spent budget
 * SKIPPED with their reasons and the breaker tried again after its cool-down; keys and ledgers
 * never crossing organizations.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { RunningStack } from "../../app/stack.js";
import { CreditLedger } from "../../subgraphs/external-search/credit-ledger.js";
import { DataForSeoStandIn } from "../support/external/dataforseo-stand-in.js";
import { PerplexityStandIn } from "../support/external/perplexity-stand-in.js";
import { SerperStandIn } from "../support/external/serper-stand-in.js";
import { SlackStandIn } from "../support/external/slack-stand-in.js";
import type { TestDatabase } from "../support/database.js";
import { startTestStack } from "../support/stack.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { tokenFor } from "../support/tenants.js";

const SLACK_TOKEN = "xoxp-1234567890-acme-user-token";
const PERPLEXITY_KEY = "pplx-test-key-0123456789";
const BREAKER_COOLDOWN_MS = 400;

let db: TestDatabase;
let stack: RunningStack;
let serper: SerperStandIn;
let dataforseo: DataForSeoStandIn;
let perplexity: PerplexityStandIn;
let slack: SlackStandIn;
let ada: string;
let otto: string;

const gql = (token: string, query: string, variables: Record<string, unknown> = {}) => graphql(stack.gateway.url, query, variables, { token });
const CALLS = `calls { provider status reason credits estimatedCredits returned }`;
const WEB_SEARCH = `query($query: String!, $providers: [WebSearchProvider!], $dryRun: Boolean) {
  webSearch(query: $query, providers: $providers, dryRun: $dryRun) { results { id url title snippet position provider fetchedAt } ${CALLS} credits estimatedCredits dryRun }
}`;
const CREDITS = `{ credits { monthlyBudget spentThisMonth balance usage { day provider calls credits } } }`;
const SEARCH = `query($input: SearchInput!) {
  search(input: $input) {
    hits { item { __typename ... on Conversation { id title } ... on WebResult { url title provider } ... on SlackMessage { channelName author text permalink } } }
    providers { name status error }
  }
}`;

type Report = { name: string; status: string; error: string | null };
const report = (providers: Report[], name: string) => providers.find((provider) => provider.name === name)!;

beforeAll(async () => {
  [serper, dataforseo, perplexity, slack] = await Promise.all([SerperStandIn.start(), DataForSeoStandIn.start(), PerplexityStandIn.start(), SlackStandIn.start()]);
  perplexity.apiKeys.add(PERPLEXITY_KEY);
  slack.userTokens.add(SLACK_TOKEN);
  ({ db, stack } = await startTestStack({
    SEARCH_CACHE_TTL_SECONDS: "0", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0",
    SECRETS_ENCRYPTION_KEYS: `test-key:${randomBytes(32).toString("base64")}`,
    SERPER_API_KEY: serper.apiKey, SERPER_BASE_URL: serper.baseUrl,
    DATAFORSEO_LOGIN: "api@acme.example", DATAFORSEO_PASSWORD: "dfs-test-password-0123", DATAFORSEO_BASE_URL: dataforseo.baseUrl,
    PERPLEXITY_API_KEY: PERPLEXITY_KEY, PERPLEXITY_BASE_URL: perplexity.baseURL,
    SLACK_API_URL: slack.slackApiUrl,
    // The search gives each provider 3 s; a webSearch call gets 4.5 s (two attempts of 1.8 s), so
    // a hanging provider's first attempt times out and its second is cut by the search, as with
    // the defaults. At 1 s the first search of the file (cold code and database) timed out a
    // healthy provider on a machine at load 8.
    SEARCH_PROVIDER_TIMEOUT_MS: "3000", EXTERNAL_ATTEMPT_TIMEOUT_MS: "1800", EXTERNAL_CALL_TIMEOUT_MS: "4500",
    EXTERNAL_BREAKER_FAILURES: "2", EXTERNAL_BREAKER_COOLDOWN_MS: String(BREAKER_COOLDOWN_MS),
  }));
  ada = await tokenFor("org-web", "ada", ["support"], "admin");
  otto = await tokenFor("org-other", "otto", [], "admin");
  const stored = await gql(ada, `mutation($input: ExternalProviderCredentialsInput!) { setExternalProviderCredentials(input: $input) { provider configured hasOwnCredentials } }`, { input: { provider: "SLACK", token: SLACK_TOKEN } });
  expect(stored.errors).toBeUndefined();
  expect(stored.data!.setExternalProviderCredentials).toEqual({ provider: "SLACK", configured: true, hasOwnCredentials: true });
  const conversation = await gql(ada, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, {
    input: { title: "Descaling the office espresso machine", messages: [{ role: "USER", content: "How do I descale the espresso machine with citric acid?" }] },
  });
  expect(conversation.errors).toBeUndefined();
});

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
  await Promise.all([serper?.close(), dataforseo?.close(), perplexity?.close(), slack?.close()]);
});

describe("external search through the gateway", () => {
  it("fuses web and Slack hits with conversation hits in the unified search", async () => {
    const response = await gql(ada, SEARCH, { input: { query: "descale espresso machine", limit: 30, alpha: 1 } });
    expect(response.errors).toBeUndefined();
    const { hits, providers } = response.data!.search;
    for (const name of ["web.serper", "web.dataforseo", "slack.messages", "conversations.keyword"]) expect(report(providers, name)).toMatchObject({ status: "OK" });
    const types = new Set(hits.map((hit: { item: { __typename: string } | null }) => hit.item?.__typename));
    expect(types).toEqual(new Set(["Conversation", "WebResult", "SlackMessage"]));
    const web = hits.map((hit: { item: Record<string, any> }) => hit.item).filter((item: Record<string, any>) => item.__typename === "WebResult");
    expect(web.every((item: Record<string, any>) => /^https?:\/\//.test(item.url) && item.title.length > 0 && !/[<>]/.test(item.title))).toBe(true);
    expect(new Set(web.map((item: Record<string, any>) => item.provider))).toEqual(new Set(["SERPER", "DATAFORSEO"]));
    const message = hits.map((hit: { item: Record<string, any> }) => hit.item).find((item: Record<string, any>) => item.__typename === "SlackMessage");
    expect(message.permalink).toMatch(/^https:\/\//);
    // The Slack call carried the organization's own token, in the header.
    expect(slack.requests.at(-1)!.headers.authorization).toBe(`Bearer ${SLACK_TOKEN}`);
  });

  it("merges web providers with duplicate URLs collapsed, charges each call once, and answers again from the cache for free", async () => {
    const before = (await gql(ada, CREDITS)).data!.credits.spentThisMonth;
    const first = (await gql(ada, WEB_SEARCH, { query: "espresso descaling guide" })).data!.webSearch;
    expect(first.calls.map((call: Record<string, unknown>) => [call.provider, call.status, call.credits])).toEqual([["SERPER", "OK", 3], ["DATAFORSEO", "OK", 3]]);
    expect(first.credits).toBe(6);
    const keys = first.results.map((result: { url: string }) => result.url.replace(/^https?:\/\/(www\.)?/, "").replace(/\/$/, "").split("?")[0]);
    expect(new Set(keys).size).toBe(keys.length);

    const requestsBefore = serper.requests.length + dataforseo.requests.length;
    const again = (await gql(ada, WEB_SEARCH, { query: "espresso descaling guide" })).data!.webSearch;
    expect(again.calls.map((call: Record<string, unknown>) => [call.status, call.credits])).toEqual([["CACHED", 0], ["CACHED", 0]]);
    expect(again.results.map((result: { id: string }) => result.id)).toEqual(first.results.map((result: { id: string }) => result.id));
    expect(serper.requests.length + dataforseo.requests.length).toBe(requestsBefore);

    const credits = (await gql(ada, CREDITS)).data!.credits;
    expect(credits.spentThisMonth).toBe(before + 6);
    expect(credits.monthlyBudget).toBeNull();
    const today = new Date().toISOString().slice(0, 10);
    expect(credits.usage).toEqual(expect.arrayContaining([expect.objectContaining({ day: today, provider: "SERPER" }), expect.objectContaining({ day: today, provider: "DATAFORSEO" })]));
    // The ledger and the call records agree, row for row.
    const calls = await db.database.prisma.externalCall.findMany({ where: { organizationId: "org-web" }, include: { ledger: true } });
    expect(calls.every((call) => call.ledger !== null && Number(call.ledger.credits) === Number(call.credits) && call.status !== "PENDING")).toBe(true);
  });

  it("a dry run estimates and spends nothing, calling no provider", async () => {
    const requestsBefore = serper.requests.length + dataforseo.requests.length + perplexity.requests.length;
    const spent = (await gql(ada, CREDITS)).data!.credits.spentThisMonth;
    const web = (await gql(ada, WEB_SEARCH, { query: "a query nobody asked before", dryRun: true })).data!.webSearch;
    expect(web).toMatchObject({ dryRun: true, credits: 0, estimatedCredits: 6, results: [] });
    expect(web.calls.every((call: Record<string, any>) => call.status === "SKIPPED" && call.reason.startsWith("dry run"))).toBe(true);
    const research = (await gql(ada, `{ research(query: "why descale espresso machines", dryRun: true) { answer estimatedCredits credits ${CALLS} } }`)).data!.research;
    expect(research).toMatchObject({ answer: null, credits: 0, estimatedCredits: 6 });
    expect(serper.requests.length + dataforseo.requests.length + perplexity.requests.length).toBe(requestsBefore);
    expect((await gql(ada, CREDITS)).data!.credits.spentThisMonth).toBe(spent);
  });

  it("researches with citations, priced by tokens, and discovers deduplicated questions", async () => {
    const research = (await gql(ada, `{ research(query: "how often should an espresso machine be descaled") { answer model citations { url title provider } credits ${CALLS} } }`)).data!.research;
    expect(research.answer.length).toBeGreaterThan(20);
    expect(research.citations.length).toBeGreaterThan(0);
    expect(research.citations.every((citation: Record<string, string>) => String(citation.url).startsWith("http") && citation.provider === "PERPLEXITY")).toBe(true);
    expect(research.credits).toBeGreaterThan(5);
    expect(perplexity.requests.at(-1)!.headers.authorization).toBe(`Bearer ${PERPLEXITY_KEY}`);

    const discovered = (await gql(ada, `{ discoverQuestions(query: "descale espresso machine") { questions { question snippet url } relatedSearches ${CALLS} } }`)).data!.discoverQuestions;
    expect(discovered.questions.length).toBeGreaterThan(0);
    const keys = discovered.questions.map((question: { question: string }) => question.question.toLowerCase().replace(/[^a-z0-9]+/g, " ").trim());
    expect(new Set(keys).size).toBe(keys.length);
    expect(discovered.relatedSearches.length).toBeGreaterThan(0);
  });

  it("a hanging provider is a TIMEOUT while the others answer", async () => {
    serper.fault = "hang";
    try {
      const response = await gql(ada, SEARCH, { input: { query: "espresso grinder burrs", alpha: 1 } });
      expect(response.errors).toBeUndefined();
      expect(report(response.data!.search.providers, "web.serper")).toMatchObject({ status: "TIMEOUT", error: expect.stringContaining("no answer within") });
      expect(report(response.data!.search.providers, "web.dataforseo").status).toBe("OK");
      const web = (await gql(ada, WEB_SEARCH, { query: "espresso grinder burrs 2" })).data!.webSearch;
      expect(web.calls.map((call: Record<string, unknown>) => [call.provider, call.status, call.credits])).toEqual([["SERPER", "TIMEOUT", 0], ["DATAFORSEO", "OK", 3]]);
    } finally {
      serper.fault = null;
    }
  });

  it("opens the breaker after repeated failures (SKIPPED with the reason), and tries again after the cool-down", async () => {
    dataforseo.fault = "server-error";
    try {
      for (const query of ["breaker one", "breaker two"]) {
        const web = (await gql(ada, WEB_SEARCH, { query, providers: ["DATAFORSEO"] })).data!.webSearch;
        expect(web.calls[0]).toMatchObject({ status: "ERROR", credits: 0 });
      }
      const requests = dataforseo.requests.length;
      const skipped = (await gql(ada, WEB_SEARCH, { query: "breaker three", providers: ["DATAFORSEO"] })).data!.webSearch;
      expect(skipped.calls[0]).toMatchObject({ status: "SKIPPED", reason: expect.stringContaining("circuit breaker is open") });
      expect(dataforseo.requests.length).toBe(requests);
      // Another organization's breaker is its own.
      const others = (await gql(otto, WEB_SEARCH, { query: "breaker three", providers: ["DATAFORSEO"] })).data!.webSearch;
      expect(others.calls[0].status).toBe("ERROR");
    } finally {
      dataforseo.fault = null;
    }
    await new Promise((resolve) => setTimeout(resolve, BREAKER_COOLDOWN_MS + 100));
    const recovered = (await gql(ada, WEB_SEARCH, { query: "breaker four", providers: ["DATAFORSEO"] })).data!.webSearch;
    expect(recovered.calls[0]).toMatchObject({ status: "OK", credits: 3 });
  });

  it("a spent budget skips paid providers with the reason, and free calls still run", async () => {
    const ledger = new CreditLedger(db.database.prisma, null);
    const { spentThisMonth } = (await gql(ada, CREDITS)).data!.credits;
    await ledger.setBudget("org-web", spentThisMonth + 1);
    try {
      const web = (await gql(ada, WEB_SEARCH, { query: "budget check" })).data!.webSearch;
      expect(web.calls.map((call: Record<string, any>) => [call.status, call.reason])).toEqual([
        ["SKIPPED", expect.stringContaining("credit budget spent")],
        ["SKIPPED", expect.stringContaining("credit budget spent")],
      ]);
      const search = await gql(ada, SEARCH, { input: { query: "budget check in search", alpha: 1 } });
      expect(report(search.data!.search.providers, "web.serper")).toMatchObject({ status: "SKIPPED", error: expect.stringContaining("credit budget spent") });
      expect(report(search.data!.search.providers, "slack.messages").status).toBe("OK");
      expect((await gql(ada, CREDITS)).data!.credits).toMatchObject({ monthlyBudget: spentThisMonth + 1, balance: 1 });
    } finally {
      await ledger.setBudget("org-web", null);
    }
  });

  it("keeps keys and ledgers to their organization", async () => {
    const slackResult = (await gql(otto, `{ slackSearch(query: "espresso") { messages { id } ${CALLS} } }`)).data!.slackSearch;
    expect(slackResult.calls[0]).toMatchObject({ status: "SKIPPED", reason: expect.stringContaining("not configured") });
    expect(slackResult.messages).toEqual([]);
    const providers = (await gql(otto, `{ externalProviders { provider configured hasOwnCredentials } }`)).data!.externalProviders;
    expect(providers.find((provider: { provider: string }) => provider.provider === "SLACK")).toEqual({ provider: "SLACK", configured: false, hasOwnCredentials: false });
    const ottoCredits = (await gql(otto, CREDITS)).data!.credits;
    const adaCredits = (await gql(ada, CREDITS)).data!.credits;
    expect(ottoCredits.spentThisMonth).toBeLessThan(adaCredits.spentThisMonth);
    expect(JSON.stringify(await gql(ada, `{ externalProviders { provider hasOwnCredentials } }`))).not.toContain(SLACK_TOKEN);
    const stored = await db.database.prisma.externalProviderCredentials.findMany();
    expect(stored.every((row) => !row.sealedSecret.includes(SLACK_TOKEN))).toBe(true);
  });

  it("refuses bad input with a coded error naming the field", async () => {
    for (const query of ["", "   ", "x".repeat(401)]) {
      const response = await gql(ada, WEB_SEARCH, { query });
      expect(errorCodes(response)).toEqual(["BAD_USER_INPUT"]);
      expect(response.errors![0]!.extensions!.field).toBe("query");
    }
    const badKey = await gql(ada, `mutation { setExternalProviderCredentials(input: { provider: SLACK, token: "not-a-token" }) { provider } }`);
    expect(errorCodes(badKey)).toEqual(["BAD_USER_INPUT"]);
  });
});
