/**
 * Saved searches (/saved) and credits (/credits) in real Chromium against the whole product
 * (issue 21). Saved searches: one saved through the API is listed, renamed from the keyboard,
 * run (its hits, then "new since last run" after a matching conversation is added), a duplicate
 * name is refused readably, one saved from the page's form joins the list without a reload, a
 * colleague's page does not list them, one saved from the search page keeps its filters and exact
 * words (listed, and opened on the search page as it was), and deleting (after a confirmation) leaves the list and
 * finally the empty state. Credits: with a budget set and two paid web searches (a Serper
 * stand-in), the page shows the budget, spent and balance, the usage chart and the same numbers
 * in a table; a period without spending says so; a member sees the budget and a readable
 * FORBIDDEN instead of the usage. axe on every page.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Locator, Page } from "playwright-core";
import { DEMO_ORGANIZATION } from "../../lib/demo-data/organization.js";
import { SerperStandIn } from "../support/external/serper-stand-in.js";
import { graphql } from "../support/graphql.js";
import { tokenFor } from "../support/tenants.js";
import { watchForProblems } from "./support/page-problems.js";
import { browserAvailable, screenshot, seriousAccessibilityViolations, startWebStackWithSerper, type WebStackWithSerper } from "./support/web-stack.js";

const describeInBrowser = browserAvailable ? describe : describe.skip;
/** Generous: the machine running this may be busy with other suites. */
const WAIT = { timeout: 30_000 };
let web: WebStackWithSerper;
let serper: SerperStandIn;

beforeAll(async () => {
  if (!browserAvailable) return;
  web = await startWebStackWithSerper({
    // A run reads the search fresh, so a conversation added between two runs is new on the second.
    SEARCH_CACHE_TTL_SECONDS: "0",
  });
  serper = web.serper;
}, 180_000);
afterAll(async () => web?.stop());

async function api(token: string, query: string, variables: Record<string, unknown> = {}) {
  const response = await graphql(`${web.origin}/graphql`, query, variables, { token });
  expect(response.errors).toBeUndefined();
  return response.data!;
}

async function addConversation(title: string, content: string): Promise<void> {
  await api(web.demoToken, `mutation AddConversation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, {
    input: { title, messages: [{ role: "USER", content }] },
  });
}

/** Waits until the locator matches exactly `count` elements (Playwright's auto-wait covers presence, not counts). */
async function waitForCount(locator: Locator, count: number): Promise<void> {
  const deadline = Date.now() + WAIT.timeout;
  while ((await locator.count()) !== count) {
    if (Date.now() > deadline) throw new Error(`expected ${count} of ${locator}, found ${await locator.count()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function savedSearchCard(page: Page, name: string): Locator {
  return page.locator("li.saved-search").filter({ has: page.getByRole("heading", { level: 2, name, exact: true }) });
}

describeInBrowser("saved searches", () => {
  it("lists, renames, runs (new since last run), refuses a duplicate name, saves from the page and deletes", async () => {
    await addConversation("Descaling the office espresso machine", "How do I descale the espresso machine with citric acid?");
    await api(web.demoToken, `mutation Save($input: SaveSearchInput!) { saveSearch(input: $input) { id } }`, {
      input: { name: "Descaling notes", query: "descaling", alpha: 1 },
    });

    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    const opened = Date.now();
    await page.goto("/saved");
    await savedSearchCard(page, "Descaling notes").waitFor(WAIT);
    console.log(`saved searches listed ${Date.now() - opened} ms after navigation`);
    expect(await page.getByRole("heading", { level: 1 }).count()).toBe(1);
    const card = page.locator("li.saved-search").first();
    expect(await card.locator(".saved-search-query").textContent()).toBe("descaling");
    expect(await card.getByText("Never").count()).toBe(1);
    expect(await card.getByRole("link", { name: "Open on the search page" }).getAttribute("href")).toBe("/?q=descaling&alpha=1");

    // Rename from the keyboard: the field is focused with the old name selected; Enter saves.
    await card.getByRole("button", { name: "Rename" }).focus();
    await page.keyboard.press("Enter");
    const nameField = card.getByLabel("New name");
    await nameField.waitFor(WAIT);
    expect(await nameField.evaluate((field) => field === document.activeElement)).toBe(true);
    await page.keyboard.type("Espresso descaling");
    await page.keyboard.press("Enter");
    await savedSearchCard(page, "Espresso descaling").waitFor(WAIT);
    await waitForCount(savedSearchCard(page, "Descaling notes"), 0);
    const listed = await api(web.demoToken, `query { savedSearches { nodes { name } } }`);
    expect(listed.savedSearches.nodes).toEqual([{ name: "Espresso descaling" }]);

    // First run: every hit is new.
    const renamed = savedSearchCard(page, "Espresso descaling");
    let started = Date.now();
    await renamed.getByRole("button", { name: "Run" }).click();
    await renamed.locator(".run-result").getByRole("link", { name: "Descaling the office espresso machine" }).waitFor(WAIT);
    console.log(`first run shown ${Date.now() - started} ms after the click`);
    await renamed.getByText("This is its first run").waitFor(WAIT);
    // The busy button stays enabled (aria-disabled), so keyboard focus stays on it through the run.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Run");
    expect(await renamed.getByText("Never").count()).toBe(0);

    // A matching conversation appears; the next run shows it, and only it, as new since the last run.
    await addConversation("Descaling the kettle at home", "What is the best way of descaling a kettle?");
    started = Date.now();
    await renamed.getByRole("button", { name: "Run" }).click();
    const newHits = renamed.locator(".new-hits");
    await newHits.getByRole("link", { name: "Descaling the kettle at home" }).waitFor(WAIT);
    console.log(`second run shown ${Date.now() - started} ms after the click`);
    expect(await newHits.getByRole("heading", { name: /^New since last run \(.+\): 1$/ }).count()).toBe(1);
    expect(await newHits.getByRole("link", { name: "Descaling the office espresso machine" }).count()).toBe(0);
    expect(await renamed.locator(".run-hits .new-badge").count()).toBe(2); // once in "new", once in "all hits"
    expect(await renamed.getByRole("status").textContent()).toMatch(/1 new since the last run/);

    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, "saved-searches");

    // A duplicate name is refused with the server's reason and code.
    await page.getByLabel("Query").fill("descaling");
    await page.getByLabel("Name", { exact: true }).fill("Espresso descaling");
    await page.getByRole("button", { name: "Save search" }).click();
    const refusal = page.locator("form.new-saved-search").getByRole("alert");
    await refusal.waitFor(WAIT);
    expect(await refusal.textContent()).toMatch(/already have a saved search named "Espresso descaling".*BAD_USER_INPUT/);

    // Saved from the page's form, with words only as typed: it joins the top of the list without a reload, and says so.
    await page.getByLabel("Name", { exact: true }).fill("Kettle descaling");
    await page.getByLabel("Also search for likely corrections of misspelled words").uncheck();
    await page.getByRole("button", { name: "Save search" }).click();
    await savedSearchCard(page, "Kettle descaling").waitFor(WAIT);
    expect(await page.locator("li.saved-search h2").allTextContents()).toEqual(["Kettle descaling", "Espresso descaling"]);
    expect(await savedSearchCard(page, "Kettle descaling").locator(".saved-search-facts").textContent()).toContain("only as typed (no typo tolerance)");
    // The emptied form is ready for the next one, with corrections back on.
    expect(await page.getByLabel("Also search for likely corrections of misspelled words").isChecked()).toBe(true);

    // Saved searches are their owner's: a colleague's page does not list Ada's.
    const colleague = await web.context(await tokenFor(DEMO_ORGANIZATION.id, "user_grace", [], "member"));
    const colleaguePage = await colleague.newPage();
    await colleaguePage.goto("/saved");
    await colleaguePage.getByRole("heading", { name: "No saved searches yet" }).waitFor(WAIT);
    expect(await colleaguePage.locator("li.saved-search").count()).toBe(0);
    await colleague.close();

    // Delete asks first; keeping it changes nothing, confirming removes it from the list.
    await renamed.getByRole("button", { name: "Delete" }).click();
    await renamed.getByRole("button", { name: "Keep it" }).click();
    await renamed.getByRole("button", { name: "Delete" }).click();
    await renamed.getByRole("group", { name: "Delete Espresso descaling?" }).getByRole("button", { name: "Delete" }).click();
    await waitForCount(savedSearchCard(page, "Espresso descaling"), 0);
    await page.getByText("Deleted “Espresso descaling”.").waitFor(WAIT);
    // The focused button went with its row: focus moves to the page's heading, not to nowhere.
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("H1");
    const kettle = savedSearchCard(page, "Kettle descaling");
    await kettle.getByRole("button", { name: "Delete" }).click();
    await kettle.getByRole("group").getByRole("button", { name: "Delete" }).click();
    await page.getByRole("heading", { name: "No saved searches yet" }).waitFor(WAIT);
    expect((await api(web.demoToken, `query { savedSearches { nodes { id } } }`)).savedSearches.nodes).toEqual([]);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    expect(await problems.settled()).toEqual([]);
    await context.close();
  });

  it("saves the search page's search with its filters and exact words, lists them, opens it as it was, and runs one with its corrections", async () => {
    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    const address = "/?q=descaling&alpha=1&kind=CONVERSATION&exact=1";
    await page.goto(address);
    await page.getByRole("button", { name: "Save this search" }).click();
    const form = page.getByRole("form", { name: "Save this search" });
    await form.waitFor(WAIT);
    // The form says what is saved besides the query.
    expect(await form.locator(".save-search-settings").textContent()).toBe("Saved with kinds: Conversations; words: only as typed (no typo tolerance).");
    await form.getByLabel("Name").fill("Descaling, conversations, exact");
    await form.getByRole("button", { name: "Save" }).click();
    await page.getByRole("link", { name: "See your saved searches" }).waitFor(WAIT);
    const saved = await api(web.demoToken, `query { savedSearches { nodes { name alpha providers filter { kinds created { from } sites } typoTolerance } } }`);
    expect(saved.savedSearches.nodes).toEqual([{ name: "Descaling, conversations, exact", alpha: 1, providers: null, filter: { kinds: ["CONVERSATION"], created: null, sites: null }, typoTolerance: false }]);

    await page.getByRole("link", { name: "See your saved searches" }).click();
    const card = savedSearchCard(page, "Descaling, conversations, exact");
    await card.waitFor(WAIT);
    const facts = Object.fromEntries(await card.locator(".saved-search-facts > div").evaluateAll((rows) => rows.map((row) => [row.querySelector("dt")!.textContent, row.querySelector("dd")!.textContent])));
    expect(facts).toMatchObject({ Kinds: "Conversations", Words: "only as typed (no typo tolerance)" });
    const open = card.getByRole("link", { name: "Open on the search page" });
    expect(await open.getAttribute("href")).toBe(address);
    await open.click();
    await page.waitForURL((url) => url.pathname + url.search === address, WAIT);
    expect(await page.getByRole("group", { name: "Type" }).getByRole("checkbox", { name: /^Conversations/ }).isChecked()).toBe(true);

    // A saved search with typo tolerance says, when it runs, what it also searched for a misspelled word.
    await api(web.demoToken, `mutation Save($input: SaveSearchInput!) { saveSearch(input: $input) { id } }`, { input: { name: "Misspelled", query: "espreso machine", alpha: 1 } });
    await page.goto("/saved");
    const misspelled = savedSearchCard(page, "Misspelled");
    await misspelled.getByRole("button", { name: "Run" }).click();
    const corrected = misspelled.locator(".run-result .correction-detail");
    await corrected.waitFor(WAIT);
    expect(await corrected.textContent()).toMatch(/^Also searched: espresso.* for “espreso”\.$/);

    for (const { id } of (await api(web.demoToken, `query { savedSearches { nodes { id } } }`)).savedSearches.nodes) {
      await api(web.demoToken, `mutation($id: ID!) { deleteSavedSearch(id: $id) { id } }`, { id });
    }
    expect(await problems.settled()).toEqual([]);
    await context.close();
  });
});

describeInBrowser("credits", () => {
  it("shows the budget, spent and balance, the usage chart and its table; a member sees a readable FORBIDDEN", async () => {
    await api(web.demoToken, `mutation Budget { setCreditBudget(monthlyBudget: 100) { monthlyBudget } }`);
    for (const query of ["descale espresso machine", "kettle limescale"]) {
      const answer = await api(web.demoToken, `query Web($query: String!) { webSearch(query: $query, providers: [SERPER]) { credits } }`, { query });
      expect(answer.webSearch.credits).toBe(3);
    }

    // The saved searches' runs above asked web.serper too (a saved search without providers asks all): read the ledger's figures.
    const { credits } = await api(web.demoToken, `query Credits { credits { spentThisMonth balance usage { calls credits } } }`);
    expect(credits.spentThisMonth).toBeGreaterThanOrEqual(6);
    const spent = String(credits.spentThisMonth);
    const calls = String(credits.usage.reduce((sum: number, row: { calls: number }) => sum + row.calls, 0));

    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    const opened = Date.now();
    await page.goto("/credits");
    const figures = page.locator(".credit-figures");
    await figures.waitFor(WAIT);
    await page.locator(".usage-chart svg").first().waitFor(WAIT);
    console.log(`credits page with its chart ${Date.now() - opened} ms after navigation`);
    expect(await figures.locator("dd").allTextContents()).toEqual(["100", spent, String(credits.balance)]);
    expect(await page.locator(".usage-chart").getAttribute("role")).toBe("img");
    expect(await page.locator(".usage-chart").getAttribute("aria-label")).toContain(`${spent} in total (Serper ${spent})`);
    expect(await page.locator(".usage-chart .recharts-bar-rectangle").count()).toBeGreaterThanOrEqual(1);
    const table = page.getByRole("table", { name: /Credits spent by day and provider/ });
    const today = new Date().toISOString().slice(0, 10);
    expect(await table.locator("tbody tr").first().locator("td").allTextContents()).toEqual([today, "Serper", calls, spent]);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, "credits");

    // A period without spending says "No data yet" instead of an empty chart; "This month" brings the usage back.
    await page.getByLabel("From (UTC)").fill("2020-01-01");
    await page.getByLabel("To (UTC, included)").fill("2020-01-31");
    await page.getByRole("button", { name: "Show" }).click();
    await page.getByTestId("credits-no-data").getByText("No data yet").waitFor(WAIT);
    expect(await table.count()).toBe(0);
    // An impossible period is explained, not sent.
    await page.getByLabel("To (UTC, included)").fill("2019-12-01");
    await page.getByRole("alert").filter({ hasText: "The end date is before the start date." }).waitFor(WAIT);
    expect(await page.getByRole("button", { name: "Show" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "This month" }).click();
    await table.getByRole("cell", { name: "Serper" }).waitFor(WAIT);
    expect(await problems.settled()).toEqual([]);
    await context.close();

    // A member reads the month's figures; the usage is for admins, and the page says so.
    const member = await web.context(await tokenFor(DEMO_ORGANIZATION.id, "user_grace", [], "member"));
    const memberPage = await member.newPage();
    const memberProblems = watchForProblems(memberPage);
    await memberPage.goto("/credits");
    await memberPage.getByText("Usage by day and provider is for administrators.").waitFor(WAIT);
    expect(await memberPage.locator(".credit-figures dd").allTextContents()).toEqual(["100", spent, String(credits.balance)]);
    expect(await memberPage.locator(".forbidden-note").textContent()).toContain("FORBIDDEN");
    expect(await memberPage.locator(".usage-chart").count()).toBe(0);
    expect(await seriousAccessibilityViolations(memberPage)).toEqual([]);
    await screenshot(memberPage, "credits-member");
    expect(await memberProblems.settled()).toEqual([]);
    await member.close();
  });
});
