/**
 * The web app's shell in real Chromium (issue 21): the gateway serves the built app at `/` with a
 * strict CSP and every page of it loads without a browser error or a request to another origin,
 * answers keyboard navigation, and has no serious or critical accessibility violation (axe-core).
 * Pages' own behaviour: the other files of test/browser.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { watchForProblems } from "./support/page-problems.js";
import { browserAvailable, screenshot, seriousAccessibilityViolations, startWebStack, type WebStack } from "./support/web-stack.js";

const describeInBrowser = browserAvailable ? describe : describe.skip;
let web: WebStack;

beforeAll(async () => {
  if (browserAvailable) web = await startWebStack();
}, 180_000);
afterAll(async () => web?.stop());

describeInBrowser("the web app's shell", () => {
  it("serves the app at / with a strict CSP; GraphiQL stays at /graphql", async () => {
    const app = await fetch(`${web.origin}/`, { headers: { accept: "text/html", "accept-encoding": "br, gzip" } });
    expect(app.status).toBe(200);
    expect(app.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await app.text()).toContain('<div id="root">');
    // Compressed once at start (compressed-body.ts): the client's encoding, and 304 for a current copy.
    expect(app.headers.get("content-encoding")).toBe("br");
    const revalidated = await fetch(`${web.origin}/`, { headers: { accept: "text/html", "if-none-match": app.headers.get("etag")! } });
    expect(revalidated.status).toBe(304);
    const graphiql = await fetch(`${web.origin}/graphql`, { headers: { accept: "text/html" } });
    expect(await graphiql.text()).toMatch(/graphiql/i);
    // A path the build does not hold is never read from disk.
    expect((await fetch(`${web.origin}/assets/..%2f..%2fpackage.json`)).status).not.toBe(200);
  });

  it.each(["/", "/documents", "/saved", "/credits", "/analytics"])("loads %s with no browser error, no outside request and no serious accessibility violation", async (route) => {
    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    const outside: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(web.origin) && !request.url().startsWith("data:")) outside.push(`outside request: ${request.url()}`);
    });
    await page.goto(route);
    await page.waitForLoadState("networkidle");
    await page.getByRole("main").waitFor();
    // A lazy page renders after its chunk is evaluated, which on a loaded machine can come after the network went idle.
    await page.getByRole("heading", { level: 1 }).first().waitFor({ timeout: 30_000 });
    expect(await page.getByRole("heading", { level: 1 }).count()).toBeGreaterThanOrEqual(1);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, `shell${route === "/" ? "-search" : route.replace(/\//g, "-")}`);
    expect([...(await problems.settled()), ...outside]).toEqual([]);
    await context.close();
  });

  it("is usable from the keyboard: the skip link moves focus to the page's content", async () => {
    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    await page.goto("/credits");
    // The app renders after its script runs: a Tab before that lands on the bare document.
    await page.getByRole("heading", { level: 1 }).waitFor({ timeout: 30_000 });
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.activeElement?.id === "main", undefined, { timeout: 10_000 }).catch(() => undefined);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");
    await context.close();
  });
});
