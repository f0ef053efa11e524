/**
 * How documents get into the knowledge-base domain from outside a GraphQL request: the demo seed
 * (app/demo-document-seed.ts) uploads its files and creates its knowledge base here. An upload
 * goes the same way the `uploadDocument` mutation goes (upload.ts: every check, the file read
 * into text in a worker, a PENDING document the search subgraph's indexer chunks later), and a
 * knowledge base goes through the same store with the same checks, so what is ingested here
 * cannot differ from what a user could have made.
 *
 * Code outside this subgraph reaches it through ./index.ts only, which re-exports this module
 * and ./search.ts (its part in the unified search); the stores are internal.
 */
import type { PrismaClient } from "../../generated/prisma/client.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { DocumentStore, type Document } from "./document-store.js";
import { KnowledgeBaseStore, type KnowledgeBase, type NewKnowledgeBase } from "./knowledge-base-store.js";
import { OrganizationSettingsStore } from "./organization-settings.js";
import { uploadDocument, type UploadDocumentInput } from "./upload.js";

export type { Document, KnowledgeBase, NewKnowledgeBase, UploadDocumentInput };

export class DocumentIngestion {
  private readonly documents: DocumentStore;
  private readonly knowledgeBases: KnowledgeBaseStore;
  private readonly organizationSettings: OrganizationSettingsStore;

  /** `maxDocumentBytes` bounds each file, as DOCUMENT_MAX_BYTES bounds a user's upload. */
  constructor(
    prisma: PrismaClient,
    private readonly maxDocumentBytes: number,
  ) {
    this.documents = new DocumentStore(prisma);
    this.knowledgeBases = new KnowledgeBaseStore(prisma);
    this.organizationSettings = new OrganizationSettingsStore(prisma);
  }

  /**
   * Uploads one file as `tenant` and returns the PENDING document. With `knowledgeBaseId` the
   * document is filed into that knowledge base, which must be a LOCAL one `tenant` may see.
   * Anything wrong with the file is the mutation's coded BAD_USER_INPUT.
   */
  upload(tenant: TenantContext, input: UploadDocumentInput): Promise<Document> {
    return uploadDocument(this.documents, tenant, input, this.maxDocumentBytes);
  }

  /** Creates a COMPANY or TEAM knowledge base of `tenant`'s organization, as the mutation does (an admin's, or FORBIDDEN). */
  async createKnowledgeBase(tenant: TenantContext, input: NewKnowledgeBase): Promise<KnowledgeBase> {
    await this.organizationSettings.requireManager(tenant, { scope: input.scope, teamId: input.teamId ?? null }, "Creating");
    return this.knowledgeBases.create(tenant, input);
  }
}
