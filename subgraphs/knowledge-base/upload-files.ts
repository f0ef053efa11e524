/**
 * `uploadDocuments`: the files of one GraphQL multipart request (the `Upload` scalar,
 * lib/graphql/upload.ts) as documents. Each file goes through `readUpload`, every check and the
 * text extraction of `uploadDocument`, and only when every file has passed are they stored, in one
 * transaction: one bad file refuses the request and nothing of it is kept.
 */
import { badUserInput } from "../../lib/graphql/errors.js";
import { MAX_UPLOAD_FILES, type UploadValue } from "../../lib/graphql/upload.js";
import type { WriteOnce } from "../../lib/database/idempotency.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import type { Document, DocumentStore, NewDocument } from "./document-store.js";
import { readUpload } from "./upload.js";

export interface UploadDocumentsArgs {
  files: UploadValue[];
  category?: string | null;
  shareWithTeamId?: string | null;
  knowledgeBaseId?: string | null;
}

export async function uploadDocuments(store: DocumentStore, tenant: TenantContext, args: UploadDocumentsArgs, maxBytes: number, once?: WriteOnce): Promise<Document[]> {
  if (args.files.length === 0) throw badUserInput("files", "must name at least one file");
  if (args.files.length > MAX_UPLOAD_FILES) throw badUserInput("files", `must be at most ${MAX_UPLOAD_FILES} files, got ${args.files.length}: send the rest in another request`);
  const read: NewDocument[] = [];
  // One file at a time: the parser threads are shared fairly between organizations, and a bad
  // file stops the request before the files after it are read.
  for (const [index, file] of args.files.entries()) {
    const field = `files.${index}`;
    read.push(
      await readUpload(
        tenant,
        { ...file, category: args.category ?? null, shareWithTeamId: args.shareWithTeamId ?? null, knowledgeBaseId: args.knowledgeBaseId ?? null },
        maxBytes,
        { fileName: `${field}.fileName`, mediaType: `${field}.mediaType`, content: field, category: "category", shareWithTeamId: "shareWithTeamId" },
      ),
    );
  }
  return (await store.createAll(tenant, read, once)).map(({ document }) => document);
}
