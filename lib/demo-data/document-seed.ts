/**
 * Seeds the demo organization's documents (documents.json, rendered by documents.ts) and its
 * LOCAL "Engineering handbook" knowledge base, through the same code a user's upload runs:
 * `uploadDocument` reads each file in a worker and stores a PENDING document, and the search
 * subgraph's background indexer chunks and embeds it later, as it does the demo conversations.
 * So seeding takes a few seconds, and keyword search finds the documents once indexed.
 *
 * This is product assembly, like lib/stack.ts: it reaches into the knowledge-base subgraph's
 * public stores because the demo must be made of real uploads, not of rows written beside them.
 */
import type { PrismaClient } from "../../generated/prisma/client.js";
import { DocumentStore, type CreatedDocument, type NewDocument } from "../../subgraphs/knowledge-base/document-store.js";
import { KnowledgeBaseStore } from "../../subgraphs/knowledge-base/knowledge-base-store.js";
import { uploadDocument } from "../../subgraphs/knowledge-base/upload.js";
import type { Database } from "../database/connect.js";
import type { TenantContext } from "../tenancy/token.js";
import { loadDemoLibrary, renderDemoDocument, type DemoDocument, type DemoLibrary } from "./documents.js";

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
}

// The demo files are a few kilobytes each; this only bounds a mistake in documents.json.
const MAX_DEMO_DOCUMENT_BYTES = 1_000_000;
// Uploads read their file in the document worker pool; a few at a time keep it busy without queueing.
const UPLOAD_CONCURRENCY = 4;

/** Seeds only an organization without documents: every later `npm start` changes nothing. */
export async function seedDemoDocuments(database: Database, members: DemoOrganizationMembers, library: DemoLibrary = loadDemoLibrary()): Promise<DocumentSeedResult> {
  const { prisma } = database;
  // Outside a tenant scope, as the tables' owner (like the conversation seed's count).
  const existing = await prisma.document.count({ where: { organizationId: members.organizationId } });
  if (existing > 0) return { seeded: false, documents: existing, knowledgeBaseId: null };

  const tenants = new Map(members.users.map((user) => [user.id, tenantOf(members, user)]));
  const tenantFor = (document: DemoDocument): TenantContext => {
    const tenant = tenants.get(document.owner);
    if (!tenant) throw new Error(`demo document ${document.fileName}: owner ${document.owner} is not one of the demo users`);
    return tenant;
  };

  const handbook = await findOrCreateHandbook(prisma, library, tenantFor(library.documents.find((document) => document.inHandbook) ?? library.documents[0]!));
  const plainStore = new DocumentStore(prisma);
  const handbookStore = new KnowledgeBaseDocumentStore(prisma, handbook);

  let documents = 0;
  const queue = [...library.documents];
  const uploadNext = async (): Promise<void> => {
    for (let document = queue.shift(); document; document = queue.shift()) {
      const file = await renderDemoDocument(document);
      await uploadDocument(
        document.inHandbook ? handbookStore : plainStore,
        tenantFor(document),
        { fileName: file.fileName, mediaType: file.mediaType, contentBase64: Buffer.from(file.bytes).toString("base64"), category: document.category, shareWithTeamId: document.sharedWithTeam },
        MAX_DEMO_DOCUMENT_BYTES,
      );
      documents++;
    }
  };
  await Promise.all(Array.from({ length: UPLOAD_CONCURRENCY }, uploadNext));
  return { seeded: true, documents, knowledgeBaseId: handbook };
}

/**
 * `uploadDocument` takes no knowledge base (a user's upload is a plain document), so handbook
 * documents go through a store that files every document it creates into the handbook; the
 * store itself still checks that the knowledge base is a LOCAL one the uploader may see.
 */
class KnowledgeBaseDocumentStore extends DocumentStore {
  constructor(
    prisma: PrismaClient,
    private readonly knowledgeBaseId: string,
  ) {
    super(prisma);
  }

  override create(tenant: TenantContext, input: NewDocument): Promise<CreatedDocument> {
    return super.create(tenant, { ...input, knowledgeBaseId: this.knowledgeBaseId });
  }
}

/** An earlier run may have stopped after creating the handbook: reuse it rather than make a second. */
async function findOrCreateHandbook(prisma: PrismaClient, library: DemoLibrary, creator: TenantContext): Promise<string> {
  const found = await prisma.knowledgeBase.findFirst({
    where: { organizationId: creator.organizationId, name: library.knowledgeBase.name, backend: "LOCAL", scope: "COMPANY" },
    select: { id: true },
  });
  if (found) return found.id;
  const created = await new KnowledgeBaseStore(prisma).create(creator, {
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
    userName: user.name,
    userEmail: user.email,
  };
}
