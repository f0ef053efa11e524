/**
 * The answer panel on the search page (issue 40, "Answers on top") in real Chromium, against the
 * whole product seeded with the demo organization.
 *
 * Without a language model (answers quote the passages and cost nothing): a question is answered
 * above the results with citations, streamed (`@defer`, a multipart answer), its text plain (no
 * Markdown marks), each citation a link a keyboard reaches that opens its hit where the passage
 * is; keywords get an "Answer" button; a question nothing matches (a month with no data) says
 * "No answer".
 *
 * With one (the real OpenAI client against a local chat-completions stand-in, which is not a
 * model: it streams the text it is given): nothing is sent to it until the person asks, and the
 * button says answers use credits; then a written answer with what it cost, a refusal, a failed
 * call that "Try again" recovers, and a spent credit budget (the answer quotes instead).
 * No serious accessibility violation in any of them.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Page, Response } from "playwright-core";
import { ChatCompletionsStandIn } from "../support/external/chat-completions-stand-in.js";
import { graphql } from "./support/graphql-client.js";
import { watchForProblems, type PageProblems } from "./support/page-problems.js";
import { browserAvailable, screenshot, seriousAccessibilityViolations, startWebStack, type WebStack } from "./support/web-stack.js";

const describeInBrowser = browserAvailable ? describe : describe.skip;
/** Generous: a loaded 2-core machine runs the whole stack and Chromium. */
const WAIT = { timeout: 30_000 };
const QUESTION = "How do I resolve a Postgres deadlock?";

let web: WebStack;

interface OpenedPage {
  page: Page;
  problems: PageProblems;
  /** Content types of the answers to the panel's streamed operation, as they arrived. */
  answerContentTypes: string[];
}

async function openPage(path: string): Promise<OpenedPage> {
  const context = await web.context(web.demoToken);
  const page = await context.newPage();
  const opened: OpenedPage = { page, problems: watchForProblems(page), answerContentTypes: [] };
  page.on("response", (response: Response) => {
    if (response.url().endsWith("/graphql") && response.request().postData()?.includes("SearchPageAnswer\"")) opened.answerContentTypes.push(response.headers()["content-type"] ?? "");
  });
  await page.goto(path);
  return opened;
}

const panelOf = (page: Page) => page.getByRole("region", { name: "Answer" });
const answerIn = (page: Page, state: string) => page.locator(`section.answer-panel[data-state="${state}"]`);

describeInBrowser("the answer panel, without a language model", () => {
  beforeAll(async () => {
    web = await startWebStack();
  }, 240_000);
  afterAll(async () => web?.stop());

  it("answers a question above the results, streamed, with citations a keyboard reaches that open each hit where its passage is", async () => {
    const opened = await openPage(`/?q=${encodeURIComponent(QUESTION)}`);
    const { page } = opened;
    await answerIn(page, "answered").waitFor(WAIT);
    const panel = panelOf(page);
    expect(await panel.getByRole("heading", { level: 2, name: "Answer" }).count()).toBe(1);
    // The live region said it, for those who do not see the panel fill in.
    expect(await panel.getByRole("status").textContent()).toMatch(/^Answer ready, citing \d+ sources?\.$/);
    // Above the results: the panel comes before the list in the page's order.
    const panelBeforeResults = await page.evaluate(() => {
      const panel = document.querySelector("section.answer-panel");
      const list = document.querySelector("ol.hit-list");
      return Boolean(panel && list && panel.compareDocumentPosition(list) & Node.DOCUMENT_POSITION_FOLLOWING);
    });
    expect(panelBeforeResults).toBe(true);

    // What the eye reads: the text's runs and the citations' labels (not their names for screen readers).
    const text = (await panel.locator(".answer-text > span, .answer-text > a.citation").evaluateAll((pieces) =>
      pieces.map((piece) => (piece.matches("a") ? piece.firstChild?.textContent : piece.textContent) ?? "").join(""),
    )) as string;
    expect(text.length).toBeGreaterThan(20);
    expect(text).toMatch(/\[\d+\]/);
    // Plain text: no Markdown heading marks, strong emphasis, fences or table borders.
    expect(text).not.toMatch(/(^|\s)#{1,6}\s|\*\*\S[^*]*\S\*\*|```|\|\s*-{3}|\s\|\s/);
    const citations = panel.locator(".answer-text a.citation");
    const citationCount = await citations.count();
    expect(citationCount).toBeGreaterThan(0);
    const sources = panel.locator("ol.answer-sources > li");
    expect(await sources.count()).toBeGreaterThan(0);
    // Every citation opens a conversation at a message or a document at a chunk, with the question.
    const hrefs = await citations.evaluateAll((links) => links.map((link) => link.getAttribute("href") ?? ""));
    for (const href of hrefs) expect(href).toMatch(/^\/(conversations\/[^?]+\?message=[^&]+|documents\/[^?]+\?chunk=[^&]+)&q=/);
    // Streamed: the gateway answered the operation in parts (multipart/mixed), the passages first.
    // (The one before it may be the persisted-query protocol's PERSISTED_QUERY_NOT_FOUND, in JSON.)
    expect(opened.answerContentTypes.filter((type) => type.startsWith("multipart/mixed"))).toHaveLength(1);

    await screenshot(page, "answer-panel");
    expect(await seriousAccessibilityViolations(page)).toEqual([]);

    // By keyboard: from the search box, Tab reaches the first citation; Enter follows it.
    await page.getByRole("combobox", { name: /search conversations/i }).focus();
    let reached = false;
    for (let presses = 0; presses < 60 && !reached; presses++) {
      await page.keyboard.press("Tab");
      reached = await page.evaluate(() => document.activeElement?.matches(".answer-text a.citation") ?? false);
    }
    expect(reached).toBe(true);
    const followed = await page.evaluate(() => document.activeElement?.getAttribute("href") ?? "");
    expect(hrefs).toContain(followed);
    await page.keyboard.press("Enter");
    const target = new URL(followed, web.origin);
    await page.waitForURL((url) => url.pathname === target.pathname && url.search === target.search, WAIT);
    // The hit's page opens at the cited message or chunk.
    await page.locator('[aria-current="true"]').first().waitFor({ state: "visible", ...WAIT });
    await screenshot(page, "answer-panel-citation-followed");
    expect(await opened.problems.settled()).toEqual([]);
  });

  it("offers an answer for keywords and answers when asked; says plainly when nothing matches the question", async () => {
    const opened = await openPage(`/?q=${encodeURIComponent("postgres deadlock")}`);
    const { page } = opened;
    await page.locator("ol.hit-list > li").first().waitFor(WAIT);
    await answerIn(page, "offered").waitFor(WAIT);
    // Nothing was asked for keywords before the click.
    expect(opened.answerContentTypes).toEqual([]);
    const ask = panelOf(page).getByRole("button", { name: "Answer “postgres deadlock”" });
    expect(await ask.isVisible()).toBe(true);
    await ask.focus();
    await page.keyboard.press("Enter");
    await answerIn(page, "answered").waitFor(WAIT);
    // The button is gone: focus is on the answer's heading, not lost to the page's top.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("answer-title");
    expect(await panelOf(page).locator(".answer-text a.citation").count()).toBeGreaterThan(0);
    expect(opened.answerContentTypes.length).toBeGreaterThan(0);

    // A question about a month the demo holds nothing from: no passage, so no answer (and no
    // results). (Without the filter, the semantic providers find nearest passages for any words.)
    await page.goto(`/?q=${encodeURIComponent(QUESTION)}&month=2001-01`);
    await answerIn(page, "no-answer").waitFor(WAIT);
    const panel = panelOf(page);
    expect(await panel.innerText()).toContain("No answer.");
    expect(await panel.getByRole("status").textContent()).toBe("No answer.");
    expect(await panel.locator("a.citation").count()).toBe(0);
    await screenshot(page, "answer-panel-no-answer");
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    expect(await opened.problems.settled()).toEqual([]);
  });
});

describeInBrowser("the answer panel, with a language model", () => {
  const KEY = "sk-stand-in-answer-panel";
  let standIn: ChatCompletionsStandIn;

  beforeAll(async () => {
    standIn = await ChatCompletionsStandIn.start();
    standIn.apiKeys.add(KEY);
    web = await startWebStack({
      ANSWER_MODEL_PROVIDER: "openai",
      ANSWER_MODEL: "stand-in-model",
      ANSWER_MODEL_BASE_URL: standIn.baseURL,
      ANSWER_MODEL_API_KEY: KEY,
      // The failures below are the test's own: they must not open the model's breaker.
      EXTERNAL_BREAKER_FAILURES: "100",
    });
  }, 240_000);
  afterAll(async () => {
    await web?.stop();
    await standIn?.close();
  });

  /** Opens a question's search and waits for its results and the panel's offer. */
  async function offered(question: string): Promise<OpenedPage> {
    const opened = await openPage(`/?q=${encodeURIComponent(question)}`);
    await opened.page.locator("ol.hit-list > li").first().waitFor(WAIT);
    await answerIn(opened.page, "offered").waitFor(WAIT);
    return opened;
  }
  const ask = (page: Page, question: string) => panelOf(page).getByRole("button", { name: `Answer “${question}”` }).click();

  it("sends nothing to the model until asked, then shows the written answer and what it cost", async () => {
    const question = "How do I resolve a Postgres deadlock?";
    const opened = await offered(question);
    const { page } = opened;
    // A question, but answers cost credits here: not asked on its own, and the offer says so.
    expect(await panelOf(page).innerText()).toContain("stand-in-model writes it from the top results, with citations; each answer uses your organization's credits.");
    expect(opened.answerContentTypes).toEqual([]);
    expect(standIn.requests).toHaveLength(0);

    standIn.answer = "Retry the whole transaction, and take row locks in one fixed order [1].";
    await ask(page, question);
    await answerIn(page, "answered").waitFor(WAIT);
    const panel = panelOf(page);
    expect(await panel.locator(".answer-text > span").first().textContent()).toContain("Retry the whole transaction");
    expect(await panel.locator(".answer-text a.citation").count()).toBe(1);
    expect(await panel.innerText()).toMatch(/Written by stand-in-model from the sources below; used [\d.]+ credits?\./);
    expect(standIn.requests).toHaveLength(1);
    await screenshot(page, "answer-panel-generative");
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    expect(await opened.problems.settled()).toEqual([]);
  });

  it("says when the model declines, and offers Try again after a failed call, which then answers", async () => {
    const refusedQuestion = "Why do Postgres deadlocks happen?";
    const opened = await offered(refusedQuestion);
    const { page } = opened;
    standIn.next.push("refusal");
    await ask(page, refusedQuestion);
    await answerIn(page, "refused").waitFor(WAIT);
    expect(await panelOf(page).innerText()).toContain("The language model declined to answer this question.");
    // The passages it was given are still listed.
    expect(await panelOf(page).locator("ol.answer-sources > li").count()).toBeGreaterThan(0);
    await screenshot(page, "answer-panel-refused");

    const failingQuestion = "How do I retry a deadlocked transaction?";
    await page.goto(`/?q=${encodeURIComponent(failingQuestion)}`);
    await answerIn(page, "offered").waitFor(WAIT);
    standIn.behaviour = "internal";
    await ask(page, failingQuestion);
    await answerIn(page, "model-error").waitFor(WAIT);
    const alert = panelOf(page).getByRole("alert");
    expect(await alert.getAttribute("data-error-code")).toBe("MODEL_UNAVAILABLE");
    expect(await alert.innerText()).toContain("The language model did not answer this time");
    await screenshot(page, "answer-panel-model-error");
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    standIn.behaviour = "answer";
    standIn.answer = "Retry the whole transaction, not one statement [1].";
    await alert.getByRole("button", { name: "Try again" }).click();
    await answerIn(page, "answered").waitFor(WAIT);
    expect(await panelOf(page).locator(".answer-text > span").first().textContent()).toContain("Retry the whole transaction, not one statement");
    expect(await opened.problems.settled()).toEqual([]);
  });

  it("quotes the sources instead when the organization's credits are spent, and says so", async () => {
    const budget = (monthlyBudget: number | null) => graphql(web.origin, web.demoToken, "mutation($b: Float) { setCreditBudget(monthlyBudget: $b) { monthlyBudget } }", { b: monthlyBudget });
    expect((await budget(0)).errors).toBeUndefined();
    try {
      const question = "How do I find deadlocks in the Postgres log?";
      const opened = await offered(question);
      const { page } = opened;
      const sent = standIn.requests.length;
      await ask(page, question);
      await answerIn(page, "answered").waitFor(WAIT);
      const text = await panelOf(page).innerText();
      expect(text).toContain("Your organization's credits are spent for this month");
      expect(text).toContain("so this answer quotes the sources instead of being written by the language model");
      expect(await panelOf(page).locator(".answer-text a.citation").count()).toBeGreaterThan(0);
      // The model was not called.
      expect(standIn.requests.length).toBe(sent);
      await screenshot(page, "answer-panel-credits-spent");
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      expect(await opened.problems.settled()).toEqual([]);
    } finally {
      await budget(null);
    }
  });
});
