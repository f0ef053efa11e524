/**
 * `uploadDocument`: from the client's bytes to a PENDING document. Everything that can be wrong
 * with the upload is found here, before anything is stored, and answered with BAD_USER_INPUT
 * naming the field and the problem (`extensions.reason` carries the document error's code, e.g.
 * CORRUPT_FILE, NO_TEXT_LAYER, EXTRACTION_TIMEOUT): the size is checked on the base64 text before
 * it is decoded, the file is read into text on a parser thread shared fairly between
 * organizations and within a time, memory and decompression budget (lib/documents; the mutation
 * waits for it, at most the budget plus a bounded wait for a thread), and only then is the document
 * created, with its text (and its sections and pages) stored once per organization. Chunking, embedding and keyword
 * indexing happen in the background (the document indexer), so the request returns at once.
 */
import { createHash } from "node:crypto";
import { GraphQLError } from "graphql";
import { DocumentError, extractText } from "../../lib/documents/extract-text.js";
import { uploadedFileName } from "../../lib/documents/file-name.js";
import { badUserInput } from "../../lib/graphql/errors.js";
import type { WriteOnce } from "../../lib/database/idempotency.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { MAX_CATEGORY_LENGTH, type Document, type DocumentFormat, type DocumentStore, type NewDocument } from "./document-store.js";

export interface UploadDocumentInput {
  fileName: string;
  mediaType?: string | null;
  contentBase64: string;
  category?: string | null;
  shareWithTeamId?: string | null;
  /** A LOCAL knowledge base the caller may see (the store checks it). */
  knowledgeBaseId?: string | null;
}

const MEDIA_TYPES: Record<DocumentFormat, string> = {
  text: "text/plain",
  markdown: "text/markdown",
  pdf: "application/pdf",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
};

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export async function uploadDocument(store: DocumentStore, tenant: TenantContext, input: UploadDocumentInput, maxBytes: number, once?: WriteOnce): Promise<Document> {
  const { document } = await store.create(tenant, await readUpload(tenant, input, maxBytes), once);
  return document;
}

/** The argument paths errors name: `uploadDocument`'s input fields, or one file of `uploadDocuments`. */
export interface UploadFields {
  fileName: string;
  mediaType: string;
  content: string;
  category: string;
  shareWithTeamId: string;
}

const INPUT_FIELDS: UploadFields = {
  fileName: "input.fileName",
  mediaType: "input.mediaType",
  content: "input.contentBase64",
  category: "input.category",
  shareWithTeamId: "input.shareWithTeamId",
};

/**
 * Every check of an upload and its text, read on a parser thread; nothing is stored. What
 * `store.create` takes, so several files can be read first and stored together.
 */
export async function readUpload(tenant: TenantContext, input: UploadDocumentInput, maxBytes: number, fields: UploadFields = INPUT_FIELDS): Promise<NewDocument> {
  const fileName = uploadedFileName(input.fileName, fields.fileName);
  const category = input.category?.trim() || null;
  if (category !== null && category.length > MAX_CATEGORY_LENGTH) throw badUserInput(fields.category, `must be at most ${MAX_CATEGORY_LENGTH} characters, got ${category.length}`);
  if (input.mediaType != null && (input.mediaType.length > 200 || !/^[\w.+-]+\/[\w.+-]+$/.test(input.mediaType))) {
    throw badUserInput(fields.mediaType, "must be a media type such as text/markdown or application/pdf");
  }
  const teamId = input.shareWithTeamId ?? null;
  if (teamId !== null && !tenant.teamIds.includes(teamId)) {
    throw badUserInput(fields.shareWithTeamId, `must be one of your teams (${tenant.teamIds.length ? tenant.teamIds.join(", ") : "your token names none"})`);
  }

  // The size is known from the base64 length before decoding a byte of it.
  const encoded = input.contentBase64.replace(/\s+/g, "");
  const decodedLength = Math.floor((encoded.length * 3) / 4) - (encoded.endsWith("==") ? 2 : encoded.endsWith("=") ? 1 : 0);
  if (decodedLength > maxBytes) {
    throw badUserInputWithReason(fields.content, `the file is ${decodedLength.toLocaleString("en-US")} bytes; files up to ${maxBytes.toLocaleString("en-US")} bytes are accepted`, "FILE_TOO_LARGE");
  }
  if (encoded.length % 4 !== 0 || !BASE64.test(encoded)) throw badUserInput(fields.content, "must be the file's bytes in base64 (RFC 4648, with padding)");
  const bytes = Buffer.from(encoded, "base64");

  let extracted;
  try {
    extracted = await extractText({ fileName, ...(input.mediaType ? { mediaType: input.mediaType } : {}), bytes }, { maxBytes }, { organizationId: tenant.organizationId });
  } catch (error) {
    if (error instanceof DocumentError) throw badUserInputWithReason(fields.content, error.message, error.code);
    throw error;
  }
  return {
    fileName,
    mediaType: MEDIA_TYPES[extracted.format],
    format: extracted.format,
    category,
    sizeBytes: bytes.length,
    contentHash: createHash("sha256").update(bytes).digest("hex"),
    teamId,
    knowledgeBaseId: input.knowledgeBaseId ?? null,
    text: extracted.text,
    // Pages and Word headings are not in the text itself: stored beside it for the indexer.
    structure: { sections: extracted.sections, pages: extracted.pages },
  };
}

/** BAD_USER_INPUT with the document error's code as `extensions.reason`. */
function badUserInputWithReason(field: string, message: string, reason: string): GraphQLError {
  const error = badUserInput(field, message);
  return new GraphQLError(error.message, { extensions: { ...error.extensions, reason } });
}
