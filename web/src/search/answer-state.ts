/**
 * What the answer panel shows, from what the streamed `answer` operation has delivered so far:
 * one state per thing a person needs to be told (docs/answers.md lists what the API can say).
 */
import { CombinedGraphQLErrors } from "@apollo/client/errors";
import type { AnswerPassage, WrittenAnswer } from "./answer-operations";

/** Why an answer was quoted rather than written, or what writing it cost: the line under the answer. */
export type AnswerSource =
  /** No language model is configured: every answer quotes the passages, for free. */
  | { kind: "quoted" }
  /** A model is configured but was not called for this one: the organization's credits are spent. */
  | { kind: "credits-spent"; detail: string }
  /** A model is configured but was not called for another reason (failing, breaker open). */
  | { kind: "model-skipped"; detail: string }
  | { kind: "written"; model: string | null; credits: number };

export type AnswerState =
  /** Nothing has arrived: the search for passages is running. */
  | { kind: "searching" }
  /** The passages are here; the answer is being written. */
  | { kind: "writing"; passages: AnswerPassage[] }
  | { kind: "answered"; passages: AnswerPassage[]; answer: WrittenAnswer & { text: string }; source: AnswerSource }
  /** Nothing grounded enough to answer from (`detail` says why, for the person). */
  | { kind: "no-answer"; passages: AnswerPassage[]; detail: string }
  | { kind: "refused"; passages: AnswerPassage[]; detail: string | null }
  /** The model failed (timeout, throttled, down, refused the key): nothing was charged. */
  | { kind: "model-error"; passages: AnswerPassage[]; code: string; message: string; retryable: boolean }
  /** The operation itself failed (network, rate limit, service down): ErrorMessage says it. */
  | { kind: "failed"; error: unknown };

export interface StreamedAnswer {
  data: { found?: { passages: AnswerPassage[] } | null; written?: WrittenAnswer | null } | undefined;
  error: unknown;
  /** The deferred part is still to come. */
  streaming: boolean;
}

interface ModelError {
  code: string;
  message: string;
  retryable: boolean;
}

/** The first `MODEL_*` error among the operation's errors (the answer's model failed), if any. */
function modelErrorOf(error: unknown): ModelError | null {
  if (!CombinedGraphQLErrors.is(error)) return null;
  for (const graphQLError of error.errors) {
    const code = graphQLError.extensions?.code;
    if (typeof code === "string" && code.startsWith("MODEL_")) {
      return { code, message: graphQLError.message, retryable: graphQLError.extensions?.retryable === true };
    }
  }
  return null;
}

function sourceOf(answer: WrittenAnswer): AnswerSource {
  if (answer.mode === "GENERATIVE") return { kind: "written", model: answer.model, credits: answer.credits };
  if (answer.modelNote) {
    // The ledger's words (credit-ledger.ts, CreditBudgetSpentError): "credit budget spent: …".
    return /credit budget spent/i.test(answer.modelNote) ? { kind: "credits-spent", detail: answer.modelNote } : { kind: "model-skipped", detail: answer.modelNote };
  }
  return { kind: "quoted" };
}

export function answerStateOf({ data, error, streaming }: StreamedAnswer): AnswerState {
  const passages = data?.found?.passages ?? [];
  const written = data?.written ?? null;
  const modelError = modelErrorOf(error);
  if (modelError) return { kind: "model-error", passages, ...modelError };
  if (written) {
    if (written.status === "REFUSED") return { kind: "refused", passages, detail: written.groundingNote };
    if (written.status === "NO_PASSAGES") return { kind: "no-answer", passages: [], detail: "Nothing you can see matched the question closely enough to answer it." };
    if (written.status === "ANSWERED" && written.text && written.citations.length > 0) {
      return { kind: "answered", passages, answer: { ...written, text: written.text }, source: sourceOf(written) };
    }
    // Written, but with nothing it could cite: an answer that rests on nothing is not shown.
    return { kind: "no-answer", passages, detail: "The passages found do not say enough about the question to answer it from them." };
  }
  if (error) return { kind: "failed", error };
  if (data?.found && !streaming) {
    // The first part came and the stream ended without the answer: the deferred part was lost.
    return { kind: "failed", error: new Error("The answer did not arrive.") };
  }
  if (data?.found) return passages.length === 0 ? { kind: "searching" } : { kind: "writing", passages };
  return { kind: "searching" };
}
