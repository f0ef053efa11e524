/**
 * `POST /documents`: a plain HTTP upload for browsers and scripts, beside the GraphQL
 * `uploadDocument` mutation (which takes the file as base64). A form with a `file` field
 * (multipart/form-data, what `<input type="file">` and `fetch(url, { body: formData })` send),
 * plus optional `category`, `shareWithTeamId` and `knowledgeBaseId` fields (any other field is
 * refused, naming it, rather than dropped: a client that sends `knowledgeBaseId` misspelled must
 * not get a private document it believes is in its knowledge base):
 *
 *   curl -H "authorization: Bearer $TOKEN" -F file=@runbook.md -F category=runbooks \
 *     http://127.0.0.1:4000/documents
 *
 * The request becomes the `uploadDocument` mutation and runs through the gateway runtime itself,
 * so identity, rate limits (charged by size), operation limits and the knowledge-base subgraph's
 * checks apply unchanged; the answer is that mutation's GraphQL response, with `sameContent` (the
 * earlier copies of the same bytes the caller may see) as a GraphQL client would select it. The
 * body is bounded before it is parsed: a declared Content-Length over the limit is refused at once, and reading
 * stops at the limit whatever the client declared. Before any of it, the caller is admitted
 * (`admit`): a request without a valid token is refused before its body is read, so an anonymous
 * client cannot make the gateway buffer a file it would refuse anyway.
 */
import type http from "node:http";
import { formFile } from "./form-file-name.js";
import { IDEMPOTENCY_KEY_HEADER } from "../lib/graphql/idempotency-key.js";
import { declaresAtMost, readBoundedBody } from "../lib/http-body.js";
import type { UploadAdmission } from "./upload-admission.js";

export interface DocumentUploadOptions {
  /** Largest file accepted (the knowledge-base subgraph's limit, DOCUMENT_MAX_BYTES). */
  maxFileBytes: number;
  /** Runs a GraphQL request through the gateway runtime, with the client's connection as its server context. */
  execute(request: Request, serverContext: { req: http.IncomingMessage }): Promise<Response>;
  /** Whether the caller may send a body at all (uploadAdmission): checked before any byte of it is read. */
  admit(request: http.IncomingMessage): Promise<UploadAdmission>;
  /** The runtime's GraphQL endpoint, as a URL the runtime accepts (e.g. http://gateway/graphql). */
  graphqlUrl: string;
  /** CORS headers for the request's origin, or null when the origin is not allowed. */
  corsHeaders(origin: string | undefined): Record<string, string> | null;
}

export const DOCUMENT_UPLOAD_PATH = "/documents";

/** The form's fields: the file, and uploadDocument's optional arguments of the same names. */
const FORM_FIELDS = ["file", "category", "shareWithTeamId", "knowledgeBaseId"] as const;
const OPTIONAL_FIELDS_IN_WORDS = "`category`, `shareWithTeamId` and `knowledgeBaseId`";

/** Room for the multipart boundaries, part headers and the small text fields around the file. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

const UPLOAD_MUTATION = `mutation UploadDocument($input: UploadDocumentInput!) {
  uploadDocument(input: $input) {
    id fileName format mediaType category sharedWithTeamId knowledgeBase { id } sizeBytes contentHash status
    progress { indexedChunks totalChunks }
    createdAt
    sameContent { id fileName ownerId viewerIsOwner sharedWithTeamId createdAt }
  }
}`;

export function documentUpload(options: DocumentUploadOptions) {
  const maxBodyBytes = options.maxFileBytes + FORM_OVERHEAD_BYTES;

  return async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const cors = options.corsHeaders(request.headers.origin);
    if (request.method === "OPTIONS") {
      response.writeHead(cors ? 204 : 403, { ...(cors ?? {}), "content-length": "0" });
      return void response.end();
    }
    const refuse = (status: number, code: string, message: string, extra: Record<string, string> = {}) => {
      const body = JSON.stringify({ errors: [{ message, extensions: { code } }] });
      response.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(body)), ...(cors ?? {}), ...extra });
      // Cut once the answer is out: Node would otherwise keep reading the body a client is still sending.
      if (extra.connection === "close") response.end(body, () => response.socket?.destroySoon());
      else response.end(body);
    };
    if (request.method !== "POST") return refuse(405, "BAD_REQUEST", `Send the file with POST ${DOCUMENT_UPLOAD_PATH} as multipart/form-data.`, { allow: "POST, OPTIONS" });
    const contentType = request.headers["content-type"] ?? "";
    if (!/^multipart\/form-data\b/i.test(contentType)) {
      return refuse(415, "BAD_USER_INPUT", `Send a multipart/form-data body with the file in a field named \`file\` (and optionally ${OPTIONAL_FIELDS_IN_WORDS}).`);
    }
    const declared = Number(request.headers["content-length"] ?? NaN);
    const { refusal, release } = await options.admit(request);
    if (refusal) {
      // Answered while the client may still be sending. A body declared within bounds is read and
      // dropped on a kept connection (closing would reset a client still writing, and it would
      // see that instead of this answer); any other is cut once the answer is out.
      refuse(refusal.status, refusal.code, refusal.message, { ...(refusal.headers ?? {}), ...(declaresAtMost(request, maxBodyBytes) ? {} : { connection: "close" }) });
      request.resume();
      return;
    }
    // Its place is held until the runtime has answered or this handler is done (below), also when
    // the client went first: the upload's bytes are held until then, and a client that sends a
    // file and hangs up at once must not get its place back while the gateway parses and stores it.
    try {
      if (Number.isFinite(declared) && declared > maxBodyBytes) {
        request.resume();
        return refuse(413, "BAD_USER_INPUT", `The upload is ${declared.toLocaleString("en-US")} bytes; files up to ${options.maxFileBytes.toLocaleString("en-US")} bytes are accepted.`, { connection: "close" });
      }
      // A body that never ends (the client went) has no one to answer.
      const body = await readBoundedBody(request, maxBodyBytes).catch(() => undefined);
      if (body === undefined) return;
      if (body === null) return refuse(413, "BAD_USER_INPUT", `The upload is larger than ${options.maxFileBytes.toLocaleString("en-US")} bytes, the most accepted.`, { connection: "close" });

      // The file's name from its own part header, the same on every Node version (form-file-name.ts).
      const part = formFile(body, contentType, "file");
      let form: FormData;
      try {
        form = await new Response(new Blob([new Uint8Array(part?.body ?? body)]), { headers: { "content-type": contentType } }).formData();
      } catch {
        return refuse(400, "BAD_USER_INPUT", "The body is not valid multipart/form-data.");
      }
      const unknown = [...new Set(form.keys())].filter((name) => !(FORM_FIELDS as readonly string[]).includes(name));
      if (unknown.length > 0) {
        const named = unknown.slice(0, 5).map((name) => JSON.stringify(name.slice(0, 60))).join(", ");
        return refuse(400, "BAD_USER_INPUT", `The form has fields this upload does not take (${named}): send the file as \`file\`, and optionally ${OPTIONAL_FIELDS_IN_WORDS}.`);
      }
      const file = form.get("file");
      if (!file || typeof file === "string") return refuse(400, "BAD_USER_INPUT", "The form has no file: send it in a field named `file`.");
      const text = (name: string) => {
        const value = form.get(name);
        return typeof value === "string" && value.trim() !== "" ? value : undefined;
      };
      const input = {
        fileName: (part ? part.fileName : file.name) || "upload",
        ...(file.type ? { mediaType: file.type.split(";")[0]!.trim() } : {}),
        contentBase64: Buffer.from(await file.arrayBuffer()).toString("base64"),
        ...(text("category") !== undefined ? { category: text("category") } : {}),
        ...(text("shareWithTeamId") !== undefined ? { shareWithTeamId: text("shareWithTeamId") } : {}),
        // The knowledge-base subgraph applies its rules (a LOCAL base the caller may add to), as for uploadDocument.
        ...(text("knowledgeBaseId") !== undefined ? { knowledgeBaseId: text("knowledgeBaseId") } : {}),
      };
      const headers: Record<string, string> = { "content-type": "application/json", accept: "application/graphql-response+json, application/json" };
      if (request.headers.authorization) headers.authorization = request.headers.authorization;
      if (typeof request.headers["x-request-id"] === "string") headers["x-request-id"] = request.headers["x-request-id"];
      // A retried upload with the same key gets the first upload's document (lib/database/idempotency.ts).
      if (typeof request.headers[IDEMPOTENCY_KEY_HEADER] === "string") headers[IDEMPOTENCY_KEY_HEADER] = request.headers[IDEMPOTENCY_KEY_HEADER];
      const answer = await options.execute(
        new Request(options.graphqlUrl, { method: "POST", headers, body: JSON.stringify({ query: UPLOAD_MUTATION, variables: { input } }) }),
        // The client's connection: rate limits and logs see its address, not "unknown".
        { req: request },
      );
      // The file is spent once the runtime answers (as in multipart-request.ts).
      release();
      const answerHeaders: Record<string, string> = { ...(cors ?? {}) };
      for (const name of ["content-type", "retry-after"]) {
        const value = answer.headers.get(name);
        if (value) answerHeaders[name] = value;
      }
      response.writeHead(answer.status, answerHeaders);
      response.end(Buffer.from(await answer.arrayBuffer()));
    } finally {
      release();
    }
  };
}
