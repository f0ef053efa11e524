/**
 * No statement the product sends joins across organizations (issue 22, item 5; the keys and
 * foreign keys are checked in test/integration/sharding-readiness.test.ts). A workload of every
 * part of the product runs through the real gateway and subgraphs (external vendors as local
 * stand-ins), every statement every `pg` client of this process sends is captured
 * (bench/sql-capture.ts wraps pg.Client's query: Prisma's adapter, the tenant-read pool, raw
 * sessions), and each one, with its bound values, is parsed by PostgreSQL's own parser
 * (libpg-query) and held to the rule in test/support/cross-organization-joins.ts: tenant
 * tables it reads are tied to one organization by organization_id equalities. So are the bodies
 * of the schema's SQL functions (the keyword search functions join inside them).
 *
 * PostgreSQL only (the capture is at the `pg` client; PGlite has none): it runs in CI's
 * PostgreSQL pass.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { randomBytes } from "node:crypto";
import { recordStatements, type StatementRecorder } from "../../bench/sql-capture.js";
import { REFERENCE_TABLES } from "../support/sharding.js";
import { crossOrganizationJoins, loadSqlParser, tenantTablesOf, type StatementToCheck } from "../support/cross-organization-joins.js";
import { usingPostgres } from "../support/database.js";
import { uploadReadyDocument } from "../support/documents.js";
import { DataForSeoStandIn } from "../support/external/dataforseo-stand-in.js";
import { LinkedInStandIn } from "../support/external/linkedin-stand-in.js";
import { PerplexityStandIn } from "../support/external/perplexity-stand-in.js";
import { SerperStandIn } from "../support/external/serper-stand-in.js";
import { SlackStandIn } from "../support/external/slack-stand-in.js";
import { graphql } from "../support/graphql.js";
import { startTestStack, type TestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

const SLACK_TOKEN = "xoxp-1234567890-sharding-token";
const PERPLEXITY_KEY = "pplx-sharding-key-0123456789";
/** Each organization's own LinkedIn token and page (the stand-in's pages 10001 and 20002). */
const LINKEDIN: Record<string, { token: string; page: string }> = {
  "org-espresso": { token: "AQV-sharding-linkedin-token-espresso", page: "10001" },
  "org-teapot": { token: "AQV-sharding-linkedin-token-teapot-0", page: "20002" },
};

let stack: TestStack;
let recorder: StatementRecorder;
let vendors: { close(): Promise<void> }[] = [];
let captured: StatementToCheck[] = [];
let tenantTables: Set<string>;

const gql = async (token: string, query: string, variables: Record<string, unknown> = {}) => {
  const response = await graphql(stack.stack.gateway.url, query, variables, { token });
  expect(response.errors).toBeUndefined();
  return response.data as Record<string, any>;
};

const SEARCH = `query($input: SearchInput!) { search(input: $input) {
  hits { score highlights(limit: 2) { text } item { __typename ... on Conversation { id title } ... on DocumentChunk { id document { fileName } } ... on WebResult { id url } ... on SlackMessage { id } ... on LinkedInPost { id } ... on KnowledgeBasePassage { id } } }
  facets { kinds { kind count } providers { provider count } months { month count } categories { value count } knowledgeBases { value count } }
  providers { name status error }
  pageInfo { hasNextPage endCursor }
} }`;

/** One organization's day: writes, indexing, searches over every provider, and every listing. */
async function workload(organization: string): Promise<void> {
  const admin = await tokenFor(organization, "ada", ["support"], "admin");
  const member = await tokenFor(organization, "bo", ["support"]);
  await gql(admin, `mutation($input: ExternalProviderCredentialsInput!) { setExternalProviderCredentials(input: $input) { configured } }`, { input: { provider: "SLACK", token: SLACK_TOKEN } });
  const linkedIn = LINKEDIN[organization]!;
  await gql(admin, `mutation($input: ExternalProviderCredentialsInput!) { setExternalProviderCredentials(input: $input) { configured } }`, { input: { provider: "LINKEDIN", token: linkedIn.token, linkedInOrganization: linkedIn.page } });
  const conversation = (await gql(member, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, {
    input: { title: "Descaling the espresso machine", messages: [{ role: "USER", content: "How do I descale the espresso machine with citric acid?" }, { role: "ASSISTANT", content: "Dissolve citric acid in water and run it through the espresso machine." }] },
  })).createConversation.id as string;
  await gql(member, `mutation($id: ID!, $title: String!) { renameConversation(id: $id, title: $title) { id } }`, { id: conversation, title: "Descaling the espresso machine with citric acid" });
  const knowledgeBase = (await gql(admin, `mutation($input: CreateKnowledgeBaseInput!) { createKnowledgeBase(input: $input) { id } }`, { input: { name: "Kitchen runbooks", scope: "COMPANY", backend: "LOCAL" } })).createKnowledgeBase.id as string;
  await gql(admin, `mutation($id: ID!) { mapCapability(capability: "kitchen", knowledgeBaseId: $id) { priority } }`, { id: knowledgeBase });
  const document = await uploadReadyDocument(stack.stack.gateway.url, member, "espresso.md", "# Espresso machine care\n\nDescale the espresso machine monthly with citric acid.\n", { category: "kitchen", knowledgeBaseId: knowledgeBase });
  // The conversation is indexed in the background too: wait until both it and the document are found.
  for (let attempt = 0; attempt < 120; attempt++) {
    const found = (await gql(member, SEARCH, { input: { query: "descale espresso machine", providers: ["conversations.keyword", "documents.keyword"], limit: 10, alpha: 0.5 } })).search.hits.length;
    if (found >= 2) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  // Every provider, with highlights, facets and entity loads of every kind; a second page.
  const first = (await gql(member, SEARCH, { input: { query: "descale espresso machine citric acid", limit: 3, alpha: 0.5 } })).search;
  expect(first.providers.filter((p: { status: string }) => p.status !== "OK")).toEqual([]);
  if (first.pageInfo.hasNextPage) await gql(member, SEARCH, { input: { query: "descale espresso machine citric acid", limit: 3, alpha: 0.5, after: first.pageInfo.endCursor } });
  await gql(member, SEARCH, { input: { query: "espresso", limit: 5, alpha: 0.5, filter: { categories: ["kitchen"], knowledgeBases: [knowledgeBase] } } });
  await gql(member, `query { searchSuggestions(prefix: "desc") { text } }`);
  // Saved searches.
  const saved = (await gql(member, `mutation($input: SaveSearchInput!) { saveSearch(input: $input) { id } }`, { input: { name: "Espresso", query: "espresso machine" } })).saveSearch.id as string;
  await gql(member, `query($id: ID!) { savedSearch(id: $id) { name } savedSearches(first: 5) { nodes { id name } } }`, { id: saved });
  await gql(member, `mutation($id: ID!) { runSavedSearch(id: $id, limit: 5) { newHits { score } } }`, { id: saved });
  await gql(member, `mutation($id: ID!) { runSavedSearch(id: $id, limit: 5) { newHits { score } } }`, { id: saved });
  // Listings and entity reads of every subgraph.
  await gql(member, `query($id: ID!) { conversation(id: $id) { title messages(first: 5) { nodes { content } } } conversations(first: 5) { nodes { id } } }`, { id: conversation });
  await gql(member, `query($id: ID!) { document(id: $id) { fileName chunks(first: 3) { nodes { text } } } documents(first: 5) { nodes { id } } }`, { id: document });
  await gql(member, `query { knowledgeBases(first: 10) { nodes { id name } } }`);
  await gql(member, `query($input: QueryKnowledgeBaseInput!) { queryKnowledgeBase(input: $input) { passages { text } } }`, { input: { query: "descale", knowledgeBaseId: knowledgeBase } });
  // Paid calls and credits.
  await gql(member, `query { webSearch(query: "espresso descaling citric acid") { results { id url } credits } }`);
  await gql(admin, `query { credits { monthlyBudget spentThisMonth balance usage { day provider calls credits } } }`);
  await gql(member, `mutation($id: ID!) { deleteSavedSearch(id: $id) { id } }`, { id: saved });
  await gql(member, `mutation($id: ID!) { deleteConversation(id: $id) { id } }`, { id: conversation });
}

(usingPostgres ? describe : describe.skip)("no statement joins across organizations", () => {
  beforeAll(async () => {
    await loadSqlParser();
    const [serper, dataforseo, perplexity, slack, linkedin] = await Promise.all([SerperStandIn.start(), DataForSeoStandIn.start(), PerplexityStandIn.start(), SlackStandIn.start(), LinkedInStandIn.start()]);
    vendors = [serper, dataforseo, perplexity, slack, linkedin];
    for (const { token, page } of Object.values(LINKEDIN)) linkedin.tokens.set(token, new Set([page]));
    perplexity.apiKeys.add(PERPLEXITY_KEY);
    slack.userTokens.add(SLACK_TOKEN);
    stack = await startTestStack({
      SECRETS_ENCRYPTION_KEYS: `test-key:${randomBytes(32).toString("base64")}`,
      SERPER_API_KEY: serper.apiKey, SERPER_BASE_URL: serper.baseUrl,
      DATAFORSEO_LOGIN: dataforseo.login, DATAFORSEO_PASSWORD: dataforseo.password, DATAFORSEO_BASE_URL: dataforseo.baseUrl,
      PERPLEXITY_API_KEY: PERPLEXITY_KEY, PERPLEXITY_BASE_URL: perplexity.baseURL,
      SLACK_API_URL: slack.slackApiUrl,
      LINKEDIN_API_URL: linkedin.baseUrl,
      // Every search reaches the database (no cached page), so every provider's statements are seen.
      SEARCH_CACHE_TTL_SECONDS: "0", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0",
      SEARCH_PROVIDER_TIMEOUT_MS: "60000", EXTERNAL_ATTEMPT_TIMEOUT_MS: "60000", EXTERNAL_CALL_TIMEOUT_MS: "120000", UPSTREAM_TIMEOUT_MS: "120000",
    });
    const rows = await stack.db.database.withSession((session) =>
      session.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
           AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id' AND NOT a.attisdropped)`,
      ),
    );
    tenantTables = new Set(rows.map((row) => row.name).filter((name) => !(name in REFERENCE_TABLES)));
    recorder = recordStatements();
    recorder.begin();
    // Two organizations at once, so statements of both are in flight together.
    await Promise.all([workload("org-espresso"), workload("org-teapot")]);
    // The query logs are written in batches after an interval: let them write inside the capture.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    captured = recorder.end().connections.flat().map((statement) => ({ text: statement.text, ...(statement.values ? { values: statement.values } : {}) }));
  }, 300_000);

  afterAll(async () => {
    recorder?.dispose();
    await stack?.stop();
    await Promise.all(vendors.map((vendor) => vendor.close()));
  });

  it("the workload reached every part of the product's schema", () => {
    const touched = new Set(captured.flatMap((statement) => tenantTablesOf(statement.text, tenantTables)));
    const expected = ["conversations", "messages", "keyword_postings", "embedding_chunks", "documents", "document_chunks", "saved_searches", "search_queries", "external_results", "external_calls", "credit_ledger", "knowledge_base_capabilities", "knowledge_queries", "document_index_jobs", "search_index_jobs"];
    expect(expected.filter((table) => !touched.has(table))).toEqual([]);
    // Printed for the record: how much was checked.
    process.stdout.write(`sharding-statements: ${captured.length} statements captured, ${new Set(captured.map((s) => s.text)).size} distinct texts, ${touched.size} of ${tenantTables.size} tenant tables touched\n`);
  });

  it("every captured statement ties the tenant tables it joins to one organization", () => {
    const joins = crossOrganizationJoins(captured, { tenantTables });
    expect(joins.map((join) => `${join.groups.map((group) => group.join("+")).join(" | ")}: ${join.text.replace(/\s+/g, " ").slice(0, 400)}`)).toEqual([]);
  });

  it("so do the bodies of the schema's SQL functions", async () => {
    const functions = await stack.db.database.withSession((session) =>
      session.query<{ name: string; body: string; argument_names: string[] | null }>(
        `SELECT p.proname AS name, p.prosrc AS body, p.proargnames AS argument_names
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
         WHERE n.nspname = 'public' AND l.lanname = 'sql'`,
      ),
    );
    const bodies = functions.map((fn) => ({ text: fn.body, argumentNames: fn.argument_names ?? [] }));
    expect(crossOrganizationJoins(bodies, { tenantTables }).map((join) => join.text.replace(/\s+/g, " ").slice(0, 400))).toEqual([]);
    process.stdout.write(`sharding-statements: ${functions.length} SQL functions checked (${functions.map((fn) => fn.name).join(", ")})\n`);
  });

  it("the check fails on a statement that joins without tying the organizations (so a pass means something)", () => {
    const bad = [
      { text: "SELECT c.title FROM conversations c JOIN messages m ON m.conversation_id = c.id WHERE c.organization_id = $1", values: ["org-espresso"] },
      { text: "SELECT c.title FROM conversations c, messages m WHERE c.organization_id = $1 AND m.organization_id = $2 AND m.conversation_id = c.id", values: ["org-espresso", "org-teapot"] },
      { text: "SELECT s.name FROM saved_searches s WHERE s.organization_id = $1 AND s.query IN (SELECT query FROM search_queries)", values: ["org-espresso"] },
      { text: "SELECT c.text FROM document_chunks c JOIN documents d ON (d.id, d.owner_id) = (c.document_id, $2) WHERE c.organization_id = $1", values: ["org-espresso", "ada"] },
    ];
    expect(crossOrganizationJoins(bad, { tenantTables }).map((join) => join.text)).toEqual(bad.map((statement) => statement.text));
    // The same joins tied to one organization pass.
    const good = [
      { text: "SELECT c.title FROM conversations c JOIN messages m ON m.organization_id = c.organization_id AND m.conversation_id = c.id WHERE c.organization_id = $1", values: ["org-espresso"] },
      { text: "SELECT c.title FROM conversations c, messages m WHERE c.organization_id = $1 AND m.organization_id = $2 AND m.conversation_id = c.id", values: ["org-espresso", "org-espresso"] },
      // Prisma's join on a compound key, over the caller's and the platform's rows: each chunk with its own organization's document.
      { text: "SELECT c.text FROM document_chunks c LEFT JOIN documents d ON (d.organization_id, d.id) = (c.organization_id, c.document_id) WHERE c.organization_id IN ($1, $2)", values: ["org-espresso", "__platform__"] },
    ];
    expect(crossOrganizationJoins(good, { tenantTables })).toEqual([]);
  });
});
