/**
 * Sends one file to the gateway's `POST /documents` (gateway/document-upload.ts): a multipart
 * form with the file in `file` and an optional `category`, the bearer token of session.ts.
 * XMLHttpRequest rather than fetch because only it reports upload progress (`upload.onprogress`).
 *
 * The answer is the `uploadDocument` mutation's GraphQL response, or the gateway's own refusal
 * in the same shape (`{ errors: [{ message, extensions: { code } }] }`: 413 too large, 415 not a
 * form, 401, 429). Either way a failure becomes an error `readableError` (errors.ts) knows, so
 * the page shows the server's message and code as every other page does.
 */
import { CombinedGraphQLErrors, ServerError } from "@apollo/client/errors";
import type { GraphQLFormattedError } from "graphql";
import { currentToken } from "../session";

export const DOCUMENT_UPLOAD_URL = "/documents";

/** An earlier document with the same bytes that the caller may see (`Document.sameContent`). */
export interface SameContentDocument {
  id: string;
  fileName: string;
  viewerIsOwner: boolean;
  sharedWithTeamId: string | null;
  createdAt: string;
}

/** The uploaded document, as the mutation answers (the fields the page shows). */
export interface UploadedDocument {
  id: string;
  fileName: string;
  status: string;
  sizeBytes: number;
  /** Earlier copies of the same bytes, newest first. */
  sameContent: SameContentDocument[];
}

export type UploadOutcome = { ok: true; document: UploadedDocument } | { ok: false; error: unknown };

export interface UploadRequest {
  promise: Promise<UploadOutcome>;
  abort(): void;
}

/** Starts the upload of `file`; `onProgress` gets the bytes sent so far and the total. */
export function uploadDocumentFile(file: File, options: { category?: string; onProgress(loaded: number, total: number): void }): UploadRequest {
  const request = new XMLHttpRequest();
  const promise = new Promise<UploadOutcome>((resolve) => {
    const form = new FormData();
    form.append("file", file, file.name);
    if (options.category?.trim()) form.append("category", options.category.trim());

    request.open("POST", DOCUMENT_UPLOAD_URL);
    const token = currentToken();
    if (token) request.setRequestHeader("authorization", `Bearer ${token}`);
    request.setRequestHeader("accept", "application/graphql-response+json, application/json");
    request.upload.onprogress = (event) => options.onProgress(event.loaded, event.lengthComputable ? event.total : file.size);
    request.onload = () => resolve(outcomeOf(request));
    // No answer at all: readableError reads this TypeError as "the service cannot be reached", as fetch's.
    request.onerror = () => resolve({ ok: false, error: new TypeError("The upload could not reach the gateway") });
    request.onabort = () => resolve({ ok: false, error: new Error("The upload was cancelled.") });
    request.send(form);
  });
  return { promise, abort: () => request.abort() };
}

function outcomeOf(request: XMLHttpRequest): UploadOutcome {
  const bodyText = request.responseText;
  let body: { data?: { uploadDocument?: UploadedDocument | null } | null; errors?: GraphQLFormattedError[] } | null = null;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = null;
  }
  const document = body?.data?.uploadDocument;
  if (document) return { ok: true, document };
  if (body?.errors?.length) {
    // 401, 429 and 503 keep their status (the retry-after header too); the rest are the server's own words.
    if ([401, 429, 503].includes(request.status)) return { ok: false, error: serverError(request, bodyText) };
    return { ok: false, error: new CombinedGraphQLErrors({ errors: body.errors, data: body.data ?? null }) };
  }
  return { ok: false, error: serverError(request, bodyText) };
}

function serverError(request: XMLHttpRequest, bodyText: string): ServerError {
  const headers = new Headers();
  const retryAfter = request.getResponseHeader("retry-after");
  if (retryAfter) headers.set("retry-after", retryAfter);
  // Response accepts statuses 200 to 599 only; anything else is reported as a 502 from the gateway.
  const status = request.status >= 200 && request.status <= 599 ? request.status : 502;
  return new ServerError(`The upload answered ${request.status}`, { response: new Response(null, { status, headers }), bodyText });
}
