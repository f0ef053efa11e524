/**
 * All reads and writes of documents, their extracted text and their chunks. Two walls, as in
 * the conversations store: every statement names the caller's organization (and runs in its
 * tenant scope, behind row-level security), and every read by a user also filters by access
 * scope: a user sees the documents they own plus those shared with one of their teams
 * (TenantContext.teamIds), nothing else. A document outside that scope is indistinguishable
 * from one that does not exist — except to a teammate of its team, who may read it and so is
 * told FORBIDDEN, not NOT_FOUND, when trying to delete it.
 *
 * Work that is not a user's (the indexer recording progress, writing chunks) takes an
 * organization id instead of a tenant: it runs in that organization's scope, with no user
 * filter.
 *
 * The documents of the platform's LOCAL knowledge bases (owned by the platform organization,
 * written only by the operator's `npm run platform-kb`) are readable by everyone: reads of one
 * document or chunk by id, a document's chunks, and a knowledge base's documents admit them
 * (`readableBy`), through the `platform_read` policy; the `documents` listing (the caller's own
 * and their teams') does not. Every write stays the caller's organization's: a tenant's attempt
 * on a platform document or knowledge base is FORBIDDEN, and row-level security would refuse it.
 */
import { Prisma, type PrismaClient } from "../../generated/prisma/client.js";
import type { Document, DocumentChunk } from "../../generated/prisma/client.js";
import type { DocumentFormat, DocumentStatus } from "../../generated/prisma/enums.js";
import { createdEntity, earlierAnswer, writeOnce, type ReceiptFormat, type WriteOnce } from "../../lib/database/idempotency.js";
import { withTenantLoads } from "../../lib/database/replica-reads.js";
import { withTenantScope, type TenantTransaction } from "../../lib/database/tenant-scope.js";
import { readStructure, storableStructure, type DocumentStructure } from "../../lib/documents/document-structure.js";
import { MAX_FILE_NAME_LENGTH } from "../../lib/documents/file-name.js";
import { badUserInput, forbidden, notFound, overloaded } from "../../lib/graphql/errors.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { PLATFORM_ORGANIZATION_ID } from "./knowledge-base-store.js";

export type { Document, DocumentChunk, DocumentFormat, DocumentStatus, DocumentStructure };

/** Limits the schema's CHECK constraints enforce too; checked here first for a clear error. */
export const MAX_CATEGORY_LENGTH = 100;

export interface DocumentStoreLimits {
  /**
   * Documents of one organization waiting to be indexed (queued, or being indexed) past which an
   * upload is refused with OVERLOADED and a retry hint, nothing stored (DOCUMENT_BACKLOG_PER_ORGANIZATION).
   * The indexers take organizations in turns, so a backlog delays only its own organization; this
   * bounds what one organization can pile up in the queue and the content table meanwhile.
   * Unset: no limit (the stores the indexers and seeding use).
   */
  backlogPerOrganization?: number;
}

/** What an upload past the backlog is told to wait: about what indexing a few documents takes. */
export const BACKLOG_RETRY_AFTER_SECONDS = 30;

export interface NewDocument {
  fileName: string;
  mediaType: string;
  format: DocumentFormat;
  category: string | null;
  sizeBytes: number;
  /** sha256 of the uploaded bytes, lower-case hex. */
  contentHash: string;
  /** Share with this team (one of the uploader's), or null for a private document. */
  teamId: string | null;
  /** A LOCAL knowledge base of the caller's organization the document belongs to. */
  knowledgeBaseId?: string | null;
  /** The extracted text, when the upload path extracted it already. */
  text?: string | null;
  /** Its sections and pages as extraction found them (stored bounded with the text; see lib/documents/document-structure.ts). */
  structure?: DocumentStructure | null;
}

/** A content hash's stored text, with its structure when one is stored and fits the text. */
export interface StoredContent {
  text: string;
  structure: DocumentStructure | null;
}

export interface CreatedDocument {
  document: Document;
  /**
   * True when the organization had this content (same hash) already: its extracted text is
   * stored, so the indexer need not extract the upload again.
   */
  contentExisted: boolean;
}

export interface DocumentPageCursor {
  createdAt: Date;
  id: string;
}

export interface DocumentListFilter {
  category?: string;
  status?: DocumentStatus;
  knowledgeBaseId?: string;
}

export interface NewChunk {
  chunkIndex: number;
  text: string;
  headingPath: string[];
  page: number | null;
  startOffset: number;
  endOffset: number;
  tokenCount: number;
  contentHash: string;
}

/** What the indexer reports; fields left out keep their value. */
export interface DocumentProgress {
  status?: DocumentStatus;
  chunksIndexed?: number;
  chunksTotal?: number | null;
  /** Required with status FAILED (and cleared by any other status). */
  failureReason?: string;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

export class DocumentStore {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly limits: DocumentStoreLimits = {},
  ) {}

  private scoped<T>(organizationId: string, work: (db: TenantTransaction) => Promise<T>): Promise<T> {
    return withTenantScope(this.prisma, organizationId, work);
  }

  /**
   * The DataLoaders' entity loads (loaders.ts): the same scope, on the replica when the request
   * may read there (lib/database/replica-reads.ts: read-your-writes decides).
   */
  private loaded<T>(organizationId: string, work: (db: TenantTransaction) => Promise<T>): Promise<T> {
    return withTenantLoads(this.prisma, organizationId, work);
  }

  /** Documents among `ids` the caller may read (platform ones included): one SQL statement however many ids (for DataLoader). */
  findByIds(tenant: TenantContext, ids: readonly string[]): Promise<Document[]> {
    return this.loaded(tenant.organizationId, (db) => db.document.findMany({ where: { id: { in: [...ids] }, ...readableBy(tenant) } }));
  }

  /**
   * Newest first, the id breaking ties so pages never overlap or skip. The caller's own and
   * their teams' documents; one knowledge base's (`filter.knowledgeBaseId`) may be the platform's.
   */
  listPage(tenant: TenantContext, take: number, after: DocumentPageCursor | null, filter: DocumentListFilter = {}): Promise<Document[]> {
    return this.scoped(tenant.organizationId, (db) =>
      db.document.findMany({
        where: {
          ...(filter.knowledgeBaseId !== undefined ? readableBy(tenant) : visibleTo(tenant)),
          ...(filter.category !== undefined ? { category: filter.category } : {}),
          ...(filter.status !== undefined ? { status: filter.status } : {}),
          ...(filter.knowledgeBaseId !== undefined ? { knowledgeBaseId: filter.knowledgeBaseId } : {}),
          ...(after ? { AND: [{ OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] }] } : {}),
        },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take,
      }),
    );
  }

  /** A page of one document's chunks in reading order, when the caller may read the document. */
  chunkPage(tenant: TenantContext, documentId: string, take: number, afterIndex: number): Promise<DocumentChunk[]> {
    return this.scoped(tenant.organizationId, (db) =>
      db.documentChunk.findMany({
        where: { documentId, organizationId: { in: readableOrganizations(tenant) }, chunkIndex: { gt: afterIndex }, document: readableBy(tenant) },
        orderBy: { chunkIndex: "asc" },
        take,
      }),
    );
  }

  /**
   * Chunks among `ids` whose document the caller may read: one statement (the scope is a
   * filter on the chunk's document inside it). The chunk's document comes from the document
   * loader, which checks the same scope.
   */
  findChunksByIds(tenant: TenantContext, ids: readonly string[]): Promise<DocumentChunk[]> {
    return this.loaded(tenant.organizationId, (db) =>
      db.documentChunk.findMany({
        where: { id: { in: [...ids] }, organizationId: { in: readableOrganizations(tenant) }, document: readableBy(tenant) },
      }),
    );
  }

  /**
   * Creates a PENDING document (the indexing queue picks it up: a trigger enqueues it in this
   * transaction). Content is stored once per organization and hash: when the organization has
   * it already, `contentExisted` says so and `text` is not stored again.
   */
  /** `once`: the write's Idempotency-Key and liveness (lib/database/idempotency.ts); without it, a plain write. */
  async create(tenant: TenantContext, input: NewDocument, once?: WriteOnce): Promise<CreatedDocument> {
    validateNewDocument(tenant, input);
    return this.scoped(tenant.organizationId, (tx) =>
      writeOnce(tx, tenant.organizationId, once, async () => {
        await this.withinBacklog(tx, tenant.organizationId, 1);
        return insertDocument(tx, tenant, input);
      }, createdDocument),
    );
  }

  /**
   * Creates several PENDING documents in one transaction: all of them, or (on any error) none.
   * `uploadDocuments` stores the files of one multipart request this way.
   */
  async createAll(tenant: TenantContext, inputs: NewDocument[], once?: WriteOnce): Promise<CreatedDocument[]> {
    for (const input of inputs) validateNewDocument(tenant, input);
    return this.scoped(tenant.organizationId, (tx) =>
      writeOnce(
        tx,
        tenant.organizationId,
        once,
        async () => {
          await this.withinBacklog(tx, tenant.organizationId, inputs.length);
          const created: CreatedDocument[] = [];
          // One after another: two files with the same bytes share one content row (insertContent).
          for (const input of inputs) created.push(await insertDocument(tx, tenant, input));
          return created;
        },
        createdDocuments,
      ),
    );
  }

  /**
   * Refuses `adding` more documents when the organization's queue would pass its backlog limit.
   * Counted in the write's transaction (the organization's jobs, by index); two uploads at the
   * same moment may pass it together by at most their own files.
   */
  private async withinBacklog(tx: TenantTransaction, organizationId: string, adding: number): Promise<void> {
    const limit = this.limits.backlogPerOrganization;
    if (limit === undefined) return;
    const [row] = await tx.$queryRaw<{ waiting: number }[]>`SELECT count(*)::int AS waiting FROM document_index_jobs WHERE organization_id = ${organizationId}`;
    const waiting = row?.waiting ?? 0;
    if (waiting + adding <= limit) return;
    throw overloaded(
      `Your organization has ${waiting} document(s) waiting to be indexed, and at most ${limit} may wait: ${adding === 1 ? "this upload" : `these ${adding} files`} would pass that. Nothing was stored; upload again once some of them are READY (try in ${BACKLOG_RETRY_AFTER_SECONDS} s).`,
      BACKLOG_RETRY_AFTER_SECONDS,
    );
  }

  /** The first answer of a keyed uploadDocument that committed, or null: asked before the file is read again. */
  async uploadedBefore(tenant: TenantContext, once: WriteOnce): Promise<Document | null> {
    if (!once.claim) return null;
    const earlier = await this.scoped(tenant.organizationId, (tx) => earlierAnswer(tx, tenant.organizationId, once, createdDocument));
    return earlier?.document ?? null;
  }

  /**
   * Stores the extracted text of a content hash (with its structure), unless the organization
   * has it already; a text stored without a structure gains this one.
   */
  async saveContent(organizationId: string, contentHash: string, text: string, structure: DocumentStructure | null = null): Promise<void> {
    await this.scoped(organizationId, (tx) => insertContent(tx, organizationId, contentHash, text, structure));
  }

  /** The extracted text stored for a content hash, or null when none is stored yet. */
  async contentText(organizationId: string, contentHash: string): Promise<string | null> {
    return (await this.content(organizationId, contentHash))?.text ?? null;
  }

  /**
   * The extracted text and structure stored for a content hash, or null when none is stored
   * yet. `structure` is null for rows stored before structures were (and for texts whose
   * headings, if any, are in the text itself), and for a stored one that does not fit the text.
   */
  async content(organizationId: string, contentHash: string): Promise<StoredContent | null> {
    const row = await this.scoped(organizationId, (tx) =>
      tx.documentContent.findUnique({ where: { organizationId_contentHash: { organizationId, contentHash } }, select: { text: true, structure: true } }),
    );
    return row ? { text: row.text, structure: readStructure(row.structure, row.text) } : null;
  }

  /**
   * Replaces a document's chunks in one transaction: the old chunks, their postings and their
   * vectors go (triggers), the new ones and their BM25 postings arrive (one INSERT, one
   * trigger statement). Returns the new chunks' ids in chunk order, for the embedder.
   */
  async replaceChunks(organizationId: string, documentId: string, chunks: readonly NewChunk[]): Promise<string[]> {
    return this.scoped(organizationId, async (tx) => {
      await tx.documentChunk.deleteMany({ where: { documentId, organizationId } });
      if (chunks.length === 0) return [];
      const created = await tx.documentChunk.createManyAndReturn({
        data: chunks.map((chunk) => ({ ...chunk, organizationId, documentId })),
        select: { id: true, chunkIndex: true },
      });
      return created.sort((a, b) => a.chunkIndex - b.chunkIndex).map((row) => row.id);
    });
  }

  /** Records the indexer's progress on a document. NOT_FOUND when it was deleted meanwhile. */
  async recordProgress(organizationId: string, id: string, progress: DocumentProgress): Promise<Document> {
    if (progress.status === "FAILED" && !progress.failureReason) throw new Error("recordProgress: status FAILED needs a failureReason");
    const failureReason = progress.status === undefined ? undefined : progress.status === "FAILED" ? progress.failureReason! : null;
    return this.scoped(organizationId, async (tx) => {
      const updated = await tx.document.updateManyAndReturn({
        where: { id, organizationId },
        data: {
          ...(progress.status !== undefined ? { status: progress.status } : {}),
          ...(failureReason !== undefined ? { failureReason } : {}),
          ...(progress.chunksIndexed !== undefined ? { chunksIndexed: progress.chunksIndexed } : {}),
          ...(progress.chunksTotal !== undefined ? { chunksTotal: progress.chunksTotal } : {}),
        },
      });
      if (updated.length === 0) throw notFound("Document", id);
      return updated[0]!;
    });
  }

  /**
   * Deletes a document with its chunks, postings, vectors, queue entry and (when no other
   * document uses it) its extracted text, in one transaction. Only the owner may: a teammate
   * who can read it is FORBIDDEN; anyone else gets NOT_FOUND, as for a missing document.
   */
  async delete(tenant: TenantContext, id: string): Promise<void> {
    await this.scoped(tenant.organizationId, async (tx) => {
      await lockOwnDocument(tx, tenant, id, "delete");
      await tx.document.delete({ where: { organizationId_id: { organizationId: tenant.organizationId, id } } });
    });
  }

  /**
   * Shares a document with one of the owner's teams, or (teamId null) makes it private again.
   * Only the owner may, under the same rule as `delete`. Search follows in the same
   * transaction: a trigger rewrites the keyword postings' scope columns, and vector hits are
   * checked against the document row on every search (search/visible-chunks.ts).
   */
  async setSharing(tenant: TenantContext, id: string, teamId: string | null): Promise<Document> {
    if (teamId !== null && !tenant.teamIds.includes(teamId)) {
      throw badUserInput("teamId", `must be one of your teams (${tenant.teamIds.length ? tenant.teamIds.join(", ") : "your token names none"}), or null to make the document private`);
    }
    return this.scoped(tenant.organizationId, async (tx) => {
      await lockOwnDocument(tx, tenant, id, "share");
      return tx.document.update({ where: { organizationId_id: { organizationId: tenant.organizationId, id } }, data: { teamId } });
    });
  }

  /**
   * The documents with these bytes (content hashes) that the caller may see, at most `perHash`
   * of each hash, newest first: what an upload tells its client of earlier copies, so a person
   * can replace one or keep both. A colleague's private copy and every other organization's stay
   * invisible, as everywhere. Two statements however many hashes (for DataLoader): a file
   * uploaded thousands of times still costs `perHash` rows.
   */
  withContentHashes(tenant: TenantContext, contentHashes: readonly string[], perHash: number): Promise<Document[]> {
    const hashes = [...new Set(contentHashes.filter((hash) => SHA256_HEX.test(hash)))];
    if (hashes.length === 0) return Promise.resolve([]);
    return this.scoped(tenant.organizationId, async (db) => {
      const newest = await db.$queryRaw<{ id: string }[]>`
        SELECT id::text AS id FROM (
          SELECT id, row_number() OVER (PARTITION BY content_hash ORDER BY created_at DESC, id DESC) AS place
          FROM documents
          WHERE organization_id = ${tenant.organizationId} AND content_hash = ANY(${hashes}::text[])
            AND (owner_id = ${tenant.userId} OR team_id = ANY(${tenant.teamIds}::text[]))
        ) ranked
        WHERE place <= ${perHash}`;
      if (newest.length === 0) return [];
      return db.document.findMany({ where: { organizationId: tenant.organizationId, id: { in: newest.map((row) => row.id) } }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
    });
  }

  /**
   * Counts search hits: each occurrence of a chunk id (a chunk returned by two searches counts
   * twice) adds one to its document's usageCount and sets lastUsedAt. One statement for the
   * batch; chunks the caller may not read are ignored.
   */
  async recordUsage(tenant: TenantContext, chunkIds: readonly string[], usedAt: Date = new Date()): Promise<number> {
    if (chunkIds.length === 0) return 0;
    return this.scoped(tenant.organizationId, (tx) => tx.$executeRaw`
      UPDATE documents d
      SET usage_count = d.usage_count + hits.n,
          last_used_at = greatest(coalesce(d.last_used_at, ${usedAt}), ${usedAt})
      FROM (
        SELECT c.document_id, count(*)::int AS n
        FROM unnest(${[...chunkIds]}::uuid[]) AS hit(id)
        JOIN document_chunks c ON c.id = hit.id AND c.organization_id = ${tenant.organizationId}
        GROUP BY c.document_id
      ) hits
      WHERE d.id = hits.document_id
        AND d.organization_id = ${tenant.organizationId}
        AND (d.owner_id = ${tenant.userId} OR d.team_id = ANY(${tenant.teamIds}::text[]))`);
  }
}

/**
 * Locks a document the caller owns, for a change only its owner may make. A teammate who can
 * read it is FORBIDDEN; anyone else gets NOT_FOUND, as for a missing document; a platform
 * knowledge base's document is FORBIDDEN with who may change it.
 */
async function lockOwnDocument(tx: TenantTransaction, tenant: TenantContext, id: string, action: "delete" | "share"): Promise<void> {
  const [row] = await tx.$queryRaw<{ owner_id: string; team_id: string | null }[]>`
    SELECT owner_id, team_id FROM documents
    WHERE id = ${id}::uuid AND organization_id = ${tenant.organizationId}
    FOR UPDATE`;
  if (!row && tenant.organizationId !== PLATFORM_ORGANIZATION_ID) {
    const [platform] = await tx.$queryRaw<{ id: string }[]>`SELECT id::text FROM documents WHERE id = ${id}::uuid AND organization_id = ${PLATFORM_ORGANIZATION_ID} AND knowledge_base_id IS NOT NULL`;
    if (platform) throw forbidden(`document ${id} belongs to a platform knowledge base: only the platform's operators change it (npm run platform-kb).`);
  }
  if (!row || (row.owner_id !== tenant.userId && !(row.team_id !== null && tenant.teamIds.includes(row.team_id)))) throw notFound("Document", id);
  if (row.owner_id !== tenant.userId) throw forbidden(`Only the owner of document ${id} can ${action} it.`);
}

/** One document row (and its text, unless the organization has it), in the caller's transaction. */
async function insertDocument(tx: TenantTransaction, tenant: TenantContext, input: NewDocument): Promise<CreatedDocument> {
  await ensureMember(tx, tenant);
  if (input.knowledgeBaseId) await requireLocalKnowledgeBase(tx, tenant, input.knowledgeBaseId);
  // Concurrent uploads of one file must not collide on the key: see insertContent.
  const contentExisted =
    input.text != null
      ? !(await insertContent(tx, tenant.organizationId, input.contentHash, input.text, input.structure ?? null))
      : (await tx.documentContent.count({ where: { organizationId: tenant.organizationId, contentHash: input.contentHash } })) > 0;
  const document = await tx.document.create({
    data: {
      organizationId: tenant.organizationId,
      ownerId: tenant.userId,
      teamId: input.teamId,
      knowledgeBaseId: input.knowledgeBaseId ?? null,
      fileName: input.fileName,
      mediaType: input.mediaType,
      format: input.format,
      category: input.category,
      sizeBytes: input.sizeBytes,
      contentHash: input.contentHash,
    },
  });
  return { document, contentExisted };
}

/**
 * Inserts a content row unless the organization has the hash already; returns whether it was
 * inserted. An existing row without a structure gains the new one (rows stored before the
 * column existed, re-uploaded): the same hash is the same bytes, so the same structure.
 * Insert-or-nothing, because concurrent uploads of one file must not collide on the key (a
 * concurrent insert of the same key waits for the other transaction, then counts as existing).
 */
async function insertContent(tx: TenantTransaction, organizationId: string, contentHash: string, text: string, structure: DocumentStructure | null): Promise<boolean> {
  const stored = structure ? storableStructure(text, structure) : null;
  const json = stored ? JSON.stringify(stored) : null;
  const rows = await tx.$queryRaw<{ inserted: boolean }[]>`
    INSERT INTO document_contents (organization_id, content_hash, text, structure)
    VALUES (${organizationId}, ${contentHash}, ${text}, ${json}::jsonb)
    ON CONFLICT (organization_id, content_hash) DO UPDATE SET structure = EXCLUDED.structure
      WHERE document_contents.structure IS NULL AND EXCLUDED.structure IS NOT NULL
    RETURNING (xmax = 0) AS inserted`;
  return rows[0]?.inserted === true;
}

/**
 * What the caller may read by id or by knowledge base: `visibleTo`, and the documents of the
 * platform's knowledge bases (the operator files every platform document in one).
 */
function readableBy(tenant: TenantContext): Prisma.DocumentWhereInput {
  if (tenant.organizationId === PLATFORM_ORGANIZATION_ID) return visibleTo(tenant);
  return { OR: [visibleTo(tenant), { organizationId: PLATFORM_ORGANIZATION_ID, knowledgeBaseId: { not: null } }] };
}

function readableOrganizations(tenant: TenantContext): string[] {
  return tenant.organizationId === PLATFORM_ORGANIZATION_ID ? [tenant.organizationId] : [tenant.organizationId, PLATFORM_ORGANIZATION_ID];
}

/** The access scope as a Prisma filter: the caller's organization, and their own or their teams' documents. */
function visibleTo(tenant: TenantContext): Prisma.DocumentWhereInput {
  return {
    organizationId: tenant.organizationId,
    OR: [{ ownerId: tenant.userId }, ...(tenant.teamIds.length > 0 ? [{ teamId: { in: tenant.teamIds } }] : [])],
  };
}

function validateNewDocument(tenant: TenantContext, input: NewDocument): void {
  const fileName = input.fileName.trim();
  if (fileName.length === 0) throw badUserInput("fileName", "must not be empty.");
  if (input.fileName.length > MAX_FILE_NAME_LENGTH) throw badUserInput("fileName", `must be at most ${MAX_FILE_NAME_LENGTH} characters (got ${input.fileName.length}).`);
  if (input.category !== null && input.category.length > MAX_CATEGORY_LENGTH) {
    throw badUserInput("category", `must be at most ${MAX_CATEGORY_LENGTH} characters (got ${input.category.length}).`);
  }
  if (!SHA256_HEX.test(input.contentHash)) throw new Error("NewDocument.contentHash must be a lower-case hex sha256");
  if (!Number.isInteger(input.sizeBytes) || input.sizeBytes < 0) throw new Error("NewDocument.sizeBytes must be a non-negative integer");
  if (input.teamId !== null && !tenant.teamIds.includes(input.teamId)) {
    throw badUserInput("teamId", `you can share a document only with one of your teams (${tenant.teamIds.length ? tenant.teamIds.join(", ") : "your token names none"}).`);
  }
}

/**
 * A document may join a LOCAL knowledge base of the caller's own organization that the caller
 * can see (company-wide, or one of their teams'). Any other id is NOT_FOUND, exactly like one
 * that does not exist.
 */
async function requireLocalKnowledgeBase(tx: TenantTransaction, tenant: TenantContext, knowledgeBaseId: string): Promise<void> {
  const platform = tenant.organizationId === PLATFORM_ORGANIZATION_ID;
  const base = await tx.knowledgeBase.findFirst({
    where: {
      id: knowledgeBaseId,
      organizationId: tenant.organizationId,
      OR: platform ? [{ scope: "PLATFORM" }] : [{ scope: "COMPANY" }, { scope: "TEAM", teamId: { in: tenant.teamIds } }],
    },
    select: { backend: true },
  });
  if (!base && !platform) {
    // Every organization can read the platform's knowledge bases, so it is told why it may not add to one.
    const curated = await tx.knowledgeBase.findFirst({ where: { id: knowledgeBaseId, organizationId: PLATFORM_ORGANIZATION_ID, scope: "PLATFORM" }, select: { id: true } });
    if (curated) throw forbidden(`knowledge base ${knowledgeBaseId} is curated by the platform: only the platform's operators add documents to it (npm run platform-kb). Add yours to a COMPANY or TEAM knowledge base.`);
  }
  if (!base) throw notFound("KnowledgeBase", knowledgeBaseId);
  if (base.backend !== "LOCAL") throw badUserInput("knowledgeBaseId", `knowledge base ${knowledgeBaseId} is on ${base.backend}: documents can be added only to a LOCAL knowledge base.`);
}

/** Just-in-time provisioning of the organization and the user, as in the conversations store. */
async function ensureMember(tx: TenantTransaction, tenant: TenantContext): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO organizations (id) VALUES (${tenant.organizationId}) ON CONFLICT (id) DO NOTHING`;
  await tx.$executeRaw`
    INSERT INTO users (organization_id, id, name, email)
    VALUES (${tenant.organizationId}, ${tenant.userId}, ${tenant.userName}, ${tenant.userEmail})
    ON CONFLICT (organization_id, id) DO NOTHING`;
}

/** A retried upload reads the document as it is now: its status may have moved on. */
const createdDocument = createdEntity<CreatedDocument>(
  "Document",
  ({ document }) => document.id,
  async (tx, organizationId, id) => {
    const document = await tx.document.findUnique({ where: { organizationId_id: { organizationId, id } } });
    return document && { document, contentExisted: true };
  },
);

/** A retried `uploadDocuments` reads its documents as they are now; one deleted since is NOT_FOUND, saying so. */
const createdDocuments: ReceiptFormat<CreatedDocument[]> = {
  of: (created) => ({ ids: created.map(({ document }) => document.id) }),
  async replay(tx, receipt, organizationId) {
    const documents: CreatedDocument[] = [];
    // One statement at a time: a transaction runs its statements in order anyway.
    for (const id of Array.isArray(receipt.ids) ? receipt.ids : []) documents.push(await createdDocument.replay(tx, { id }, organizationId));
    return documents;
  },
};
