/**
 * GraphQL multipart requests on the GraphQL endpoint
 * (https://github.com/jaydenseric/graphql-multipart-request-spec), as Apollo Client's upload link
 * sends them: a multipart/form-data body whose first field `operations` is the usual JSON request
 * with each file variable set to null, whose second field `map` says which file part fills which
 * variable path (`{ "1": ["variables.files.0"] }`), then the file parts.
 *
 * Why the gateway reads the files itself rather than letting Hive's runtime forward them as
 * multipart to the subgraph: the subgraphs are Apollo Server, which parses no multipart bodies, so
 * that way would need a second multipart parser in a subgraph and a second set of limits. Here
 * the body is stream-parsed once (busboy), bounded as `POST /documents` is bounded, and each file
 * becomes an `UploadValue` (lib/graphql/upload.ts) in the variables of an ordinary JSON request
 * that runs through the gateway runtime: identity, rate limits (charged by size), operation and
 * persisted-operation rules, and then the subgraph's own checks of every upload (`readUpload`)
 * apply unchanged. One ingestion path, one tenant scope.
 *
 * Refused before anything is executed, with a coded error and the connection closed (the unread
 * rest of the body must never be taken for the next request):
 * - no `Apollo-Require-Preflight` / `X-Apollo-Operation-Name` header: multipart/form-data is a
 *   "simple" content type a cross-site form may post without a CORS preflight (CSRF), so the spec's
 *   recommendation, as Apollo Server and graphql-yoga apply it;
 * - a declared body, a file, the files together, or their number over the limits, as soon as the
 *   bytes say so (413, BAD_USER_INPUT with `reason`);
 * - `operations` or `map` malformed, out of order or oversized; a map path that is not an `Upload`
 *   variable of the operation; a file part the map names but the body lacks (400, BAD_USER_INPUT).
 */
import type http from "node:http";
import { Busboy, type BusboyFileStream } from "@fastify/busboy";
import {
  GraphQLError,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  Kind,
  parse,
  typeFromAST,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";
import { IDEMPOTENCY_KEY_HEADER } from "../lib/graphql/idempotency-key.js";
import { checkTokens, type OperationLimits } from "../lib/graphql/operation-limits.js";
import { MAX_UPLOAD_FILES, type UploadValue } from "../lib/graphql/upload.js";
import { declaresAtMost, MAX_REQUEST_BODY_BYTES } from "../lib/http-body.js";
import type { UploadAdmission } from "./upload-admission.js";

export interface MultipartRequestOptions {
  /** Largest file accepted (DOCUMENT_MAX_BYTES, as for `POST /documents`). */
  maxFileBytes: number;
  /** The API schema: a map path must name an `Upload` in it. */
  schema: GraphQLSchema;
  /** Token and depth limits, checked before `operations.query` is parsed. */
  operationLimits: Pick<OperationLimits, "maxTokens" | "maxDepth">;
  /** The runtime's GraphQL endpoint, as a URL the runtime accepts (e.g. http://gateway/graphql). */
  graphqlUrl: string;
  /** Runs the JSON request through the gateway runtime, with the client's connection as its server context. */
  execute(request: Request, serverContext: { req: http.IncomingMessage }): Promise<Response>;
  /** Whether the caller may send a body at all (upload-admission.ts): checked before any byte of it is read. */
  admit(request: http.IncomingMessage): Promise<UploadAdmission>;
  /** CORS headers for the request's origin, or null when the origin is not allowed. */
  corsHeaders(origin: string | undefined): Record<string, string> | null;
}

/** The `operations` field: the query text and the variables around the files, never a file's bytes. */
export const MAX_OPERATIONS_BYTES = 64 * 1024;
/** The `map` field: a few dozen bytes a file. */
export const MAX_MAP_BYTES = 8 * 1024;
/** What one file adds to the JSON request around its base64: its name (JSON-escaped), media type and keys. */
const FILE_WRAPPER_BYTES = 2 * 1024;
/** Multipart boundaries and part headers. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

/** Headers whose presence shows a script (not a cross-site form) sent the request: the browser preflighted it. */
const PREFLIGHT_HEADERS = ["apollo-require-preflight", "x-apollo-operation-name"];

/**
 * All files of one request together: as much as fits, in base64, in the gateway's (and the
 * subgraph's) request body limit beside `operations` and the files' names; about 11.9 MB.
 */
export function maxUploadTotalBytes(maxBodyBytes = MAX_REQUEST_BODY_BYTES): number {
  return Math.floor((maxBodyBytes - MAX_OPERATIONS_BYTES - MAX_MAP_BYTES - MAX_UPLOAD_FILES * FILE_WRAPPER_BYTES) / 4) * 3;
}

export function isMultipartRequest(request: http.IncomingMessage): boolean {
  return request.method === "POST" && /^multipart\/form-data\b/i.test(request.headers["content-type"] ?? "");
}

/** A refusal: HTTP status, code, what to fix, and optionally why (`extensions.reason`). */
class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly reason?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const badInput = (message: string, reason?: string) => new Refusal(400, "BAD_USER_INPUT", message, reason);
const tooLarge = (message: string, reason: string) => new Refusal(413, "BAD_USER_INPUT", message, reason);
const bytes = (count: number) => `${count.toLocaleString("en-US")} bytes`;

interface ReadForm {
  operations: Record<string, unknown>;
  map: Map<string, string[]>;
  files: Map<string, UploadValue>;
}

export function multipartRequest(options: MultipartRequestOptions) {
  const maxTotalBytes = Math.min(options.maxFileBytes * MAX_UPLOAD_FILES, maxUploadTotalBytes());
  const maxBodyBytes = maxTotalBytes + MAX_OPERATIONS_BYTES + MAX_MAP_BYTES + FORM_OVERHEAD_BYTES;

  return async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const cors = options.corsHeaders(request.headers.origin) ?? {};
    const refuse = (refusal: Refusal, bodyUnread = false) => {
      const extensions = { code: refusal.code, ...(refusal.reason ? { reason: refusal.reason } : {}), http: { status: refusal.status } };
      const body = JSON.stringify({ errors: [{ message: refusal.message, extensions }] });
      request.unpipe();
      // A refusal before the body was read (admission) drains only a body declared within bounds.
      if (declaresAtMost(request, maxBodyBytes) || (refusal.status !== 413 && !bodyUnread)) {
        // A body within the bound the client is still sending: keep the connection, and let Node
        // read and drop the rest. Closing now resets a client still writing, and fetch (undici,
        // Node 22 and later) then reports "fetch failed" instead of this answer.
        response.writeHead(refusal.status, { "content-type": "application/json; charset=utf-8", ...cors, ...refusal.headers });
        response.end(body);
        request.resume();
        return;
      }
      // Larger than any acceptable body, or of unknown length: close once the answer is out.
      response.shouldKeepAlive = false;
      response.writeHead(refusal.status, { "content-type": "application/json; charset=utf-8", connection: "close", ...cors, ...refusal.headers });
      response.end(body, () => response.socket?.destroySoon());
      request.resume();
    };

    if (!PREFLIGHT_HEADERS.some((name) => typeof request.headers[name] === "string" && request.headers[name] !== "")) {
      return refuse(
        new Refusal(
          400,
          "BAD_REQUEST",
          "This multipart request has been blocked as a potential cross-site request forgery: send it with the header `Apollo-Require-Preflight: true` (or a non-empty `X-Apollo-Operation-Name`). Apollo Client: `new UploadHttpLink({ headers: { \"Apollo-Require-Preflight\": \"true\" } })`.",
        ),
      );
    }
    const { refusal: admissionRefusal, release } = await options.admit(request);
    if (admissionRefusal) return refuse(new Refusal(admissionRefusal.status, admissionRefusal.code, admissionRefusal.message, undefined, admissionRefusal.headers ?? {}), true);
    // Its place is held until the runtime has answered or this handler is done (below), also when
    // the client went first: see document-upload.ts.
    try {
      const declared = Number(request.headers["content-length"] ?? NaN);
      if (Number.isFinite(declared) && declared > maxBodyBytes) {
        return refuse(tooLarge(`The request is ${bytes(declared)}; uploads of up to ${bytes(maxTotalBytes)} in all (each file up to ${bytes(options.maxFileBytes)}) are accepted.`, "UPLOAD_TOO_LARGE"));
      }

      let form: ReadForm;
      try {
        form = await readForm(request, { maxFileBytes: options.maxFileBytes, maxTotalBytes });
      } catch (error) {
        if (error instanceof Refusal) return refuse(error);
        return refuse(badInput("The body is not a valid multipart/form-data GraphQL request (https://github.com/jaydenseric/graphql-multipart-request-spec)."));
      }

      let body: Record<string, unknown>;
      try {
        body = withFiles(form, options);
      } catch (error) {
        if (error instanceof Refusal) return refuse(error);
        if (error instanceof GraphQLError) return refuse(new Refusal(400, String(error.extensions.code ?? "GRAPHQL_PARSE_FAILED"), error.message));
        throw error;
      }

      const headers: Record<string, string> = { "content-type": "application/json" };
      // What the runtime reads from a request: identity, tracing, idempotency, CORS, the answer's format.
      for (const name of ["accept", "authorization", "x-request-id", IDEMPOTENCY_KEY_HEADER, "origin", "apollographql-client-name", "apollographql-client-version", "traceparent"]) {
        const value = request.headers[name];
        if (typeof value === "string") headers[name] = value;
      }
      // A caller that hangs up cancels its request: a write without an Idempotency-Key then rolls
      // back rather than committing unseen (lib/database/idempotency.ts).
      const abandoned = new AbortController();
      response.once("close", () => {
        if (!response.writableFinished) abandoned.abort();
      });
      let answer: Response;
      try {
        answer = await options.execute(new Request(options.graphqlUrl, { method: "POST", headers, body: JSON.stringify(body), signal: abandoned.signal }), { req: request });
      } catch (error) {
        if (abandoned.signal.aborted) return;
        throw error;
      }
      // The files are spent once the runtime answers: an answer in parts (@defer) holds no place
      // while it streams, and one whose stream outlives its client cannot keep it.
      release();
      const answerHeaders: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (name !== "content-length" && name !== "transfer-encoding" && name !== "connection") answerHeaders[name] = value;
      });
      response.writeHead(answer.status, answerHeaders);
      // Written as it comes: an operation with @defer answers in parts. (The runtime's body may be a
      // ponyfilled stream, which Readable.fromWeb never ends; async iteration works on both kinds.)
      if (answer.body) {
        for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) response.write(chunk);
      }
      response.end();
    } finally {
      release();
    }
  };
}

/**
 * Reads the parts in the spec's order, each bounded before it is kept: `operations`, `map`, then
 * the files the map names. Rejects with a Refusal as soon as a limit is passed.
 */
function readForm(request: http.IncomingMessage, limits: { maxFileBytes: number; maxTotalBytes: number }): Promise<ReadForm> {
  return new Promise((resolve, reject) => {
    let operations: Record<string, unknown> | null = null;
    let map: Map<string, string[]> | null = null;
    const files = new Map<string, UploadValue>();
    let totalBytes = 0;
    let settled = false;
    let pending = 0;
    let finished = false;

    let parser: ReturnType<typeof Busboy>;
    try {
      parser = Busboy({
        headers: request.headers as { "content-type": string },
        defCharset: "utf8",
        limits: {
          fieldNameSize: 200,
          fieldSize: MAX_OPERATIONS_BYTES,
          fields: 2,
          // A file part past these is refused (filesLimit); the map is checked against the same count first.
          files: MAX_UPLOAD_FILES,
          fileSize: limits.maxFileBytes,
          parts: 2 + MAX_UPLOAD_FILES,
          headerPairs: 20,
        },
      });
    } catch {
      return reject(badInput("The multipart/form-data content type needs a boundary parameter."));
    }

    const fail = (refusal: Refusal) => {
      if (settled) return;
      settled = true;
      request.unpipe(parser);
      parser.removeAllListeners();
      // Busboy may still emit on its way down; nothing listens any more.
      parser.on("error", () => undefined);
      reject(refusal);
    };
    const done = () => {
      if (settled || !finished || pending > 0) return;
      if (operations === null) return fail(badInput("The body has no `operations` field: send the GraphQL request as JSON in a field named `operations`, first."));
      if (map === null) return fail(badInput("The body has no `map` field: after `operations`, send a JSON object naming each file part's variable paths, e.g. {\"1\":[\"variables.file\"]}."));
      const missing = [...map.keys()].filter((key) => !files.has(key));
      if (missing.length > 0) return fail(badInput(`The map names file part${missing.length > 1 ? "s" : ""} ${missing.map((key) => `\`${key}\``).join(", ")}, but the body has no such file: send every mapped file.`, "MISSING_FILE"));
      settled = true;
      resolve({ operations, map, files });
    };

    parser.on("field", (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
      if (name === "operations") {
        if (operations !== null || map !== null || files.size > 0) return fail(badInput("`operations` must be the first field of the body, and only once."));
        if (valueTruncated) return fail(tooLarge(`\`operations\` is larger than ${bytes(MAX_OPERATIONS_BYTES)}, the most accepted: files go in file parts, not in the JSON.`, "OPERATIONS_TOO_LARGE"));
        const parsed = parseJson(value);
        if (parsed === undefined || typeof parsed !== "object" || parsed === null) return fail(badInput("`operations` must be a JSON object: the GraphQL request, with each file variable set to null."));
        if (Array.isArray(parsed)) return fail(badInput("`operations` is a batch (a JSON array): this endpoint takes one operation per request; send the uploads one request each."));
        operations = parsed as Record<string, unknown>;
        return;
      }
      if (name === "map") {
        if (operations === null || map !== null) return fail(badInput("`map` must be the second field of the body, right after `operations`, and only once."));
        if (valueTruncated || Buffer.byteLength(value) > MAX_MAP_BYTES) return fail(tooLarge(`\`map\` is larger than ${bytes(MAX_MAP_BYTES)}, the most accepted.`, "MAP_TOO_LARGE"));
        const parsed = parseJson(value);
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return fail(badInput("`map` must be a JSON object from file part names to arrays of variable paths, e.g. {\"1\":[\"variables.file\"]}."));
        const entries = Object.entries(parsed as Record<string, unknown>);
        if (entries.length > MAX_UPLOAD_FILES) return fail(tooLarge(`\`map\` names ${entries.length} files; at most ${MAX_UPLOAD_FILES} are accepted in one request.`, "TOO_MANY_FILES"));
        map = new Map();
        for (const [key, paths] of entries) {
          if (!Array.isArray(paths) || paths.length === 0 || !paths.every((path) => typeof path === "string")) {
            return fail(badInput(`\`map\`["${key}"] must be a non-empty array of variable paths such as "variables.files.0".`));
          }
          map.set(key, paths as string[]);
        }
        // A file named at several paths is copied to each: count the copies, not the parts.
        const places = [...map.values()].reduce((sum, paths) => sum + paths.length, 0);
        if (places > MAX_UPLOAD_FILES) return fail(tooLarge(`\`map\` places files at ${places} variable paths; at most ${MAX_UPLOAD_FILES} are accepted in one request.`, "TOO_MANY_FILES"));
        return;
      }
      fail(badInput(`Unexpected field \`${name.slice(0, 100)}\`: the body takes \`operations\`, \`map\`, then the files the map names (a file part needs a filename in its Content-Disposition).`));
    });

    parser.on("file", (name: string, stream: BusboyFileStream, fileName: string, _encoding: string, mimeType: string) => {
      if (settled) return void stream.resume();
      if (map === null) return fail(badInput(`File part \`${name.slice(0, 100)}\` came before \`map\`: send \`operations\`, then \`map\`, then the files.`));
      if (!map.has(name)) return fail(badInput(`File part \`${name.slice(0, 100)}\` is not in \`map\`: name every file part in the map, or leave it out.`));
      if (files.has(name)) return fail(badInput(`File part \`${name.slice(0, 100)}\` came twice.`));
      pending += 1;
      const chunks: Buffer[] = [];
      let size = 0;
      const copies = map.get(name)!.length;
      stream.on("data", (chunk: Buffer) => {
        if (settled) return;
        size += chunk.length;
        // The JSON request carries the file once per path the map gives it.
        totalBytes += chunk.length * copies;
        if (totalBytes > limits.maxTotalBytes) {
          return fail(tooLarge(`The files together pass ${bytes(limits.maxTotalBytes)}, the most one request may carry: send them in several requests.`, "UPLOAD_TOO_LARGE"));
        }
        chunks.push(chunk);
      });
      stream.on("limit", () =>
        fail(tooLarge(`File part \`${name.slice(0, 100)}\` is larger than ${bytes(limits.maxFileBytes)}, the most accepted for one file.`, "FILE_TOO_LARGE")),
      );
      stream.on("end", () => {
        pending -= 1;
        if (settled) return;
        const type = mimeType.split(";")[0]!.trim();
        files.set(name, {
          fileName: fileName || "upload",
          // busboy says text/plain when the part names no type; then the bytes and the name decide.
          ...(type && type !== "application/octet-stream" ? { mediaType: type } : {}),
          contentBase64: Buffer.concat(chunks, size).toString("base64"),
        });
        done();
      });
    });
    parser.on("filesLimit", () => fail(tooLarge(`The body has more than ${MAX_UPLOAD_FILES} files, the most accepted in one request.`, "TOO_MANY_FILES")));
    parser.on("partsLimit", () => fail(badInput(`The body has more than ${2 + MAX_UPLOAD_FILES} parts: \`operations\`, \`map\` and at most ${MAX_UPLOAD_FILES} files.`)));
    parser.on("fieldsLimit", () => fail(badInput("The body has more fields than `operations` and `map`.")));
    parser.on("error", () => fail(badInput("The body is not valid multipart/form-data.")));
    parser.on("finish", () => {
      finished = true;
      done();
    });
    request.on("error", () => fail(badInput("The request body ended early.")));
    // Settled also when Node reports no error for a client that went, or when it went before
    // this was called and its destroyed request will emit nothing more (see readBoundedBody).
    request.on("close", () => {
      if (!request.complete) fail(badInput("The request body ended early."));
    });
    if (request.destroyed) return fail(badInput("The client went away before the body was read."));
    request.pipe(parser);
  });
}

/**
 * The JSON request the runtime executes: `operations` with each mapped path, checked to be an
 * `Upload` variable of the operation and set to null by the client, replaced by its file.
 */
function withFiles(form: ReadForm, options: Pick<MultipartRequestOptions, "schema" | "operationLimits">): Record<string, unknown> {
  const { operations } = form;
  if (typeof operations.query !== "string") {
    throw badInput("`operations.query` must be the operation's text: a multipart request cannot name a persisted operation by id, since the map is checked against its variables.");
  }
  checkTokens(operations.query, options.operationLimits);
  const document = parse(operations.query, { maxTokens: options.operationLimits.maxTokens });
  const operation = chosenOperation(document, typeof operations.operationName === "string" ? operations.operationName : null);
  const variables = operations.variables ?? {};
  if (typeof variables !== "object" || variables === null || Array.isArray(variables)) throw badInput("`operations.variables` must be a JSON object.");

  for (const [key, paths] of form.map) {
    for (const path of paths) {
      const [root, name, ...rest] = path.split(".");
      if (root !== "variables" || !name) throw badInput(`\`map\`["${key}"]: "${path}" must start with "variables." and name a variable of the operation.`);
      const definition = operation.variableDefinitions?.find((variable) => variable.variable.name.value === name);
      if (!definition) throw badInput(`\`map\`["${key}"]: the operation declares no variable $${name}.`);
      let type = typeFromAST(options.schema, definition.type) as GraphQLInputType | undefined;
      let container: unknown = variables;
      let slot: string | number = name;
      for (const segment of rest) {
        if (type && isNonNullType(type)) type = type.ofType;
        container = (container as Record<string | number, unknown> | null)?.[slot];
        if (type && isListType(type) && /^\d+$/.test(segment) && Array.isArray(container)) {
          type = type.ofType as GraphQLInputType;
          slot = Number(segment);
        } else if (type && isInputObjectType(type) && type.getFields()[segment] && typeof container === "object" && container !== null && !Array.isArray(container)) {
          type = type.getFields()[segment]!.type;
          slot = segment;
        } else {
          throw badInput(`\`map\`["${key}"]: "${path}" does not lead to an Upload in $${name}: put null at that place in the variables, where the schema expects an Upload.`);
        }
      }
      if (type && isNonNullType(type)) type = type.ofType;
      if (!type || !isScalarType(type) || type.name !== "Upload") {
        throw badInput(`\`map\`["${key}"]: "${path}" is ${type ? `a ${String(type)}` : "of an unknown type"}, not an Upload: only Upload variables take files.`);
      }
      const holder = container as Record<string | number, unknown>;
      if (holder === null || typeof holder !== "object" || !(slot in holder) || holder[slot] !== null) {
        throw badInput(`\`map\`["${key}"]: "${path}" must be null in \`operations.variables\` (the place the file goes), as the multipart request spec says.`);
      }
      holder[slot] = form.files.get(key)!;
    }
  }
  return { ...operations, variables };
}

function chosenOperation(document: DocumentNode, operationName: string | null): OperationDefinitionNode {
  const operations = document.definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName === null ? (operations.length === 1 ? operations[0] : undefined) : operations.find((candidate) => candidate.name?.value === operationName);
  if (!operation) {
    throw badInput(operationName === null ? "`operations.query` has several operations: name the one to run in `operations.operationName`." : `\`operations.query\` has no operation named "${operationName}".`);
  }
  return operation;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
