/**
 * Errors a person can read (issue 21), in real Chromium against the whole product: a token the
 * gateway refuses (not a token, and one whose `exp` has passed) says so and opens the token
 * field; a spent rate limit (a small per-user budget configured for this stack) says when to try
 * again, from the gateway's Retry-After; a web provider that fails or times out shows on its chip
 * with the reason while the other providers' hits still show; and the gateway going away mid-
 * session (the browser offline, then the gateway really stopped) says the service cannot be
 * reached and offers to try again, which works once it is back. Never a blank page: each state
 * keeps the page's heading and navigation, has no serious accessibility violation (axe-core) and
 * is screenshotted for CI's output.
 *
 * Each test calls as a different demo user, so each spends a per-user rate-limit budget of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { randomBytes } from "node:crypto";
import type { BrowserContext, Page } from "playwright-core";
import { DEMO_ORGANIZATION } from "../../lib/demo-data/organization.js";
import { signToken } from "../../lib/tenancy/token.js";
import { SerperStandIn } from "../support/external/serper-stand-in.js";
import { TEST_AUTH } from "../support/tenants.js";
import { graphql } from "./support/graphql-client.js";
import { watchForProblems, type PageProblems } from "./support/page-problems.js";
import { browserAvailable, screenshot, seriousAccessibilityViolations, startWebStackWithSerper, demoTokenFor, type WebStackWithSerper } from "./support/web-stack.js";

const describeInBrowser = browserAvailable ? describe : describe.skip;
const WAIT = { timeout: 30_000 };
/** Per user and window: enough for a test's few page loads, small enough to spend on purpose. */
const USER_POINTS = 150;
const WINDOW_SECONDS = 600;
const PROVIDER_TIMEOUT_MS = 4_000;

let web: WebStackWithSerper;
let serper: SerperStandIn;

beforeAll(async () => {
  if (!browserAvailable) return;
  web = await startWebStackWithSerper({
    SECRETS_ENCRYPTION_KEYS: `test-key:${randomBytes(32).toString("base64")}`,
    // The search's own deadline for a provider comes first: a slow web provider is TIMEOUT.
    SEARCH_PROVIDER_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
    EXTERNAL_ATTEMPT_TIMEOUT_MS: "20000",
    EXTERNAL_CALL_TIMEOUT_MS: "20000",
    RATE_LIMIT_USER_POINTS: String(USER_POINTS),
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
  });
  serper = web.serper;
}, 240_000);
afterAll(async () => web?.stop());


interface Opened {
  context: BrowserContext;
  page: Page;
  problems: PageProblems;
}

async function open(path: string, token: string): Promise<Opened> {
  const context = await web.context(token);
  const page = await context.newPage();
  const problems = watchForProblems(page);
  await page.goto(path);
  return { context, page, problems };
}

const hits = (page: Page) => page.locator("ol.hit-list > li");
const searchBox = (page: Page) => page.getByRole("combobox", { name: /search conversations/i });
const alert = (page: Page, text: string | RegExp) => page.getByRole("alert").filter({ hasText: text });

/** Waits for the alert saying `text`; when it does not come, the failure says what the page showed instead. */
async function waitForAlert(page: Page, text: string | RegExp): Promise<void> {
  try {
    await alert(page, text).waitFor(WAIT);
  } catch (error) {
    const shown = await page.locator("body").innerText().catch(() => "(unreadable)");
    throw new Error(`no alert saying ${text} at ${page.url()}; the page shows:\n${shown.slice(0, 2000)}`, { cause: error });
  }
}

/**
 * What an error state must still be: the app around the message (its navigation and the page's
 * heading), the message itself, and no serious accessibility violation.
 */
async function expectReadablePage(page: Page, heading: string): Promise<void> {
  expect(await page.getByRole("navigation").count()).toBeGreaterThanOrEqual(1);
  expect(await page.getByRole("heading", { level: 1, name: heading }).isVisible()).toBe(true);
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
}

/** The page's problems, less the refusals and unreachable requests a test causes on purpose. */
async function unexpectedProblems(problems: PageProblems, expected: RegExp[]): Promise<string[]> {
  return (await problems.settled()).filter((problem) => !expected.some((pattern) => pattern.test(problem)));
}

describeInBrowser("errors a person can read", () => {
  it("a token that is not valid: says it was refused and opens the token field", async () => {
    const { context, page, problems } = await open("/?q=deadlock", "not-a-token");
    await waitForAlert(page, "Your token was refused");
    expect(await page.getByRole("alert").filter({ hasText: "Your token was refused" }).textContent()).toContain("UNAUTHENTICATED");
    const field = page.getByLabel("Bearer token");
    await field.waitFor({ state: "visible", ...WAIT });
    expect(await page.getByText("The gateway refused this token: enter a new one.").isVisible()).toBe(true);
    expect(await hits(page).count()).toBe(0);
    await expectReadablePage(page, "Search");
    await screenshot(page, "error-token-refused");
    expect(await unexpectedProblems(problems, [/^HTTP 401 /])).toEqual([]);
    await context.close();
  }, 120_000);

  it("an expired token: says it expired, and a new token entered in the field brings the results", async () => {
    const expired = await signToken({ organizationId: DEMO_ORGANIZATION.id, userId: "user_katherine", teamIds: [], role: "admin", name: "Katherine Johnson" }, TEST_AUTH, Math.floor(Date.now() / 1000) - 3600);
    // The gateway refuses it as the browser will see it.
    expect((await graphql(web.origin, expired, "{ __typename }")).status).toBe(401);
    // Not web.context(): its init script would put the expired token back at every load.
    const context = await web.browser.newContext({ baseURL: web.origin, viewport: { width: 1280, height: 900 } });
    await context.addInitScript((value) => {
      if (localStorage.getItem("context-search-token") === null) localStorage.setItem("context-search-token", value);
    }, expired);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    await page.goto("/?q=deadlock");
    await waitForAlert(page, "Your token has expired");
    expect(await alert(page, "Your token has expired").textContent()).toMatch(/It expired at .+ Enter a new token in the token field/);
    const field = page.getByLabel("Bearer token");
    await field.waitFor({ state: "visible", ...WAIT });
    await expectReadablePage(page, "Search");
    await screenshot(page, "error-token-expired");

    // From the keyboard: the field, a fresh token, Enter.
    await field.focus();
    await page.keyboard.type(await demoTokenFor("user_katherine"));
    await page.keyboard.press("Enter");
    await hits(page).first().waitFor(WAIT);
    expect(await page.getByRole("alert").count()).toBe(0);
    expect(await unexpectedProblems(problems, [/^HTTP 401 /])).toEqual([]);
    await context.close();
  }, 120_000);

  it("a spent rate limit (429): says so and when to try again, from the gateway's Retry-After", async () => {
    const token = await demoTokenFor("user_linus");
    // Spend the user's budget from outside the browser, one point a request.
    let retryAfter: number | undefined;
    for (let request = 0; request <= USER_POINTS + 5 && retryAfter === undefined; request++) {
      const response = await fetch(`${web.origin}/graphql`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ query: "{ __typename }" }) });
      if (response.status === 429) retryAfter = Number(response.headers.get("retry-after"));
      await response.arrayBuffer();
    }
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);

    const { context, page, problems } = await open("/?q=deadlock", token);
    await waitForAlert(page, "Too many requests");
    const message = alert(page, "Too many requests");
    const text = (await message.textContent())!;
    console.log(`rate-limited page says: ${text}`);
    expect(text).toContain("RATE_LIMITED");
    // The live region does not claim the search found nothing.
    expect(await page.locator(".search-status").textContent()).toBe("The search for “deadlock” did not complete.");
    // "Try again in 10 min (at 18:52:10)." or "in 42 s": the gateway's wait, not a made-up one.
    const wait = text.match(/Try again in (\d+) (s|min) \(at \d{1,2}:\d{2}:\d{2}/);
    expect(wait).not.toBeNull();
    const seconds = Number(wait![1]) * (wait![2] === "min" ? 60 : 1);
    expect(seconds).toBeGreaterThan(retryAfter! - 60 - 5);
    expect(seconds).toBeLessThanOrEqual(Math.ceil(retryAfter! / 60) * 60);
    expect(await message.getByRole("button", { name: "Try again" }).isVisible()).toBe(true);
    await expectReadablePage(page, "Search");
    await screenshot(page, "error-rate-limited");
    expect(await unexpectedProblems(problems, [/^HTTP 429 /])).toEqual([]);
    await context.close();
  }, 120_000);

  it.each([
    { fault: "server-error" as const, query: "kafka consumer lag", status: "Failed", user: "user_grace" },
    { fault: "slow" as const, query: "terraform state drift", status: "Timed out", user: "user_alan" },
  ])("a web provider that $status: the page says so in words, the details give the reason, the other providers' hits still show", async ({ fault, query, status, user }) => {
    if (fault === "slow") serper.delayMs = PROVIDER_TIMEOUT_MS + 3_000;
    else serper.fault = fault;
    try {
      const { context, page, problems } = await open(`/?q=${encodeURIComponent(query)}`, await demoTokenFor(user));
      // In words on the page; the provider, its status and reason in the search details.
      await page.getByRole("list", { name: "Sources that did not answer" }).getByText(/^Web results are unavailable right now/).waitFor({ timeout: 60_000 });
      await page.locator("details.search-details summary").click();
      const text = (await page.locator(".provider-table tbody tr").filter({ hasText: "web.serper" }).textContent())!;
      console.log(`${fault} web provider's row: ${text}`);
      expect(text).toMatch(new RegExp(`web\\.serper${status} — \\S+`));
      // The other providers answered: their rows say so and their hits are on the page.
      const answered = page.locator(".provider-table tbody tr").filter({ hasText: "Answered" });
      expect(await answered.count()).toBeGreaterThan(0);
      await hits(page).first().waitFor(WAIT);
      const kinds = await page.locator("ol.hit-list article").evaluateAll((articles) => articles.map((article) => article.getAttribute("data-kind")));
      expect(kinds.length).toBeGreaterThan(0);
      expect(kinds).not.toContain("WebResult");
      // A provider's failure is reported as a notice, not as the page's error.
      expect(await page.getByRole("alert").count()).toBe(0);
      await expectReadablePage(page, "Search");
      await screenshot(page, `error-provider-${fault}`);
      expect(await unexpectedProblems(problems, [])).toEqual([]);
      await context.close();
    } finally {
      serper.fault = null;
      serper.delayMs = 0;
    }
  }, 120_000);

  // Last: it stops the gateway.
  it("the gateway going away mid-session: the service cannot be reached, Try again works once it is back; stopped, every page still says so", async () => {
    const { context, page, problems } = await open("/?q=deadlock", await demoTokenFor("user_margaret"));
    await hits(page).first().waitFor(WAIT);

    // The network goes away under a page that is open: a new search cannot reach the gateway.
    await context.setOffline(true);
    await searchBox(page).fill("redis cache");
    await searchBox(page).press("Enter");
    const unreachable = alert(page, "The service cannot be reached");
    await waitForAlert(page, "The service cannot be reached");
    expect(await unreachable.textContent()).toContain("NETWORK_ERROR");
    await expectReadablePage(page, "Search");
    await screenshot(page, "error-gateway-unreachable");

    // Back: Try again (from the keyboard) brings the results without a reload.
    await context.setOffline(false);
    await unreachable.getByRole("button", { name: "Try again" }).focus();
    await page.keyboard.press("Enter");
    await hits(page).first().waitFor(WAIT);
    expect(await page.getByRole("alert").count()).toBe(0);
    expect(new URL(page.url()).searchParams.get("q")).toBe("redis cache");

    // The gateway really stops: a search, and a page whose script is not loaded yet, both say so.
    await web.test.stack.gateway.stop();
    await searchBox(page).fill("memory leak");
    await searchBox(page).press("Enter");
    await waitForAlert(page, "The service cannot be reached");
    await expectReadablePage(page, "Search");
    await screenshot(page, "error-gateway-stopped");
    await page.getByRole("navigation").getByRole("link", { name: "Credits" }).click();
    // The navigation is a transition: the search page, its own alert included, stays on screen
    // until the Credits page's script has failed. Wait for the search page to go first, or the
    // alert found is the search's and the page's may not have replaced it yet.
    await page.waitForURL("**/credits", WAIT);
    await page.getByRole("heading", { level: 1, name: "Search" }).waitFor({ ...WAIT, state: "detached" });
    await waitForAlert(page, "The service cannot be reached");
    await page.getByRole("alert").getByRole("button", { name: "Try again" }).waitFor(WAIT);
    expect(await page.getByRole("navigation").count()).toBeGreaterThanOrEqual(1);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, "error-gateway-stopped-page");
    // Failed loads are on the console while offline or stopped; React reports the error its boundary caught there too.
    const expected = [/net::ERR_(INTERNET_DISCONNECTED|CONNECTION_REFUSED|CONNECTION_RESET|EMPTY_RESPONSE)/, /dynamically imported module/];
    const left = await unexpectedProblems(problems, expected);
    expect(left.filter((problem) => problem.startsWith("page error"))).toEqual([]);
    console.log(`gateway-down console lines: ${JSON.stringify(left)}`);
    await context.close();
  }, 180_000);
});
