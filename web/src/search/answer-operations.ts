/**
 * The answer panel's operations (AnswerPanel.tsx) and the shapes it reads from them: the grounded
 * answer to the search box's question (`Query.answer`, docs/answers.md), streamed so that the
 * passages show while the answer is written, and whether a language model writes answers here
 * (which is what makes them cost credits: `answerSettings`).
 */
import { gql, type TypedDocumentNode } from "@apollo/client";
import { SEARCH_HIT_ITEM_FIELDS, type SearchItem, type SearchInput } from "./operations";
import type { TextRange } from "../highlight-pieces";

export interface AnswerPassage {
  number: number;
  label: string;
  text: string;
  matches: TextRange[];
  truncatedBefore: boolean;
  truncatedAfter: boolean;
  /** Conversations: the message the passage is from (a citation opens the conversation there). */
  messageId: string | null;
  hit: { item: SearchItem | null };
}

export interface AnswerCitation {
  label: string;
  number: number;
  /** Where `label` sits in the answer's text (UTF-16 offsets). */
  start: number;
  end: number;
}

export type AnswerStatus = "ANSWERED" | "NO_PASSAGES" | "REFUSED" | "DRY_RUN";

export interface WrittenAnswer {
  status: AnswerStatus;
  mode: "EXTRACTIVE" | "GENERATIVE";
  text: string | null;
  citations: AnswerCitation[];
  grounded: boolean;
  groundingNote: string | null;
  truncated: boolean;
  model: string | null;
  modelNote: string | null;
  credits: number;
}

export interface AnswerInput {
  question: string;
  alpha?: number;
  providers?: string[];
  filter?: SearchInput["filter"];
  passages?: number;
  maxLength?: number;
}

/**
 * The answer, streamed: `found` (the passages: a search and its highlights, no model) comes in
 * the first part, `written` (the answer, which may wait on a model) in the deferred one. The
 * gateway runs them as two operations (gateway/root-defer.ts), so the passages never wait for the
 * model. Both aliases are the same field with the same input: the cache merges them into one
 * Answer, and a search already answered is read from there rather than asked (and paid) again.
 */
export const STREAMED_ANSWER: TypedDocumentNode<{ found: { passages: AnswerPassage[] } | null; written?: WrittenAnswer | null }, { input: AnswerInput }> = gql`
  query SearchPageAnswer($input: AnswerInput!) {
    found: answer(input: $input) {
      passages {
        number
        label
        text
        matches {
          start
          end
        }
        truncatedBefore
        truncatedAfter
        messageId
        hit {
          ...SearchHitItem
        }
      }
    }
    ... @defer(label: "written") {
      written: answer(input: $input) {
        status
        mode
        text
        citations {
          label
          number
          start
          end
        }
        grounded
        groundingNote
        truncated
        model
        modelNote
        credits
      }
    }
  }
  ${SEARCH_HIT_ITEM_FIELDS}
`;

/** Whether answers here are written by a language model, and so spend the organization's credits. */
export const ANSWER_SETTINGS: TypedDocumentNode<{ answerSettings: { model: string | null; spendsCredits: boolean } | null }, Record<string, never>> = gql`
  query SearchPageAnswerSettings {
    answerSettings {
      model
      spendsCredits
    }
  }
`;

/** Passages an answer is written from: the search page's default of 5 (docs/answers.md measures citation recall best there). */
export const ANSWER_PASSAGES = 5;
/** Long enough for three quoted sentences or a paragraph of a model's, short enough to read above the results. */
export const ANSWER_MAX_LENGTH = 1_200;

/** The answer's input for the search shown: the same question, balance, providers and filters as the results. */
export function answerInputOf(search: SearchInput): AnswerInput {
  return {
    question: search.query,
    ...(search.alpha !== undefined ? { alpha: search.alpha } : {}),
    ...(search.providers?.length ? { providers: search.providers } : {}),
    ...(search.filter ? { filter: search.filter } : {}),
    passages: ANSWER_PASSAGES,
    maxLength: ANSWER_MAX_LENGTH,
  };
}

const QUESTION_WORDS = new Set(
  "who what when where why how which whose whom is are was were do does did can could should would will shall may might has have had explain describe compare".split(" "),
);

/**
 * Whether the query reads as a question ("How do I rotate the signing key?", "why is kafka
 * lagging"), rather than keywords ("kafka lag"). Questions are what an answer is for; keywords
 * mostly want the list of results.
 */
export function isQuestion(query: string): boolean {
  const trimmed = query.trim();
  if (trimmed.endsWith("?")) return true;
  const words = trimmed.toLowerCase().split(/\s+/);
  return words.length >= 3 && QUESTION_WORDS.has(words[0]!.replace(/[^a-z]/g, ""));
}
