/**
 * A LanguageModel over any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama,
 * LM Studio, the hosted ones), with the `openai` package, always streaming
 * (`stream: true`, `stream_options.include_usage`).
 *
 * What we do not leave to the endpoint:
 * - the length: `max_tokens` (or `max_completion_tokens`, which OpenAI's reasoning models
 *   require) is sent, and the output is also counted here (output-budget.ts): past
 *   maxOutputTokens we stop reading, abort the stream, and answer MAX_TOKENS;
 * - the time: past `timeBudgetMs` the stream is cut (TIMEOUT), also one that never ends and
 *   never sends a token;
 * - the bytes: the body is read through a fetch of ours that counts them (at most
 *   `maxResponseBytes`) and checks that they are UTF-8 with a fatal decoder. The SDK decodes
 *   SSE lines with a non-fatal TextDecoder, which would turn invalid bytes into U+FFFD and pass
 *   them on as text; here they fail the call as BAD_RESPONSE before the SDK sees them.
 *
 * The SDK's own retries are off: the paid-call path (subgraphs/external-search) retries on the
 * error's code and Retry-After, and only before any text was passed on.
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import { MAX_RETRY_AFTER_MS, parseRetryAfter } from "../external-apis/errors.js";
import type { GenerationRequest, GenerationResult, LanguageModel, StopReason, TokenUsage } from "./language-model.js";
import { LanguageModelError } from "./language-model.js";
import { OutputBudget } from "./output-budget.js";
import { checkRequest, VendorFailure } from "./vendor-failure.js";
import { countPromptTokens } from "./prompt-tokens.js";

export type MaxTokensParameter = "max_tokens" | "max_completion_tokens";

export interface OpenAIChatModelOptions {
  /** The endpoint's base URL (the SDK appends /chat/completions); default OpenAI's. */
  baseURL?: string | undefined;
  apiKey: string;
  model: string;
  /** Which field carries maxOutputTokens: OpenAI's reasoning models take only max_completion_tokens, many servers only max_tokens. */
  maxTokensParameter?: MaxTokensParameter;
  /** Longest a generation may take, first byte to last, in ms. Default 60 s. */
  timeBudgetMs?: number;
  /** Most bytes read of one response. Default 4 MiB (16,000 tokens of SSE framing are about 3 MB). */
  maxResponseBytes?: number;
}

export const OPENAI_BASE_URL = "https://api.openai.com/v1";
const DEFAULT_TIME_BUDGET_MS = 60_000;
const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
const MAX_MODEL_NAME_CHARS = 200;

export class OpenAIChatModel implements LanguageModel {
  readonly name: string;
  private readonly baseURL: string;
  private readonly timeBudgetMs: number;
  private readonly maxResponseBytes: number;
  private readonly maxTokensParameter: MaxTokensParameter;

  constructor(private readonly options: OpenAIChatModelOptions) {
    this.baseURL = (options.baseURL ?? OPENAI_BASE_URL).replace(/\/+$/, "");
    this.name = `openai-compatible:${options.model}`;
    this.timeBudgetMs = options.timeBudgetMs ?? DEFAULT_TIME_BUDGET_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.maxTokensParameter = options.maxTokensParameter ?? "max_completion_tokens";
  }

  async generate(request: GenerationRequest, onText?: (delta: string) => void): Promise<GenerationResult> {
    checkRequest(request.messages, request.maxOutputTokens);
    if (request.signal?.aborted) throw new LanguageModelError("TIMEOUT", `${this.name}: cancelled before the call`);
    const budgetTimer = new AbortController();
    const timer = setTimeout(() => budgetTimer.abort(), this.timeBudgetMs);
    const signal = request.signal ? AbortSignal.any([budgetTimer.signal, request.signal]) : budgetTimer.signal;
    const body = new CheckedBody(this.name, this.maxResponseBytes);
    const client = new OpenAI({
      apiKey: this.options.apiKey,
      baseURL: this.baseURL,
      // Never send OpenAI's organization or project headers (read from OPENAI_* variables) to another vendor.
      organization: null,
      project: null,
      maxRetries: 0,
      timeout: this.timeBudgetMs,
      logLevel: "off",
      fetch: body.fetch(signal),
    });
    const budget = new OutputBudget(request.maxOutputTokens);
    let finishReason: string | null = null;
    let refused = false;
    let usage: TokenUsage | null = null;
    let model = this.options.model;
    try {
      const stream = await client.chat.completions.create(
        {
          model: this.options.model,
          messages: request.messages.map(({ role, content }) => ({ role, content })),
          stream: true,
          stream_options: { include_usage: true },
          [this.maxTokensParameter]: request.maxOutputTokens,
        },
        { signal, maxRetries: 0 },
      );
      for await (const chunk of stream) {
        const parsed = readChunk(chunk, this.name);
        if (parsed.model) model = parsed.model;
        if (parsed.usage) usage = parsed.usage;
        if (parsed.refusal) refused = true;
        if (parsed.finishReason) finishReason = parsed.finishReason;
        if (parsed.content) {
          const accepted = await budget.accept(parsed.content);
          if (accepted.text) onText?.(accepted.text);
          if (accepted.full) {
            stream.controller.abort();
            break;
          }
        }
      }
    } catch (error) {
      throw body.failure ?? openAIFailure(error, this.name, { timedOut: budgetTimer.signal.aborted, cancelled: request.signal?.aborted ?? false, timeBudgetMs: this.timeBudgetMs });
    } finally {
      clearTimeout(timer);
    }
    if (body.failure) throw body.failure;
    // The SDK ends iteration quietly when its signal aborts: a cut stream is told apart here.
    if (!budget.full) {
      if (request.signal?.aborted) throw new LanguageModelError("TIMEOUT", `${this.name}: the caller went away before the answer was complete`);
      if (budgetTimer.signal.aborted) throw new LanguageModelError("TIMEOUT", `${this.name}: did not finish within its ${this.timeBudgetMs} ms time budget`);
      if (finishReason === null && !refused) throw new LanguageModelError("UNAVAILABLE", `${this.name}: the stream ended before the model finished (no finish_reason)`);
    }
    const stopReason: StopReason = budget.full || finishReason === "length" ? "MAX_TOKENS" : refused || finishReason === "content_filter" ? "REFUSED" : "END";
    const outputTokens = await budget.tokens();
    return {
      text: budget.text,
      stopReason,
      // A stream we cut carries no usage chunk: then our own counts stand in for the vendor's.
      usage: usage ?? { inputTokens: await countPromptTokens(request.messages), outputTokens },
      model,
    };
  }
}

interface ReadChunk {
  content: string | null;
  refusal: boolean;
  finishReason: string | null;
  usage: TokenUsage | null;
  model: string | null;
}

/** One chat.completion.chunk, read defensively: the SDK does not check shapes. */
function readChunk(chunk: unknown, name: string): ReadChunk {
  if (!isRecord(chunk)) throw new LanguageModelError("BAD_RESPONSE", `${name}: streamed something that is not a chat completion chunk`);
  const choices = chunk.choices;
  if (choices !== undefined && !Array.isArray(choices)) throw new LanguageModelError("BAD_RESPONSE", `${name}: streamed a chunk whose choices are not a list`);
  const first: unknown = choices?.[0];
  const choice = isRecord(first) ? first : {};
  const delta = isRecord(choice.delta) ? choice.delta : {};
  if (delta.content !== undefined && delta.content !== null && typeof delta.content !== "string") {
    throw new LanguageModelError("BAD_RESPONSE", `${name}: streamed a delta whose content is not text`);
  }
  return {
    content: typeof delta.content === "string" ? delta.content : null,
    refusal: typeof delta.refusal === "string" && delta.refusal.length > 0,
    finishReason: typeof choice.finish_reason === "string" ? choice.finish_reason : null,
    usage: isRecord(chunk.usage) ? { inputTokens: tokenCount(chunk.usage.prompt_tokens), outputTokens: tokenCount(chunk.usage.completion_tokens) } : null,
    model: typeof chunk.model === "string" && chunk.model.length > 0 ? chunk.model.slice(0, MAX_MODEL_NAME_CHARS) : null,
  };
}

/**
 * The fetch the SDK is given: redirects refused (they would carry our key elsewhere), the body
 * passed through as it streams, counted and checked as UTF-8 on the way. A failure is kept in
 * `failure` as well as thrown, because the SDK may wrap what its stream reader throws.
 */
class CheckedBody {
  failure: LanguageModelError | undefined;

  constructor(
    private readonly name: string,
    private readonly maxBytes: number,
  ) {}

  fetch(signal: AbortSignal) {
    return async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const combined = init?.signal ? AbortSignal.any([init.signal, signal]) : signal;
      const response = await fetch(url, { ...init, signal: combined, redirect: "error" });
      if (!response.body) return response;
      const decoder = new TextDecoder("utf-8", { fatal: true });
      let total = 0;
      const fail = (message: string): never => {
        this.failure ??= new LanguageModelError("BAD_RESPONSE", `${this.name}: ${message}`);
        throw this.failure;
      };
      const checked = response.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform: (chunk, controller) => {
            total += chunk.byteLength;
            if (total > this.maxBytes) fail(`answered with more than the ${this.maxBytes} bytes one generation may read`);
            try {
              decoder.decode(chunk, { stream: true });
            } catch {
              fail("answered with bytes that are not valid UTF-8");
            }
            controller.enqueue(chunk);
          },
          flush: () => {
            try {
              decoder.decode();
            } catch {
              fail("answered with a body that ends inside a UTF-8 character");
            }
          },
        }),
      );
      return new Response(checked, { status: response.status, statusText: response.statusText, headers: response.headers });
    };
  }
}

/** The SDK's errors as the contract's codes. */
export function openAIFailure(error: unknown, name: string, state: { timedOut: boolean; cancelled: boolean; timeBudgetMs: number }): LanguageModelError {
  if (error instanceof LanguageModelError) return error;
  if (state.cancelled) return new LanguageModelError("TIMEOUT", `${name}: the caller went away before the answer was complete`);
  if (state.timedOut || error instanceof APIUserAbortError || error instanceof APIConnectionTimeoutError) {
    return new LanguageModelError("TIMEOUT", `${name}: did not finish within its ${state.timeBudgetMs} ms time budget`);
  }
  if (error instanceof APIConnectionError) {
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof LanguageModelError) return cause;
    return new LanguageModelError("UNAVAILABLE", `${name}: could not be reached (connection refused, reset or DNS failure)`);
  }
  if (error instanceof APIError) {
    const status = error.status;
    if (status === 401 || status === 403) return new VendorFailure("UNAUTHORIZED", `${name}: refused the API key (HTTP ${status}): check ANSWER_MODEL_API_KEY`, undefined, status);
    if (status === 429) return new VendorFailure("THROTTLED", `${name}: is rate limiting these calls (HTTP 429)`, retryAfterOf(error.headers), 429);
    if (status === 408 || status === 504) return new VendorFailure("TIMEOUT", `${name}: timed out (HTTP ${status})`, undefined, status);
    if (typeof status === "number" && status >= 500) return new VendorFailure("UNAVAILABLE", `${name}: is failing (HTTP ${status})`, status === 503 ? retryAfterOf(error.headers) : undefined, status);
    if (typeof status === "number") return new VendorFailure("UNAVAILABLE", `${name}: refused the request (HTTP ${status}${vendorMessage(error)})`, undefined, status);
    // An `error` object inside the event stream (no status): the vendor failed mid-answer.
    return new LanguageModelError("UNAVAILABLE", `${name}: reported an error in the middle of the stream${vendorMessage(error)}`);
  }
  // A `data:` line that is not JSON: the SDK's JSON.parse throws a SyntaxError (tested by name:
  // it may come from another realm).
  if ((error as Error | undefined)?.name === "SyntaxError") return new LanguageModelError("BAD_RESPONSE", `${name}: streamed an event that is not JSON`);
  return new LanguageModelError("UNAVAILABLE", `${name}: failed in an unexpected way`);
}

// Private: the vendor's own one-line message, when it is plain and short (it helps an operator
// see "model not found" or "context length exceeded"); never a body or a stack.
function vendorMessage(error: APIError): string {
  const message = isRecord(error.error) && typeof error.error.message === "string" ? error.error.message : "";
  const line = message.split("\n")[0]!.trim();
  return line && line.length <= 200 && !/[{}<>]/.test(line) ? `: ${line}` : "";
}

// The SDK itself honours `retry-after-ms` (an OpenAI extension) before `retry-after`; so do we.
function retryAfterOf(headers: Headers | undefined): number | undefined {
  const ms = headers?.get("retry-after-ms");
  if (ms && /^\d{1,10}(\.\d+)?$/.test(ms.trim())) return Math.min(MAX_RETRY_AFTER_MS, Math.ceil(Number(ms)));
  return parseRetryAfter(headers?.get("retry-after"));
}

function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
