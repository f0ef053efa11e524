/**
 * `AnswerInput`, checked before anything is retrieved: the question, the answer's length, how
 * many passages. What the answer shares with `search` (providers, weights, alpha, filter) is
 * checked by the search itself, with its messages, as the retrieval runs.
 */
import { GraphQLError } from "graphql";
import { badUserInput } from "../../../lib/graphql/errors.js";
import { MAX_QUERY_LENGTH, type SearchInput } from "../search-service.js";
import { toPlainText } from "../plain-text.js";
import type { SearchFilterInput } from "../search-filter-input.js";

/** Longest question, in characters: the search's own bound, since the question is what it searches for. */
export const MAX_QUESTION_LENGTH = MAX_QUERY_LENGTH;
/** Longest answer, in characters (UTF-16 code units, what JavaScript counts). */
export const MAX_ANSWER_LENGTH = 4_000;
export const DEFAULT_ANSWER_LENGTH = 1_000;
/** Most passages an answer is grounded on. */
export const MAX_ANSWER_PASSAGES = 10;
export const DEFAULT_ANSWER_PASSAGES = 5;
/**
 * Longest passage put in a prompt, in characters: a highlight window long enough for whole
 * sentences (a results list shows 300). With MAX_ANSWER_PASSAGES and MAX_QUESTION_LENGTH this
 * bounds every prompt before it is built: about 12,000 characters of data.
 */
export const ANSWER_PASSAGE_LENGTH = 1_000;
/**
 * Characters per output token assumed when turning `maxLength` into the model's token bound.
 * English runs near 4 characters per token; 3 leaves room for denser text (code, numbers), and
 * the answer is cut at maxLength characters anyway.
 */
const CHARACTERS_PER_TOKEN = 3;

export interface AnswerInput {
  question: string;
  alpha?: number | null;
  providers?: string[] | null;
  weights?: { provider: string; weight: number }[] | null;
  filter?: SearchFilterInput | null;
  maxLength?: number | null;
  passages?: number | null;
  dryRun?: boolean | null;
}

export interface CheckedAnswerInput {
  /** The question as the search sees it (control characters as spaces, trimmed). */
  question: string;
  maxLength: number;
  maxOutputTokens: number;
  passages: number;
  dryRun: boolean;
  /** The search that finds the passages: one page of `passages` hits. */
  search: SearchInput;
}

export function checkAnswerInput(raw: AnswerInput): CheckedAnswerInput {
  if (typeof raw.question !== "string") throw badUserInput("input.question", "must be a string");
  if (raw.question.length > MAX_QUESTION_LENGTH) throw badUserInput("input.question", `must be at most ${MAX_QUESTION_LENGTH} characters, got ${raw.question.length}: ask a shorter question`);
  const question = toPlainText(raw.question).trim();
  if (question.length === 0) throw badUserInput("input.question", "must not be empty or only whitespace");
  const maxLength = raw.maxLength ?? DEFAULT_ANSWER_LENGTH;
  if (!Number.isInteger(maxLength) || maxLength < 1 || maxLength > MAX_ANSWER_LENGTH) {
    throw badUserInput("input.maxLength", `is the answer's length in characters and must be between 1 and ${MAX_ANSWER_LENGTH}, got ${maxLength}`);
  }
  const passages = raw.passages ?? DEFAULT_ANSWER_PASSAGES;
  if (!Number.isInteger(passages) || passages < 1 || passages > MAX_ANSWER_PASSAGES) {
    throw badUserInput("input.passages", `must be between 1 and ${MAX_ANSWER_PASSAGES}, got ${passages}`);
  }
  return {
    question,
    maxLength,
    maxOutputTokens: Math.ceil(maxLength / CHARACTERS_PER_TOKEN),
    passages,
    dryRun: raw.dryRun ?? false,
    search: { query: question, alpha: raw.alpha ?? null, providers: raw.providers ?? null, weights: raw.weights ?? null, filter: raw.filter ?? null, limit: passages },
  };
}

/**
 * The search's complaints name its own fields (`input.query`); the caller of `answer` sent a
 * question, so the field named is theirs. Everything else passes unchanged.
 */
export function asAnswerError(error: unknown): unknown {
  if (error instanceof GraphQLError && error.extensions?.code === "BAD_USER_INPUT" && error.extensions.field === "input.query") {
    return badUserInput("input.question", error.message.replace(/^input\.query: /, ""));
  }
  return error;
}
