/**
 * Documents a person can manage (issue 40, item 6), in real Chromium against the whole product
 * with a Serper stand-in as the configured web provider:
 * - a newcomer's documents page invites the first upload ("No documents yet"), whose button opens
 *   the file chooser from the keyboard; the upload turns Ready;
 * - the same file uploaded again says it is already here and offers to replace the earlier copy
 *   or keep both; replacing deletes the earlier one (shared with the team) and the list shows one
 *   row, shared with the team as the earlier copy was;
 * - the document's owner makes it private and shares it again from its page (keyboard only): the
 *   teammate's search follows each change at once, another organization's never finds it;
 * - delete asks in a modal dialog (focus on Cancel, Escape closes it), then deletes, back on the
 *   list, which is empty again; a missing category never reads "None";
 * - the search page says that a search spends web credits; the credits page of an organization
 *   that spent nothing says "No data yet"; with the gateway out of reach every page says so.
 * No page has a serious or critical accessibility violation (axe-core); each state is
 * screenshotted for CI's output.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Page } from "playwright-core";
import { DEMO_ORGANIZATION } from "../../lib/demo-data/organization.js";
import { tokenFor } from "../support/tenants.js";
import { eventually, graphql } from "./support/graphql-client.js";
import { watchForProblems } from "./support/page-problems.js";
import { browserAvailable, screenshot, seriousAccessibilityViolations, startWebStackWithSerper, type WebStackWithSerper } from "./support/web-stack.js";

const describeInBrowser = browserAvailable ? describe : describe.skip;
const WAIT = { timeout: 30_000 };
/** Indexing runs in the background, behind the demo documents on a loaded machine. */
const INDEXING_WAIT = { timeout: 180_000 };
/** A team no demo user is in: the newcomer sees none of the demo's documents. */
const TEAM = "team_launch";
/** Its name, as the organization recorded it: what the pages show rather than the id. */
const TEAM_NAME = "Launch crew";

let web: WebStackWithSerper;
let newcomer: string;
let teammate: string;
let outsider: string;

beforeAll(async () => {
  if (!browserAvailable) return;
  web = await startWebStackWithSerper();
  await web.test.db.database.prisma.team.create({ data: { organizationId: DEMO_ORGANIZATION.id, id: TEAM, name: TEAM_NAME } });
  newcomer = await tokenFor(DEMO_ORGANIZATION.id, "user_nadia", [TEAM]);
  teammate = await tokenFor(DEMO_ORGANIZATION.id, "user_tariq", [TEAM]);
  // The same team id in another organization is another team.
  outsider = await tokenFor("org_elsewhere", "user_olga", [TEAM], "admin");
}, 240_000);
afterAll(async () => web?.stop());

/** Letters only, so every tokenizer keeps it as one word, and unique to this run. */
function uniqueWord(prefix: string): string {
  return prefix + Array.from({ length: 8 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join("");
}

async function expectAccessible(page: Page): Promise<void> {
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
}

/** The documents `token`'s caller finds for `word` through the unified search. */
async function documentsFound(token: string, word: string): Promise<string[]> {
  const answer = await graphql<{ search: { hits: { item: { __typename: string; document?: { id: string } } }[] } }>(
    web.origin,
    token,
    `query Find($input: SearchInput!) { search(input: $input) { hits { item { __typename ... on DocumentChunk { document { id } } } } } }`,
    { input: { query: word, limit: 20, latency: "LOCAL" } },
  );
  expect(answer.errors).toBeUndefined();
  return answer.data!.search.hits.flatMap((hit) => (hit.item.__typename === "DocumentChunk" ? [hit.item.document!.id] : []));
}

/** Waits until `locator` matches `count` elements (the list refetches after each change). */
async function waitForCount(locator: ReturnType<Page["locator"]>, count: number): Promise<void> {
  let last = -1;
  await eventually(async () => ((last = await locator.count()) === count ? true : undefined), { timeoutMs: WAIT.timeout, describe: () => `${count} rows expected, ${last} shown` });
}

async function focusAndPress(page: Page, locator: ReturnType<Page["getByRole"]>, key = "Enter"): Promise<void> {
  await locator.focus();
  await page.keyboard.press(key);
}

describeInBrowser("managing documents", () => {
  it("uploads from the empty state, is told of a duplicate and replaces it, shares, unshares and deletes it, all by keyboard", async () => {
    const word = uniqueWord("zeppelin");
    const content = `# Launch handover\n\n## Pager\n\nThe ${word} rota hands the pager over on Mondays.\n`;
    const context = await web.context(newcomer);
    const page = await context.newPage();
    const problems = watchForProblems(page);

    await page.goto("/documents");
    const empty = page.getByTestId("documents-empty");
    await empty.getByRole("heading", { name: "No documents yet" }).waitFor(WAIT);
    await expectAccessible(page);
    await screenshot(page, "documents-empty");

    // The empty state's call to action opens the file chooser, from the keyboard.
    const chooser = page.waitForEvent("filechooser", WAIT);
    await focusAndPress(page, empty.getByRole("button", { name: "Upload your first document" }));
    await (await chooser).setFiles({ name: "handover.md", mimeType: "text/markdown", buffer: Buffer.from(content) });
    const firstRow = page.locator(".upload-list li[data-file-name='handover.md']");
    await firstRow.getByText("Uploaded.").waitFor(WAIT);
    expect(await firstRow.getByTestId("duplicate-notice").count()).toBe(0);
    const rows = page.locator("table.documents-table tbody tr");
    await rows.first().locator(".status-ready").waitFor(INDEXING_WAIT);
    const firstId = (await rows.first().getAttribute("data-document-id"))!;
    // No category: a dash and words for screen readers, never "None".
    expect(await rows.first().innerText()).not.toMatch(/\bNone\b/);
    expect(await rows.first().locator(".visually-hidden", { hasText: "No category" }).count()).toBe(1);

    // Shared with the team (through the API), so that replacing it must keep teammates' access.
    const shared = await graphql(web.origin, newcomer, `mutation Share($id: ID!, $teamId: ID) { setDocumentSharing(id: $id, teamId: $teamId) { sharedWithTeamId } }`, { id: firstId, teamId: TEAM });
    expect(shared.errors).toBeUndefined();

    // The same bytes again, under another name.
    await page.getByLabel("Choose files to upload").setInputFiles({ name: "handover-again.md", mimeType: "text/markdown", buffer: Buffer.from(content) });
    const again = page.locator(".upload-list li[data-file-name='handover-again.md']");
    const notice = again.getByTestId("duplicate-notice");
    await notice.waitFor(WAIT);
    expect(await notice.innerText()).toMatch(/This file is already here.*handover\.md \(yours, uploaded/s);
    expect(await notice.getByRole("button", { name: "Keep both" }).count()).toBe(1);
    await waitForCount(rows, 2);
    await expectAccessible(page);
    await screenshot(page, "documents-duplicate-notice");

    await focusAndPress(page, notice.getByRole("button", { name: "Replace the earlier copy" }));
    await notice.getByRole("status").getByText(`Replaced: the earlier copy was deleted and handover-again.md stays, shared with ${TEAM_NAME} as before.`).waitFor(WAIT);
    await waitForCount(rows, 1);
    const keptId = (await rows.first().getAttribute("data-document-id"))!;
    expect(keptId).not.toBe(firstId);
    expect(await rows.first().getByRole("link").innerText()).toBe("handover-again.md");
    expect(await rows.first().innerText()).toContain(`Shared with ${TEAM_NAME}`);
    await rows.first().locator(".status-ready").waitFor(INDEXING_WAIT);
    expect(await documentsFound(newcomer, word)).toEqual([keptId]);
    expect(await documentsFound(teammate, word)).toEqual([keptId]);

    // Make it private, then share it again, from its page, by keyboard.
    await focusAndPress(page, rows.first().getByRole("link", { name: "handover-again.md" }));
    await page.getByRole("heading", { level: 1, name: "handover-again.md" }).waitFor(WAIT);
    expect(await page.locator(".document-meta").innerText()).not.toMatch(/\bNone\b/);
    const sharing = page.getByLabel("Shared with");
    const save = page.getByRole("button", { name: "Save sharing of handover-again.md" });
    expect(await sharing.inputValue()).toBe(TEAM);
    await sharing.focus();
    await sharing.selectOption("");
    await focusAndPress(page, save);
    await page.getByRole("status").getByText("handover-again.md is now private: only you see it.").waitFor(WAIT);
    expect(await documentsFound(teammate, word)).toEqual([]);
    expect(await documentsFound(newcomer, word)).toEqual([keptId]);

    await sharing.focus();
    await sharing.selectOption(TEAM);
    await focusAndPress(page, save);
    await page.getByRole("status").getByText(`handover-again.md is now shared with ${TEAM_NAME}.`).waitFor(WAIT);
    await expectAccessible(page);
    await screenshot(page, "document-shared");
    expect(await documentsFound(teammate, word)).toEqual([keptId]);
    expect(await documentsFound(outsider, word)).toEqual([]);

    // Delete asks first: the dialog opens with Cancel focused, and Escape leaves everything as it was.
    const deleteButton = page.getByRole("button", { name: "Delete this document handover-again.md" });
    await focusAndPress(page, deleteButton);
    const dialog = page.getByRole("dialog", { name: "Delete handover-again.md?" });
    await dialog.waitFor(WAIT);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Cancel");
    await expectAccessible(page);
    await screenshot(page, "document-delete-dialog");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ ...WAIT, state: "hidden" });
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Delete this document handover-again.md");

    await page.keyboard.press("Enter");
    await dialog.waitFor(WAIT);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Delete for good");
    await page.keyboard.press("Enter");
    await page.waitForURL("**/documents", WAIT);
    await page.getByRole("status").getByText("Deleted handover-again.md.").waitFor(WAIT);
    await page.getByTestId("documents-empty").waitFor(WAIT);
    expect(await documentsFound(newcomer, word)).toEqual([]);
    await expectAccessible(page);
    await screenshot(page, "documents-deleted-empty");
    expect(await problems.settled()).toEqual([]);
    await context.close();
  }, 480_000);

  it("shows a teammate's shared document without delete or sharing controls", async () => {
    const word = uniqueWord("quokka");
    const uploaded = await graphql<{ uploadDocument: { id: string } }>(web.origin, newcomer, `mutation Up($input: UploadDocumentInput!) { uploadDocument(input: $input) { id } }`, {
      input: { fileName: "shared-notes.md", contentBase64: Buffer.from(`# Notes\n\n${word} notes for the team.\n`).toString("base64"), shareWithTeamId: TEAM, category: "notes" },
    });
    expect(uploaded.errors).toBeUndefined();
    const context = await web.context(teammate);
    const page = await context.newPage();
    await page.goto("/documents");
    const row = page.locator(`tr[data-document-id='${uploaded.data!.uploadDocument.id}']`);
    await row.waitFor(WAIT);
    expect(await row.getByRole("button").count()).toBe(0);
    await page.goto(`/documents/${uploaded.data!.uploadDocument.id}`);
    await page.getByRole("heading", { level: 1, name: "shared-notes.md" }).waitFor(WAIT);
    expect(await page.getByRole("button", { name: /Delete/ }).count()).toBe(0);
    expect(await page.getByLabel("Shared with").count()).toBe(0);
    expect(await page.locator(".document-meta").innerText()).toContain(`Shared with your team ${TEAM_NAME}`);
    await context.close();
  }, 120_000);

  it("says on the search page that a search spends web credits, and 'No data yet' on an organization's unspent credits", async () => {
    const context = await web.context(outsider);
    const page = await context.newPage();
    const problems = watchForProblems(page);
    await page.goto("/");
    const note = page.getByTestId("credits-note");
    await note.waitFor(WAIT);
    expect(await note.innerText()).toMatch(/Searches here also ask Serper: each new query spends up to [\d.]+ credits?/);
    await expectAccessible(page);
    await screenshot(page, "search-credits-note");

    await page.getByRole("navigation").getByRole("link", { name: "Credits" }).click();
    const noData = page.getByTestId("credits-no-data");
    await noData.waitFor(WAIT);
    expect(await noData.innerText()).toContain("No data yet");
    expect(await page.locator(".usage-chart").count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, "credits-no-data");
    expect(await problems.settled()).toEqual([]);
    await context.close();
  }, 120_000);

  it("says the service cannot be reached on every page when the gateway does not answer", async () => {
    const context = await web.context(web.demoToken);
    const page = await context.newPage();
    const ids = await graphql<{ documents: { nodes: { id: string }[] }; conversations: { nodes: { id: string }[] } }>(
      web.origin,
      web.demoToken,
      `{ documents(first: 1) { nodes { id } } conversations(first: 1) { nodes { id } } }`,
    );
    // The page's files still load; only its API calls get no answer, as with a gateway gone.
    await context.route("**/graphql", (route) => route.abort("connectionrefused"));
    const pages = ["/documents", `/documents/${ids.data!.documents.nodes[0]!.id}`, "/credits", "/saved", "/analytics", `/conversations/${ids.data!.conversations.nodes[0]!.id}`];
    for (const path of pages) {
      await page.goto(path);
      const alert = page.getByRole("alert").filter({ hasText: "The service cannot be reached" }).first();
      await alert.waitFor(WAIT);
      expect(await alert.getByRole("button", { name: "Try again" }).count()).toBe(1);
      expect(await page.locator("table.documents-table, .usage-chart, [data-testid='documents-empty']").count()).toBe(0);
      await expectAccessible(page);
      await screenshot(page, `offline${path.replace(/\/[0-9a-f-]{36}$/, "-one").replace(/\//g, "-")}`);
    }
    await context.close();
  }, 180_000);
});
