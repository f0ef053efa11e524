/**
 * The "done when", through the gateway: a user uploads a Markdown file and a PDF, sees
 * them reach READY, and finds their chunks in `search` next to conversations; a teammate finds
 * the shared one and not the private one; another organization finds neither.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { loadConfig } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { startStack, type RunningStack } from "../../app/stack.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { uploadPendingDocument, waitForReadyDocuments } from "../support/documents.js";
import { graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let stack: RunningStack;
let owner: string;
let teammate: string;
let outsider: string;
const ids: Record<string, string> = {};

const SEARCH = `query Search($input: SearchInput!) {
  search(input: $input) {
    hits {
      item {
        __typename
        ... on Conversation { id title }
        ... on DocumentChunk { id text headingPath document { id fileName } }
      }
      explanation { provider }
    }
    providers { name status error }
  }
}`;

async function pdfWithText(lines: string[]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage([595, 842]);
  lines.forEach((line, index) => page.drawText(line, { x: 50, y: 780 - index * 18, size: 12, font }));
  return pdf.save();
}

const searchAs = (token: string, query: string) => graphql(stack.gateway.url, SEARCH, { input: { query, alpha: 1, limit: 10 } }, { token });
const items = (response: Awaited<ReturnType<typeof searchAs>>) => response.data!.search.hits.map((hit: { item: Record<string, any> }) => hit.item);

beforeAll(async () => {
  db = await createTestDatabase();
  const config = loadConfig({ GATEWAY_PORT: "0", CONVERSATIONS_PORT: "0", SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0", EMBEDDER: "hashing", SEARCH_CACHE_TTL_SECONDS: "0", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" });
  stack = await startStack({ config: { ...config, auth: { ...TEST_AUTH, usingDevSecret: false } }, database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false } });
  owner = await tokenFor("org-docs", "olivia", ["sre"]);
  teammate = await tokenFor("org-docs", "tom", ["sre"]);
  outsider = await tokenFor("org-elsewhere", "otto", ["sre"]);

  const conversation = await graphql(stack.gateway.url, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, {
    input: { title: "Rollback after a bad deploy", messages: [{ role: "USER", content: "How do I roll back a kubernetes deployment with kubectl rollout undo?" }] },
  }, { token: owner });
  ids.conversation = conversation.data!.createConversation.id;

  ids.markdown = await uploadPendingDocument(stack.gateway.url, owner, "deploy-runbook.md", "# Deploy runbook\n\n## Rollback\n\nRun kubectl rollout undo deployment/checkout to roll back the last deploy.\n\n## Canary\n\nShift five percent of traffic before the full rollout.", { shareWithTeamId: "sre" });
  ids.pdf = await uploadPendingDocument(stack.gateway.url, owner, "incident-notes.pdf", await pdfWithText(["Incident notes", "We rolled back with kubectl rollout undo at 02:14."]));
});

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
});

describe("documents in the unified search", () => {
  it("indexes both uploads to READY with every chunk counted", async () => {
    await waitForReadyDocuments(stack.gateway.url, owner, [ids.markdown!, ids.pdf!]);
    for (const id of [ids.markdown!, ids.pdf!]) {
      const document = (await graphql(stack.gateway.url, `query($id: ID!) { document(id: $id) { status progress { indexedChunks totalChunks } } }`, { id }, { token: owner })).data!.document;
      expect(document.status).toBe("READY");
      expect(document.progress.totalChunks).toBeGreaterThan(0);
      expect(document.progress.indexedChunks).toBe(document.progress.totalChunks);
    }
  });

  it("finds the owner's document chunks next to their conversations, with their documents", async () => {
    const response = await searchAs(owner, "kubectl rollout undo");
    expect(response.errors).toBeUndefined();
    const statuses = Object.fromEntries(response.data!.search.providers.map((provider: { name: string; status: string }) => [provider.name, provider.status]));
    expect(statuses["documents.keyword"]).toBe("OK");
    const found = items(response);
    expect(found.some((item: Record<string, any>) => item.__typename === "Conversation" && item.id === ids.conversation)).toBe(true);
    const chunks = found.filter((item: Record<string, any>) => item.__typename === "DocumentChunk");
    expect(chunks.map((chunk: Record<string, any>) => chunk.document.id).sort()).toEqual(expect.arrayContaining([ids.markdown, ids.pdf]));
    const rollback = chunks.find((chunk: Record<string, any>) => chunk.document.id === ids.markdown);
    expect(rollback.text).toMatch(/kubectl rollout undo/);
    expect(rollback.headingPath).toEqual(expect.arrayContaining(["Deploy runbook"]));
  });

  it("shows a teammate the shared document's chunks and not the private one's, and another organization neither", async () => {
    const theirs = items(await searchAs(teammate, "kubectl rollout undo")).filter((item: Record<string, any>) => item.__typename === "DocumentChunk");
    expect(theirs.length).toBeGreaterThan(0);
    expect(new Set(theirs.map((chunk: Record<string, any>) => chunk.document.id))).toEqual(new Set([ids.markdown]));
    const elsewhere = items(await searchAs(outsider, "kubectl rollout undo"));
    expect(elsewhere).toEqual([]);
  });

  it("counts the hits toward the document's usage, off the response path", async () => {
    await searchAs(owner, "canary traffic rollout");
    for (let attempt = 0; attempt < 40; attempt++) {
      const response = await graphql(stack.gateway.url, `query($id: ID!) { document(id: $id) { usageCount lastUsedAt } }`, { id: ids.markdown }, { token: owner });
      if (response.data!.document.usageCount > 0) {
        expect(response.data!.document.lastUsedAt).not.toBeNull();
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error("usageCount did not rise within 10 s");
  });

  it("drops a deleted document's chunks from search at once", async () => {
    const deleted = await graphql(stack.gateway.url, `mutation($id: ID!) { deleteDocument(id: $id) { id } }`, { id: ids.pdf }, { token: owner });
    expect(deleted.errors).toBeUndefined();
    const chunks = items(await searchAs(owner, "kubectl rollout undo")).filter((item: Record<string, any>) => item?.__typename === "DocumentChunk");
    expect(chunks.map((chunk: Record<string, any>) => chunk.document.id)).not.toContain(ids.pdf);
  });
});
