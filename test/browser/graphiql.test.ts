/**
 * The gateway's GraphiQL in real Chromium (issue 38): the page loads the schema by introspection
 * (it used to show "Error fetching schema": the gateway refused the introspection query for the
 * `__typename` aliases its own response cache adds), the docs explorer shows `Query.search`, and
 * the editor autocompletes a field from the schema. Every wait is on what the page shows.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Browser } from "playwright-core";
import { startTestStack, type TestStack } from "../support/stack.js";
import { watchForProblems } from "./support/page-problems.js";
import { browserAvailable, launchChromium, screenshot } from "./support/web-stack.js";

const describeInBrowser = browserAvailable ? describe : describe.skip;
let test: TestStack;
let browser: Browser;

beforeAll(async () => {
  if (!browserAvailable) return;
  test = await startTestStack({ SEARCH_INDEXER: "false" });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await test?.stop();
});

describeInBrowser("GraphiQL at the gateway", () => {
  it("loads the schema: the docs explorer shows Query.search and the editor autocompletes a field", async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const problems = watchForProblems(page);
    const introspections: number[] = [];
    page.on("response", (response) => {
      if (response.request().method() === "POST" && (response.request().postData() ?? "").includes("__schema")) introspections.push(response.status());
    });
    await page.goto(test.stack.gateway.url);

    // The docs explorer: Root Types, then Query, then its fields.
    await page.getByRole("button", { name: "Show Documentation Explorer" }).click();
    const docs = page.locator(".graphiql-doc-explorer");
    await docs.getByText("Root Types").waitFor({ timeout: 60_000 });
    await docs.locator("a.graphiql-doc-explorer-type-name", { hasText: /^Query$/ }).first().click();
    const searchField = docs.locator("a.graphiql-doc-explorer-field-name", { hasText: /^search$/ });
    await searchField.waitFor();
    expect(await searchField.count()).toBe(1);
    expect(await page.getByText("Error fetching schema").count()).toBe(0);

    // Autocompletion: replace the default query and ask for suggestions in the root selection set.
    const editor = page.locator(".graphiql-query-editor .monaco-editor").first();
    await editor.click();
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.press("Delete");
    await page.keyboard.type("{ searc");
    await page.keyboard.press("Control+Space");
    const suggestion = page.locator(".suggest-widget .monaco-list-row", { hasText: /^search/ });
    await suggestion.first().waitFor({ timeout: 30_000 });
    expect(await suggestion.count()).toBeGreaterThanOrEqual(1);
    await screenshot(page, "graphiql-autocomplete");

    expect(introspections.length).toBeGreaterThanOrEqual(1);
    expect(introspections.every((status) => status === 200)).toBe(true);
    expect(await problems.settled()).toEqual([]);
    await context.close();
  }, 120_000);
});
