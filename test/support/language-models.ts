/** Shared by the vendor clients' tests (openai-chat-model, bedrock-converse-model). */
import { expect } from "@jest/globals";
import { LanguageModelError } from "../../lib/language-models/language-model.js";

/** The LanguageModelError a call rejects with; fails the test when the call succeeds or rejects with anything else. */
export async function failureOf(call: Promise<unknown>): Promise<LanguageModelError> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!("error" in outcome)) throw new Error(`expected the call to fail, it returned ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(LanguageModelError);
  return outcome.error as LanguageModelError;
}
