/**
 * Resolvers of the knowledge-base subgraph (schema.graphql beside this file): argument checks
 * and the mapping between the schema and the stores. Tenancy and access scopes live in the
 * stores; every entity a request touches goes through that request's loaders.
 */
import type { GraphQLResolverMap } from "@apollo/subgraph/dist/schema-helper/index.js";
import { DateTime } from "../../lib/graphql/date-time.js";
import { resolveEntityReferences } from "../../lib/graphql/entity-references.js";
import { badUserInput } from "../../lib/graphql/errors.js";
import { writeOnceFor } from "../../lib/graphql/idempotency-key.js";
import { decodeCursor, encodeCursor, requireUuid, toConnection, validatePageSize } from "../../lib/graphql/pagination.js";
import type { Document, DocumentChunk, DocumentStore } from "./document-store.js";
import { knowledgeBaseResolvers, type KnowledgeContext } from "./knowledge-base-resolvers.js";
import type { KnowledgeBase } from "./knowledge-base-store.js";
import { SAME_CONTENT_PER_HASH, type DocumentLoaders } from "./loaders.js";
import { uploadDocument, type UploadDocumentInput } from "./upload.js";
import { Upload } from "../../lib/graphql/upload.js";
import { uploadDocuments, type UploadDocumentsArgs } from "./upload-files.js";

export interface KnowledgeBaseContext extends KnowledgeContext {
  documents: DocumentStore;
  /** Created on first use, after the tenant is known. */
  loaders(): DocumentLoaders;
  maxDocumentBytes: number;
}

/** Team ids are token claims of at most 128 characters (lib/tenancy/token.ts): a longer one is refused before any work. */
const MAX_TEAM_ID_LENGTH = 128;

const documentCursor = (row: Document) => encodeCursor("d", [row.createdAt.toISOString(), row.id]);
const chunkCursor = (row: DocumentChunk) => encodeCursor("k", [row.chunkIndex]);

function decodeDocumentCursor(after: string) {
  return decodeCursor(after, "d", "after", ([createdAt, id]) => {
    const date = typeof createdAt === "string" ? new Date(createdAt) : null;
    return date && !Number.isNaN(date.getTime()) && typeof id === "string" && /^[0-9a-f-]{36}$/i.test(id) ? { createdAt: date, id } : null;
  });
}

function decodeChunkCursor(after: string): number {
  return decodeCursor(after, "k", "after", ([index]) => (Number.isInteger(index) && (index as number) >= 0 ? (index as number) : null));
}

export const resolvers: GraphQLResolverMap<KnowledgeBaseContext> = {
  DateTime,
  Upload,
  DocumentFormat: { TEXT: "text", MARKDOWN: "markdown", PDF: "pdf", DOCX: "docx" },

  Query: {
    ...knowledgeBaseResolvers.Query,
    _entities: resolveEntityReferences,
    document(_source, args: { id: string }, context) {
      context.requireTenant();
      return context.loaders().documentById.load(requireUuid(args.id, "id"));
    },
    async documents(_source, args: { first?: number | null; after?: string | null }, context) {
      const tenant = context.requireTenant();
      const first = validatePageSize(args.first, "first", 20);
      const after = args.after ? decodeDocumentCursor(args.after) : null;
      const rows = await context.documents.listPage(tenant, first + 1, after);
      const loader = context.loaders().documentById;
      for (const row of rows.slice(0, first)) loader.prime(row.id, row);
      return toConnection(rows, first, after !== null, documentCursor);
    },
  },

  Mutation: {
    ...knowledgeBaseResolvers.Mutation,
    async uploadDocument(_source, args: { input: UploadDocumentInput }, context, info) {
      const tenant = context.requireTenant();
      const once = writeOnceFor(context.writes, tenant, info, args);
      const knowledgeBaseId = args.input.knowledgeBaseId ? requireUuid(args.input.knowledgeBaseId, "input.knowledgeBaseId") : null;
      // A retry of an upload that committed is answered before the file is read again.
      return (await context.documents.uploadedBefore(tenant, once)) ?? uploadDocument(context.documents, tenant, { ...args.input, knowledgeBaseId }, context.maxDocumentBytes, once);
    },
    async uploadDocuments(_source, args: UploadDocumentsArgs, context, info) {
      const tenant = context.requireTenant();
      const once = writeOnceFor(context.writes, tenant, info, args);
      const knowledgeBaseId = args.knowledgeBaseId ? requireUuid(args.knowledgeBaseId, "knowledgeBaseId") : null;
      return uploadDocuments(context.documents, tenant, { ...args, knowledgeBaseId }, context.maxDocumentBytes, once);
    },
    async deleteDocument(_source, args: { id: string }, context) {
      const tenant = context.requireTenant();
      const id = requireUuid(args.id, "id");
      await context.documents.delete(tenant, id);
      return { id };
    },
    setDocumentSharing(_source, args: { id: string; teamId?: string | null }, context) {
      const tenant = context.requireTenant();
      const id = requireUuid(args.id, "id");
      if (args.teamId != null && args.teamId.length > MAX_TEAM_ID_LENGTH) throw badUserInput("teamId", `must be at most ${MAX_TEAM_ID_LENGTH} characters, got ${args.teamId.length}`);
      return context.documents.setSharing(tenant, id, args.teamId ?? null);
    },
  },

  Document: {
    __resolveReference(reference: { id?: unknown }, context: KnowledgeBaseContext) {
      if (typeof reference.id !== "string") throw badUserInput("id", `must be a UUID string, got ${reference.id === undefined ? "no id" : typeof reference.id}`);
      context.requireTenant();
      return context.loaders().documentById.load(reference.id);
    },
    sharedWithTeamId: (document: Document) => document.teamId,
    sharedWithTeam: (document: Document) => (document.teamId ? { id: document.teamId } : null),
    owner: (document: Document) => ({ id: document.ownerId }),
    viewerIsOwner: (document: Document, _args: unknown, context: KnowledgeBaseContext) => {
      const tenant = context.requireTenant();
      return document.organizationId === tenant.organizationId && document.ownerId === tenant.userId;
    },
    knowledgeBase: (document: Document, _args: unknown, context: KnowledgeBaseContext) =>
      document.knowledgeBaseId ? context.knowledgeBaseLoaders().knowledgeBaseById.load(document.knowledgeBaseId) : null,
    async sameContent(document: Document, args: { first?: number | null }, context: KnowledgeBaseContext) {
      const tenant = context.requireTenant();
      const first = args.first ?? 10;
      if (!Number.isInteger(first) || first < 1 || first > SAME_CONTENT_PER_HASH - 1) throw badUserInput("first", `must be 1 to ${SAME_CONTENT_PER_HASH - 1}, got ${first}`);
      // A platform document's copies are the platform's business.
      if (document.organizationId !== tenant.organizationId) return [];
      const copies = await context.loaders().documentsByContentHash.load(document.contentHash);
      return copies.filter((copy) => copy.id !== document.id).slice(0, first);
    },
    progress: (document: Document) => ({ indexedChunks: document.chunksIndexed, totalChunks: document.chunksTotal ?? 0 }),
    async chunks(document: Document, args: { first?: number | null; after?: string | null }, context) {
      const tenant = context.requireTenant();
      const first = validatePageSize(args.first, "first", 20);
      const afterIndex = args.after ? decodeChunkCursor(args.after) : -1;
      const rows = await context.documents.chunkPage(tenant, document.id, first + 1, afterIndex);
      return toConnection(rows, first, afterIndex >= 0, chunkCursor);
    },
  },

  KnowledgeBase: {
    ...knowledgeBaseResolvers.KnowledgeBase,
    async documents(base: KnowledgeBase, args: { first?: number | null; after?: string | null }, context) {
      const tenant = context.requireTenant();
      const first = validatePageSize(args.first, "first", 20);
      const after = args.after ? decodeDocumentCursor(args.after) : null;
      if (base.backend !== "LOCAL") return toConnection([], first, after !== null, documentCursor);
      const rows = await context.documents.listPage(tenant, first + 1, after, { knowledgeBaseId: base.id });
      return toConnection(rows, first, after !== null, documentCursor);
    },
  },
  KnowledgeBaseBackend: knowledgeBaseResolvers.KnowledgeBaseBackend,
  KnowledgeBasePassage: knowledgeBaseResolvers.KnowledgeBasePassage,
  CapabilityMapping: knowledgeBaseResolvers.CapabilityMapping,
  KnowledgeBaseUsage: knowledgeBaseResolvers.KnowledgeBaseUsage,

  DocumentChunk: {
    __resolveReference(reference: { id?: unknown }, context: KnowledgeBaseContext) {
      if (typeof reference.id !== "string") throw badUserInput("id", `must be a UUID string, got ${reference.id === undefined ? "no id" : typeof reference.id}`);
      context.requireTenant();
      return context.loaders().chunkById.load(reference.id);
    },
    index: (chunk: DocumentChunk) => chunk.chunkIndex,
    async document(chunk: DocumentChunk, _args, context) {
      const document = await context.loaders().documentById.load(chunk.documentId);
      // The chunk was read under the same scope as its document, so this only fails if the
      // document was deleted between the two reads.
      if (!document) throw badUserInput("id", `document ${chunk.documentId} of chunk ${chunk.id} no longer exists`);
      return document;
    },
  },
};
