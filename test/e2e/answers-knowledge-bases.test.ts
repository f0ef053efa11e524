/**
 * `answer` grounded on knowledge-base passages, through the gateway: the platform's LOCAL
 * knowledge base (written by the operator's command, read by every organization) answers a
 * question through the unified search's `knowledge-bases` provider, its passage is quoted and
 * cited like a conversation's or a document's, and an organization's own document that shares
 * the words stays with that organization.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { RunningStack } from "../../app/stack.js";
import { platformKnowledgeCommand } from "../../scripts/platform-kb.js";
import { PlatformKnowledge } from "../../subgraphs/knowledge-base/index.js";
import type { TestDatabase } from "../support/database.js";
import { uploadReadyDocument } from "../support/documents.js";
import { graphql } from "../support/graphql.js";
import { startTestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

const ANSWER = `query($input: AnswerInput!) {
  answer(input: $input) { status mode text grounded citations { number } passages { number text hit { item { __typename } } } }
}`;
const PLATFORM_GUIDE = "# Refund policy\n\nRefunds for annual plans are prorated to the day of cancellation and paid within ten days.\n";

let db: TestDatabase;
let stack: RunningStack;
let workdir: string;
let ada: string;
let gus: string;

beforeAll(async () => {
  ({ db, stack } = await startTestStack({ SEARCH_CACHE_TTL_SECONDS: "0", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" }));
  ada = await tokenFor("org-answers-kb-a", "ada");
  gus = await tokenFor("org-answers-kb-g", "gus");
  workdir = await fs.mkdtemp(path.join(os.tmpdir(), "answers-kb-"));
  const output: string[] = [];
  const operator = (...argv: string[]) => platformKnowledgeCommand(new PlatformKnowledge(db.database.prisma, 1024 * 1024), argv, (line) => output.push(line));
  await operator("add", "--name", "Platform billing guides", "--category", "billing");
  const knowledgeBaseId = output.at(-1)!.split(/\s+/)[0]!;
  const file = path.join(workdir, "refunds.md");
  await fs.writeFile(file, PLATFORM_GUIDE);
  await operator("upload", "--kb", knowledgeBaseId, file);
  // Another organization's own note with the same words: never in ada's answer.
  await uploadReadyDocument(stack.gateway.url, gus, "gus-refunds.md", "# Globex\n\nGLOBEX-ONLY: refunds for annual plans go through the merger escrow.\n");
  // The stack's indexer makes the platform's document searchable in the background.
  for (let attempt = 0; attempt < 240; attempt++) {
    output.length = 0;
    await operator("list");
    if (output.some((line) => line.trim().endsWith("READY"))) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the platform's document did not reach READY: ${output.join(" / ")}`);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
  if (workdir) await fs.rm(workdir, { recursive: true, force: true });
});

describe("answer over knowledge bases", () => {
  it("quotes and cites the platform knowledge base's passage, for any organization", async () => {
    for (const token of [ada, gus]) {
      const response = await graphql(stack.gateway.url, ANSWER, { input: { question: "How are refunds for annual plans paid?", providers: ["knowledge-bases"] } }, { token });
      expect(response.errors).toBeUndefined();
      const answer = response.data!.answer;
      expect(answer).toMatchObject({ status: "ANSWERED", mode: "EXTRACTIVE", grounded: true });
      expect(answer.passages.length).toBeGreaterThan(0);
      expect(answer.passages[0].hit.item.__typename).toBe("KnowledgeBasePassage");
      expect(answer.passages[0].text).toContain("prorated");
      expect(answer.text).toContain("prorated");
      expect(answer.citations.map((citation: { number: number }) => citation.number)).toContain(1);
    }
  });

  it("grounds on the caller's documents and the platform's together, never another organization's", async () => {
    const response = await graphql(stack.gateway.url, ANSWER, { input: { question: "refunds for annual plans", providers: ["knowledge-bases", "documents.keyword"] } }, { token: ada });
    expect(response.errors).toBeUndefined();
    expect(JSON.stringify(response.data!.answer)).not.toContain("GLOBEX-ONLY");
    expect(response.data!.answer.passages.map((passage: { hit: { item: { __typename: string } } }) => passage.hit.item.__typename)).toContain("KnowledgeBasePassage");
  });
});
