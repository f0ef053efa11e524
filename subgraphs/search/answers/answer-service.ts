/**
 * `Query.answer`: a grounded answer over everything the caller may see. Two steps, so a client
 * can `@defer` the second:
 *
 * 1. retrieve: the unified search (SearchService, exactly as `search` runs it, with the
 *    caller's tenant) for the top hits, then one passage per hit from the domains' highlights
 *    (the page's highlight loader: one statement per domain), in a window long enough to quote.
 * 2. write: without a model, the extractive answer (extractive.ts); with one, the fenced prompt
 *    (prompt.ts) through the AnswerModel, whose every citation is checked against the passages
 *    it was given (citations.ts).
 *
 * Nothing here reads a table: the passages come from the caller's own search and highlights,
 * both scoped to their organization, so the prompt holds nothing another organization owns.
 */
import type DataLoader from "dataloader";
import { GraphQLError } from "graphql";
import type { AnswerModel, AnswerModelOutcome, TokenUsage } from "../../../lib/language-models/language-model.js";
import type { HighlightPassage } from "../../../lib/retrieval/highlights.js";
import type { TenantContext } from "../../../lib/tenancy/token.js";
import { highlightQuery, type HighlightRequest } from "../highlights.js";
import type { ProviderReport, SearchHitData, SearchService } from "../search-service.js";
import { ANSWER_PASSAGE_LENGTH, asAnswerError, checkAnswerInput, type AnswerInput, type CheckedAnswerInput } from "./answer-input.js";
import { checkCitations } from "./citations.js";
import { extractiveAnswer } from "./extractive.js";
import { buildAnswerPrompt } from "./prompt.js";

export type AnswerMode = "EXTRACTIVE" | "GENERATIVE";
export type AnswerStatus = "ANSWERED" | "NO_PASSAGES" | "REFUSED" | "DRY_RUN";

export interface AnswerPassageData {
  /** 1-based: what `[n]` cites. */
  number: number;
  label: string;
  /** The search hit it comes from, with the query its highlights match (SearchHit's resolvers read it). */
  hit: SearchHitData & { query: string };
  text: string;
  ranges: HighlightPassage["ranges"];
  truncatedBefore: boolean;
  truncatedAfter: boolean;
  messageId: string | null;
  role: string | null;
}

export interface AnswerCitationData {
  label: string;
  number: number;
  passage: AnswerPassageData;
  start: number;
  end: number;
  quoteStart: number | null;
  quoteEnd: number | null;
}

export interface Retrieval {
  input: CheckedAnswerInput;
  passages: AnswerPassageData[];
  providers: ProviderReport[];
}

export interface WrittenAnswer {
  status: AnswerStatus;
  mode: AnswerMode;
  text: string | null;
  citations: AnswerCitationData[];
  grounded: boolean;
  groundingNote: string | null;
  truncated: boolean;
  model: string | null;
  modelNote: string | null;
  credits: number;
  estimatedCredits: number;
  usage: TokenUsage | null;
}

/** An AnswerModel for a deployment without a language model: every answer is extractive, nothing is charged. */
export const modelLessAnswerModel: AnswerModel = {
  model: null,
  call: async () => ({ status: "SKIPPED", reason: "no language model is configured", charge: { estimatedCredits: 0, credits: 0 } }),
};

/** The longest a model call may take, whatever the vendor client's own bounds. */
export const DEFAULT_ANSWER_MODEL_TIMEOUT_MS = 60_000;

export interface AnswerServiceOptions {
  search: SearchService;
  model: AnswerModel;
  modelTimeoutMs?: number;
}

const FREE = { estimatedCredits: 0, credits: 0 };

export class AnswerService {
  constructor(private readonly options: AnswerServiceOptions) {}

  get model(): string | null {
    return this.options.model.model;
  }

  /** Checks the input, searches, and reads one passage per hit (in hit order). */
  async retrieve(tenant: TenantContext, raw: AnswerInput, highlights: DataLoader<HighlightRequest, HighlightPassage[], string>): Promise<Retrieval> {
    const input = checkAnswerInput(raw);
    // A dry run spends nothing: the paid (REMOTE) providers are not asked, only this deployment's own indexes.
    const search = input.dryRun ? { ...input.search, latency: "LOCAL" as const } : input.search;
    let result;
    try {
      result = await this.options.search.search(tenant, search);
    } catch (error) {
      throw asAnswerError(error);
    }
    const query = highlightQuery(result);
    const loaded = await highlights.loadMany(result.hits.map((hit) => ({ ref: hit.ref, query, limit: 1, windowLength: ANSWER_PASSAGE_LENGTH })));
    const passages: AnswerPassageData[] = [];
    result.hits.forEach((hit, index) => {
      const found = loaded[index];
      // A hit whose entity is gone, or whose domain could not read it, gives no passage: the answer rests on the others.
      if (!found || found instanceof Error || found.length === 0) return;
      const best = found[0]!;
      const number = passages.length + 1;
      passages.push({
        number,
        label: `[${number}]`,
        hit: { ...hit, query },
        text: best.text,
        ranges: best.ranges,
        truncatedBefore: best.truncatedBefore,
        truncatedAfter: best.truncatedAfter,
        messageId: best.messageId ?? null,
        role: best.role ?? null,
      });
    });
    return { input, passages, providers: result.providers };
  }

  /** Writes the answer from what `retrieve` found. */
  async write(tenant: TenantContext, retrieval: Retrieval, signal?: AbortSignal): Promise<WrittenAnswer> {
    const { input, passages } = retrieval;
    const model = this.options.model;
    const mode: AnswerMode = model.model === null ? "EXTRACTIVE" : "GENERATIVE";
    const base = { mode, model: model.model, modelNote: null, usage: null, truncated: false, ...FREE };
    if (passages.length === 0) {
      return { ...base, status: "NO_PASSAGES", text: null, citations: [], grounded: false, groundingNote: "nothing the caller may see matched the question: no passage to answer from" };
    }
    if (model.model === null) return this.extractive(retrieval, { ...base, modelNote: null });

    const messages = buildAnswerPrompt(input.question, passages.map((passage) => ({ number: passage.number, source: passage.hit.ref.typename, text: passage.text })));
    const timeout = AbortSignal.timeout(this.options.modelTimeoutMs ?? DEFAULT_ANSWER_MODEL_TIMEOUT_MS);
    const outcome: AnswerModelOutcome = await model.call({
      tenant,
      request: { messages, maxOutputTokens: input.maxOutputTokens, signal: signal ? AbortSignal.any([signal, timeout]) : timeout },
      dryRun: input.dryRun,
    });
    const charge = { estimatedCredits: outcome.charge.estimatedCredits, credits: outcome.charge.credits };
    if (input.dryRun) {
      return { ...base, ...charge, status: "DRY_RUN", text: null, citations: [], grounded: false, groundingNote: "dry run: no answer was written" };
    }
    if (outcome.status === "ERROR") {
      const retryable = outcome.error.code === "THROTTLED" || outcome.error.code === "UNAVAILABLE" || outcome.error.code === "TIMEOUT";
      throw new GraphQLError(`The language model could not answer (${outcome.error.code}): ${outcome.error.message}. Nothing was charged for the failed call.`, {
        extensions: { code: `MODEL_${outcome.error.code}`, retryable, credits: charge.credits },
      });
    }
    if (outcome.status === "SKIPPED") {
      // The model is configured but was not called (breaker open, budget spent): the extractive
      // answer still works and costs nothing; modelNote says why it is not generative.
      return this.extractive(retrieval, { ...base, ...charge, mode: "EXTRACTIVE", modelNote: `the model was not called: ${outcome.reason}; this answer is extractive` });
    }

    const { result } = outcome;
    const written = { ...base, ...charge, model: result.model, usage: result.usage };
    if (result.stopReason === "REFUSED") {
      const said = result.text.trim();
      return { ...written, status: "REFUSED", text: null, citations: [], grounded: false, groundingNote: `the model declined to answer${said ? `: "${said.slice(0, 200)}${said.length > 200 ? "…" : ""}"` : ""}` };
    }
    const notes: string[] = [];
    const checked = checkCitations(result.text, passages.length);
    if (checked.dropped.length > 0) notes.push(`dropped ${checked.dropped.length} citation${checked.dropped.length === 1 ? "" : "s"} to passages that were not given (${[...new Set(checked.dropped)].slice(0, 5).join(", ")})`);
    let text = checked.text;
    let citations = checked.citations;
    let truncated = result.stopReason === "MAX_TOKENS";
    if (text.length > input.maxLength) {
      text = text.slice(0, input.maxLength);
      citations = citations.filter((citation) => citation.end <= text.length);
      truncated = true;
    }
    if (truncated) notes.push(`cut at maxLength (${input.maxLength} characters): the answer may be incomplete`);
    if (citations.length === 0) notes.push("the answer cites no passage it was given");
    return {
      ...written,
      status: "ANSWERED",
      text,
      truncated,
      citations: citations.map((citation) => ({ label: `[${citation.number}]`, number: citation.number, passage: passages[citation.number - 1]!, start: citation.start, end: citation.end, quoteStart: null, quoteEnd: null })),
      grounded: notes.length === 0,
      groundingNote: notes.length === 0 ? null : notes.join("; "),
    };
  }

  private extractive(retrieval: Retrieval, base: Omit<WrittenAnswer, "status" | "text" | "citations" | "grounded" | "groundingNote">): WrittenAnswer {
    const { input, passages } = retrieval;
    const answer = extractiveAnswer(passages, input.maxLength);
    if (input.dryRun) {
      return { ...base, mode: "EXTRACTIVE", status: "DRY_RUN", text: null, citations: [], grounded: false, groundingNote: "dry run: no answer was written (an extractive answer costs nothing)" };
    }
    const notes: string[] = [];
    if (answer.truncated) notes.push(`cut at maxLength (${input.maxLength} characters): the quoted sentence is incomplete`);
    if (answer.citations.length === 0) notes.push("maxLength leaves no room for a sentence and its citation");
    return {
      ...base,
      mode: "EXTRACTIVE",
      status: "ANSWERED",
      text: answer.text.length > 0 ? answer.text : null,
      truncated: answer.truncated,
      citations: answer.citations.map((citation) => ({ label: `[${citation.number}]`, number: citation.number, passage: passages[citation.number - 1]!, start: citation.start, end: citation.end, quoteStart: citation.quoteStart, quoteEnd: citation.quoteEnd })),
      grounded: notes.length === 0,
      groundingNote: notes.length === 0 ? null : notes.join("; "),
    };
  }
}
