/**
 * Seeds the demo organization's documents (lib/demo-data/documents.json, rendered by
 * lib/demo-data/documents.ts) and its LOCAL "Engineering handbook" knowledge base, through the
 * same code a user's upload runs: the knowledge-base subgraph's DocumentIngestion reads each file
 * in a worker and stores a PENDING document, and the search subgraph's background indexer chunks
 * and embeds it later, as it does the demo conversations. So seeding takes a few seconds, and
 * keyword search finds the documents once indexed.
 *
 * This is product assembly, like app/stack.ts: the demo must be made of real uploads, not of rows
 * written beside them, so it goes through the subgraph's public ingestion module.
 */
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Database } from "../lib/database/connect.js";
import { createLogger, type Logger } from "../lib/logger.js";
import { loadDemoLibrary, renderDemoDocument, type DemoDocument, type DemoLibrary } from "../lib/demo-data/documents.js";
import type { TenantContext } from "../lib/tenancy/token.js";
import { DocumentIngestion } from "../subgraphs/knowledge-base/index.js";

export interface DemoOrganizationMembers {
  organizationId: string;
  users: readonly { id: string; name: string; email: string }[];
  teams: readonly { id: string; members: readonly string[] }[];
}

export interface DocumentSeedResult {
  seeded: boolean;
  documents: number;
  /** the handbook's id, when this run created or found it */
  knowledgeBaseId: string | null;
  /** demo files that still failed after every attempt (logged; the start goes on without them) */
  failed: string[];
}

export interface DocumentSeedOptions {
  /** Where failed attempts are told (default: a "seed" logger on stderr). */
  logger?: Logger;
  /** Attempts per file (default 4). */
  attempts?: number;
  /** Pause before the first retry, doubled before each next one (default 2 s). */
  retryDelayMs?: number;
}

// The demo files are a few kilobytes each; this only bounds a mistake in documents.json.
const MAX_DEMO_DOCUMENT_BYTES = 1_000_000;
// Uploads read their file in the document worker pool; a few at a time keep it busy without queueing.
const UPLOAD_CONCURRENCY = 4;
// A demo file fails only when the machine is overloaded (its parser thread was slow to start, or
// no parser slot came free in time: issue 38's first start crashed on one), so it is retried a
// few times, over half a minute, and then left out with a log line: the start must go on.
const DEFAULT_ATTEMPTS = 4;
const DEFAULT_RETRY_DELAY_MS = 2_000;

/** Seeds only an organization without documents: every later `npm start` changes nothing. */
export async function seedDemoDocuments(database: Database, members: DemoOrganizationMembers, library: DemoLibrary = loadDemoLibrary(), options: DocumentSeedOptions = {}): Promise<DocumentSeedResult> {
  const { prisma } = database;
  const logger = options.logger ?? createLogger("seed");
  const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
  const retryDelayMs = options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
  // Outside a tenant scope, as the tables' owner (like the conversation seed's count).
  const existing = await prisma.document.count({ where: { organizationId: members.organizationId } });
  if (existing > 0) return { seeded: false, documents: existing, knowledgeBaseId: null, failed: [] };

  const tenants = new Map(members.users.map((user) => [user.id, tenantOf(members, user)]));
  const tenantFor = (document: DemoDocument): TenantContext => {
    const tenant = tenants.get(document.owner);
    if (!tenant) throw new Error(`demo document ${document.fileName}: owner ${document.owner} is not one of the demo users`);
    return tenant;
  };

  const ingestion = new DocumentIngestion(prisma, MAX_DEMO_DOCUMENT_BYTES);
  const handbook = await findOrCreateHandbook(prisma, ingestion, library, tenantFor(library.documents.find((document) => document.inHandbook) ?? library.documents[0]!));

  let documents = 0;
  const failed: string[] = [];
  const queue = [...library.documents];
  const upload = async (document: DemoDocument): Promise<void> => {
    const file = await renderDemoDocument(document);
    await ingestion.upload(tenantFor(document), {
      fileName: file.fileName,
      mediaType: file.mediaType,
      contentBase64: Buffer.from(file.bytes).toString("base64"),
      category: document.category,
      shareWithTeamId: document.sharedWithTeam,
      // The store checks that the handbook is a LOCAL knowledge base the uploader may see.
      knowledgeBaseId: document.inHandbook ? handbook : null,
    });
  };
  const uploadNext = async (): Promise<void> => {
    for (let document = queue.shift(); document; document = queue.shift()) {
      for (let attempt = 1; ; attempt++) {
        try {
          await upload(document);
          documents++;
          break;
        } catch (error) {
          const reason = describeFailure(error);
          if (attempt >= attempts) {
            logger.error(`demo document ${document.fileName} was not seeded after ${attempts} attempts (${reason}); the demo goes on without it`);
            failed.push(document.fileName);
            break;
          }
          const pause = retryDelayMs * 2 ** (attempt - 1);
          logger.warn(`demo document ${document.fileName}: attempt ${attempt} of ${attempts} failed (${reason}); retrying in ${pause / 1000} s`);
          await new Promise((resolve) => setTimeout(resolve, pause));
        }
      }
    }
  };
  await Promise.all(Array.from({ length: UPLOAD_CONCURRENCY }, uploadNext));
  return { seeded: true, documents, knowledgeBaseId: handbook, failed };
}

/** The failure's most precise code (an upload refusal's `reason`, e.g. EXTRACTION_TIMEOUT) and its message. */
function describeFailure(error: unknown): string {
  const extensions = (error as { extensions?: { code?: unknown; reason?: unknown } } | null)?.extensions;
  const code = extensions?.reason ?? extensions?.code ?? (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === "string" ? `${code}: ${message}` : message;
}

/** An earlier run may have stopped after creating the handbook: reuse it rather than make a second. */
async function findOrCreateHandbook(prisma: PrismaClient, ingestion: DocumentIngestion, library: DemoLibrary, creator: TenantContext): Promise<string> {
  const found = await prisma.knowledgeBase.findFirst({
    where: { organizationId: creator.organizationId, name: library.knowledgeBase.name, backend: "LOCAL", scope: "COMPANY" },
    select: { id: true },
  });
  if (found) return found.id;
  const created = await ingestion.createKnowledgeBase(creator, {
    name: library.knowledgeBase.name,
    description: library.knowledgeBase.description,
    scope: "COMPANY",
    category: library.knowledgeBase.category,
    backend: "LOCAL",
  });
  return created.id;
}

function tenantOf(members: DemoOrganizationMembers, user: DemoOrganizationMembers["users"][number]): TenantContext {
  return {
    organizationId: members.organizationId,
    userId: user.id,
    teamIds: members.teams.filter((team) => team.members.includes(user.id)).map((team) => team.id),
    // The seed acts as the organization's admin: it creates the company knowledge base.
    role: "admin",
    userName: user.name,
    userEmail: user.email,
  };
}
