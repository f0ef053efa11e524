/**
 * Rendered, safe text in real Chromium (issue 40, item 1), against the whole stack with the demo
 * organization:
 * - a demo conversation with Markdown and a tool's result reads as text, not markup: no `##`,
 *   `**`, code fences or table delimiter rows on the page; its code and emphasis are elements;
 *   the tool's JSON is a closed "Tool result" disclosure that opens on a click;
 * - a demo Markdown document's passages likewise, and the search page's snippets of them are plain
 *   text with the query's words marked;
 * - a message of hostile markup (a script, an image with an error handler, `javascript:` links)
 *   shows that markup as text and runs none of it; its task list's boxes are named;
 * - no page has a serious or critical accessibility violation (axe-core); screenshots of each.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Locator, Page } from "playwright-core";
import { watchForProblems } from "./support/page-problems.js";
import { browserAvailable, screenshot, seriousAccessibilityViolations, startWebStack, type WebStack } from "./support/web-stack.js";

const describeInBrowser = browserAvailable ? describe : describe.skip;
const WAIT = { timeout: 30_000 };
/** Markup that reads as raw Markdown when it is visible: heading hashes, strong emphasis, a fence, a table's delimiter row. */
const RAW_MARKDOWN = [/(^|\n)\s*#{1,6} /, /\*\*/, /```/, /\|\s*:?-{3,}:?\s*\|/];

let web: WebStack;

beforeAll(async () => {
  if (browserAvailable) web = await startWebStack();
}, 180_000);
afterAll(async () => web?.stop());

async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch(`${web.origin}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${web.demoToken}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data: T; errors?: unknown[] };
  expect(body.errors).toBeUndefined();
  return body.data;
}

/**
 * No raw Markdown in the text a person sees in `locator` (innerText: what is rendered, closed
 * disclosures' content left out) outside code, where `**` may be an exponent and `#` a comment;
 * and no code block that still shows its fence.
 */
async function expectNoRawMarkdown(locator: Locator): Promise<void> {
  const prose = await locator.evaluate((element) => {
    const copy = element.cloneNode(true) as HTMLElement;
    for (const code of copy.querySelectorAll("pre, code")) code.remove();
    // innerText reads rendered text only: the copy is rendered, out of sight, for as long as it is read.
    copy.style.position = "absolute";
    copy.style.left = "-10000px";
    document.body.append(copy);
    const text = copy.innerText;
    copy.remove();
    return text;
  });
  expect(prose.length).toBeGreaterThan(0);
  for (const markup of RAW_MARKDOWN) expect(prose).not.toMatch(markup);
  for (const block of await locator.locator("pre").allInnerTexts()) expect(block).not.toMatch(/^\s*(?:```|~~~)/m);
}

async function expectAccessible(page: Page): Promise<void> {
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
}

interface DemoConversation {
  id: string;
  title: string;
  messages: { nodes: { id: string; role: string; content: string }[] };
}

describeInBrowser("rendered Markdown", () => {
  it("shows a demo conversation's Markdown as text and elements, and its tool result as a closed disclosure", async () => {
    const data = await graphql<{ conversations: { nodes: DemoConversation[] } }>(
      `query MarkdownConversations { conversations(first: 100) { nodes { id title messages(first: 100) { nodes { id role content } } } } }`,
    );
    // One whose messages hold a code fence, strong emphasis and a tool's result: what used to show raw.
    const conversation = data.conversations.nodes.find((candidate) => {
      const contents = candidate.messages.nodes.map((message) => message.content).join("\n");
      return contents.includes("```") && contents.includes("**") && candidate.messages.nodes.some((message) => message.role === "TOOL");
    });
    expect(conversation).toBeDefined();
    const tools = conversation!.messages.nodes.filter((message) => message.role === "TOOL").length;
    console.log(`rendered markdown: conversation "${conversation!.title}", ${conversation!.messages.nodes.length} messages, ${tools} tool results`);

    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    await page.goto(`/conversations/${conversation!.id}`);
    await page.getByRole("heading", { level: 1, name: conversation!.title }).waitFor(WAIT);
    const messages = page.getByRole("list", { name: "Messages" });
    await messages.locator("article.message").first().waitFor(WAIT);
    await expectNoRawMarkdown(messages);
    // The Markdown became elements: code blocks, inline code and emphasis.
    expect(await messages.locator(".markdown pre code").count()).toBeGreaterThan(0);
    expect(await messages.locator(".markdown strong").count()).toBeGreaterThan(0);
    expect(await messages.locator(".markdown :not(pre) > code").count()).toBeGreaterThan(0);

    // The tool's JSON: closed, named, formatted when opened.
    const disclosures = messages.locator("details.tool-message");
    expect(await disclosures.count()).toBe(tools);
    const first = disclosures.first();
    expect(await first.evaluate((element) => (element as HTMLDetailsElement).open)).toBe(false);
    expect(await first.locator("summary").innerText()).toMatch(/^Tool result(: \S+)?$/);
    expect(await messages.innerText()).not.toMatch(/"tool":|"results":/);
    await screenshot(page, "conversation-markdown");
    await first.locator("summary").click();
    await first.locator("pre").waitFor({ state: "visible", ...WAIT });
    expect(await first.locator("pre").innerText()).toMatch(/^\{\n {2}"/);
    await expectAccessible(page);
    await screenshot(page, "conversation-tool-result-open");
    expect(await problems.settled()).toEqual([]);
    await context.close();
  }, 120_000);

  it("shows a demo Markdown document's passages as text and elements", async () => {
    const data = await graphql<{ documents: { nodes: { id: string; fileName: string; status: string }[] } }>(`query MarkdownDocuments { documents(first: 100) { nodes { id fileName status } } }`);
    const doc = data.documents.nodes.find((candidate) => candidate.fileName === "postgres-deadlocks-runbook.md");
    expect(doc).toMatchObject({ status: "READY" });

    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    await page.goto(`/documents/${doc!.id}`);
    await page.getByRole("heading", { level: 1, name: doc!.fileName }).waitFor(WAIT);
    const passages = page.locator("ol.chunks");
    await passages.locator("article.chunk").first().waitFor(WAIT);
    await expectNoRawMarkdown(passages);
    // Its backticks are code elements, not characters.
    expect(await passages.locator(".markdown code").count()).toBeGreaterThan(0);
    expect(await passages.innerText()).not.toContain("`");
    await expectAccessible(page);
    await screenshot(page, "document-markdown");
    expect(await problems.settled()).toEqual([]);
    await context.close();
  }, 120_000);

  it("shows search snippets of Markdown messages and passages as plain text, the query's words marked", async () => {
    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    // The demo's deadlock conversations hold tables, code and emphasis around the word.
    await page.goto("/?q=deadlock");
    await page.locator("main mark").first().waitFor(WAIT);
    // Each snippet is the element its marks are drawn in (Highlight.tsx), whatever the page around it.
    const snippets = await page.locator("main mark").evaluateAll((marks) => [...new Set(marks.map((mark) => mark.parentElement!))].map((snippet) => snippet.textContent ?? ""));
    console.log(`rendered markdown: ${snippets.length} snippets for "deadlock", e.g. ${JSON.stringify(snippets[0])}`);
    expect(snippets.length).toBeGreaterThan(2);
    for (const snippet of snippets) {
      expect(snippet).toMatch(/deadlock/i);
      expect(snippet).not.toMatch(/\||```|\*\*|(^|\s)#{1,6} |(^|\s)[-*] \S|^\s*[{"]/);
    }
    await expectAccessible(page);
    await screenshot(page, "search-snippets-plain");
    expect(await problems.settled()).toEqual([]);
    await context.close();
  }, 120_000);

  it("shows hostile markup in a message as text and runs none of it", async () => {
    const hostile = [
      "## Still a heading",
      "",
      "<script>window.__ranScript = true</script>",
      "",
      'An image: <img src="/nowhere.png" onerror="window.__ranHandler = true"> and a [link](javascript:window.__ranLink=true).',
      "",
      '<a href="javascript:window.__ranLink=true">raw link</a> <iframe src="/"></iframe>',
      "",
      "| Left | Right |",
      "| --- | --- |",
      "| a | b |",
      "",
      "- [x] a done task",
      "- [ ] an open one",
    ].join("\n");
    const created = await graphql<{ createConversation: { id: string; messages: { nodes: { id: string }[] } } }>(
      `mutation HostileConversation($input: CreateConversationInput!) { createConversation(input: $input) { id messages { nodes { id } } } }`,
      { input: { title: "Hostile markup", messages: [{ role: "USER", content: hostile }] } },
    );
    const messageId = created.createConversation.messages.nodes[0]!.id;

    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    await page.goto(`/conversations/${created.createConversation.id}`);
    const message = page.locator(`#message-${messageId} .message-text`);
    await message.getByRole("heading", { name: "Still a heading" }).waitFor(WAIT);
    expect(await message.locator("script, img, iframe").count()).toBe(0);
    expect(await message.locator("table td").allInnerTexts()).toEqual(["a", "b"]);
    // A task list's boxes are named for a screen reader (axe below holds every form control to that).
    expect(await message.getByRole("checkbox", { name: "Done", exact: true }).isChecked()).toBe(true);
    expect(await message.getByRole("checkbox", { name: "Not done", exact: true }).isChecked()).toBe(false);
    // The markup is there as text.
    const text = await message.innerText();
    expect(text).toContain("<script>window.__ranScript = true</script>");
    expect(text).toContain('<img src="/nowhere.png" onerror="window.__ranHandler = true">');
    // The Markdown link kept its words and lost its address; clicking it goes nowhere.
    expect(await message.locator("a").count()).toBe(0);
    await message.getByText("link", { exact: true }).click();
    const ran = await page.evaluate(() => {
      const flags = window as unknown as Record<string, unknown>;
      return [flags.__ranScript, flags.__ranHandler, flags.__ranLink];
    });
    expect(ran).toEqual([undefined, undefined, undefined]);
    await expectAccessible(page);
    await screenshot(page, "conversation-hostile-markup");
    expect(await problems.settled()).toEqual([]);
    await context.close();
  }, 120_000);
});
