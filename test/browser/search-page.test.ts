/**
 * The search page in real Chromium (issue 21), against the whole product seeded with the demo
 * organization and a Serper stand-in that answers after 1 s (a slow web provider, as in
 * test/e2e/search-defer.test.ts): suggestions as you type (keyboard only), highlighted results
 * from conversations and documents with links to where they live, facets that filter through the
 * URL (reload and back/forward), "did you mean", more pages by button and by scrolling, the
 * LOCAL providers' page shown before the web hits stream in (`@defer`), and no serious
 * accessibility violation. It prints the time from the keystroke to the first result (p50).
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { randomBytes } from "node:crypto";
import type { Page } from "playwright-core";
import { SerperStandIn } from "../support/external/serper-stand-in.js";
import { tokenFor } from "../support/tenants.js";
import { watchForProblems, type PageProblems } from "./support/page-problems.js";
import { browserAvailable, screenshot, seriousAccessibilityViolations, startWebStackWithSerper, type WebStackWithSerper } from "./support/web-stack.js";

const describeInBrowser = browserAvailable ? describe : describe.skip;
/** Generous: a loaded 2-core machine runs the whole stack and Chromium. */
const WAIT = { timeout: 30_000 };
const WEB_DELAY_MS = 1_000;

let web: WebStackWithSerper;
let serper: SerperStandIn;

beforeAll(async () => {
  if (!browserAvailable) return;
  web = await startWebStackWithSerper({
    SECRETS_ENCRYPTION_KEYS: `test-key:${randomBytes(32).toString("base64")}`,
    // Room for the stand-in's second: it must be slow, not timed out.
    SEARCH_PROVIDER_TIMEOUT_MS: "5000",
    EXTERNAL_ATTEMPT_TIMEOUT_MS: "4000",
    EXTERNAL_CALL_TIMEOUT_MS: "4500",
  });
  serper = web.serper;
  serper.delayMs = WEB_DELAY_MS;
}, 240_000);
afterAll(async () => web?.stop());

interface OpenedPage {
  page: Page;
  /** Browser errors and failed requests, read once the test is done (`problemsOf`). */
  problems: PageProblems;
}

/** Opens `path` as the demo admin, noting every page error, console error and failed request (page-problems.ts). */
async function openPage(path: string, token = web.demoToken): Promise<OpenedPage> {
  const context = await web.context(token);
  const page = await context.newPage();
  const opened: OpenedPage = { page, problems: watchForProblems(page) };
  await page.goto(path);
  return opened;
}

function problemsOf(opened: OpenedPage): Promise<string[]> {
  return opened.problems.settled();
}

const hits = (page: Page) => page.locator("ol.hit-list > li");
const searchBox = (page: Page) => page.getByRole("combobox", { name: /search conversations/i });

/** Waits until the page shows every provider's results (the deferred part arrived). */
async function waitForCompleteResults(page: Page): Promise<void> {
  await hits(page).first().waitFor(WAIT);
  await page.waitForFunction(() => {
    const status = document.querySelector(".search-status")?.textContent ?? "";
    return status !== "" && !status.includes("arriving") && !status.includes("Searching");
  }, undefined, WAIT);
}

const kindsShown = (page: Page) => page.locator("ol.hit-list article").evaluateAll((articles) => articles.map((article) => article.getAttribute("data-kind")));
const titlesShown = (page: Page) => page.locator("ol.hit-list .hit-title").allTextContents();

describeInBrowser("the search page", () => {
  it("suggests as you type and is usable from the keyboard alone: Tab to the box, type, ArrowDown and Enter", async () => {
    const opened = await openPage("/");
    const { page } = opened;
    await page.getByRole("heading", { level: 1, name: "Search" }).waitFor(WAIT);
    // Tab from the top of the page until the search box has focus.
    for (let presses = 0; presses < 20; presses++) {
      await page.keyboard.press("Tab");
      if (await page.evaluate(() => document.activeElement?.getAttribute("role") === "combobox")) break;
    }
    expect(await page.evaluate(() => document.activeElement?.getAttribute("role"))).toBe("combobox");
    const box = searchBox(page);
    expect(await box.getAttribute("aria-expanded")).toBe("false");

    // Letter by letter, as a person types.
    await page.keyboard.type("dead", { delay: 80 });
    const listbox = page.getByRole("listbox", { name: "Suggestions" });
    await listbox.waitFor({ state: "visible", ...WAIT });
    expect(await box.getAttribute("aria-expanded")).toBe("true");
    expect(await box.getAttribute("aria-controls")).toBe(await listbox.getAttribute("id"));
    await screenshot(page, "search-page");
    const options = await listbox.getByRole("option").allTextContents();
    expect(options.length).toBeGreaterThan(0);
    // Every suggestion completes what was typed (at its start or at a later word).
    const suggestionTexts = await listbox.locator(".suggestion-text").allTextContents();
    for (const text of suggestionTexts) expect(text.toLowerCase()).toMatch(/(^|\s)dead/);
    // What was typed stays plain, placed by the server's ranges; the completion around it is bold.
    const typedParts = await listbox.locator(".suggestion-text").evaluateAll((elements) => elements.map((element) => [...element.querySelectorAll(":scope > span")].map((span) => span.textContent).join("")));
    expect(typedParts.map((typed) => typed.toLowerCase())).toEqual(suggestionTexts.map(() => "dead"));
    expect(await listbox.locator(".suggestion-text b").count()).toBeGreaterThan(0);

    await page.keyboard.press("ArrowDown");
    const firstOption = listbox.getByRole("option").first();
    expect(await box.getAttribute("aria-activedescendant")).toBe(await firstOption.getAttribute("id"));
    expect(await firstOption.getAttribute("aria-selected")).toBe("true");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowUp");
    expect(await box.getAttribute("aria-activedescendant")).toBe(await firstOption.getAttribute("id"));

    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.searchParams.get("q") === suggestionTexts[0], WAIT);
    await hits(page).first().waitFor(WAIT);
    expect(await box.inputValue()).toBe(suggestionTexts[0]);
    expect(await box.getAttribute("aria-expanded")).toBe("false");

    // Escape closes an open list; focus stays in the box.
    await box.fill("");
    await page.keyboard.type("kafk", { delay: 80 });
    await listbox.waitFor({ state: "visible", ...WAIT });
    await page.keyboard.press("Escape");
    await listbox.waitFor({ state: "hidden", ...WAIT });
    expect(await page.evaluate(() => document.activeElement?.getAttribute("role"))).toBe("combobox");
    expect(await problemsOf(opened)).toEqual([]);
    await page.context().close();
  }, 120_000);

  it("ignores suggestions that answer a prefix the box no longer holds", async () => {
    const opened = await openPage("/");
    const { page } = opened;
    // The answer for "dead" is held until the answer for "deadlock" has been shown.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let heldSent!: () => void;
    const held = new Promise<void>((resolve) => (heldSent = resolve));
    await page.route("**/graphql", async (route) => {
      const body = route.request().postDataJSON() as { variables?: { prefix?: string } } | null;
      if (body?.variables?.prefix === "dead") {
        heldSent();
        await released;
      }
      await route.continue();
    });
    const box = searchBox(page);
    await box.waitFor(WAIT);
    await box.click();
    await page.keyboard.type("dead", { delay: 20 });
    await held;
    await page.keyboard.type("lock", { delay: 20 });
    const listbox = page.getByRole("listbox", { name: "Suggestions" });
    await listbox.waitFor({ state: "visible", ...WAIT });
    const fresh = await listbox.locator(".suggestion-text").allTextContents();
    for (const text of fresh) expect(text.toLowerCase()).toMatch(/(^|\s)deadlock/);
    const staleAnswer = page.waitForResponse((response) => (response.request().postDataJSON() as { variables?: { prefix?: string } } | null)?.variables?.prefix === "dead", WAIT);
    release();
    await staleAnswer;
    // Two frames for the client to have read the stale answer, had it used it.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    expect(await listbox.locator(".suggestion-text").allTextContents()).toEqual(fresh);
    expect(await problemsOf(opened)).toEqual([]);
    await page.context().close();
  }, 120_000);

  it("shows highlighted results from conversations and documents, each linked where it lives; axe finds nothing serious", async () => {
    const opened = await openPage("/?q=deadlock");
    const { page } = opened;
    await waitForCompleteResults(page);
    const kinds = await kindsShown(page);
    expect(kinds).toContain("Conversation");
    expect(kinds).toContain("DocumentChunk");

    // Matched words are <mark>ed: every mark is a form of the query word (English stemming).
    const marks = await page.locator("ol.hit-list mark").allTextContents();
    expect(marks.length).toBeGreaterThan(0);
    for (const mark of marks) expect(mark.toLowerCase()).toMatch(/^deadlock/);

    const conversationLink = page.locator('article[data-kind="Conversation"] .hit-title a').first();
    const conversationHref = new URL((await conversationLink.getAttribute("href"))!, web.origin);
    expect(conversationHref.pathname).toMatch(/^\/conversations\/[0-9a-f-]{36}$/);
    expect(conversationHref.searchParams.get("message")).toMatch(/^[0-9a-f-]{36}$/);
    expect(conversationHref.searchParams.get("q")).toBe("deadlock");
    const documentLink = page.locator('article[data-kind="DocumentChunk"] .hit-title a').first();
    const documentHref = new URL((await documentLink.getAttribute("href"))!, web.origin);
    expect(documentHref.pathname).toMatch(/^\/documents\/[0-9a-f-]{36}$/);
    expect(documentHref.searchParams.get("chunk")).toMatch(/^[0-9a-f-]{36}$/);
    expect(documentHref.searchParams.get("q")).toBe("deadlock");
    // A web hit opens its page in a new tab, without handing it this window.
    const webLink = page.locator('article[data-kind="WebResult"] .hit-title a').first();
    expect(await webLink.getAttribute("target")).toBe("_blank");
    expect(await webLink.getAttribute("rel")).toBe("noopener noreferrer");
    expect(await webLink.getAttribute("href")).toMatch(/^https:\/\//);

    // Who and when on every card of ours: a name (never a token subject) and a date.
    const conversationMeta = page.locator('article[data-kind="Conversation"] .hit-meta').first();
    expect(await conversationMeta.locator(".person-name").textContent()).toMatch(/^[A-Z][a-z]+ [A-Z][a-z]+$/);
    expect(await conversationMeta.locator("time").getAttribute("datetime")).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(await page.locator('article[data-kind="DocumentChunk"] .hit-meta .person-name').first().textContent()).toMatch(/^[A-Z][a-z]+ [A-Z][a-z]+$/);
    expect(await page.locator("ol.hit-list").textContent()).not.toMatch(/user_[a-z]+/);

    // The engine's vocabulary is out of the way: no provider id, no alpha, no "fused window"
    // on the page as a person reads it; the search details hold them for developers.
    const details = page.locator("details.search-details");
    expect(await details.getAttribute("open")).toBeNull();
    const visible = await page.locator("main").innerText();
    for (const jargon of [/conversations\.keyword/, /web\.serper/, /alpha/i, /fused/i, /providers? skipped/i]) expect(visible).not.toMatch(jargon);
    await details.locator("summary").click();
    const rows = await details.locator(".provider-table tbody tr").allTextContents();
    expect(rows.some((row) => /Conversations · words.*conversations\.keyword.*Answered/.test(row))).toBe(true);
    expect(rows.some((row) => /Web \(Serper\).*web\.serper.*Answered/.test(row))).toBe(true);
    // Providers not asked (unconfigured sources, no weight at this alpha) say why.
    for (const row of rows.filter((text) => /Not asked/.test(text))) expect(row).toMatch(/Not asked — \S/);
    expect(await details.locator(".search-details-facts").textContent()).toMatch(/Keyword weight \(alpha\)\d\.\d\d/);
    await screenshot(page, "search-details");
    await details.locator("summary").click();

    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, "search-results");
    expect(await problemsOf(opened)).toEqual([]);
    await page.context().close();
  }, 120_000);

  it("filters by a facet through the URL: the results change, the count agrees, reload and back/forward give the same searches", async () => {
    const opened = await openPage("/?q=deadlock");
    const { page } = opened;
    await waitForCompleteResults(page);
    const before = await kindsShown(page);
    const documents = page.getByRole("group", { name: "Type" }).getByRole("checkbox", { name: /^Documents/ });
    const facetCount = Number((await documents.locator("xpath=..").textContent())!.match(/\((\d+)\)/)![1]);
    const conversationsCount = Number((await page.getByRole("group", { name: "Type" }).getByRole("checkbox", { name: /^Conversations/ }).locator("xpath=..").textContent())!.match(/\((\d+)\)/)![1]);

    // The tick must show at once, however long the new search takes to render: on a slow CPU
    // (CI's, emulated here 20× slower) the router's transition commits late, and a controlled
    // checkbox without an optimistic state sprang back, so `check()` saw it unticked.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Emulation.setCPUThrottlingRate", { rate: 20 });
    await documents.check();
    await cdp.send("Emulation.setCPUThrottlingRate", { rate: 1 });
    await page.waitForURL((url) => url.searchParams.getAll("kind").join() === "DOCUMENT_CHUNK" && url.searchParams.get("q") === "deadlock", WAIT);
    await page.waitForFunction(() => [...document.querySelectorAll("ol.hit-list article")].every((article) => article.getAttribute("data-kind") === "DocumentChunk") && document.querySelectorAll("ol.hit-list article").length > 0, undefined, WAIT);
    await waitForCompleteResults(page);
    const filtered = await kindsShown(page);
    expect(new Set(filtered)).toEqual(new Set(["DocumentChunk"]));
    expect(filtered).not.toEqual(before);
    // The facet counts the documents in the unfiltered search's candidate window; the filtered
    // search finds at least those (the filter runs inside each provider, so it may reach
    // documents past that window). A page of 20 holds them all when there are fewer.
    const more = await page.getByRole("button", { name: "Load more results" }).count();
    console.log(`facet "Documents" counted ${facetCount} in the window; the filtered search shows ${filtered.length}${more ? " and has more" : ""}`);
    if (facetCount <= 20 && !more) expect(filtered.length).toBeGreaterThanOrEqual(facetCount);
    const filteredTitles = await titlesShown(page);

    // Disjunctive within the group: "Conversations" stays listed with the count it had, and
    // ticking it too widens the list to both kinds (OR), in the URL as two values.
    const conversations = page.getByRole("group", { name: "Type" }).getByRole("checkbox", { name: /^Conversations/ });
    await page.waitForFunction((count) => [...document.querySelectorAll(".facet label")].some((label) => label.textContent === `Conversations (${count})`), conversationsCount, WAIT);
    await screenshot(page, "search-facets-widen");
    await conversations.check();
    await page.waitForURL((url) => url.searchParams.getAll("kind").sort().join() === "CONVERSATION,DOCUMENT_CHUNK", WAIT);
    await page.waitForFunction(() => new Set([...document.querySelectorAll("ol.hit-list article")].map((article) => article.getAttribute("data-kind"))).size === 2, undefined, WAIT);
    await waitForCompleteResults(page);
    expect(new Set(await kindsShown(page))).toEqual(new Set(["Conversation", "DocumentChunk"]));
    await page.goBack();
    await page.waitForURL((url) => url.searchParams.getAll("kind").join() === "DOCUMENT_CHUNK", WAIT);
    await waitForCompleteResults(page);

    await page.reload();
    await waitForCompleteResults(page);
    expect(await titlesShown(page)).toEqual(filteredTitles);
    expect(await page.getByRole("group", { name: "Type" }).getByRole("checkbox", { name: /^Documents/ }).isChecked()).toBe(true);
    expect(await searchBox(page).inputValue()).toBe("deadlock");

    await page.goBack();
    await page.waitForURL((url) => url.searchParams.getAll("kind").length === 0 && url.searchParams.get("q") === "deadlock", WAIT);
    await page.waitForFunction(() => [...document.querySelectorAll("ol.hit-list article")].some((article) => article.getAttribute("data-kind") === "Conversation"), undefined, WAIT);
    await page.goForward();
    await page.waitForURL((url) => url.searchParams.getAll("kind").join() === "DOCUMENT_CHUNK", WAIT);
    await page.waitForFunction(() => [...document.querySelectorAll("ol.hit-list article")].every((article) => article.getAttribute("data-kind") === "DocumentChunk") && document.querySelectorAll("ol.hit-list article").length > 0, undefined, WAIT);
    expect(await problemsOf(opened)).toEqual([]);
    await page.context().close();
  }, 120_000);

  it("chooses the search mode in words, kept in the URL as alpha, with the exact mix in the details", async () => {
    const opened = await openPage("/?q=kafka%20consumer%20lag");
    const { page } = opened;
    await waitForCompleteResults(page);
    const modes = page.getByRole("group", { name: "Match" });
    // The deployment's default is the recommended mode, chosen while the URL names no alpha.
    const recommended = modes.getByRole("radio", { name: /recommended/ });
    expect(await recommended.isChecked()).toBe(true);
    await modes.getByRole("radio", { name: /^Balanced/ }).check();
    await page.waitForURL((url) => url.searchParams.get("alpha") === "0.5" && url.searchParams.get("q") === "kafka consumer lag", WAIT);
    await waitForCompleteResults(page);
    await modes.getByRole("radio", { name: /^By meaning/ }).check();
    await page.waitForURL((url) => url.searchParams.get("alpha") === "0", WAIT);
    await waitForCompleteResults(page);
    await screenshot(page, "search-by-meaning");
    // Back to the recommended mode: the alpha is the deployment's again.
    await recommended.check();
    await page.waitForURL((url) => !url.searchParams.has("alpha"), WAIT);

    // Any other mix, from the slider in the details, reads as a custom mix.
    await page.locator("details.search-details summary").click();
    const slider = page.getByRole("slider", { name: /alpha/i });
    const start = Number(await slider.inputValue());
    await slider.focus();
    await page.keyboard.press(start > 0 ? "ArrowLeft" : "ArrowRight");
    const moved = start > 0 ? start - 0.05 : 0.05;
    await page.waitForURL((url) => Math.abs(Number(url.searchParams.get("alpha")) - moved) < 1e-9, WAIT);
    await modes.getByText("Custom mix").waitFor(WAIT);
    expect(await modes.getByRole("radio", { checked: true }).count()).toBe(0);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    expect(await problemsOf(opened)).toEqual([]);
    await page.context().close();
  }, 120_000);

  it("sorts by newest: the same best candidates, newest first, kept in the URL", async () => {
    const opened = await openPage("/?q=deadlock");
    const { page } = opened;
    await waitForCompleteResults(page);
    const best = await titlesShown(page);
    await page.getByRole("combobox", { name: "Sort by" }).selectOption("newest");
    await page.waitForURL((url) => url.searchParams.get("sort") === "newest", WAIT);
    await page.waitForFunction((before) => [...document.querySelectorAll("ol.hit-list .hit-title")].map((title) => title.textContent).join("|") !== before, best.join("|"), WAIT);
    await waitForCompleteResults(page);
    const dates = await page.locator("ol.hit-list .hit-meta time").evaluateAll((times) => times.map((time) => time.getAttribute("datetime")!));
    expect(dates.length).toBeGreaterThan(1);
    expect([...dates].sort().reverse()).toEqual(dates);
    await page.reload();
    await waitForCompleteResults(page);
    expect(await page.getByRole("combobox", { name: "Sort by" }).inputValue()).toBe("newest");
    expect(await problemsOf(opened)).toEqual([]);
    await page.context().close();
  }, 120_000);

  it("shows results as you type, without Enter, and back goes to the search before the typing", async () => {
    const opened = await openPage("/?q=deadlock");
    const { page } = opened;
    await waitForCompleteResults(page);
    const box = searchBox(page);
    await box.fill("");
    await box.focus();
    // Two pauses: the first adds a history entry, the second replaces it.
    await page.keyboard.type("kafka", { delay: 60 });
    await page.waitForURL((url) => url.searchParams.get("q") === "kafka", WAIT);
    await page.keyboard.type(" lag", { delay: 60 });
    await page.waitForURL((url) => url.searchParams.get("q") === "kafka lag", WAIT);
    await waitForCompleteResults(page);
    expect(await box.inputValue()).toBe("kafka lag");
    expect((await titlesShown(page)).length).toBeGreaterThan(0);
    await page.goBack();
    await page.waitForURL((url) => url.searchParams.get("q") === "deadlock", WAIT);
    expect(await problemsOf(opened)).toEqual([]);
    await page.context().close();
  }, 120_000);

  it("opens a hit and comes back to the same list: its pages, filters and scroll position", async () => {
    const opened = await openPage("/?q=database&kind=CONVERSATION");
    const { page } = opened;
    await waitForCompleteResults(page);
    expect(await hits(page).count()).toBe(20);
    await page.getByRole("button", { name: "Load more results" }).click();
    await page.waitForFunction(() => document.querySelectorAll("ol.hit-list > li").length > 20, undefined, WAIT);
    const shown = await titlesShown(page);
    const target = hits(page).nth(22);
    await target.scrollIntoViewIfNeeded();
    const scrolled = await page.evaluate(() => window.scrollY);
    expect(scrolled).toBeGreaterThan(0);
    await target.locator(".hit-title a").click();
    await page.waitForURL((url) => url.pathname.startsWith("/conversations/"), WAIT);
    await page.getByRole("link", { name: "← Back to results" }).click();
    await page.waitForURL((url) => url.pathname === "/" && url.searchParams.get("kind") === "CONVERSATION" && url.searchParams.get("q") === "database", WAIT);
    await page.waitForFunction((count) => document.querySelectorAll("ol.hit-list > li").length === count, shown.length, WAIT);
    expect(await titlesShown(page)).toEqual(shown);
    await page.waitForFunction((at) => Math.abs(window.scrollY - at) < 5, scrolled, WAIT);
    expect(await page.getByRole("group", { name: "Type" }).getByRole("checkbox", { name: /^Conversations/ }).isChecked()).toBe(true);
    expect(await problemsOf(opened)).toEqual([]);
    await page.context().close();
  }, 120_000);

  it('offers "did you mean" for a misspelled word, says what else it searched, and runs the corrected query', async () => {
    const opened = await openPage("/?q=deadlcok");
    const { page } = opened;
    const correction = page.locator(".did-you-mean a").first();
    await correction.waitFor(WAIT);
    expect(await correction.textContent()).toBe("deadlock");
    expect(await page.locator(".correction-detail").textContent()).toMatch(/^Also searched: deadlock.* for “deadlcok”\. Search only for “deadlcok”$/);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, "search-did-you-mean");
    await correction.click();
    await page.waitForURL((url) => url.searchParams.get("q") === "deadlock", WAIT);
    await waitForCompleteResults(page);
    expect(await searchBox(page).inputValue()).toBe("deadlock");
    expect(await page.locator(".did-you-mean").count()).toBe(0);
    expect(await problemsOf(opened)).toEqual([]);
    await page.context().close();
  }, 120_000);

  it("searches only the words as typed from the correction notice, and back", async () => {
    const opened = await openPage("/?q=deadlcok");
    const { page } = opened;
    await waitForCompleteResults(page);
    const marked = () => page.locator("ol.hit-list mark").allTextContents();
    // Keyword hits found through the correction, marked where they hold it.
    expect((await marked()).map((word) => word.toLowerCase())).toContain("deadlock");
    await page.getByRole("link", { name: "Search only for “deadlcok”" }).click();
    await page.waitForURL((url) => url.searchParams.get("exact") === "1" && url.searchParams.get("q") === "deadlcok", WAIT);
    // The word as typed occurs nowhere in the demo: what is left is found by meaning (nothing
    // marked), no suggestion, and a way back.
    const back = page.getByRole("link", { name: "Include likely corrections of misspelled words" });
    await back.waitFor(WAIT);
    await waitForCompleteResults(page);
    // The exact search's page replaces the corrected one's in a transition: wait for it to land.
    await page.waitForFunction(() => document.querySelectorAll("ol.hit-list mark").length === 0 && document.querySelectorAll("ol.hit-list > li").length > 0, undefined, WAIT);
    expect(await page.locator(".correction-detail").count()).toBe(0);
    await back.click();
    await page.waitForURL((url) => url.searchParams.get("exact") === null && url.searchParams.get("q") === "deadlcok", WAIT);
    await page.locator(".correction-detail").waitFor(WAIT);
    await waitForCompleteResults(page);
    expect((await marked()).map((word) => word.toLowerCase())).toContain("deadlock");
    expect(await problemsOf(opened)).toEqual([]);
    await page.context().close();
  }, 120_000);

  it("loads more results with the button and by scrolling to the end of the list", async () => {
    const opened = await openPage("/?q=database");
    const { page } = opened;
    await waitForCompleteResults(page);
    expect(await hits(page).count()).toBe(20);
    const loadMore = page.getByRole("button", { name: "Load more results" });
    await loadMore.focus();
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.querySelectorAll("ol.hit-list > li").length > 20, undefined, WAIT);
    const afterButton = await hits(page).count();
    // Pages never repeat a hit.
    const titles = await titlesShown(page);
    const links = await page.locator("ol.hit-list .hit-title a").evaluateAll((anchors) => anchors.map((anchor) => anchor.getAttribute("href")));
    expect(new Set(links).size).toBe(links.length);
    console.log(`"database": ${titles.length} hits after the button`);

    if (await loadMore.count()) {
      await page.locator(".load-more").scrollIntoViewIfNeeded();
      await page.waitForFunction((count) => document.querySelectorAll("ol.hit-list > li").length > count, afterButton, WAIT);
      console.log(`"database": ${await hits(page).count()} hits after scrolling`);
    }
    expect(await problemsOf(opened)).toEqual([]);
    await page.context().close();
  }, 120_000);

  it("shows the LOCAL providers' hits first and the web hits when the slow provider answers (@defer)", async () => {
    const opened = await openPage("/");
    const { page } = opened;
    // What appeared when, seen from the page itself.
    await page.evaluate(() => {
      const seen: Record<string, number> = {};
      (window as unknown as { seen: Record<string, number> }).seen = seen;
      new MutationObserver(() => {
        const list = document.querySelector("ol.hit-list");
        if (list && seen.firstHit === undefined) {
          seen.firstHit = performance.now();
          seen.webHitsWithFirst = list.querySelectorAll('[data-kind="WebResult"]').length;
        }
        if ((document.querySelector(".search-status")?.textContent ?? "").includes("Web results arriving") && seen.arriving === undefined) seen.arriving = performance.now();
        if (document.querySelector('ol.hit-list [data-kind="WebResult"]') && seen.webHit === undefined) seen.webHit = performance.now();
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    });
    const answered: number[] = [];
    serper.onAnswer = () => answered.push(Date.now());
    // The stand-in holds its answer until the page shows its first hits (3 s at most, under the
    // 4 s attempt timeout), so the order does not depend on how busy the machine is.
    const release = serper.holdUntilReleased(3_000);
    try {
      // A query no other test asks: the external-search service keeps web answers for a day.
      await searchBox(page).fill("slow consumer rebalancing");
      await page.keyboard.press("Enter");
      await hits(page).first().waitFor(WAIT);
      release();
      await page.locator('ol.hit-list [data-kind="WebResult"]').first().waitFor(WAIT);
    } finally {
      release();
      serper.hold = null;
      serper.onAnswer = null;
    }
    const seen = await page.evaluate(() => (window as unknown as { seen: Record<string, number> }).seen);
    expect(seen.firstHit).toBeDefined();
    expect(seen.webHitsWithFirst).toBe(0);
    expect(seen.arriving).toBeDefined();
    expect(seen.webHit!).toBeGreaterThan(seen.firstHit!);
    expect(answered.length).toBeGreaterThan(0);
    console.log(`@defer: first (LOCAL) hits shown ${(seen.webHit! - seen.firstHit!).toFixed(0)} ms before the web hits (the stand-in waits ${WEB_DELAY_MS} ms, and until the first hits show)`);
    expect(await problemsOf(opened)).toEqual([]);
    await page.context().close();
  }, 120_000);

  it("says in words when the web did not answer, with the reason in the details, and shows the other results", async () => {
    serper.fault = "server-error";
    try {
      const opened = await openPage("/?q=terraform%20state%20drift");
      const { page } = opened;
      const notice = page.getByRole("list", { name: "Sources that did not answer" });
      await notice.getByText(/^Web results are unavailable right now/).waitFor(WAIT);
      await page.locator("details.search-details summary").click();
      const row = (await page.locator(".provider-table tbody tr").filter({ hasText: "web.serper" }).textContent())!;
      console.log(`failed provider's row: ${row}`);
      // The reason is in words, after the status.
      expect(row).toMatch(/(Failed|Timed out) — \S+/);
      await hits(page).first().waitFor(WAIT);
      expect(await kindsShown(page)).not.toContain("WebResult");
      expect(await problemsOf(opened)).toEqual([]);
      await page.context().close();
    } finally {
      serper.fault = null;
    }
  }, 120_000);

  it("says when nothing matched (another organization sees none of the demo's conversations) and when the token is refused", async () => {
    const other = await tokenFor("org-other", "someone");
    const opened = await openPage("/?q=deadlock&kind=CONVERSATION", other);
    const { page } = opened;
    await page.getByText("Nothing matched “deadlock”.").waitFor(WAIT);
    expect(await page.getByRole("status").filter({ hasText: "No results" }).count()).toBe(1);
    expect(await hits(page).count()).toBe(0);
    expect(await problemsOf(opened)).toEqual([]);
    await page.context().close();

    const refused = await web.context("not-a-token");
    const refusedPage = await refused.newPage();
    await refusedPage.goto("/?q=deadlock");
    await refusedPage.getByRole("alert").filter({ hasText: "Your token was refused" }).waitFor(WAIT);
    await refused.close();
  }, 120_000);

  it("measures the time from the keystroke to the first results", async () => {
    const opened = await openPage("/");
    const { page } = opened;
    // The first page's own start-up request (the default alpha) is answered before the loop
    // navigates away: its first attempt is the persisted-query miss (404), and a navigation that
    // cut it off left its body unreadable, which page-problems.ts must report (seen under load 8).
    await page.waitForLoadState("networkidle");
    const queries = ["kafka rebalance", "terraform drift", "memory leak", "redis cache", "docker image", "oauth token", "cors error", "flaky tests", "autoscaling pods"];
    const timings: number[] = [];
    // What goes out from the keystroke to the first results: the search (and, at times, the
    // suggestions of the last prefix), nothing the page could have asked for earlier (before,
    // the slider's default alpha went out beside the search).
    const sentAfterKey: string[] = [];
    // How many times each query's search went out: the page sends it at Enter and its query joins
    // that request when it has rendered (startSearch in web/src/search/useSearchResults.ts).
    const searchesSent: number[] = [];
    let measuring = false;
    page.on("request", (request) => {
      if (!measuring || new URL(request.url()).pathname !== "/graphql") return;
      const operation = request.postData()?.match(/"operationName":"(\w+)"/)?.[1] ?? "?";
      sentAfterKey.push(operation);
      if (operation === "SearchPageStreamed") searchesSent[searchesSent.length - 1]! += 1;
    });
    for (const query of queries) {
      await page.goto("/");
      await searchBox(page).waitFor(WAIT);
      // The page's own start-up requests (the default alpha) are done before the clock starts.
      await page.waitForLoadState("networkidle");
      await searchBox(page).fill(query.slice(0, -1));
      // The clock starts at the last character's keystroke; the query runs at Enter right after.
      await page.evaluate(() => {
        const marks: Record<string, number> = {};
        (window as unknown as { marks: Record<string, number> }).marks = marks;
        document.addEventListener("keydown", () => (marks.lastKey ??= performance.now()), { capture: true });
        new MutationObserver(() => {
          if (marks.firstResult === undefined && document.querySelector("ol.hit-list > li, .search-zero")) marks.firstResult = performance.now();
        }).observe(document.body, { childList: true, subtree: true });
      });
      searchesSent.push(0);
      measuring = true;
      await page.keyboard.type(query.slice(-1));
      await page.keyboard.press("Enter");
      await page.locator("ol.hit-list > li, .search-zero").first().waitFor(WAIT);
      measuring = false;
      const marks = await page.evaluate(() => (window as unknown as { marks: Record<string, number> }).marks);
      timings.push(marks.firstResult! - marks.lastKey!);
    }
    const sorted = [...timings].sort((a, b) => a - b);
    const p50 = sorted[Math.floor(sorted.length / 2)]!;
    console.log(`keystroke to first results over ${timings.length} queries: p50 ${p50.toFixed(0)} ms, min ${sorted[0]!.toFixed(0)} ms, max ${sorted[sorted.length - 1]!.toFixed(0)} ms (${timings.map((t) => t.toFixed(0)).join(", ")})`);
    expect(sentAfterKey).toContain("SearchPageStreamed");
    // Once per query; the first may go twice, when the gateway has not seen the operation's
    // persisted-query hash yet and asks for the document (apollo.ts).
    expect(searchesSent[0]).toBeLessThanOrEqual(2);
    expect(searchesSent.slice(1)).toEqual(queries.slice(1).map(() => 1));
    // The knowledge bases' names follow the results' facets, and the answer panel's settings
    // follow the results (AnswerPanel.tsx), so they may go out before the wait above returns.
    const answeringResults = new Set(["SearchPageStreamed", "SearchBoxSuggestions", "SearchFacetKnowledgeBaseNames", "SearchPageAnswerSettings"]);
    expect(sentAfterKey.filter((operation) => !answeringResults.has(operation))).toEqual([]);
    expect(await problemsOf(opened)).toEqual([]);
    await page.context().close();
  }, 240_000);
});
