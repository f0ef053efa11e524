/**
 * Runs unified searches over every provider (external services as local stand-ins) in a
 * process of its own and prints, as one JSON line, the warnings Node emitted meanwhile. A child
 * process because Jest's sandbox gives tests a copy of `process` that never sees Node's own
 * warnings (MaxListenersExceededWarning is emitted on the real one).
 * Usage: tsx test/support/all-providers-search.ts
 */
import { randomBytes } from "node:crypto";
import { startStack } from "../../app/stack.js";
import { loadConfig } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { DataForSeoStandIn } from "./external/dataforseo-stand-in.js";
import { LinkedInStandIn } from "./external/linkedin-stand-in.js";
import { PerplexityStandIn } from "./external/perplexity-stand-in.js";
import { SerperStandIn } from "./external/serper-stand-in.js";
import { SlackStandIn } from "./external/slack-stand-in.js";
import { createTestDatabase } from "./database.js";
import { graphql } from "./graphql.js";
import { TEST_AUTH, tokenFor } from "./tenants.js";

const warnings: { name: string; message: string; stack?: string }[] = [];
process.on("warning", (warning) => void warnings.push({ name: warning.name, message: warning.message, stack: warning.stack }));

const SLACK_TOKEN = "xoxp-1234567890-abort-user-token";
const PERPLEXITY_KEY = "pplx-abort-key-0123456789";
const LINKEDIN_TOKEN = "AQV-abort-linkedin-token-0123456789";
const SEARCH = `query AllProviders($input: SearchInput!) { search(input: $input) { hits { score } providers { name status error } } }`;

const [serper, dataforseo, perplexity, slack, linkedin] = await Promise.all([SerperStandIn.start(), DataForSeoStandIn.start(), PerplexityStandIn.start(), SlackStandIn.start(), LinkedInStandIn.start()]);
linkedin.tokens.set(LINKEDIN_TOKEN, new Set(["10001"]));
perplexity.apiKeys.add(PERPLEXITY_KEY);
slack.userTokens.add(SLACK_TOKEN);
const db = await createTestDatabase();
const config = loadConfig({
  GATEWAY_PORT: "0", CONVERSATIONS_PORT: "0", SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0",
  EMBEDDER: "hashing", SEARCH_CACHE_TTL_SECONDS: "0", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0",
  SECRETS_ENCRYPTION_KEYS: `test-key:${randomBytes(32).toString("base64")}`,
  SERPER_API_KEY: serper.apiKey, SERPER_BASE_URL: serper.baseUrl,
  DATAFORSEO_LOGIN: dataforseo.login, DATAFORSEO_PASSWORD: dataforseo.password, DATAFORSEO_BASE_URL: dataforseo.baseUrl,
  PERPLEXITY_API_KEY: PERPLEXITY_KEY, PERPLEXITY_BASE_URL: perplexity.baseURL,
  SLACK_API_URL: slack.slackApiUrl, LINKEDIN_API_URL: linkedin.baseUrl,
  // Generous: twelve searches at once on a busy machine must not time out a provider or the
  // gateway's call to the search subgraph (PGlite serializes their statements), so that
  // every provider really runs (and adds whatever listeners it adds).
  SEARCH_PROVIDER_TIMEOUT_MS: "60000", EXTERNAL_ATTEMPT_TIMEOUT_MS: "60000", EXTERNAL_CALL_TIMEOUT_MS: "120000", UPSTREAM_TIMEOUT_MS: "120000",
});
const stack = await startStack({ config: { ...config, auth: { ...TEST_AUTH, usingDevSecret: false } }, database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false } });
const reports: unknown[] = [];
try {
  const token = await tokenFor("org-abort", "ada", ["support"], "admin");
  await graphql(stack.gateway.url, `mutation($input: ExternalProviderCredentialsInput!) { setExternalProviderCredentials(input: $input) { configured } }`, { input: { provider: "SLACK", token: SLACK_TOKEN } }, { token });
  await graphql(stack.gateway.url, `mutation($input: ExternalProviderCredentialsInput!) { setExternalProviderCredentials(input: $input) { configured } }`, { input: { provider: "LINKEDIN", token: LINKEDIN_TOKEN, linkedInOrganization: "10001" } }, { token });
  await graphql(stack.gateway.url, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, {
    input: { title: "Descaling the espresso machine", messages: [{ role: "USER", content: "How do I descale the espresso machine with citric acid?" }] },
  }, { token });
  // SEARCHES rounds of CONCURRENT searches at once: a listener per search on a signal shared
  // across requests shows only under concurrency.
  const concurrent = Number(process.env.CONCURRENT ?? 1);
  for (let round = 0; round < Number(process.env.SEARCHES ?? 4); round++) {
    const responses = await Promise.all(
      Array.from({ length: concurrent }, (_, i) => graphql(stack.gateway.url, SEARCH, { input: { query: `descale espresso machine ${round} ${i}`, limit: 10, alpha: 0.5 } }, { token })),
    );
    for (const response of responses) reports.push(response.errors ?? response.data!.search.providers);
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
} finally {
  await stack.stop();
  await db.dispose();
  await Promise.all([serper.close(), dataforseo.close(), perplexity.close(), slack.close(), linkedin.close()]);
}
process.stdout.write(`${JSON.stringify({ warnings: warnings.filter((w) => w.name !== "ExperimentalWarning"), reports })}\n`);
process.exit(0);
