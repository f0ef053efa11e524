/**
 * A local stand-in for Amazon Bedrock Runtime's Converse API: `POST /model/{modelId}/converse-stream`
 * (answered in AWS's binary event-stream encoding, framed with @smithy/eventstream-codec) and
 * `POST /model/{modelId}/converse` (JSON). It is NOT Bedrock and NOT a model: it streams a text
 * it was given (`answer`) word by word as `messageStart`, `contentBlockDelta`, `contentBlockStop`,
 * `messageStop` (end_turn, or max_tokens at `inferenceConfig.maxTokens` words) and `metadata`
 * (usage) events, so that the real `@aws-sdk/client-bedrock-runtime` can be pointed at it with
 * `endpoint`. Like the SDK's default handler it speaks cleartext HTTP/2.
 *
 * It checks what Bedrock checks first: a SigV4 Authorization for service `bedrock`, by a key it
 * holds (`addAccessKey`), with the signature recomputed (aws-stand-in.ts's sigV4Signature);
 * otherwise 403 UnrecognizedClientException or InvalidSignatureException. `behaviour` switches
 * on failures as Bedrock reports them. Every request is recorded in `requests`.
 */
import { createServer as createHttp2Server, type Http2Server, type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from "node:http2";
import type { AddressInfo } from "node:net";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { sigV4Signature } from "./aws-stand-in.js";

export type ConverseBehaviour =
  | "answer"
  /** 403 AccessDeniedException. */
  | "access-denied"
  /** 429 ThrottlingException. */
  | "throttling"
  /** 500 InternalServerException. */
  | "internal"
  /** Streams words forever, ignoring maxTokens, never a messageStop. */
  | "endless"
  /** A contentBlockDelta whose payload bytes are not UTF-8. */
  | "invalid-utf8"
  /** The guardrail stops the answer: stopReason guardrail_intervened. */
  | "guardrail"
  /** A throttlingException event inside the stream, after a delta. */
  | "stream-throttled";

export interface RecordedConverseRequest {
  path: string;
  modelId: string;
  operation: "Converse" | "ConverseStream";
  region: string;
  accessKeyId: string;
  body: Record<string, unknown>;
}

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString("utf8"),
  (text) => new Uint8Array(Buffer.from(text, "utf8")),
);

export class BedrockConverseStandIn {
  readonly requests: RecordedConverseRequest[] = [];
  behaviour: ConverseBehaviour = "answer";
  answer = "Bedrock answers from the passages [p1] and cites them [p2].";
  inputTokens = 57;
  chunkDelayMs = 2;
  private readonly keys = new Map<string, string>();
  private readonly sessions = new Set<Http2Session>();

  private constructor(
    private readonly server: Http2Server,
    /** Cleartext HTTP/2, for the client's `endpoint`. */
    readonly endpoint: string,
  ) {}

  static async start(): Promise<BedrockConverseStandIn> {
    let standIn: BedrockConverseStandIn | undefined;
    const server = createHttp2Server((request, response) => {
      standIn!.handle(request, response).catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500, { "content-type": "application/json" });
        response.end(JSON.stringify({ message: `stand-in bug: ${(error as Error).message}` }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    standIn = new BedrockConverseStandIn(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on("session", (session: Http2Session) => {
      standIn!.sessions.add(session);
      session.on("close", () => standIn!.sessions.delete(session));
    });
    return standIn;
  }

  addAccessKey(accessKeyId: string, secretAccessKey: string): void {
    this.keys.set(accessKeyId, secretAccessKey);
  }

  /**
   * Also accept temporary credentials another stand-in's STS issued (AwsStandIn.issuedSecret):
   * like AWS, a request signed with them must carry their session token.
   */
  trustIssuer(issuedSecret: (accessKeyId: string) => { secretAccessKey: string; sessionToken: string } | undefined): void {
    this.issuer = issuedSecret;
  }

  private issuer: ((accessKeyId: string) => { secretAccessKey: string; sessionToken: string } | undefined) | undefined;

  async close(): Promise<void> {
    for (const session of this.sessions) session.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: Http2ServerRequest, response: Http2ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(request.url ?? "/", "http://stand-in");
    const route = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(url.pathname);
    if (request.method !== "POST" || !route) return sendError(response, 404, "UnknownOperationException", `the stand-in does not serve ${request.method} ${url.pathname}`);

    const authorization = String(request.headers.authorization ?? "");
    const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;:-]+), ?Signature=([0-9a-f]{64})$/.exec(authorization);
    if (!match) return sendError(response, 403, "MissingAuthenticationTokenException", "Missing Authentication Token");
    const [, accessKeyId, date, region, service, signedHeaders, signature] = match as unknown as string[];
    const issued = this.issuer?.(accessKeyId!);
    if (issued && request.headers["x-amz-security-token"] !== issued.sessionToken) return sendError(response, 403, "UnrecognizedClientException", "The security token included in the request is invalid.");
    const secret = issued?.secretAccessKey ?? this.keys.get(accessKeyId!);
    if (!secret || service !== "bedrock") return sendError(response, 403, "UnrecognizedClientException", "The security token included in the request is invalid.");
    const amzDate = String(request.headers["x-amz-date"] ?? "");
    const expected = sigV4Signature({ request, body: raw, url, secret, amzDate, scope: `${date}/${region}/${service}/aws4_request`, signedHeaders: signedHeaders!, date: date!, region: region!, service: service! });
    if (expected !== signature) return sendError(response, 403, "InvalidSignatureException", "The request signature we calculated does not match the signature you provided.");

    const body = JSON.parse(raw.toString("utf8") || "{}") as Record<string, unknown>;
    const modelId = decodeURIComponent(route[1]!);
    const streaming = route[2] === "converse-stream";
    this.requests.push({ path: url.pathname, modelId, operation: streaming ? "ConverseStream" : "Converse", region: region!, accessKeyId: accessKeyId!, body });
    if (!Array.isArray(body.messages) || body.messages.length === 0) return sendError(response, 400, "ValidationException", "messages must not be empty");

    switch (this.behaviour) {
      case "access-denied":
        return sendError(response, 403, "AccessDeniedException", "You don't have access to the model with the specified model ID.");
      case "throttling":
        return sendError(response, 429, "ThrottlingException", "Too many requests, please wait before trying again.");
      case "internal":
        return sendError(response, 500, "InternalServerException", "The request processing has failed because of an unknown error.");
    }

    const maxTokens = Number((body.inferenceConfig as { maxTokens?: number } | undefined)?.maxTokens ?? Infinity);
    const words = this.answer.split(/(?<= )/);
    const kept = words.slice(0, maxTokens);
    const stopReason = this.behaviour === "guardrail" ? "guardrail_intervened" : kept.length < words.length ? "max_tokens" : "end_turn";
    if (!streaming) {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ output: { message: { role: "assistant", content: [{ text: kept.join("") }] } }, stopReason, usage: { inputTokens: this.inputTokens, outputTokens: kept.length, totalTokens: this.inputTokens + kept.length }, metrics: { latencyMs: 5 } }));
      return;
    }

    response.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": crypto.randomUUID() });
    const event = (type: string, payload: unknown) => this.write(response, "event", type, Buffer.from(JSON.stringify(payload)));
    const pause = () => new Promise((resolve) => setTimeout(resolve, this.chunkDelayMs));
    event("messageStart", { role: "assistant" });
    if (this.behaviour === "endless") {
      for (let i = 0; !response.stream.destroyed && !response.stream.closed; i++) {
        event("contentBlockDelta", { contentBlockIndex: 0, delta: { text: `word${i} ` } });
        await pause();
      }
      return;
    }
    if (this.behaviour === "invalid-utf8") {
      const [before, after] = JSON.stringify({ contentBlockIndex: 0, delta: { text: "gre\u0000SQL" } }).split("\\u0000") as [string, string];
      this.write(response, "event", "contentBlockDelta", Buffer.concat([Buffer.from(before), Buffer.from([0xc3, 0x28]), Buffer.from(after)]));
    } else {
      for (const word of this.behaviour === "guardrail" ? kept.slice(0, 2) : kept) {
        event("contentBlockDelta", { contentBlockIndex: 0, delta: { text: word } });
        await pause();
      }
    }
    if (this.behaviour === "stream-throttled") {
      this.write(response, "exception", "throttlingException", Buffer.from(JSON.stringify({ message: "Too many tokens, please wait before trying again." })));
      response.end();
      return;
    }
    event("contentBlockStop", { contentBlockIndex: 0 });
    event("messageStop", { stopReason });
    event("metadata", { usage: { inputTokens: this.inputTokens, outputTokens: kept.length, totalTokens: this.inputTokens + kept.length }, metrics: { latencyMs: 5 } });
    response.end();
  }

  private write(response: Http2ServerResponse, messageType: "event" | "exception", type: string, payload: Buffer): void {
    if (response.stream.destroyed || response.stream.closed) return;
    const typeHeader = messageType === "event" ? ":event-type" : ":exception-type";
    response.write(
      codec.encode({
        headers: {
          ":message-type": { type: "string", value: messageType },
          [typeHeader]: { type: "string", value: type },
          ":content-type": { type: "string", value: "application/json" },
        },
        body: new Uint8Array(payload),
      }),
    );
  }
}

function sendError(response: Http2ServerResponse, status: number, errorType: string, message: string): void {
  response.writeHead(status, { "content-type": "application/json", "x-amzn-errortype": `${errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/` });
  response.end(JSON.stringify({ message }));
}
