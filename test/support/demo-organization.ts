/**
 * The demo organization `npm start` seeds, for tests that run against it as a newcomer would (the
 * browser tests, the README's examples): one seeded database image per run (database.ts), a token
 * like npm start's dev token, and a wait for the seed's documents to be indexed.
 */
import { seedDemoOrganization } from "../../app/demo-seed.js";
import { DEMO_ORGANIZATION, DEMO_TEAMS } from "../../lib/demo-data/organization.js";
import type { StartingPoint } from "./database.js";
import type { TestStack } from "./stack.js";
import { tokenFor } from "./tenants.js";

/**
 * The demo organization as `npm run db:seed` leaves it, before the stack starts (its documents
 * PENDING until the stack's indexer reaches them): seeding took 10-20 s of every browser file on
 * PGlite, which now copies one seeded image per run (test/support/database.ts).
 */
export const DEMO_ORGANIZATION_SEEDED: StartingPoint = {
  name: "demo-organization",
  prepare: async (database) => void (await seedDemoOrganization(database)),
};

/** A token of a demo user as an admin with the user's teams (npm start's dev token is the first user's). */
export function demoTokenFor(userId: string): Promise<string> {
  const teams = DEMO_TEAMS.filter((team) => (team.members as readonly string[]).includes(userId)).map((team) => team.id);
  return tokenFor(DEMO_ORGANIZATION.id, userId, teams, "admin");
}

/**
 * The seed stores the demo documents PENDING and the stack's indexer makes them READY off the
 * request path. Tests that ask the handbook must not race it (a loaded CI machine once answered
 * the first knowledge query before one chunk was indexed), so the stack is ready only once
 * every demo document is; a FAILED one fails the stack with its reason.
 */
export async function demoDocumentsIndexed(test: TestStack, label: string, timeoutMs = 120_000): Promise<void> {
  const { prisma } = test.db.database;
  const started = Date.now();
  const deadline = started + timeoutMs;
  let first: number | undefined;
  for (;;) {
    const waiting = await prisma.document.findMany({ where: { organizationId: DEMO_ORGANIZATION.id, status: { not: "READY" } }, select: { fileName: true, status: true, failureReason: true } });
    const failed = waiting.find((document) => document.status === "FAILED");
    if (failed) throw new Error(`demo document ${failed.fileName} failed to index: ${failed.failureReason}`);
    first ??= waiting.length;
    if (waiting.length === 0) {
      if (first > 0) console.log(`${label}: ${first} demo documents were still being indexed after the seed; all READY ${Date.now() - started} ms later`);
      return;
    }
    if (Date.now() > deadline) throw new Error(`${waiting.length} demo documents still not READY after ${timeoutMs} ms: ${waiting.map((document) => `${document.fileName} ${document.status}`).join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
