/**
 * A local stand-in for the three AWS services the knowledge-base backends call: Bedrock Agent
 * Runtime (Retrieve), S3 Vectors (CreateIndex, GetIndex, ListIndexes, PutVectors, GetVectors,
 * QueryVectors, DeleteVectors) and STS (AssumeRole). It is NOT AWS: one HTTP server that speaks
 * those operations' wire shapes as the SDK v3 serializers send them (REST-JSON for Bedrock and
 * S3 Vectors, the query protocol with XML answers for STS), so the real SDK clients run against
 * it with an endpoint override.
 *
 * Bedrock Agent Runtime's client speaks HTTP/2 only (its default request handler is the SDK's
 * NodeHttp2Handler, for the streaming operations), so the stand-in listens twice: HTTP/1.1 at
 * `endpoint` (S3 Vectors, STS) and cleartext HTTP/2 at `http2Endpoint` (Bedrock); both serve
 * every operation.
 *
 * What it checks on every request: an `Authorization: AWS4-HMAC-SHA256` header whose credential
 * scope names today's date (matching X-Amz-Date), a region, the service the path belongs to
 * (bedrock, s3vectors, sts) and `aws4_request`; an access key id it knows (long-term keys added
 * with `addAccessKey`, or temporary ones it issued through AssumeRole, which must come with their
 * session token); and the SigV4 signature itself, recomputed from the secret key it holds.
 * What it cannot check: IAM (every known key may do everything), resource policies, KMS,
 * the real services' ranking, and limits beyond the few it enforces (100 vectors per PutVectors,
 * topK <= 100).
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage as Http1Request, Server, ServerResponse as Http1Response } from "node:http";
import { createServer as createHttp2Server } from "node:http2";
import type { Http2Server, Http2ServerRequest, Http2ServerResponse, Http2Session } from "node:http2";
import type { AddressInfo, Socket } from "node:net";

type IncomingMessage = Http1Request | Http2ServerRequest;
type ServerResponse = Http1Response | Http2ServerResponse;

export type AwsStandInService = "bedrock" | "s3vectors" | "sts";
export type AwsStandInFault = "throttling" | "access-denied" | "validation" | "not-found" | "internal" | "hang";

export interface RecordedAwsRequest {
  service: AwsStandInService;
  operation: string;
  region: string;
  accessKeyId: string;
  sessionToken: string | undefined;
  /** The request's path: for Bedrock it names the knowledge base (`/knowledgebases/<id>/retrieve`). */
  path: string;
  /** JSON body for REST-JSON services; the form fields for STS. */
  body: Record<string, unknown>;
}

/** Temporary credentials AssumeRole handed out (a test checks that later calls were signed with them). */
export interface IssuedRoleCredentials {
  roleArn: string;
  roleSessionName: string;
  accessKeyId: string;
  sessionToken: string;
  expiration: Date;
}

export interface StandInVector {
  data: number[];
  metadata: Record<string, unknown>;
}

interface IssuedCredentials {
  secretAccessKey: string;
  sessionToken: string;
  expiration: Date;
}

interface StandInIndex {
  dimension: number;
  distanceMetric: string;
  vectors: Map<string, StandInVector>;
}

export class AwsStandIn {
  readonly requests: RecordedAwsRequest[] = [];
  /** Every successful AssumeRole's credentials, in order. */
  readonly issuedRoleCredentials: IssuedRoleCredentials[] = [];
  /** Retrieve results per knowledge base id, in Bedrock's JSON shape. */
  readonly knowledgeBases = new Map<string, unknown[]>();
  /** Roles AssumeRole admits, with the external id each requires. */
  readonly roles = new Map<string, { externalId?: string }>();
  /** Lifetime of issued role credentials; defaults to the DurationSeconds asked. */
  issuedLifetimeSeconds: number | undefined;
  /** The stand-in's clock for issued credentials' Expiration (tests move it with the client's). */
  now: () => number = Date.now;

  private readonly longTermKeys = new Map<string, string>();
  private readonly issued = new Map<string, IssuedCredentials>();
  private readonly faults = new Map<AwsStandInService, AwsStandInFault>();
  private readonly buckets = new Map<string, Map<string, StandInIndex>>();
  private readonly sockets = new Set<Socket>();
  private readonly sessions = new Set<Http2Session>();
  private readonly hanging = new Set<ServerResponse>();
  private issuedCount = 0;

  private constructor(
    private readonly server: Server,
    private readonly http2Server: Http2Server,
    /** HTTP/1.1: for the S3 Vectors and STS clients. */
    readonly endpoint: string,
    /** Cleartext HTTP/2: for the Bedrock Agent Runtime client. */
    readonly http2Endpoint: string,
  ) {}

  static async start(): Promise<AwsStandIn> {
    let standIn: AwsStandIn | undefined;
    const serve = (request: IncomingMessage, response: ServerResponse) => {
      standIn!.handle(request, response).catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500, { "content-type": "application/json" });
        response.end(JSON.stringify({ message: `stand-in bug: ${(error as Error).message}` }));
      });
    };
    const server = createServer(serve);
    const http2Server = createHttp2Server(serve);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    await new Promise<void>((resolve) => http2Server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const { port: http2Port } = http2Server.address() as AddressInfo;
    standIn = new AwsStandIn(server, http2Server, `http://127.0.0.1:${port}`, `http://127.0.0.1:${http2Port}`);
    server.on("connection", (socket: Socket) => {
      standIn!.sockets.add(socket);
      socket.on("close", () => standIn!.sockets.delete(socket));
    });
    http2Server.on("session", (session: Http2Session) => {
      standIn!.sessions.add(session);
      session.on("close", () => standIn!.sessions.delete(session));
    });
    return standIn;
  }

  addAccessKey(accessKeyId: string, secretAccessKey: string): void {
    this.longTermKeys.set(accessKeyId, secretAccessKey);
  }

  /** The secret and session token of temporary credentials AssumeRole issued (for another stand-in that must accept them, as every AWS service does). */
  issuedSecret(accessKeyId: string): { secretAccessKey: string; sessionToken: string } | undefined {
    const issued = this.issued.get(accessKeyId);
    return issued && issued.expiration.getTime() > this.now() ? { secretAccessKey: issued.secretAccessKey, sessionToken: issued.sessionToken } : undefined;
  }

  /** From now on every call to `service` fails this way (until `fail(service, null)`). */
  fail(service: AwsStandInService, fault: AwsStandInFault | null): void {
    if (fault) this.faults.set(service, fault);
    else this.faults.delete(service);
  }

  /** The vectors of one index (created on first use by a test or by CreateIndex). */
  index(bucket: string, indexName: string): Map<string, StandInVector> | undefined {
    return this.buckets.get(bucket)?.get(indexName)?.vectors;
  }

  createIndex(bucket: string, indexName: string, dimension: number): void {
    const indexes = this.buckets.get(bucket) ?? new Map<string, StandInIndex>();
    this.buckets.set(bucket, indexes);
    if (!indexes.has(indexName)) indexes.set(indexName, { dimension, distanceMetric: "cosine", vectors: new Map() });
  }

  operations(service?: AwsStandInService): string[] {
    return this.requests.filter((request) => !service || request.service === service).map((request) => request.operation);
  }

  async close(): Promise<void> {
    for (const response of this.hanging) ("stream" in response ? response.stream : response).destroy();
    for (const socket of this.sockets) socket.destroy();
    for (const session of this.sessions) session.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await new Promise<void>((resolve) => this.http2Server.close(() => resolve()));
  }

  // -------------------------------------------------------------------------------------------

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(request.url ?? "/", "http://stand-in");
    const route = routeOf(request.method ?? "", url.pathname);
    if (!route) return sendJson(response, 404, "UnknownOperationException", `the stand-in does not serve ${request.method} ${url.pathname}`);
    const { service } = route;

    const identity = this.authenticate(request, raw, url, service);
    if ("error" in identity) return this.refuse(response, service, identity.status, identity.error, identity.message);

    const body: Record<string, unknown> =
      service === "sts" ? Object.fromEntries(new URLSearchParams(raw.toString("utf8"))) : raw.length > 0 ? (JSON.parse(raw.toString("utf8")) as Record<string, unknown>) : {};
    const operation = service === "sts" ? String(body.Action ?? "") : route.operation;
    this.requests.push({ service, operation, region: identity.region, accessKeyId: identity.accessKeyId, sessionToken: identity.sessionToken, path: url.pathname, body });

    const fault = this.faults.get(service);
    if (fault === "hang") {
      // Never answers: the client's abort (or close()) ends it.
      this.hanging.add(response);
      response.on("close", () => this.hanging.delete(response));
      return;
    }
    if (fault) return this.answerFault(response, service, fault);

    if (service === "sts") return this.assumeRole(response, body);
    if (service === "bedrock") return this.retrieve(response, route.knowledgeBaseId!, body);
    return this.s3vectors(response, operation, body);
  }

  private authenticate(
    request: IncomingMessage,
    body: Buffer,
    url: URL,
    service: AwsStandInService,
  ): { accessKeyId: string; region: string; sessionToken: string | undefined } | { status: number; error: string; message: string } {
    const authorization = header(request, "authorization");
    const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;:-]+), ?Signature=([0-9a-f]{64})$/.exec(authorization ?? "");
    if (!match) return { status: 403, error: "MissingAuthenticationTokenException", message: "Missing or malformed SigV4 Authorization header" };
    const [, accessKeyId, date, region, signedService, signedHeaders, signature] = match as unknown as string[];
    const amzDate = header(request, "x-amz-date") ?? "";
    if (!amzDate.startsWith(date!)) return { status: 403, error: "InvalidSignatureException", message: `credential scope date ${date} does not match X-Amz-Date ${amzDate}` };
    if (signedService !== service) return { status: 403, error: "InvalidSignatureException", message: `credential scope names service ${signedService}, this endpoint is ${service}` };
    const sessionToken = header(request, "x-amz-security-token");
    const issued = this.issued.get(accessKeyId!);
    let secret: string | undefined = this.longTermKeys.get(accessKeyId!);
    if (issued) {
      if (sessionToken !== issued.sessionToken) return { status: 403, error: "UnrecognizedClientException", message: "The security token included in the request is invalid." };
      if (issued.expiration.getTime() <= this.now()) return { status: 403, error: "ExpiredTokenException", message: "The security token included in the request is expired" };
      secret = issued.secretAccessKey;
    }
    if (!secret) return { status: 403, error: service === "sts" ? "InvalidClientTokenId" : "UnrecognizedClientException", message: "The security token included in the request is invalid." };
    const expected = sigV4Signature({ request, body, url, secret, amzDate, scope: `${date}/${region}/${signedService}/aws4_request`, signedHeaders: signedHeaders!, date: date!, region: region!, service });
    if (expected !== signature) return { status: 403, error: "SignatureDoesNotMatch", message: "The request signature we calculated does not match the signature you provided." };
    return { accessKeyId: accessKeyId!, region: region!, sessionToken };
  }

  private refuse(response: ServerResponse, service: AwsStandInService, status: number, error: string, message: string): void {
    if (service === "sts") return sendStsError(response, status, error, message);
    sendJson(response, status, error, message);
  }

  private answerFault(response: ServerResponse, service: AwsStandInService, fault: Exclude<AwsStandInFault, "hang">): void {
    if (service === "sts") {
      const sts = { throttling: [400, "Throttling", "Rate exceeded"], "access-denied": [403, "AccessDenied", "User is not authorized to perform: sts:AssumeRole"], validation: [400, "ValidationError", "1 validation error detected"], "not-found": [404, "NoSuchEntity", "The role cannot be found"], internal: [500, "InternalFailure", "An internal error occurred"] } as const;
      const [status, code, message] = sts[fault];
      return sendStsError(response, status, code, message);
    }
    const names = {
      bedrock: { throttling: "ThrottlingException", "not-found": "ResourceNotFoundException" },
      s3vectors: { throttling: "TooManyRequestsException", "not-found": "NotFoundException" },
    }[service];
    const table = {
      throttling: [429, names.throttling, "Rate exceeded"],
      "access-denied": [403, "AccessDeniedException", "User is not authorized to perform this action"],
      validation: [400, "ValidationException", "1 validation error detected: Value at 'retrievalQuery.text' failed to satisfy constraint"],
      "not-found": [404, names["not-found"], "The resource was not found"],
      internal: [500, "InternalServerException", "Internal server error"],
    } as const;
    const [status, name, message] = table[fault];
    sendJson(response, status, name, message);
  }

  private assumeRole(response: ServerResponse, form: Record<string, unknown>): void {
    if (form.Action !== "AssumeRole" || form.Version !== "2011-06-15") return sendStsError(response, 400, "InvalidAction", `unsupported action ${String(form.Action)}`);
    const roleArn = String(form.RoleArn ?? "");
    const sessionName = String(form.RoleSessionName ?? "");
    if (!/^[\w+=,.@-]{2,64}$/.test(sessionName)) return sendStsError(response, 400, "ValidationError", "RoleSessionName must satisfy [\\w+=,.@-]{2,64}");
    const role = this.roles.get(roleArn);
    if (!role) return sendStsError(response, 403, "AccessDenied", `not authorized to perform sts:AssumeRole on ${roleArn}`);
    if (role.externalId !== undefined && form.ExternalId !== role.externalId) return sendStsError(response, 403, "AccessDenied", "the external id does not match the role's trust policy");
    const lifetime = this.issuedLifetimeSeconds ?? Number(form.DurationSeconds ?? 3600);
    this.issuedCount += 1;
    const accessKeyId = `ASIASTANDIN${String(this.issuedCount).padStart(9, "0")}`;
    const credentials: IssuedCredentials = {
      secretAccessKey: randomBytes(30).toString("base64"),
      sessionToken: `FwoGZXIvYXdzE${randomBytes(48).toString("base64")}`,
      expiration: new Date(Math.floor(this.now() / 1000) * 1000 + lifetime * 1000),
    };
    this.issued.set(accessKeyId, credentials);
    this.issuedRoleCredentials.push({ roleArn, roleSessionName: sessionName, accessKeyId, sessionToken: credentials.sessionToken, expiration: credentials.expiration });
    const roleName = roleArn.split("/").pop();
    response.writeHead(200, { "content-type": "text/xml" });
    response.end(`<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <SourceIdentity></SourceIdentity>
    <AssumedRoleUser>
      <AssumedRoleId>AROA3XFRBF535PLBIFPI4:${sessionName}</AssumedRoleId>
      <Arn>${roleArn.replace(":iam::", ":sts::").replace(":role/", ":assumed-role/")}/${sessionName}</Arn>
    </AssumedRoleUser>
    <Credentials>
      <AccessKeyId>${accessKeyId}</AccessKeyId>
      <SecretAccessKey>${credentials.secretAccessKey}</SecretAccessKey>
      <SessionToken>${credentials.sessionToken}</SessionToken>
      <Expiration>${credentials.expiration.toISOString().replace(".000Z", "Z")}</Expiration>
    </Credentials>
    <PackedPolicySize>6</PackedPolicySize>
  </AssumeRoleResult>
  <ResponseMetadata>
    <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7-${roleName}</RequestId>
  </ResponseMetadata>
</AssumeRoleResponse>`);
  }

  private retrieve(response: ServerResponse, knowledgeBaseId: string, body: Record<string, unknown>): void {
    const results = this.knowledgeBases.get(knowledgeBaseId);
    if (!results) return sendJson(response, 404, "ResourceNotFoundException", `Knowledge base ${knowledgeBaseId} does not exist`);
    const query = (body.retrievalQuery as { text?: unknown } | undefined)?.text;
    if (typeof query !== "string" || query.length === 0 || query.length > 1000) return sendJson(response, 400, "ValidationException", "retrievalQuery.text must be 1-1000 characters");
    const configuration = (body.retrievalConfiguration as { vectorSearchConfiguration?: { numberOfResults?: number } } | undefined)?.vectorSearchConfiguration;
    const count = configuration?.numberOfResults ?? 5;
    if (count < 1 || count > 100) return sendJson(response, 400, "ValidationException", "numberOfResults must be 1-100");
    response.writeHead(200, { "content-type": "application/json", "x-amzn-requestid": randomBytes(8).toString("hex") });
    response.end(JSON.stringify({ retrievalResults: results.slice(0, count), guardrailAction: "NONE" }));
  }

  private s3vectors(response: ServerResponse, operation: string, body: Record<string, unknown>): void {
    const bucketName = String(body.vectorBucketName ?? "");
    const indexName = String(body.indexName ?? "");
    const indexes = this.buckets.get(bucketName) ?? new Map<string, StandInIndex>();
    this.buckets.set(bucketName, indexes);
    const ok = (payload: unknown) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(payload));
    };
    if (operation === "CreateIndex") {
      if (indexes.has(indexName)) return sendJson(response, 409, "ConflictException", "An index with this name already exists");
      indexes.set(indexName, { dimension: Number(body.dimension), distanceMetric: String(body.distanceMetric), vectors: new Map() });
      return ok({ indexArn: arnOf(bucketName, indexName) });
    }
    if (operation === "ListIndexes") {
      const prefix = String(body.prefix ?? "");
      const names = [...indexes.keys()].filter((name) => name.startsWith(prefix));
      return ok({ indexes: names.map((name) => ({ vectorBucketName: bucketName, indexName: name, indexArn: arnOf(bucketName, name), creationTime: 1_760_000_000 })) });
    }
    const index = indexes.get(indexName);
    if (!index) return sendJson(response, 404, "NotFoundException", "The specified index could not be found");
    if (operation === "GetIndex") {
      return ok({ index: { vectorBucketName: bucketName, indexName, indexArn: arnOf(bucketName, indexName), creationTime: 1_760_000_000, dataType: "float32", dimension: index.dimension, distanceMetric: index.distanceMetric } });
    }
    if (operation === "PutVectors") {
      const vectors = body.vectors as Array<{ key: string; data: { float32: number[] }; metadata?: Record<string, unknown> }>;
      if (!Array.isArray(vectors) || vectors.length < 1 || vectors.length > 100) return sendJson(response, 400, "ValidationException", "vectors must hold 1-100 items");
      for (const vector of vectors) {
        if (vector.data?.float32?.length !== index.dimension) return sendJson(response, 400, "ValidationException", `vector ${vector.key} has the wrong dimension`);
      }
      for (const vector of vectors) index.vectors.set(vector.key, { data: vector.data.float32, metadata: vector.metadata ?? {} });
      return ok({});
    }
    if (operation === "GetVectors") {
      const keys = body.keys as string[];
      return ok({ vectors: keys.filter((key) => index.vectors.has(key)).map((key) => ({ key, ...(body.returnMetadata ? { metadata: index.vectors.get(key)!.metadata } : {}) })) });
    }
    if (operation === "DeleteVectors") {
      const keys = body.keys as string[];
      if (!Array.isArray(keys) || keys.length < 1 || keys.length > 500) return sendJson(response, 400, "ValidationException", "keys must hold 1-500 items");
      for (const key of keys) index.vectors.delete(key);
      return ok({});
    }
    if (operation === "QueryVectors") {
      const topK = Number(body.topK);
      const query = (body.queryVector as { float32?: number[] } | undefined)?.float32 ?? [];
      if (!Number.isInteger(topK) || topK < 1 || topK > 100) return sendJson(response, 400, "ValidationException", "topK must be 1-100");
      if (query.length !== index.dimension) return sendJson(response, 400, "ValidationException", "queryVector has the wrong dimension");
      const matches = [...index.vectors.entries()]
        .filter(([, vector]) => body.filter === undefined || matchesFilter(vector.metadata, body.filter))
        .map(([key, vector]) => ({ key, distance: 1 - cosine(query, vector.data), metadata: vector.metadata }))
        .sort((a, b) => a.distance - b.distance)
        .slice(0, topK)
        .map(({ key, distance, metadata }) => ({ key, ...(body.returnDistance ? { distance } : {}), ...(body.returnMetadata ? { metadata } : {}) }));
      return ok({ vectors: matches, distanceMetric: "cosine" });
    }
    sendJson(response, 400, "ValidationException", `the stand-in does not implement ${operation}`);
  }
}

// ---------------------------------------------------------------------------------------------

const S3_VECTORS_OPERATIONS = new Set(["CreateIndex", "GetIndex", "ListIndexes", "PutVectors", "GetVectors", "QueryVectors", "DeleteVectors"]);

function routeOf(method: string, path: string): { service: AwsStandInService; operation: string; knowledgeBaseId?: string } | undefined {
  if (method !== "POST") return undefined;
  if (path === "/") return { service: "sts", operation: "" };
  const retrieve = /^\/knowledgebases\/([^/]+)\/retrieve$/.exec(path);
  if (retrieve) return { service: "bedrock", operation: "Retrieve", knowledgeBaseId: decodeURIComponent(retrieve[1]!) };
  const operation = path.slice(1);
  if (S3_VECTORS_OPERATIONS.has(operation)) return { service: "s3vectors", operation };
  return undefined;
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

function sendJson(response: ServerResponse, status: number, errorType: string, message: string): void {
  response.writeHead(status, { "content-type": "application/json", "x-amzn-errortype": `${errorType}:http://internal.amazon.com/coral/com.amazon.stand-in/` });
  response.end(JSON.stringify({ message }));
}

function sendStsError(response: ServerResponse, status: number, code: string, message: string): void {
  response.writeHead(status, { "content-type": "text/xml" });
  response.end(`<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error><Type>Sender</Type><Code>${code}</Code><Message>${message.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</Message></Error>
  <RequestId>${randomBytes(8).toString("hex")}</RequestId>
</ErrorResponse>`);
}

function arnOf(bucket: string, index: string): string {
  return `arn:aws:s3vectors:us-east-1:123456789012:bucket/${bucket}/index/${index}`;
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** S3 Vectors' documented filter language: implicit equality, $eq $ne $gt $gte $lt $lte $in $nin $exists, $and $or. */
function matchesFilter(metadata: Record<string, unknown>, filter: unknown): boolean {
  if (filter === null || typeof filter !== "object") throw new Error("filter must be an object");
  return Object.entries(filter as Record<string, unknown>).every(([key, condition]) => {
    if (key === "$and") return (condition as unknown[]).every((part) => matchesFilter(metadata, part));
    if (key === "$or") return (condition as unknown[]).some((part) => matchesFilter(metadata, part));
    const value = metadata[key];
    if (condition === null || typeof condition !== "object" || Array.isArray(condition)) return value === condition;
    return Object.entries(condition as Record<string, unknown>).every(([operator, operand]) => {
      switch (operator) {
        case "$eq": return value === operand;
        case "$ne": return value !== operand;
        case "$gt": return typeof value === "number" && value > (operand as number);
        case "$gte": return typeof value === "number" && value >= (operand as number);
        case "$lt": return typeof value === "number" && value < (operand as number);
        case "$lte": return typeof value === "number" && value <= (operand as number);
        case "$in": return (operand as unknown[]).includes(value);
        case "$nin": return !(operand as unknown[]).includes(value);
        case "$exists": return (value !== undefined) === operand;
        default: throw new Error(`unknown filter operator ${operator}`);
      }
    });
  });
}

// Private: SigV4, recomputed from the secret the stand-in holds, as AWS documents it
// (canonical request, string to sign, derived key). Only what these clients send is handled:
// no query-string auth, no chunked payloads.
export function sigV4Signature(input: {
  request: IncomingMessage;
  body: Buffer;
  url: URL;
  secret: string;
  amzDate: string;
  scope: string;
  signedHeaders: string;
  date: string;
  region: string;
  service: string;
}): string {
  const { request, body, url } = input;
  const canonicalQuery = [...url.searchParams.entries()]
    .map(([key, value]) => [awsEncode(key), awsEncode(value)])
    .sort(([a, x], [b, y]) => (a! < b! ? -1 : a! > b! ? 1 : x! < y! ? -1 : 1))
    .map(([key, value]) => `${key}=${value}`)
    .join("&");
  const canonicalHeaders = input.signedHeaders
    .split(";")
    .map((name) => `${name}:${(header(request, name) ?? "").trim().replace(/\s+/g, " ")}\n`)
    .join("");
  const payloadHash = header(request, "x-amz-content-sha256") ?? createHash("sha256").update(body).digest("hex");
  // Non-S3 services sign the path URI-encoded once more (each segment).
  const canonicalPath = url.pathname.split("/").map((segment) => awsEncode(segment)).join("/");
  const canonicalRequest = [request.method, canonicalPath, canonicalQuery, canonicalHeaders, input.signedHeaders, payloadHash].join("\n");
  const stringToSign = ["AWS4-HMAC-SHA256", input.amzDate, input.scope, createHash("sha256").update(canonicalRequest).digest("hex")].join("\n");
  let key: Buffer = createHmac("sha256", `AWS4${input.secret}`).update(input.date).digest();
  for (const part of [input.region, input.service, "aws4_request"]) key = createHmac("sha256", key).update(part).digest();
  return createHmac("sha256", key).update(stringToSign).digest("hex");
}

function awsEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
