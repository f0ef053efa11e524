/**
 * Seeds the demo organization `npm start` shows on first run: a handful of users and teams
 * (lib/demo-data/organization.ts), a few hundred generated conversations
 * (lib/demo-data/conversations.ts), written through the same tables and triggers as real
 * traffic, so their search vectors and counters are real too, and a few dozen Markdown and PDF
 * documents with an "Engineering handbook" knowledge base, uploaded through the knowledge-base
 * subgraph's own upload path (see demo-document-seed.ts), and two weeks of searches and clicks
 * for the analytics dashboard (demo-search-history.ts). It is product assembly, so it sits in
 * app/: the generators and the corpus below it in lib/demo-data are plain data.
 */
import type { Database } from "../lib/database/connect.js";
import { demoConversations } from "../lib/demo-data/conversations.js";
import { DEMO_ORGANIZATION, DEMO_TEAMS, DEMO_USERS } from "../lib/demo-data/organization.js";
import type { Logger } from "../lib/logger.js";
import { countTokensOfEach } from "../lib/text/token-count.js";
import { seedDemoDocuments, type DocumentSeedOptions } from "./demo-document-seed.js";
import { seedDemoSearchHistory } from "./demo-search-history.js";

export interface SeedResult {
  /** true when this run added conversations or documents */
  seeded: boolean;
  /** conversations added, or those already there when none were */
  conversations: number;
  messages: number;
  /** documents uploaded, or those already there when none were */
  documents: number;
  /** demo files left out after failing every attempt (each logged) */
  failedDocuments: string[];
  /** searches of the demo history added (0 when the organization had searches already) */
  searches: number;
}

/**
 * Seeds what the demo organization lacks: conversations when it has none, documents when it has
 * none (so a database seeded before documents existed gets them too). Running it again (every
 * `npm start`) changes nothing.
 */
export async function seedDemoOrganization(database: Database, options: { conversations?: number; seed?: number; documents?: DocumentSeedOptions } = {}): Promise<SeedResult> {
  const conversations = await seedDemoConversations(database, options);
  const documents = await seedDemoDocuments(database, { organizationId: DEMO_ORGANIZATION.id, users: DEMO_USERS, teams: DEMO_TEAMS }, undefined, options.documents);
  // After the conversations: the history's clicks open some of them.
  const history = await seedDemoSearchHistory(database, { seed: options.seed });
  return { ...conversations, seeded: conversations.seeded || documents.seeded || history.searches > 0, documents: documents.documents, failedDocuments: documents.failed, searches: history.searches };
}

async function seedDemoConversations(database: Database, options: { conversations?: number; seed?: number }): Promise<Omit<SeedResult, "documents" | "failedDocuments" | "searches">> {
  const { prisma } = database;
  const existing = await prisma.conversation.count({ where: { organizationId: DEMO_ORGANIZATION.id } });
  if (existing > 0) return { seeded: false, conversations: existing, messages: 0 };

  await prisma.organization.upsert({ where: { id: DEMO_ORGANIZATION.id }, create: DEMO_ORGANIZATION, update: {} });
  await prisma.user.createMany({ data: DEMO_USERS.map((user) => ({ ...user, organizationId: DEMO_ORGANIZATION.id })), skipDuplicates: true });
  await prisma.team.createMany({ data: DEMO_TEAMS.map(({ id, name }) => ({ id, name, organizationId: DEMO_ORGANIZATION.id })), skipDuplicates: true });
  await prisma.teamMembership.createMany({
    data: DEMO_TEAMS.flatMap((team) => team.members.map((userId) => ({ organizationId: DEMO_ORGANIZATION.id, teamId: team.id, userId }))),
    skipDuplicates: true,
  });

  // Token counts come from a worker thread (lib/text/token-count.ts), one task per batch of
  // conversations, all asked for up front: the worker counts batch n + 1 while this thread writes
  // batch n, instead of the writes waiting on 2,500 round trips (and on the worker's first start).
  const generated = [...demoConversations({ count: options.conversations ?? 300, seed: options.seed ?? 42, users: DEMO_USERS.length })];
  const batches: (typeof generated)[] = [];
  for (let index = 0; index < generated.length; index += SEED_BATCH) batches.push(generated.slice(index, index + SEED_BATCH));
  const tokenCounts = batches.map((batch) => countTokensOfEach(batch.flatMap((conversation) => conversation.messages.map((message) => message.content))));
  // A batch not yet awaited must not turn into an unhandled rejection when an earlier one fails.
  for (const counts of tokenCounts) counts.catch(() => undefined);

  let conversations = 0;
  let messages = 0;
  for (const [index, batch] of batches.entries()) {
    const counts = await tokenCounts[index]!;
    const created = await prisma.conversation.createManyAndReturn({ data: batch.map(conversationRow), select: { id: true } });
    let next = 0;
    const rows = batch.flatMap((conversation, position) => messageRows(conversation, created[position]!.id, () => counts[next++]!));
    await prisma.message.createMany({ data: rows });
    conversations += batch.length;
    messages += rows.length;
  }
  return { seeded: true, conversations, messages };
}

/** Conversations written per statement pair (a conversation insert, then its messages'). */
const SEED_BATCH = 50;

type GeneratedConversation = ReturnType<typeof demoConversations> extends Generator<infer T> ? T : never;

function conversationRow(generated: GeneratedConversation) {
  return {
    organizationId: DEMO_ORGANIZATION.id,
    userId: DEMO_USERS[generated.ownerIndex % DEMO_USERS.length]!.id,
    title: generated.title,
    createdAt: generated.createdAt,
    // The insert trigger moves updatedAt forward to the last message's time.
    updatedAt: generated.createdAt,
  };
}

function messageRows(generated: GeneratedConversation, conversationId: string, nextTokenCount: () => number) {
  const start = generated.createdAt.getTime();
  return generated.messages.map((message, position) => ({
    organizationId: DEMO_ORGANIZATION.id,
    conversationId,
    position,
    role: message.role,
    content: message.content,
    tokenCount: nextTokenCount(),
    // Turns a minute or two apart, as in a real chat.
    createdAt: new Date(start + position * 75_000),
  }));
}

/**
 * Logs once every demo document the seed uploaded has been indexed (READY, or FAILED with its
 * reason), so whoever watches the start sees when the demo is searchable. Documents are indexed
 * in the background after the start is up; this only reads their status every `pollMs` (an
 * unref'd timer: it never keeps the process alive) and stops at the first error (the database
 * closing at shutdown).
 */
export async function reportDemoIndexing(database: Database, logger: Logger, { pollMs = 2_000 }: { pollMs?: number } = {}): Promise<void> {
  const began = performance.now();
  try {
    for (;;) {
      const counts = await database.prisma.document.groupBy({ by: ["status"], where: { organizationId: DEMO_ORGANIZATION.id }, _count: { _all: true } });
      const count = (status: string) => counts.find((row) => row.status === status)?._count._all ?? 0;
      if (count("PENDING") + count("INDEXING") === 0) {
        const failed = count("FAILED");
        const seconds = ((performance.now() - began) / 1000).toFixed(1);
        const line = `demo documents indexed: ${count("READY")} READY, ${failed} FAILED, ${seconds} s after the start was up`;
        if (failed > 0) logger.warn(`${line} (searchIndexStatus and each document's failureReason say why)`);
        else logger.info(line);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs).unref());
    }
  } catch (error) {
    logger.debug(`stopped watching the demo documents' indexing: ${error instanceof Error ? error.message : String(error)}`);
  }
}
