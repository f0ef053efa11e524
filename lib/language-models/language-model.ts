/**
 * The contract between grounded answers (`answer`, written by the search subgraph from the
 * unified search's passages) and the language models that write them. Two sides:
 *
 * - `LanguageModel`: one vendor's client (an OpenAI-compatible chat-completions endpoint, or
 *   Bedrock's Converse API), tenant-free: it sends one request, streams the text as it comes,
 *   stops at the request's token and time bounds, and reports why it stopped and what it used.
 * - `AnswerModel`: what the search subgraph is handed (by the external-search domain, which owns
 *   every paid call): a LanguageModel behind the one paid-call path, so an answer's model call is
 *   estimated before (credits by tokens), settled after at its real usage, refused when the
 *   organization's budget is spent, skipped by an open breaker, and free when it failed.
 *
 * Neither side knows about passages or citations: the prompt is built, and every citation in the
 * answer checked against it, by the answer pipeline.
 */
import type { TenantContext } from "../tenancy/token.js";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface GenerationRequest {
  /** The system message first (the rules), then the user's turn (the fenced passages and the question). */
  messages: ChatMessage[];
  /** A hard bound on the answer's length; the client passes it to the vendor and also stops reading past it. */
  maxOutputTokens: number;
  /** Cancels the call (the caller's deadline or disconnect); a cancelled call rejects with LanguageModelError "TIMEOUT". */
  signal?: AbortSignal;
}

/**
 * Why generation stopped. END: the model finished. MAX_TOKENS: cut at maxOutputTokens (the text is
 * still returned, and flagged). REFUSED: the vendor's content filter or the model declined.
 */
export type StopReason = "END" | "MAX_TOKENS" | "REFUSED";

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface GenerationResult {
  /** The whole text, valid UTF-16 (a vendor's invalid UTF-8 is an error, never passed on). */
  text: string;
  stopReason: StopReason;
  usage: TokenUsage;
  /** The model that answered, as the vendor named it. */
  model: string;
}

export type LanguageModelErrorCode =
  /** The vendor refused our credentials (401/403): never retried. */
  | "UNAUTHORIZED"
  /** The vendor throttled us (429) after the retries the policy allows. */
  | "THROTTLED"
  /** Deadline passed or the caller cancelled. */
  | "TIMEOUT"
  /** The vendor answered something that breaks its protocol: invalid UTF-8, malformed JSON or event stream. */
  | "BAD_RESPONSE"
  /** Any other failure of the vendor (5xx, connection reset). */
  | "UNAVAILABLE";

export class LanguageModelError extends Error {
  constructor(
    readonly code: LanguageModelErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "LanguageModelError";
  }
}

export interface LanguageModel {
  /** e.g. "openai-compatible:gpt-4o-mini" or "bedrock:anthropic.claude-3-5-haiku-20241022-v1:0". */
  readonly name: string;
  /**
   * Sends the request; calls `onText` with each piece of text as it streams in (never more than
   * maxOutputTokens in total); resolves with the whole result, rejects with LanguageModelError.
   */
  generate(request: GenerationRequest, onText?: (delta: string) => void): Promise<GenerationResult>;
}

/** What an answer's model call cost or would cost. */
export interface AnswerCharge {
  /** Credits reserved before the call, from the prompt's tokens plus maxOutputTokens. */
  estimatedCredits: number;
  /** Credits charged after it, from the real usage (0 for a dry run or a failed call). */
  credits: number;
}

export interface AnswerModelCall {
  tenant: TenantContext;
  request: GenerationRequest;
  /** Only estimate: no call, no charge; `result` is null. */
  dryRun: boolean;
  onText?: (delta: string) => void;
}

export type AnswerModelOutcome =
  | { status: "OK"; result: GenerationResult; charge: AnswerCharge }
  /** Not called: dry run, no model configured, breaker open, budget spent. `reason` says which, for the caller. */
  | { status: "SKIPPED"; reason: string; charge: AnswerCharge }
  | { status: "ERROR"; error: LanguageModelError; charge: AnswerCharge };

export interface AnswerModel {
  /** The configured model's name, or null when none is configured (answers are extractive then). */
  readonly model: string | null;
  call(call: AnswerModelCall): Promise<AnswerModelOutcome>;
}
