/**
 * The conversation view, the documents page (uploads) and the document view in real Chromium
 * (issue 21), against the whole stack with the demo organization:
 * - a link to a conversation's message (`?message=`, `?q=`) scrolls that message into view,
 *   marks it and the query's words in it, and focuses it; an unknown conversation, or one of
 *   another organization, reads "Conversation not found";
 * - a Markdown file uploaded through the file input, and one dropped on the drop zone, are
 *   stored and their status turns READY on the page by itself; search then finds the upload's
 *   unique word, and the document view opened at that chunk marks it;
 * - a file over the limit and a file of a type the knowledge base cannot read each show the
 *   server's message and code;
 * - no page has a serious or critical accessibility violation (axe-core).
 * Timings are printed, never asserted: the machine may be loaded.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Page } from "playwright-core";
import { runLexeme } from "../../lib/retrieval/english-analyzer.js";
import { tokenFor } from "../support/tenants.js";
import { watchForProblems } from "./support/page-problems.js";
import { browserAvailable, screenshot, seriousAccessibilityViolations, startWebStack, type WebStack } from "./support/web-stack.js";

const describeInBrowser = browserAvailable ? describe : describe.skip;
/** Small, so a "too large" file is quick to build and send; the demo's documents are far smaller. */
const MAX_DOCUMENT_BYTES = 200_000;
const WAIT = { timeout: 30_000 };
/** Indexing runs in the background, behind the demo documents on a loaded machine. */
const INDEXING_WAIT = { timeout: 180_000 };

let web: WebStack;

beforeAll(async () => {
  if (browserAvailable) web = await startWebStack({ DOCUMENT_MAX_BYTES: String(MAX_DOCUMENT_BYTES) });
}, 180_000);
afterAll(async () => web?.stop());

/** A GraphQL request from Node, as the demo admin. */
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

/** Letters only, so every tokenizer keeps it as one word, and unique to this run. */
function uniqueWord(prefix: string): string {
  return prefix + Array.from({ length: 8 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join("");
}

async function expectAccessible(page: Page): Promise<void> {
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
}

/** Waits until the element with `id` has focus (the views focus the linked item once it is rendered). */
async function waitForFocus(page: Page, id: string): Promise<void> {
  await page.waitForFunction((expected) => document.activeElement?.id === expected, id, WAIT);
}

async function isInViewport(page: Page, selector: string): Promise<boolean> {
  return page.locator(selector).evaluate((element) => {
    const box = element.getBoundingClientRect();
    return box.bottom > 0 && box.top < window.innerHeight && box.height > 0;
  });
}

describeInBrowser("the conversation view", () => {
  it("scrolls the linked message into view, marks it and the query's words in it, and focuses it", async () => {
    const data = await graphql<{ conversations: { nodes: { id: string; title: string; messageCount: number; messages: { nodes: { id: string; content: string }[] } }[] } }>(
      `query PickConversation { conversations(first: 50) { nodes { id title messageCount messages(first: 100) { nodes { id content } } } } }`,
    );
    // The longest conversation on the page, and its last message: below the fold at 1280x900.
    const conversation = [...data.conversations.nodes].sort((a, b) => b.messageCount - a.messageCount)[0]!;
    const target = conversation.messages.nodes[conversation.messages.nodes.length - 1]!;
    // A word the keyword search reads (a stop word is not searched, so not marked).
    const word = (target.content.match(/[A-Za-z]{5,}/g) ?? []).find((candidate) => runLexeme(candidate) !== null)!;
    console.log(`conversation view: "${conversation.title}", ${conversation.messageCount} messages, linked message ${conversation.messages.nodes.length}, query "${word}"`);

    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    const started = performance.now();
    await page.goto(`/conversations/${conversation.id}?message=${target.id}&q=${encodeURIComponent(word)}`);
    await waitForFocus(page, `message-${target.id}`);
    console.log(`conversation view: linked message focused ${Math.round(performance.now() - started)} ms after navigation`);

    await page.getByRole("heading", { level: 1, name: conversation.title }).waitFor(WAIT);
    expect(await isInViewport(page, `#message-${target.id}`)).toBe(true);
    const message = page.locator(`#message-${target.id}`);
    expect(await message.getAttribute("class")).toContain("message-target");
    expect(await message.getByText("Linked message").count()).toBe(1);
    const marked = await message.locator("mark").allTextContents();
    expect(marked.length).toBeGreaterThan(0);
    // Whole words that stem as the query's word does, as the search's own highlights mark them.
    for (const text of marked) expect(runLexeme(text)).toBe(runLexeme(word));
    // Only the linked message is marked.
    expect(await page.locator("article.message-target").count()).toBe(1);
    await expectAccessible(page);
    await screenshot(page, "conversation-view");
    expect(await problems.settled()).toEqual([]);
    await context.close();
  }, 120_000);

  it("loads pages of messages until the linked one is there, keeps line breaks, and shows markup as text", async () => {
    const first = Array.from({ length: 100 }, (_, index) => ({ role: index % 2 ? "ASSISTANT" : "USER", content: `Message ${index}: about the deploy window.` }));
    const created = await graphql<{ createConversation: { id: string } }>(
      `mutation StartLongConversation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`,
      { input: { title: "A long conversation", messages: first } },
    );
    const id = created.createConversation.id;
    const more = Array.from({ length: 30 }, (_, index) => ({ role: "ASSISTANT", content: `Message ${100 + index}:\nfirst line\nsecond line <b>not bold</b>` }));
    const appended = await graphql<{ appendMessages: { conversation: { messageCount: number } } }>(
      `mutation AppendToLongConversation($id: ID!, $messages: [MessageInput!]!) { appendMessages(conversationId: $id, messages: $messages) { conversation { messageCount } } }`,
      { id, messages: more },
    );
    expect(appended.appendMessages.conversation.messageCount).toBe(130);
    // Message 125 is on the second page of 100: the view has to load it on its own.
    const all = await graphql<{ conversation: { messages: { pageInfo: { endCursor: string } } } }>(`query Cursor($id: ID!) { conversation(id: $id) { messages(first: 100) { pageInfo { endCursor } } } }`, { id });
    const second = await graphql<{ conversation: { messages: { nodes: { id: string; position: number }[] } } }>(
      `query SecondPage($id: ID!, $after: String) { conversation(id: $id) { messages(first: 100, after: $after) { nodes { id position } } } }`,
      { id, after: all.conversation.messages.pageInfo.endCursor },
    );
    const target = second.conversation.messages.nodes.find((message) => message.position === 125)!;

    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    await page.goto(`/conversations/${id}?message=${target.id}&q=second`);
    await waitForFocus(page, `message-${target.id}`);
    expect(await isInViewport(page, `#message-${target.id}`)).toBe(true);
    expect(await page.locator("article.message").count()).toBe(130);
    const text = page.locator(`#message-${target.id} .message-text`);
    expect(await text.innerText()).toBe("Message 125:\nfirst line\nsecond line <b>not bold</b>");
    expect(await text.locator("b").count()).toBe(0);
    expect(await text.locator("mark").allTextContents()).toEqual(["second"]);
    // Every page is loaded: nothing more to load.
    expect(await page.getByRole("button", { name: /Load more messages/ }).count()).toBe(0);
    await expectAccessible(page);
    expect(await problems.settled()).toEqual([]);
    await context.close();
  }, 120_000);

  it("says a conversation is not found, for an unknown id and for another organization's", async () => {
    const data = await graphql<{ conversations: { nodes: { id: string }[] } }>(`query OneConversation { conversations(first: 1) { nodes { id } } }`);
    const other = await web.context(await tokenFor("org-other", "someone"));
    const page = await other.newPage();
    const problems = watchForProblems(page);
    await page.goto(`/conversations/${data.conversations.nodes[0]!.id}`);
    await page.getByRole("heading", { level: 1, name: "Conversation not found" }).waitFor(WAIT);
    await page.goto(`/conversations/00000000-0000-4000-8000-000000000000`);
    await page.getByRole("heading", { level: 1, name: "Conversation not found" }).waitFor(WAIT);
    await expectAccessible(page);
    expect(await problems.settled()).toEqual([]);
    await other.close();
  }, 60_000);
});

describeInBrowser("the documents page and the document view", () => {
  it("uploads through the file input and by drop, shows the status turn READY, and the document view marks the chunk search found", async () => {
    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    await page.goto("/documents");
    await page.getByRole("heading", { level: 1, name: "Documents" }).waitFor(WAIT);
    await page.locator("table.documents-table tbody tr").first().waitFor(WAIT);
    await expectAccessible(page);

    const word = uniqueWord("quill");
    const fileName = `runbook-${word}.md`;
    const markdown = [
      "# Failover runbook",
      "",
      "## Before you start",
      "",
      "Check the replica lag on the dashboard and tell the on-call channel.",
      "",
      "## Promote the replica",
      "",
      `Run the promotion script; the codename for this drill is ${word}.`,
      "Then point the application at the new primary and watch the error rate.",
      "",
    ].join("\n");
    const uploadStarted = performance.now();
    await page.getByLabel("Choose files to upload").setInputFiles({ name: fileName, mimeType: "text/markdown", buffer: Buffer.from(markdown) });
    const row = page.locator(`li.upload[data-file-name="${fileName}"]`);
    await row.getByText("Uploaded.").waitFor(WAIT);
    console.log(`upload: stored ${Math.round(performance.now() - uploadStarted)} ms after the file was chosen, status then "${await row.locator(".status").textContent()}"`);
    await row.locator(".status-ready").waitFor(INDEXING_WAIT);
    console.log(`upload: READY on the page ${Math.round(performance.now() - uploadStarted)} ms after the file was chosen`);
    // The list's row shows it too, by the same polling.
    await page.locator("table.documents-table tr", { hasText: fileName }).locator(".status-ready").waitFor(WAIT);

    // A second file dropped on the drop zone (a synthetic drop, as a browser's drag and drop sends it).
    const droppedName = `dropped-${uniqueWord("drop")}.md`;
    await page.locator('[data-testid="drop-zone"]').evaluate((zone, name) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([`# Dropped\n\nA note that was dropped on the page.\n`], name, { type: "text/markdown" }));
      for (const type of ["dragenter", "dragover", "drop"]) zone.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }, droppedName);
    await page.locator(`li.upload[data-file-name="${droppedName}"]`).locator(".status-ready").waitFor(INDEXING_WAIT);
    await expectAccessible(page);
    await screenshot(page, "documents-page");

    // Search finds the upload's unique word (through the API, from the page, with its token).
    const searchStarted = performance.now();
    let found: { chunkId: string; documentId: string } | null = null;
    while (!found && performance.now() - searchStarted < 60_000) {
      found = await page.evaluate(async (query) => {
        const response = await fetch("/graphql", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${localStorage.getItem("context-search-token")}` },
          body: JSON.stringify({
            query: `query FindUpload($input: SearchInput!) { search(input: $input) { hits { item { __typename ... on DocumentChunk { id document { id fileName } } } } } }`,
            variables: { input: { query, typoTolerance: false } },
          }),
        });
        const body = await response.json();
        const hit = body.data?.search?.hits?.find((candidate: { item?: { __typename: string } }) => candidate.item?.__typename === "DocumentChunk");
        return hit ? { chunkId: hit.item.id as string, documentId: hit.item.document.id as string } : null;
      }, word);
    }
    expect(found).not.toBeNull();
    console.log(`search: the uploaded word found ${Math.round(performance.now() - searchStarted)} ms after READY`);

    await page.goto(`/documents/${found!.documentId}?chunk=${found!.chunkId}&q=${word}`);
    await waitForFocus(page, `chunk-${found!.chunkId}`);
    await page.getByRole("heading", { level: 1, name: fileName }).waitFor(WAIT);
    const chunk = page.locator(`#chunk-${found!.chunkId}`);
    expect(await chunk.getAttribute("class")).toContain("chunk-target");
    expect(await isInViewport(page, `#chunk-${found!.chunkId}`)).toBe(true);
    expect(await chunk.locator("mark").allTextContents()).toEqual([word]);
    expect(await chunk.textContent()).toContain("Promote the replica");
    await expectAccessible(page);
    await screenshot(page, "document-view");
    expect(await problems.settled()).toEqual([]);
    await context.close();
  }, 300_000);

  it("shows the server's message and code for a file that is too large and for one it cannot read", async () => {
    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page, { allowRefusedUploads: true });
    await page.goto("/documents");
    const input = page.getByLabel("Choose files to upload");
    await input.waitFor(WAIT);

    // Chosen from the keyboard: the file input takes focus and opens the file chooser with Space.
    // Playwright's pattern: listen for the chooser before the key that opens it.
    const chooserOpened = page.waitForEvent("filechooser", WAIT);
    await input.focus();
    expect(await input.evaluate((element) => element === document.activeElement)).toBe(true);
    await page.keyboard.press("Space");
    const chooser = await chooserOpened;
    await chooser.setFiles({ name: "huge.md", mimeType: "text/markdown", buffer: Buffer.alloc(MAX_DOCUMENT_BYTES * 2, "a") });
    const tooLarge = page.locator('li.upload[data-file-name="huge.md"]').getByRole("alert");
    await tooLarge.waitFor(WAIT);
    expect(await tooLarge.textContent()).toMatch(/200,000 bytes/);
    expect(await tooLarge.textContent()).toContain("BAD_USER_INPUT");

    // A PNG's signature: the knowledge base reads the bytes, not only the name.
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);
    await input.setInputFiles({ name: "diagram.png", mimeType: "image/png", buffer: png });
    const unsupported = page.locator('li.upload[data-file-name="diagram.png"]').getByRole("alert");
    await unsupported.waitFor(WAIT);
    const unsupportedText = await unsupported.textContent();
    expect(unsupportedText).toContain("UNSUPPORTED_TYPE");
    expect(unsupportedText).toContain('"diagram.png" is a PNG image');
    expect(unsupportedText).not.toContain("input.contentBase64");
    await expectAccessible(page);
    await screenshot(page, "documents-upload-errors");
    expect(await problems.settled()).toEqual([]);
    await context.close();
  }, 120_000);

  /** The documents page with its uploads throttled to `bytesPerSecond` through the DevTools protocol. */
  async function documentsPageUploadingAt(bytesPerSecond: number) {
    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    await page.goto("/documents");
    const input = page.getByLabel("Choose files to upload");
    await input.waitFor(WAIT);
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 20, downloadThroughput: -1, uploadThroughput: bytesPerSecond });
    const unthrottle = () => cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    return { context, page, problems, input, unthrottle };
  }

  it("shows an upload's progress while it is sent (upload throttled through the DevTools protocol)", async () => {
    // About 2 s for the file below, so the progress bar is there to be seen.
    const { context, page, problems, input, unthrottle } = await documentsPageUploadingAt(64 * 1024);
    const fileName = `notes-${uniqueWord("slow")}.md`;
    const lines = Array.from({ length: 1500 }, (_, line) => `Line ${line} of a long note about the staging cluster's capacity plan.`);
    const started = performance.now();
    await input.setInputFiles({ name: fileName, mimeType: "text/markdown", buffer: Buffer.from(`# Capacity notes\n\n${lines.join("\n")}\n`) });
    const progress = page.getByRole("progressbar", { name: `Uploading ${fileName}` });
    await progress.waitFor(WAIT);
    await page.waitForFunction((name) => {
      const bar = [...document.querySelectorAll("progress")].find((element) => element.labels?.[0]?.textContent === `Uploading ${name}`);
      return bar ? bar.value > 0 && bar.value < bar.max : false;
    }, fileName, WAIT);
    await page.locator(`li.upload[data-file-name="${fileName}"]`).getByText("Uploaded.").waitFor(WAIT);
    console.log(`upload progress: ${Math.round(performance.now() - started)} ms to send ~100 KB at 64 KB/s, partial progress seen`);
    await unthrottle();
    expect(await problems.settled()).toEqual([]);
    await context.close();
  }, 120_000);

  it("uploads seven files chosen at once, a few at a time, so the gateway's bound on uploads in flight refuses none", async () => {
    // Slow enough that the first files are still being sent when the last are chosen.
    const { context, page, problems, input, unthrottle } = await documentsPageUploadingAt(256 * 1024);
    const word = uniqueWord("batch");
    const files = Array.from({ length: 7 }, (_, index) => ({
      name: `batch-${word}-${index}.md`,
      mimeType: "text/markdown",
      buffer: Buffer.from(`# Batch note ${index}\n\n${Array.from({ length: 400 }, (_, line) => `Line ${line} of batch note ${index} about ${word}.`).join("\n")}\n`),
    }));
    await input.setInputFiles(files);
    // Some wait their turn while the first are sent.
    await page.getByText(/Waiting to upload/).first().waitFor(WAIT);
    for (const file of files) await page.locator(`li.upload[data-file-name="${file.name}"]`).getByText("Uploaded.").waitFor(WAIT);
    expect(await page.locator("li.upload-failed").count()).toBe(0);
    await unthrottle();
    expect(await problems.settled()).toEqual([]);
    await context.close();
  }, 120_000);

  it("pages through the documents and says a document is not found", async () => {
    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    await page.goto("/documents");
    const firstRow = page.locator("table.documents-table tbody tr").first();
    await firstRow.waitFor(WAIT);
    const next = page.getByRole("button", { name: "Next page" });
    if (await next.isEnabled()) {
      const firstId = await firstRow.getAttribute("data-document-id");
      await next.click();
      await page.getByText("Page 2").waitFor(WAIT);
      await page.waitForFunction((id) => document.querySelector("table.documents-table tbody tr")?.getAttribute("data-document-id") !== id, firstId, WAIT);
      await page.getByRole("button", { name: "Previous page" }).click();
      await page.getByText("Page 1").waitFor(WAIT);
    } else {
      console.log("documents: one page only, paging not exercised");
    }
    await page.goto("/documents/00000000-0000-4000-8000-000000000000");
    await page.getByRole("heading", { level: 1, name: "Document not found" }).waitFor(WAIT);
    await expectAccessible(page);
    expect(await problems.settled()).toEqual([]);
    await context.close();
  }, 60_000);
});
