/**
 * Cross-organization isolation in the browser: an admin of another organization opens every page
 * of the app (search, documents, saved searches, credits, analytics, and a demo conversation's
 * URL) and none of the demo organization's conversation titles, document names, saved searches
 * or query texts appears anywhere in the page's text.
 *
 * So that this cannot pass vacuously, the test first makes those strings exist (a saved search,
 * a search and a knowledge query with texts of its own) and confirms through the GraphQL API,
 * from a page calling with the demo token, that the demo organization does see every one of
 * them; then the other organization's page calls the same operations and gets none of them.
 * The checks read page text, so they hold whatever each page renders.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Page } from "playwright-core";
import { tokenFor } from "../support/tenants.js";
import { eventually, graphql } from "./support/graphql-client.js";
import { browserAvailable, screenshot, startWebStack, type WebStack } from "./support/web-stack.js";

const describeInBrowser = browserAvailable ? describe : describe.skip;
let web: WebStack;

beforeAll(async () => {
  if (browserAvailable) web = await startWebStack();
}, 180_000);
afterAll(async () => web?.stop());

/** Texts only this test gives the demo organization: no page can show them by chance. */
const SAVED_SEARCH_NAME = "Isolation probe: deadlock follow-ups";
const SAVED_SEARCH_QUERY = "deadlock follow-up isolation probe";
const SEARCH_QUERY = "isolation probe checkout latency";
const KNOWLEDGE_QUERY = "isolation probe postgres deadlocks";

const DEMO_VIEW = `query DemoOrganizationView($conversationId: ID!, $from: DateTime!, $to: DateTime!) {
  conversations(first: 10) { nodes { id title } }
  conversation(id: $conversationId) { id title }
  documents(first: 20) { nodes { id fileName } }
  savedSearches(first: 20) { nodes { name query } }
  knowledgeAnalytics(from: $from, to: $to) { topQueries { query } }
}`;

interface DemoView {
  conversations: { nodes: { id: string; title: string }[] } | null;
  conversation: { id: string; title: string } | null;
  documents: { nodes: { id: string; fileName: string }[] } | null;
  savedSearches: { nodes: { name: string; query: string }[] } | null;
  knowledgeAnalytics: { topQueries: { query: string }[] } | null;
}

/** The GraphQL API called from inside the page, with the token the page itself calls with. */
async function viewFromPage(page: Page, variables: Record<string, unknown>): Promise<{ data?: DemoView; errors?: unknown[] }> {
  return page.evaluate(
    async ({ query, variables }) => {
      const token = localStorage.getItem("context-search-token");
      const response = await fetch("/graphql", { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables }) });
      return response.json();
    },
    { query: DEMO_VIEW, variables },
  );
}

/** The page's text once it settled: no request in flight and its heading shown. */
async function settledText(page: Page, route: string): Promise<string> {
  await page.goto(route);
  await page.waitForLoadState("networkidle");
  await page.getByRole("heading", { level: 1 }).first().waitFor({ timeout: 30_000 });
  // A lazy page may render its answer just after the last response: wait until no "Loading…"
  // remains. A page still loading after that is read as it is (it shows nothing it could leak).
  await page.waitForFunction(() => !/Loading…/.test(document.body.innerText), undefined, { timeout: 30_000 }).catch(() => console.log(`${route} still says Loading… after 30 s`));
  return page.locator("body").innerText();
}

describeInBrowser("organization isolation in the browser", () => {
  let demoStrings: string[];
  let demoConversationId: string;
  let variables: Record<string, unknown>;

  beforeAll(async () => {
    const token = web.demoToken;
    const saved = await graphql(web.origin, token, `mutation SaveProbe($input: SaveSearchInput!) { saveSearch(input: $input) { id } }`, { input: { name: SAVED_SEARCH_NAME, query: SAVED_SEARCH_QUERY } });
    expect(saved.errors).toBeUndefined();
    const searched = await graphql(web.origin, token, `query SearchProbe($input: SearchInput!) { search(input: $input) { tookMs } }`, { input: { query: SEARCH_QUERY } });
    expect(searched.errors).toBeUndefined();
    const asked = await graphql(web.origin, token, `query AskProbe($input: QueryKnowledgeBaseInput!) { queryKnowledgeBase(input: $input) { tookMs } }`, { input: { query: KNOWLEDGE_QUERY } });
    expect(asked.errors).toBeUndefined();
    const first = await graphql<{ conversations: { nodes: { id: string }[] } }>(web.origin, token, `query FirstConversation { conversations(first: 1) { nodes { id } } }`);
    demoConversationId = first.data!.conversations.nodes[0]!.id;
    variables = { conversationId: demoConversationId, from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date(Date.now() + 86_400_000).toISOString() };
  }, 60_000);

  it("the demo organization sees its own conversations, documents, saved search and queries (so the checks below mean something)", async () => {
    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    await page.goto("/analytics");
    let last: unknown;
    // The knowledge query reaches the analytics once its log batch is written.
    const view = await eventually(
      async () => {
        const answer = await viewFromPage(page, variables);
        last = answer;
        return answer.data?.knowledgeAnalytics?.topQueries.some((entry) => entry.query === KNOWLEDGE_QUERY) ? answer.data : undefined;
      },
      { timeoutMs: 60_000, describe: () => JSON.stringify(last).slice(0, 500) },
    );
    expect(view.conversations!.nodes.length).toBeGreaterThan(0);
    expect(view.conversation?.id).toBe(demoConversationId);
    expect(view.documents!.nodes.length).toBeGreaterThan(0);
    expect(view.savedSearches!.nodes).toEqual(expect.arrayContaining([{ name: SAVED_SEARCH_NAME, query: SAVED_SEARCH_QUERY }]));
    demoStrings = [
      ...view.conversations!.nodes.map((conversation) => conversation.title),
      view.conversation!.title,
      ...view.documents!.nodes.map((document) => document.fileName),
      SAVED_SEARCH_NAME,
      SAVED_SEARCH_QUERY,
      SEARCH_QUERY,
      KNOWLEDGE_QUERY,
    ];
    // Short generic titles could occur in any page's own words; the demo's are long and specific.
    demoStrings = [...new Set(demoStrings)].filter((text) => text.length >= 8);
    expect(demoStrings.length).toBeGreaterThan(10);
    // The demo admin's dashboard does show the query: the other organization's must not.
    await page.getByRole("link", { name: KNOWLEDGE_QUERY }).first().waitFor({ timeout: 30_000 });
    await context.close();
  }, 120_000);

  it("another organization's admin gets none of them from the API", async () => {
    const context = await web.context(await tokenFor("org-other", "someone", [], "admin"));
    const page = await context.newPage();
    await page.goto("/credits");
    const answer = await viewFromPage(page, variables);
    expect(answer.data!.conversation).toBeNull();
    expect(answer.data!.conversations!.nodes).toEqual([]);
    expect(answer.data!.documents!.nodes).toEqual([]);
    expect(answer.data!.savedSearches!.nodes).toEqual([]);
    expect(answer.data!.knowledgeAnalytics!.topQueries).toEqual([]);
    await context.close();
  });

  it("another organization's admin sees none of them on any page", async () => {
    const context = await web.context(await tokenFor("org-other", "someone", [], "admin"));
    const page = await context.newPage();
    const routes = ["/", "/?q=deadlock", "/documents", "/saved", "/credits", "/analytics", `/conversations/${demoConversationId}`];
    for (const route of routes) {
      const started = Date.now();
      const text = await settledText(page, route);
      console.log(`${route} settled for the other organization in ${Date.now() - started} ms`);
      const leaked = demoStrings.filter((demo) => text.toLowerCase().includes(demo.toLowerCase()));
      expect({ route, leaked }).toEqual({ route, leaked: [] });
      await screenshot(page, `isolation${route === "/" ? "-search" : route.replace(/[/?=]+/g, "-").replace(/-[0-9a-f-]{36}$/, "")}`);
    }

    // My analytics page: the other organization's range is empty.
    await page.goto("/analytics");
    await page.getByRole("heading", { name: "No queries in this range" }).waitFor({ timeout: 30_000 });

    // The demo conversation's URL: a not-found message (once the conversation page is built;
    // its placeholder, titled "ConversationPage", renders nothing to check yet).
    await page.goto(`/conversations/${demoConversationId}`);
    const heading = (await page.getByRole("heading", { level: 1 }).first().textContent()) ?? "";
    if (heading !== "ConversationPage") await page.getByText(/not found|no such conversation|doesn.t exist|does not exist/i).first().waitFor({ timeout: 30_000 });
    await context.close();
  }, 180_000);
});
