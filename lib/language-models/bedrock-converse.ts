/**
 * A LanguageModel over Amazon Bedrock's ConverseStream API (`@aws-sdk/client-bedrock-runtime`),
 * one request shape for every model Bedrock hosts. The identity is whatever credential provider
 * it is given (lib/aws/credentials.ts: the platform's, or an assumed role).
 *
 * Bounded as the OpenAI-compatible client is: `inferenceConfig.maxTokens` is sent and the output
 * is also counted here (output-budget.ts), the stream is cut past `timeBudgetMs`, and every event
 * payload is checked as UTF-8 with a fatal decoder before the SDK decodes it (the SDK's decoder
 * would turn invalid bytes into U+FFFD). The SDK's retries are off: the paid-call path retries.
 *
 * Stop reasons: end_turn and stop_sequence → END, max_tokens and
 * model_context_window_exceeded → MAX_TOKENS, guardrail_intervened and content_filtered → REFUSED.
 */
import { Transform, type Readable } from "node:stream";
import { BedrockRuntimeClient, ConverseStreamCommand, type Message, type SystemContentBlock } from "@aws-sdk/client-bedrock-runtime";
import type { AwsCredentialIdentityProvider } from "@smithy/types";
import { AwsBackendError } from "../aws/errors.js";
import { MAX_RETRY_AFTER_MS } from "../external-apis/errors.js";
import { LanguageModelError, type GenerationRequest, type GenerationResult, type LanguageModel, type StopReason, type TokenUsage } from "./language-model.js";
import { OutputBudget } from "./output-budget.js";
import { countPromptTokens } from "./prompt-tokens.js";
import { checkRequest, VendorFailure } from "./vendor-failure.js";

export interface BedrockConverseModelOptions {
  /** A model id or inference profile (e.g. anthropic.claude-3-5-haiku-20241022-v1:0, us.amazon.nova-lite-v1:0). */
  modelId: string;
  region: string;
  credentials: AwsCredentialIdentityProvider;
  /** A VPC endpoint or a stand-in; normally Bedrock's regional endpoint. */
  endpoint?: string | undefined;
  /** Longest a generation may take, in ms. Default 60 s. */
  timeBudgetMs?: number;
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: "END",
  stop_sequence: "END",
  max_tokens: "MAX_TOKENS",
  model_context_window_exceeded: "MAX_TOKENS",
  guardrail_intervened: "REFUSED",
  content_filtered: "REFUSED",
};

export class BedrockConverseModel implements LanguageModel {
  readonly name: string;
  private readonly timeBudgetMs: number;

  constructor(private readonly options: BedrockConverseModelOptions) {
    this.name = `bedrock:${options.modelId}`;
    this.timeBudgetMs = options.timeBudgetMs ?? 60_000;
  }

  async generate(request: GenerationRequest, onText?: (delta: string) => void): Promise<GenerationResult> {
    checkRequest(request.messages, request.maxOutputTokens);
    if (request.signal?.aborted) throw new LanguageModelError("TIMEOUT", `${this.name}: cancelled before the call`);
    const budgetTimer = new AbortController();
    const timer = setTimeout(() => budgetTimer.abort(), this.timeBudgetMs);
    const signal = request.signal ? AbortSignal.any([budgetTimer.signal, request.signal]) : budgetTimer.signal;
    const checked = new CheckedEventStream(this.name);
    const client = new BedrockRuntimeClient({
      region: this.options.region,
      credentials: this.options.credentials,
      maxAttempts: 1,
      ...(this.options.endpoint ? { endpoint: this.options.endpoint } : {}),
    });
    checked.install(client);
    const budget = new OutputBudget(request.maxOutputTokens);
    let stopReason: StopReason | null = null;
    let usage: TokenUsage | null = null;
    try {
      const output = await client.send(
        new ConverseStreamCommand({
          modelId: this.options.modelId,
          system: request.messages.filter((message) => message.role === "system").map((message): SystemContentBlock => ({ text: message.content })),
          messages: conversation(request.messages),
          inferenceConfig: { maxTokens: request.maxOutputTokens },
        }),
        { abortSignal: signal },
      );
      for await (const event of output.stream ?? []) {
        if (event.contentBlockDelta?.delta?.text !== undefined) {
          const accepted = await budget.accept(event.contentBlockDelta.delta.text);
          if (accepted.text) onText?.(accepted.text);
          if (accepted.full) break;
        } else if (event.messageStop) {
          stopReason = STOP_REASONS[event.messageStop.stopReason ?? ""] ?? "END";
        } else if (event.metadata?.usage) {
          usage = { inputTokens: tokenCount(event.metadata.usage.inputTokens), outputTokens: tokenCount(event.metadata.usage.outputTokens) };
        } else {
          const failure = streamException(event as unknown as Record<string, { message?: string } | undefined>, this.name);
          if (failure) throw failure;
        }
      }
    } catch (error) {
      throw checked.failure ?? bedrockFailure(error, this.name, { timedOut: budgetTimer.signal.aborted, cancelled: request.signal?.aborted ?? false, timeBudgetMs: this.timeBudgetMs });
    } finally {
      clearTimeout(timer);
      client.destroy();
    }
    if (checked.failure) throw checked.failure;
    if (!budget.full) {
      if (request.signal?.aborted) throw new LanguageModelError("TIMEOUT", `${this.name}: the caller went away before the answer was complete`);
      if (budgetTimer.signal.aborted) throw new LanguageModelError("TIMEOUT", `${this.name}: did not finish within its ${this.timeBudgetMs} ms time budget`);
      if (stopReason === null) throw new LanguageModelError("UNAVAILABLE", `${this.name}: the stream ended before the model finished (no messageStop)`);
    }
    const outputTokens = await budget.tokens();
    return {
      text: budget.text,
      stopReason: budget.full ? "MAX_TOKENS" : stopReason!,
      usage: usage ?? { inputTokens: await countPromptTokens(request.messages), outputTokens },
      model: this.options.modelId,
    };
  }
}

// Private: Converse takes the system prompt apart, and turns that alternate user and assistant
// (consecutive turns of one role are joined).
function conversation(messages: GenerationRequest["messages"]): Message[] {
  const turns: Message[] = [];
  for (const message of messages) {
    if (message.role === "system") continue;
    const last = turns[turns.length - 1];
    if (last?.role === message.role) last.content!.push({ text: message.content });
    else turns.push({ role: message.role, content: [{ text: message.content }] });
  }
  return turns;
}

// Private: an exception sent inside the event stream (after the 200), as the contract's code.
function streamException(event: Record<string, { message?: string } | undefined>, name: string): LanguageModelError | undefined {
  if (event.throttlingException) return new VendorFailure("THROTTLED", `${name}: is throttling these calls (in the stream)`);
  if (event.serviceUnavailableException || event.internalServerException || event.modelStreamErrorException) {
    return new LanguageModelError("UNAVAILABLE", `${name}: failed in the middle of the stream`);
  }
  if (event.validationException) return new LanguageModelError("UNAVAILABLE", `${name}: refused the request in the middle of the stream`);
  return undefined;
}

/** The SDK's (and the service's) errors as the contract's codes. */
export function bedrockFailure(error: unknown, name: string, state: { timedOut: boolean; cancelled: boolean; timeBudgetMs: number }): LanguageModelError {
  if (error instanceof LanguageModelError) return error;
  if (state.cancelled) return new LanguageModelError("TIMEOUT", `${name}: the caller went away before the answer was complete`);
  const errorName = (error as Error | undefined)?.name ?? "";
  if (state.timedOut || errorName === "AbortError" || errorName === "TimeoutError") return new LanguageModelError("TIMEOUT", `${name}: did not finish within its ${state.timeBudgetMs} ms time budget`);
  // The identity could not be had at all (an assumed role STS refused, or remembers refusing):
  // the credentials' own error, which names the role and what to fix.
  if (error instanceof AwsBackendError) {
    const code = error.status === "ACCESS_DENIED" || error.status === "NOT_FOUND" || error.status === "BAD_REQUEST" ? "UNAUTHORIZED" : error.status === "RATE_LIMITED" ? "THROTTLED" : error.status === "TIMEOUT" ? "TIMEOUT" : "UNAVAILABLE";
    return new LanguageModelError(code, `${name}: no AWS credentials for the model: ${error.message}`);
  }
  const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  switch (errorName) {
    case "AccessDeniedException":
    case "UnrecognizedClientException":
    case "ExpiredTokenException":
    case "InvalidSignatureException":
    case "MissingAuthenticationTokenException":
      return new VendorFailure("UNAUTHORIZED", `${name}: AWS refused the credentials or their permissions (${errorName}): check the role or policy (bedrock:InvokeModelWithResponseStream)`, undefined, status);
    case "ThrottlingException":
    case "ServiceQuotaExceededException":
      return new VendorFailure("THROTTLED", `${name}: AWS is throttling these calls (${errorName})`, retryAfterOf(error), status);
    case "ModelTimeoutException":
      return new VendorFailure("TIMEOUT", `${name}: the model timed out (${errorName})`, undefined, status);
    case "ValidationException":
    case "ResourceNotFoundException":
    case "ModelNotReadyException":
      return new VendorFailure("UNAVAILABLE", `${name}: Bedrock refused the request (${errorName}): check ANSWER_MODEL and that the model is enabled in this region`, undefined, status ?? 400);
  }
  if (typeof status === "number" && (status === 401 || status === 403)) return new VendorFailure("UNAUTHORIZED", `${name}: AWS refused the credentials (HTTP ${status})`, undefined, status);
  if (typeof status === "number" && status >= 500) return new VendorFailure("UNAVAILABLE", `${name}: Bedrock is failing (HTTP ${status})`, undefined, status);
  if (errorName === "SyntaxError" || /deserializ|event stream|checksum|prelude/i.test((error as Error | undefined)?.message ?? "")) {
    return new LanguageModelError("BAD_RESPONSE", `${name}: answered with an event stream that does not parse`);
  }
  return new LanguageModelError("UNAVAILABLE", `${name}: could not be reached or failed in an unexpected way`);
}

function retryAfterOf(error: unknown): number | undefined {
  const seconds = Number((error as { $response?: { headers?: Record<string, string> } })?.$response?.headers?.["retry-after"]);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(MAX_RETRY_AFTER_MS, seconds * 1000) : undefined;
}

/**
 * Each raw response body, as the SDK's HTTP/2 handler hands it over, is split into event-stream
 * messages (a 4-byte big-endian total length, a 4-byte headers length, a prelude CRC, headers, payload, message CRC; the SDK checks the CRCs) and each payload checked
 * as UTF-8 on the way through. A failure is kept in `failure` as well as thrown into the body.
 */
class CheckedEventStream {
  failure: LanguageModelError | undefined;

  constructor(private readonly name: string) {}

  /** Wraps each raw response body before the SDK's deserializer reads it (placed right inside deserializerMiddleware). */
  install(client: BedrockRuntimeClient): void {
    client.middlewareStack.addRelativeTo(
      ((next: (args: unknown) => Promise<{ response: unknown }>) => async (args: unknown) => {
        const result = await next(args);
        const response = result.response as { headers?: Record<string, string>; body?: unknown };
        if (String(response.headers?.["content-type"] ?? "").includes("eventstream") && response.body) response.body = this.check(response.body as Readable);
        return result;
      }) as unknown as Parameters<BedrockRuntimeClient["middlewareStack"]["addRelativeTo"]>[0],
      { relation: "after", toMiddleware: "deserializerMiddleware", name: "checkEventStreamUtf8", override: true },
    );
  }

  private check(body: Readable): Readable {
    let buffered = Buffer.alloc(0);
    const fail = (message: string) => (this.failure ??= new LanguageModelError("BAD_RESPONSE", `${this.name}: ${message}`));
    const checker = new Transform({
      transform: (chunk: Buffer, _encoding, callback) => {
        buffered = Buffer.concat([buffered, chunk]);
        while (buffered.length >= 12) {
          const total = buffered.readUInt32BE(0);
          const headers = buffered.readUInt32BE(4);
          if (total < 16 || headers > total - 16 || total > 16 * 1024 * 1024) return callback(fail("answered with an event-stream message of an impossible length"));
          if (buffered.length < total) break;
          const payload = buffered.subarray(12 + headers, total - 4);
          try {
            new TextDecoder("utf-8", { fatal: true }).decode(payload);
          } catch {
            return callback(fail("answered with an event whose bytes are not valid UTF-8"));
          }
          buffered = buffered.subarray(total);
        }
        callback(null, chunk);
      },
    });
    body.on("error", (error) => checker.destroy(error));
    return body.pipe(checker);
  }
}

function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;
}
