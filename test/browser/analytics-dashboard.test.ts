/**
 * The analytics dashboard (/analytics) in real Chromium. The search box: a search made on the
 * search page and the hit opened from it (recorded through `recordSearchClick`) show up in the
 * drill-down from that query, with who searched and the position opened; the demo's seeded
 * history fills the totals, charts and tables; another organization's admin sees none of it.
 * Knowledge queries made through the API
 * show up, once the query log has written them, in the queries-per-day chart and in the top and
 * zero-result query tables; a range without queries shows the empty state; the range travels in
 * the URL; a member reads that analytics are for administrators. axe-core finds no serious or
 * critical violation, and the page is screenshotted with data (docs/web-app.md shows it).
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { tokenFor } from "../support/tenants.js";
import { eventually, graphql } from "./support/graphql-client.js";
import { watchForProblems } from "./support/page-problems.js";
import { browserAvailable, CI_OUTPUT_DIRECTORY, screenshot, seriousAccessibilityViolations, startWebStack, type WebStack } from "./support/web-stack.js";

const describeInBrowser = browserAvailable ? describe : describe.skip;
let web: WebStack;

beforeAll(async () => {
  if (browserAvailable) web = await startWebStack();
}, 180_000);
afterAll(async () => web?.stop());

const ASK = `query AskKnowledge($input: QueryKnowledgeBaseInput!) { queryKnowledgeBase(input: $input) { passages { score } } }`;
const ANALYTICS = `query Analytics($from: DateTime!, $to: DateTime!) { knowledgeAnalytics(from: $from, to: $to) { totalQueries topQueries { query count } zeroResultQueries { query count } } }`;

/** Searched on the search page by the search box test: in no seeded history, so its drill-down holds only that search. */
const SEARCHED = "deadlock retry backoff";

/** Queries that match the demo handbook (lib/demo-data/documents.json), the first asked most. */
const ASKED = ["postgres deadlock runbook", "postgres deadlock runbook", "postgres deadlock runbook", "kubernetes autoscaling", "kubernetes autoscaling", "graphql federation gateway", "flaky tests policy"];

/** A BEDROCK knowledge base (never asked here: only the past weeks' log rows below name it). */
async function createBedrockKnowledgeBase(): Promise<string> {
  const created = await graphql(web.origin, web.demoToken, `mutation CreateSupportArticles($input: CreateKnowledgeBaseInput!) { createKnowledgeBase(input: $input) { id } }`, {
    input: { name: "Support articles", scope: "COMPANY", backend: "BEDROCK", region: "us-east-1", bedrockKnowledgeBaseId: "KBDEMO0001", credentialMode: "PLATFORM" },
  });
  expect(created.errors).toBeUndefined();
  return created.data!.createKnowledgeBase.id;
}

/**
 * The past four weeks of the demo organization's knowledge queries, written straight into the
 * log (as its writer does): the dashboard then has days, a second provider and failures to draw.
 * Deterministic; none of these texts is one the test asks, so its own counts stay exact.
 */
async function seedPastWeeks(postmortems: string, supportArticles: string): Promise<void> {
  const today = Date.parse(`${new Date().toISOString().slice(0, 10)}T12:00:00Z`);
  const documentQueries = ["rotate jwt signing keys", "terraform drift detection", "redis cache invalidation", "docker image size limits"];
  const bedrockQueries = ["refund policy for annual plans", "enterprise support sla"];
  const rows = [];
  for (let daysAgo = 1; daysAgo <= 27; daysAgo++) {
    const createdAt = new Date(today - daysAgo * 86_400_000);
    const weekday = createdAt.getUTCDay() !== 0 && createdAt.getUTCDay() !== 6;
    const documents = (weekday ? 4 : 1) + ((daysAgo * 5) % 7);
    for (let n = 0; n < documents; n++) {
      const query = documentQueries[(daysAgo + n) % documentQueries.length]!;
      rows.push({ organizationId: "org_demo", userId: "user_grace", knowledgeBaseId: null, query, results: 5, topScore: 0.03, provider: "documents", status: "OK", credits: 0, latencyMs: 35 + ((daysAgo * 13 + n * 29) % 90), createdAt });
    }
    rows.push({ organizationId: "org_demo", userId: "user_alan", knowledgeBaseId: postmortems, query: "kafka consumer lag", results: 0, topScore: null, provider: "documents", status: "OK", credits: 0, latencyMs: 20 + (daysAgo % 15), createdAt });
    for (let n = 0; n < (weekday ? 3 : 1); n++) {
      // About one Bedrock call in eight times out.
      const timedOut = (daysAgo + n) % 8 === 0;
      rows.push({ organizationId: "org_demo", userId: "user_barbara", knowledgeBaseId: supportArticles, query: bedrockQueries[(daysAgo + n) % 2]!, results: timedOut ? 0 : 4, topScore: timedOut ? null : 0.7, provider: "bedrock", status: timedOut ? "TIMEOUT" : "OK", credits: 0, latencyMs: timedOut ? 5000 : 240 + ((daysAgo * 37 + n * 53) % 400), createdAt });
    }
  }
  await web.test.db.database.prisma.knowledgeQuery.createMany({ data: rows });
}

describeInBrowser("the analytics dashboard", () => {
  let zeroResultQuery: string;

  beforeAll(async () => {
    // The demo's handbook answers some queries, the members' own documents the others; a new,
    // empty knowledge base is where a query finds nothing (the semantic ranking always finds
    // something among documents that exist).
    const bases = await graphql(web.origin, web.demoToken, `query DemoKnowledgeBases { knowledgeBases(first: 20) { nodes { id name } } }`);
    const handbook = bases.data!.knowledgeBases.nodes.find((base: { name: string }) => base.name === "Engineering handbook");
    expect(handbook).toBeDefined();
    const created = await graphql(web.origin, web.demoToken, `mutation CreatePostmortems($input: CreateKnowledgeBaseInput!) { createKnowledgeBase(input: $input) { id } }`, {
      input: { name: "Incident postmortems", scope: "COMPANY", backend: "LOCAL" },
    });
    expect(created.errors).toBeUndefined();
    const postmortems = created.data!.createKnowledgeBase.id as string;
    for (const [index, query] of ASKED.entries()) {
      const answer = await graphql(web.origin, web.demoToken, ASK, { input: { query, limit: 5, ...(index % 2 === 0 ? { knowledgeBaseId: handbook.id } : {}) } });
      expect(answer.errors).toBeUndefined();
      expect(answer.data!.queryKnowledgeBase.passages.length).toBeGreaterThan(0);
    }
    await seedPastWeeks(postmortems, await createBedrockKnowledgeBase());
    zeroResultQuery = "zyxwvut quokka postmortem";
    const nothing = await graphql(web.origin, web.demoToken, ASK, { input: { query: zeroResultQuery, limit: 5, knowledgeBaseId: postmortems } });
    expect(nothing.data?.queryKnowledgeBase.passages).toEqual([]);
    // The log is written in batches off the request path: wait until knowledgeAnalytics counts them.
    const range = { from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date(Date.now() + 86_400_000).toISOString() };
    const started = Date.now();
    let last: unknown;
    await eventually(
      async () => {
        const answer = await graphql(web.origin, web.demoToken, ANALYTICS, range);
        last = answer;
        const analytics = answer.data?.knowledgeAnalytics;
        const top = new Map<string, number>(analytics?.topQueries.map((entry: { query: string; count: number }) => [entry.query, entry.count]));
        const logged = top.get("postgres deadlock runbook") === 3 && top.has("flaky tests policy") && analytics?.zeroResultQueries.some((entry: { query: string }) => entry.query === zeroResultQuery);
        return logged ? analytics : undefined;
      },
      { timeoutMs: 60_000, describe: () => JSON.stringify(last) },
    );
    console.log(`knowledge queries visible in knowledgeAnalytics ${Date.now() - started} ms after they were asked`);
  }, 120_000);

  it("shows the queries just asked: a chart of queries per day, the top and the zero-result queries", async () => {
    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    const opened = Date.now();
    await page.goto("/analytics");
    const perDay = page.getByRole("region", { name: "Queries per day" });
    await perDay.locator("svg.recharts-surface").first().waitFor({ timeout: 30_000 });
    console.log(`/analytics drew its first chart ${Date.now() - opened} ms after navigation`);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Analytics");
    // The chart is an image with its numbers summed up in words.
    expect(await perDay.getByRole("img", { name: /^Area chart/ }).getAttribute("aria-label")).toMatch(/\d+ in all/);

    const top = page.getByRole("region", { name: "Top queries" });
    const topRows = await top.getByRole("row").allInnerTexts();
    expect(topRows.join("\n")).toMatch(/postgres deadlock runbook\s+3/);
    for (const query of new Set(ASKED)) expect(topRows.some((row) => row.includes(query))).toBe(true);
    // Each query links to a search for it.
    expect(await top.getByRole("link", { name: "kubernetes autoscaling" }).getAttribute("href")).toBe("/?q=kubernetes+autoscaling");
    const zero = page.getByRole("region", { name: "Queries that found nothing" });
    await zero.getByRole("link", { name: zeroResultQuery }).waitFor({ timeout: 30_000 });
    expect(await zero.getByRole("link", { name: "postgres deadlock runbook" }).count()).toBe(0);

    // Latency per provider and failure rates: the documents provider answered every query.
    const latency = page.getByRole("region", { name: "Latency per provider" });
    expect(await latency.getByRole("img", { name: /^Bar chart/ }).getAttribute("aria-label")).toMatch(/documents p50 [\d.,]+ ms, p95 [\d.,]+ ms, p99 [\d.,]+ ms/);
    const failures = page.getByRole("region", { name: "Provider failure rate" });
    const failureSummary = await failures.getByRole("img", { name: /^Bar chart/ }).getAttribute("aria-label");
    expect(failureSummary).toMatch(/documents 0% \(0 of \d+\)/);
    // The past weeks' Bedrock timeouts (seedPastWeeks) count as failures.
    expect(failureSummary).toMatch(/bedrock [1-9][\d.]*% \([1-9]\d* of \d+\)/);
    const perBase = await page.getByRole("region", { name: "Latency per knowledge base" }).getByRole("img", { name: /^Bar chart/ }).getAttribute("aria-label");
    expect(perBase).toMatch(/Engineering handbook p50 [\d.,]+ ms/);
    expect(perBase).toMatch(/Support articles p50 [\d.,]+ ms, p95 [\d.,]+ ms, p99 5,000 ms/);
    // The numbers as a table: hidden until asked for, then visible.
    const toggle = failures.getByRole("button", { name: "Show table" });
    await toggle.click();
    expect(await failures.getByRole("button", { name: "Hide table" }).getAttribute("aria-expanded")).toBe("true");
    expect(await failures.getByRole("table").isVisible()).toBe(true);

    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await failures.getByRole("button", { name: "Hide table" }).click();
    await screenshot(page, "analytics-dashboard");
    expect(await problems.settled()).toEqual([]);
    await context.close();
  });

  it("shows an empty state for a range without queries, and keeps the range in the URL", async () => {
    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    await page.goto("/analytics");
    await page.getByRole("region", { name: "Top queries" }).waitFor({ timeout: 30_000 });
    // From the keyboard: fill both days, then submit with Enter.
    await page.getByLabel("From (UTC)").fill("2020-01-01");
    await page.getByLabel("To (UTC, included)").fill("2020-01-31");
    await page.getByLabel("To (UTC, included)").press("Enter");
    await page.getByRole("heading", { name: "No queries in this range" }).waitFor({ timeout: 30_000 });
    expect(new URL(page.url()).search).toBe("?from=2020-01-01&to=2020-01-31");
    expect(await page.getByRole("status").filter({ hasText: "knowledge" }).textContent()).toContain("0 knowledge queries from 1 Jan 2020 to 31 Jan 2020");
    // The knowledge section draws no chart (the search box above keeps its own range).
    expect(await page.getByRole("region", { name: "Queries per day" }).count()).toBe(0);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, "analytics-dashboard-empty");

    // The shared link opens the same range; a range the server would refuse is explained instead.
    const shared = await context.newPage();
    await shared.goto("/analytics?from=2020-01-01&to=2020-01-31");
    await shared.getByRole("heading", { name: "No queries in this range" }).waitFor({ timeout: 30_000 });
    expect(await shared.getByLabel("From (UTC)").inputValue()).toBe("2020-01-01");
    await shared.goto("/analytics?from=2020-01-01&to=2020-12-31");
    expect(await shared.getByRole("alert").textContent()).toMatch(/at most 92/);
    // Back to the default range from the keyboard.
    await shared.getByRole("form", { name: "Date range" }).getByRole("button", { name: "Last 30 days" }).focus();
    await shared.keyboard.press("Enter");
    await shared.getByRole("region", { name: "Top queries" }).waitFor({ timeout: 30_000 });
    await context.close();
  });

  it("shows a search made on the search page and the hit opened from it, in the search box's drill-down; another organization sees neither", async () => {
    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    await page.goto(`/?q=${encodeURIComponent(SEARCHED)}`);
    const firstTitle = page.getByRole("list", { name: `Results for ${SEARCHED}` }).getByRole("listitem").first().locator(".hit-title a");
    await firstTitle.waitFor({ timeout: 30_000 });
    // The page of every provider, not only the quick LOCAL one: the search analytics count.
    await page.getByRole("status").filter({ hasText: new RegExp(`for “${SEARCHED}”\\.$`) }).waitFor({ timeout: 30_000 });
    // The click is fire-and-forget: wait for its answer (the recording), not for any time to pass.
    const recorded = page.waitForResponse(async (response) => response.url().endsWith("/graphql") && (response.request().postData() ?? "").includes("RecordSearchClick") && (await response.text()).includes('"firstClick":true'), { timeout: 30_000 });
    const opened = page.url();
    await firstTitle.click();
    await recorded;
    await page.waitForURL((url) => url.href !== opened, { timeout: 30_000 });

    // The dashboard's search box: the demo's seeded history and this search, over the last 24 hours.
    await page.goto("/analytics?searches=LAST_7_DAYS");
    const searchBox = page.getByRole("region", { name: "Search box" });
    const top = searchBox.getByRole("region", { name: "Top searches" });
    await top.getByRole("row").nth(1).waitFor({ timeout: 30_000 });
    expect(await searchBox.getByRole("button", { name: "Last 7 days" }).getAttribute("aria-pressed")).toBe("true");
    const perDay = searchBox.getByRole("region", { name: "Searches per day" });
    expect(await perDay.getByRole("img", { name: /^Area chart of searches per day/ }).getAttribute("aria-label")).toMatch(/\d+ in all, \d+ with a hit opened \([\d.]+% click-through\)/);
    expect(await searchBox.getByRole("region", { name: "Search provider latency" }).getByRole("img", { name: /^Bar chart/ }).getAttribute("aria-label")).toMatch(/conversations\.keyword p50 [\d.,]+ ms, p95 [\d.,]+ ms/);
    expect(await searchBox.getByRole("region", { name: "Searches that found nothing" }).getByRole("link", { name: "parental leave policy" }).count()).toBe(1);
    // From the keyboard: the last 24 hours, then this search's drill-down.
    await searchBox.getByRole("button", { name: "Last 24 hours" }).focus();
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.searchParams.get("searches") === "LAST_24_HOURS", { timeout: 30_000 });
    await page.goto(`/analytics?searches=LAST_24_HOURS&searchQuery=${encodeURIComponent(SEARCHED)}`);
    const drillDown = page.getByRole("region", { name: `Searches for “${SEARCHED}”` });
    const row = drillDown.getByRole("row").filter({ hasText: "Ada Lovelace" });
    await row.first().waitFor({ timeout: 30_000 });
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toMatch(/#1 \((conversation|document)\)/);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, "analytics-search-drill-down");
    // Drill-down from the top searches' link: the query's searches open below, focus on their heading.
    await page.goto("/analytics?searches=LAST_7_DAYS");
    const topQuery = top.getByRole("link").first();
    await topQuery.waitFor({ timeout: 30_000 });
    const topText = (await topQuery.textContent())!;
    await topQuery.click();
    const topDrillDown = page.getByRole("region", { name: `Searches for “${topText}”` });
    await topDrillDown.getByRole("row").nth(1).waitFor({ timeout: 30_000 });
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(`Searches for “${topText}”`);
    await screenshot(page, "analytics-search-box");
    // The search box alone, as docs/web-app.md shows it.
    await searchBox.screenshot({ path: path.join(CI_OUTPUT_DIRECTORY, "screenshots", "analytics-search-box-section.png") });
    expect(await problems.settled()).toEqual([]);
    await context.close();

    // Another organization's admin: an empty search box, and neither this search nor its click.
    const stranger = await tokenFor("org_analytics_other", "olga", [], "admin");
    const other = await web.context(stranger);
    const otherPage = await other.newPage();
    await otherPage.goto(`/analytics?searches=LAST_24_HOURS&searchQuery=${encodeURIComponent(SEARCHED)}`);
    await otherPage.getByRole("heading", { name: "No searches in this range" }).waitFor({ timeout: 30_000 });
    await otherPage.getByText(`Nobody searched for “${SEARCHED}”`).waitFor({ timeout: 30_000 });
    expect(await otherPage.getByText("Ada Lovelace").count()).toBe(0);
    const answer = await graphql(web.origin, stranger, `{ searchAnalytics(range: { relative: LAST_30_DAYS }) { totalSearches clicks topSearches { query } } }`);
    expect(answer.data!.searchAnalytics).toEqual({ totalSearches: 0, clicks: 0, topSearches: [] });
    expect(await seriousAccessibilityViolations(otherPage)).toEqual([]);
    await screenshot(otherPage, "analytics-search-box-other-organization");
    await other.close();
  });

  it("tells a member that analytics are for administrators", async () => {
    const member = await tokenFor("org_demo", "user_grace", ["team_platform"], "member");
    const context = await web.context(member);
    const page = await context.newPage();
    await page.goto("/analytics");
    await page.getByRole("alert").filter({ hasText: "Analytics are for administrators" }).waitFor({ timeout: 30_000 });
    expect(await page.getByText("postgres deadlock runbook").count()).toBe(0);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, "analytics-dashboard-member");
    await context.close();
  });
});
