/**
 * The AnswerModel the search subgraph's `answer` is handed (lib/language-models/language-model.ts):
 * the configured LanguageModel behind this subgraph's one paid-call path
 * (ExternalSearchService.languageModelCall, the same steps as every other provider):
 *
 * - estimate: the prompt's tokens (counted here, o200k_base) and maxOutputTokens, at
 *   ANSWER_MODEL_CREDITS_PER_1K_INPUT_TOKENS / _OUTPUT_TOKENS; reserved before the call, so a
 *   spent budget skips it;
 * - settled after at the vendor's reported usage (our own counts when it reported none), 0 for a
 *   failed call; a dry run estimates and calls nothing;
 * - one bulkhead and per-organization breakers for the model (`language-model`), retries of a
 *   throttled or failing vendor honouring Retry-After, but only while nothing has been streamed
 *   to the caller: text already passed on cannot be taken back, so a failure after it is final;
 * - never cached: the prompt holds the organization's passages and the caller's question.
 *
 * What the call record keeps as its `query` is the model's name and the prompt's size, never the
 * prompt: the passages stay where they are owned.
 */
import type { AnswerModelConfig } from "../../lib/config.js";
import { ExternalApiError, type ExternalFailureKind } from "../../lib/external-apis/errors.js";
import {
  LanguageModelError,
  type AnswerModel,
  type AnswerModelCall,
  type AnswerModelOutcome,
  type GenerationResult,
  type LanguageModel,
  type LanguageModelErrorCode,
} from "../../lib/language-models/language-model.js";
import { OpenAIChatModel } from "../../lib/language-models/openai-chat.js";
import { BedrockConverseModel } from "../../lib/language-models/bedrock-converse.js";
import { countPromptTokens, MAX_PROMPT_CHARACTERS, promptCharacters } from "../../lib/language-models/prompt-tokens.js";
import { checkRequest, VendorFailure } from "../../lib/language-models/vendor-failure.js";
import { AwsCredentialSource } from "../../lib/aws/credentials.js";
import { LANGUAGE_MODEL_POLICY, type ExternalSearchService } from "./external-search-service.js";

/** The configured model's client, or null when ANSWER_MODEL_PROVIDER is none. */
export function languageModelFrom(config: AnswerModelConfig | null): LanguageModel | null {
  if (!config) return null;
  if (config.provider === "openai") {
    return new OpenAIChatModel({
      baseURL: config.openai.baseUrl ?? undefined,
      // A local server that takes no key still needs a non-empty one for the SDK.
      apiKey: config.openai.apiKey ?? "no-key",
      model: config.model,
      maxTokensParameter: config.openai.maxTokensParameter,
      timeBudgetMs: config.timeBudgetMs,
    });
  }
  const { region, endpoint, stsEndpoint, roleArn, externalId } = config.bedrock;
  const source = new AwsCredentialSource({ sts: { region, endpoint: stsEndpoint ?? undefined } });
  // The model is the deployment's: its identity is the platform's, or a role the platform assumes.
  const credentials = source.providerFor(roleArn ? { mode: "assume-role", roleArn, externalId: externalId ?? undefined } : { mode: "platform" }, "answer-model");
  return new BedrockConverseModel({ modelId: config.model, region, credentials, endpoint: endpoint ?? undefined, timeBudgetMs: config.timeBudgetMs });
}

export class PaidAnswerModel implements AnswerModel {
  readonly model: string | null;
  /** The most tokens one answer may have (ANSWER_MODEL_MAX_OUTPUT_TOKENS); a request asking more gets this many. */
  readonly maxOutputTokens: number;

  constructor(
    private readonly service: ExternalSearchService,
    private readonly languageModel: LanguageModel | null,
    config: AnswerModelConfig | null,
  ) {
    this.model = languageModel?.name ?? null;
    this.maxOutputTokens = config?.maxOutputTokens ?? 0;
  }

  async call({ tenant, request, dryRun, onText }: AnswerModelCall): Promise<AnswerModelOutcome> {
    const free = { estimatedCredits: 0, credits: 0 };
    if (!this.languageModel) return { status: "SKIPPED", reason: "no answer model is configured (ANSWER_MODEL_PROVIDER): answers are extractive", charge: free };
    const maxOutputTokens = Math.min(request.maxOutputTokens, this.maxOutputTokens);
    checkRequest(request.messages, maxOutputTokens);
    const characters = promptCharacters(request.messages);
    if (characters > MAX_PROMPT_CHARACTERS) {
      return { status: "SKIPPED", reason: `the prompt has ${characters} characters, more than the ${MAX_PROMPT_CHARACTERS} a model call takes`, charge: free };
    }
    const promptTokens = await countPromptTokens(request.messages);
    const estimate = this.service.languageModelPrice(promptTokens, maxOutputTokens);
    const model = this.languageModel;
    let streamed = false;
    const passOn = onText
      ? (delta: string) => {
          streamed = true;
          onText(delta);
        }
      : undefined;
    const { report, value, error } = await this.service.languageModelCall<GenerationResult>(tenant, {
      operation: "answer",
      query: `${model.name} (${promptTokens} prompt tokens, at most ${maxOutputTokens} out)`,
      estimate,
      dryRun,
      signal: request.signal,
      run: async (_credentials, signal) => {
        try {
          return await model.generate({ messages: request.messages, maxOutputTokens, signal }, passOn);
        } catch (failure) {
          throw new ModelCallError(asLanguageModelError(failure, model.name), streamed);
        }
      },
      price: (result) => this.service.languageModelPrice(result.usage.inputTokens, result.usage.outputTokens),
    });
    const charge = { estimatedCredits: report.estimatedCredits, credits: report.credits };
    switch (report.status) {
      case "OK":
        return { status: "OK", result: value!, charge };
      case "SKIPPED":
      case "CACHED":
        return { status: "SKIPPED", reason: report.reason ?? "skipped", charge };
      default:
        return { status: "ERROR", error: modelErrorOf(error, report.status, report.reason), charge };
    }
  }
}

const KIND_OF_CODE: Record<LanguageModelErrorCode, ExternalFailureKind> = {
  UNAUTHORIZED: "UNAUTHORIZED",
  THROTTLED: "RATE_LIMITED",
  TIMEOUT: "TIMEOUT",
  BAD_RESPONSE: "BAD_RESPONSE",
  UNAVAILABLE: "UPSTREAM_ERROR",
};

const CODE_OF_KIND: Record<ExternalFailureKind, LanguageModelErrorCode> = {
  UNAUTHORIZED: "UNAUTHORIZED",
  RATE_LIMITED: "THROTTLED",
  TIMEOUT: "TIMEOUT",
  BAD_RESPONSE: "BAD_RESPONSE",
  TOO_LARGE: "BAD_RESPONSE",
  UPSTREAM_ERROR: "UNAVAILABLE",
  BAD_REQUEST: "UNAVAILABLE",
};

/**
 * A model's failure in the policies' vocabulary (so breakers and retries decide on its kind),
 * keeping the model's own error to hand back. Once text was streamed it is never retried.
 */
class ModelCallError extends ExternalApiError {
  constructor(
    readonly modelError: LanguageModelError,
    streamed: boolean,
  ) {
    const vendor = modelError instanceof VendorFailure ? modelError : undefined;
    // A 4xx other than 401/403/429 is our request refused (a context too long, an unknown model): not the vendor failing.
    const kind = vendor?.httpStatus !== undefined && vendor.httpStatus >= 400 && vendor.httpStatus < 500 && modelError.code === "UNAVAILABLE" ? "BAD_REQUEST" : KIND_OF_CODE[modelError.code];
    super(kind, LANGUAGE_MODEL_POLICY, modelError.message, vendor?.retryAfterMs, vendor?.httpStatus);
    if (streamed) Object.defineProperty(this, "retryable", { value: false });
  }
}

function asLanguageModelError(error: unknown, name: string): LanguageModelError {
  if (error instanceof LanguageModelError) return error;
  return new LanguageModelError("UNAVAILABLE", `${name}: failed in an unexpected way`);
}

// Private: the error a failed call reports, as the contract's LanguageModelError.
function modelErrorOf(error: Error | undefined, status: string, reason: string | null): LanguageModelError {
  if (error instanceof ModelCallError) return error.modelError;
  if (error instanceof ExternalApiError) return new LanguageModelError(CODE_OF_KIND[error.kind], error.message);
  // The policies' own deadline, or the caller going away.
  if (status === "TIMEOUT") return new LanguageModelError("TIMEOUT", reason ?? "the answer model did not finish in time");
  return new LanguageModelError("UNAVAILABLE", reason ?? "the answer model failed");
}
