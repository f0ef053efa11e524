/**
 * ANSWER_MODEL_* (lib/config.ts): off unless a provider is chosen, and every wrong value stops
 * start-up with a message naming the variable.
 */
import { describe, expect, it } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";

const answerModel = (env: Record<string, string>) => loadConfig(env).externalSearch.answerModel;

describe("answer model configuration", () => {
  it("is off by default", () => {
    expect(answerModel({})).toBeNull();
  });

  it("reads an OpenAI-compatible server with its defaults", () => {
    expect(answerModel({ ANSWER_MODEL_PROVIDER: "openai", ANSWER_MODEL: "llama3.1:8b", ANSWER_MODEL_BASE_URL: "http://127.0.0.1:11434/v1" })).toEqual({
      provider: "openai",
      model: "llama3.1:8b",
      openai: { baseUrl: "http://127.0.0.1:11434/v1", apiKey: null, maxTokensParameter: "max_tokens" },
      bedrock: { region: "us-east-1", endpoint: null, stsEndpoint: null, roleArn: null, externalId: null },
      creditsPer1kInputTokens: 1,
      creditsPer1kOutputTokens: 4,
      maxOutputTokens: 1024,
      timeBudgetMs: 9_000,
    });
    // OpenAI itself: its newer models take only max_completion_tokens.
    expect(answerModel({ ANSWER_MODEL_PROVIDER: "openai", ANSWER_MODEL: "gpt-4o-mini", ANSWER_MODEL_API_KEY: "sk-x" })!.openai.maxTokensParameter).toBe("max_completion_tokens");
  });

  it("reads Bedrock with an assumed role", () => {
    const config = answerModel({
      ANSWER_MODEL_PROVIDER: "bedrock",
      ANSWER_MODEL: "anthropic.claude-3-5-haiku-20241022-v1:0",
      ANSWER_MODEL_AWS_REGION: "eu-central-1",
      ANSWER_MODEL_AWS_ROLE_ARN: "arn:aws:iam::123456789012:role/Answers",
      ANSWER_MODEL_AWS_EXTERNAL_ID: "ctx-search-1",
    });
    expect(config!.bedrock).toEqual({ region: "eu-central-1", endpoint: null, stsEndpoint: null, roleArn: "arn:aws:iam::123456789012:role/Answers", externalId: "ctx-search-1" });
  });

  it.each([
    [{ ANSWER_MODEL_PROVIDER: "gpt" }, /ANSWER_MODEL_PROVIDER must be one of openai, bedrock, none/],
    [{ ANSWER_MODEL: "gpt-4o" }, /ANSWER_MODEL_PROVIDER must be openai or bedrock when ANSWER_MODEL is set/],
    [{ ANSWER_MODEL_PROVIDER: "openai" }, /ANSWER_MODEL is required when ANSWER_MODEL_PROVIDER=openai/],
    [{ ANSWER_MODEL_PROVIDER: "openai", ANSWER_MODEL: "gpt-4o-mini" }, /ANSWER_MODEL_API_KEY is required for OpenAI itself/],
    [{ ANSWER_MODEL_PROVIDER: "openai", ANSWER_MODEL: "m", ANSWER_MODEL_BASE_URL: "ftp://x" }, /ANSWER_MODEL_BASE_URL must be an http/],
    [{ ANSWER_MODEL_PROVIDER: "openai", ANSWER_MODEL: "a model", ANSWER_MODEL_API_KEY: "k" }, /ANSWER_MODEL must be a model id/],
    [{ ANSWER_MODEL_PROVIDER: "bedrock", ANSWER_MODEL: "m", ANSWER_MODEL_API_KEY: "k" }, /ANSWER_MODEL_API_KEY is for ANSWER_MODEL_PROVIDER=openai/],
    [{ ANSWER_MODEL_PROVIDER: "bedrock", ANSWER_MODEL: "m", ANSWER_MODEL_AWS_REGION: "Frankfurt" }, /ANSWER_MODEL_AWS_REGION must be an AWS region/],
    [{ ANSWER_MODEL_PROVIDER: "bedrock", ANSWER_MODEL: "m", ANSWER_MODEL_AWS_ROLE_ARN: "Answers" }, /ANSWER_MODEL_AWS_ROLE_ARN must be an IAM role ARN/],
    [{ ANSWER_MODEL_PROVIDER: "bedrock", ANSWER_MODEL: "m", ANSWER_MODEL_AWS_EXTERNAL_ID: "x1" }, /ANSWER_MODEL_AWS_EXTERNAL_ID is set, but ANSWER_MODEL_AWS_ROLE_ARN/],
    [{ ANSWER_MODEL_PROVIDER: "openai", ANSWER_MODEL: "m", ANSWER_MODEL_API_KEY: "k", ANSWER_MODEL_MAX_OUTPUT_TOKENS: "0" }, /ANSWER_MODEL_MAX_OUTPUT_TOKENS must be between 16 and 32768/],
    [{ ANSWER_MODEL_PROVIDER: "openai", ANSWER_MODEL: "m", ANSWER_MODEL_API_KEY: "k", ANSWER_MODEL_TIME_BUDGET_MS: "soon" }, /ANSWER_MODEL_TIME_BUDGET_MS must be a whole number/],
    [{ ANSWER_MODEL_PROVIDER: "openai", ANSWER_MODEL: "m", ANSWER_MODEL_API_KEY: "k", ANSWER_MODEL_TIME_BUDGET_MS: "30000" }, /ANSWER_MODEL_TIME_BUDGET_MS must end before the gateway's UPSTREAM_TIMEOUT_MS \(10000 ms\)/],
    [{ ANSWER_MODEL_PROVIDER: "openai", ANSWER_MODEL: "m", ANSWER_MODEL_API_KEY: "k", ANSWER_MODEL_CREDITS_PER_1K_OUTPUT_TOKENS: "-1" }, /ANSWER_MODEL_CREDITS_PER_1K_OUTPUT_TOKENS must be a number of credits/],
    [{ ANSWER_MODEL_PROVIDER: "openai", ANSWER_MODEL: "m", ANSWER_MODEL_API_KEY: "k", ANSWER_MODEL_MAX_TOKENS_PARAMETER: "tokens" }, /ANSWER_MODEL_MAX_TOKENS_PARAMETER must be one of max_tokens, max_completion_tokens/],
  ])("refuses %j", (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
