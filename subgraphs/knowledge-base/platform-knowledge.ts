/**
 * The platform's LOCAL knowledge bases, as a platform operator curates them: create one, add
 * files to it, remove a file or the whole knowledge base, list what is there. Only the
 * operator's command (`npm run platform-kb`, scripts/platform-kb.ts) calls this: it runs with
 * database access, as the platform organization (whose id no token may name), so no tenant's
 * token can reach any of it. Tenants read what it writes (document-passages.ts, the
 * `platform_read` policies) and are FORBIDDEN to change it.
 *
 * A file goes the way a user's upload goes (DocumentIngestion, upload.ts: every check and limit, the text read in
 * a worker, a PENDING document the search subgraph's indexer chunks and embeds), so a platform
 * document cannot differ from one a user could have made.
 */
import type { PrismaClient } from "../../generated/prisma/client.js";
import { PLATFORM_TENANT } from "./document-passages.js";
import { DocumentStore, type Document } from "./document-store.js";
import { KnowledgeBaseStore, PLATFORM_ORGANIZATION_ID, type KnowledgeBase } from "./knowledge-base-store.js";
import { DocumentIngestion } from "./ingestion.js";
import { withTenantScope } from "../../lib/database/tenant-scope.js";

export interface PlatformFile {
  fileName: string;
  bytes: Uint8Array;
  mediaType?: string | undefined;
  category?: string | undefined;
}

export interface PlatformKnowledgeBaseListing {
  knowledgeBase: KnowledgeBase;
  documents: Pick<Document, "id" | "fileName" | "status" | "failureReason" | "sizeBytes" | "createdAt">[];
}

export class PlatformKnowledge {
  private readonly documents: DocumentStore;
  private readonly knowledgeBases: KnowledgeBaseStore;
  private readonly ingestion: DocumentIngestion;

  /** `maxDocumentBytes` bounds each file, as DOCUMENT_MAX_BYTES bounds a user's upload. */
  constructor(
    private readonly prisma: PrismaClient,
    maxDocumentBytes: number,
  ) {
    this.documents = new DocumentStore(prisma);
    this.knowledgeBases = new KnowledgeBaseStore(prisma);
    this.ingestion = new DocumentIngestion(prisma, maxDocumentBytes);
  }

  /** A new platform LOCAL knowledge base, readable by every organization. */
  createKnowledgeBase(input: { name: string; description?: string | null; category?: string | null }): Promise<KnowledgeBase> {
    return this.knowledgeBases.createPlatform({ name: input.name, description: input.description ?? null, category: input.category ?? null, backend: "LOCAL" });
  }

  /** Adds a file to a platform LOCAL knowledge base; the indexer makes it searchable (status READY). */
  upload(knowledgeBaseId: string, file: PlatformFile): Promise<Document> {
    return this.ingestion.upload(PLATFORM_TENANT, {
      fileName: file.fileName,
      mediaType: file.mediaType ?? null,
      contentBase64: Buffer.from(file.bytes).toString("base64"),
      category: file.category ?? null,
      shareWithTeamId: null,
      knowledgeBaseId,
    });
  }

  /** Removes one platform document with its chunks and vectors. */
  removeDocument(id: string): Promise<void> {
    return this.documents.delete(PLATFORM_TENANT, id);
  }

  /**
   * Removes a platform knowledge base and its documents (a platform document outside any
   * knowledge base would be readable by no one). Returns how many documents went with it.
   */
  async removeKnowledgeBase(id: string): Promise<number> {
    const ids = await this.documentIdsOf(id);
    for (const documentId of ids) await this.documents.delete(PLATFORM_TENANT, documentId);
    if (!(await this.knowledgeBases.deletePlatform(id))) throw new Error(`there is no platform knowledge base ${id}`);
    return ids.length;
  }

  /** Every platform knowledge base with its documents (and where their indexing stands). */
  async list(): Promise<PlatformKnowledgeBaseListing[]> {
    return withTenantScope(this.prisma, PLATFORM_ORGANIZATION_ID, async (tx) => {
      const bases = await tx.knowledgeBase.findMany({ where: { organizationId: PLATFORM_ORGANIZATION_ID, scope: "PLATFORM" }, orderBy: [{ name: "asc" }, { id: "asc" }] });
      const documents = await tx.document.findMany({
        where: { organizationId: PLATFORM_ORGANIZATION_ID, knowledgeBaseId: { in: bases.map((base) => base.id) } },
        select: { id: true, fileName: true, status: true, failureReason: true, sizeBytes: true, createdAt: true, knowledgeBaseId: true },
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      });
      return bases.map((knowledgeBase) => ({ knowledgeBase, documents: documents.filter((document) => document.knowledgeBaseId === knowledgeBase.id).map(({ knowledgeBaseId: _, ...rest }) => rest) }));
    });
  }

  private async documentIdsOf(knowledgeBaseId: string): Promise<string[]> {
    const rows = await withTenantScope(this.prisma, PLATFORM_ORGANIZATION_ID, (tx) =>
      tx.document.findMany({ where: { organizationId: PLATFORM_ORGANIZATION_ID, knowledgeBaseId }, select: { id: true } }),
    );
    return rows.map((row) => row.id);
  }
}
