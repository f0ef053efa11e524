/**
 * The answer panel (web/src/search/AnswerPanel.tsx): each state the API can put it in, read from
 * what the streamed `answer` operation delivered, and rendered as a person (and a screen reader)
 * gets it; its text rendered plain, with each `[n]` a link to the hit it cites.
 */
import { renderToStaticMarkup } from "react-dom/server";
import { MemoryRouter } from "react-router";
import { CombinedGraphQLErrors } from "@apollo/client/errors";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AnswerBody, statusText } from "../src/search/AnswerPanel";
import { answerInputOf, isQuestion, type AnswerPassage, type WrittenAnswer } from "../src/search/answer-operations";
import { answerStateOf, type AnswerState } from "../src/search/answer-state";
import { answerPieces, groupIdenticalPassages, plainPassagePieces, plainText } from "../src/search/answer-text";

const QUESTION = "How often is the espresso machine descaled?";

const passages: AnswerPassage[] = [
  {
    number: 1,
    label: "[1]",
    text: "Descale the espresso machine every 4 weeks with citric acid.",
    matches: [{ start: 0, end: 7 }],
    truncatedBefore: false,
    truncatedAfter: true,
    messageId: null,
    hit: { item: { __typename: "DocumentChunk", id: "chunk-7", headingPath: ["Espresso machine care"], page: null, document: { id: "doc-3", fileName: "kitchen.md", createdAt: "2026-11-02T09:00:00.000Z", category: null, owner: { id: "user_ada", name: "Ada Lovelace" } } } },
  },
  {
    number: 2,
    label: "[2]",
    text: "We descaled it last Monday, as the calendar says: once a month.",
    matches: [{ start: 3, end: 11 }],
    truncatedBefore: true,
    truncatedAfter: false,
    messageId: "message-42",
    hit: { item: { __typename: "Conversation", id: "conversation-9", title: "Office coffee", createdAt: "2026-11-03T09:00:00.000Z", updatedAt: "2026-11-03T09:00:00.000Z", owner: { id: "user_grace", name: "Grace Hopper" } } },
  },
  {
    number: 3,
    label: "[3]",
    text: "How to descale an espresso machine, step by step.",
    matches: [],
    truncatedBefore: false,
    truncatedAfter: false,
    messageId: null,
    hit: { item: { __typename: "WebResult", id: "web-1", title: "Descaling guide", url: "https://example.com/descale" } },
  },
];

const answerText = "Descale the espresso machine every 4 weeks with citric acid. [1] We descaled it last Monday, as the calendar says: once a month. [2]";
const answered: WrittenAnswer = {
  status: "ANSWERED",
  mode: "EXTRACTIVE",
  text: answerText,
  citations: [
    { label: "[1]", number: 1, start: answerText.indexOf("[1]"), end: answerText.indexOf("[1]") + 3 },
    { label: "[2]", number: 2, start: answerText.indexOf("[2]"), end: answerText.indexOf("[2]") + 3 },
  ],
  grounded: true,
  groundingNote: null,
  truncated: false,
  model: null,
  modelNote: null,
  credits: 0,
};

function render(state: AnswerState): string {
  return renderToStaticMarkup(
    <MemoryRouter>
      <AnswerBody state={state} question={QUESTION} onRetry={() => undefined} />
    </MemoryRouter>,
  );
}

/** The text a person reads: markup stripped, entities of the few characters React escapes read back. */
const readable = (html: string) =>
  html
    .replace(/<[^>]+>/g, "")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, "&");

function modelFailure(code: string, retryable: boolean) {
  return new CombinedGraphQLErrors({
    data: null,
    errors: [{ message: `The language model could not answer (${code.replace("MODEL_", "")}): the vendor said no. Nothing was charged for the failed call.`, path: ["written"], extensions: { code, retryable, credits: 0 } }],
  });
}

describe("answerStateOf: what the streamed answer has delivered, as a state", () => {
  it("is searching until the passages come, writing until the answer comes, answered when it does", () => {
    expect(answerStateOf({ data: undefined, error: undefined, streaming: true }).kind).toBe("searching");
    const writing = answerStateOf({ data: { found: { passages } }, error: undefined, streaming: true });
    expect(writing).toEqual({ kind: "writing", passages });
    const done = answerStateOf({ data: { found: { passages }, written: answered }, error: undefined, streaming: false });
    expect(done).toMatchObject({ kind: "answered", passages, source: { kind: "quoted" } });
  });

  it("says no answer when nothing matched, and when the answer cites nothing", () => {
    const none = answerStateOf({ data: { found: { passages: [] }, written: { ...answered, status: "NO_PASSAGES", text: null, citations: [], grounded: false } }, error: undefined, streaming: false });
    expect(none.kind).toBe("no-answer");
    const uncited = answerStateOf({ data: { found: { passages }, written: { ...answered, citations: [], grounded: false, groundingNote: "the answer cites no passage it was given" } }, error: undefined, streaming: false });
    expect(uncited.kind).toBe("no-answer");
  });

  it("tells a refusal, a retryable model failure and a lasting one apart, keeping the passages", () => {
    const refused = answerStateOf({ data: { found: { passages }, written: { ...answered, status: "REFUSED", mode: "GENERATIVE", text: null, citations: [], grounded: false, groundingNote: 'the model declined to answer: "I cannot help with that."' } }, error: undefined, streaming: false });
    expect(refused).toMatchObject({ kind: "refused", passages });
    const throttled = answerStateOf({ data: { found: { passages } }, error: modelFailure("MODEL_THROTTLED", true), streaming: false });
    expect(throttled).toMatchObject({ kind: "model-error", code: "MODEL_THROTTLED", retryable: true, passages });
    const unauthorized = answerStateOf({ data: { found: { passages } }, error: modelFailure("MODEL_UNAUTHORIZED", false), streaming: false });
    expect(unauthorized).toMatchObject({ kind: "model-error", code: "MODEL_UNAUTHORIZED", retryable: false });
  });

  it("says where an answer came from: quoted (no model), credits spent, model skipped, written and what it cost", () => {
    const sourceOf = (written: Partial<WrittenAnswer>) => {
      const state = answerStateOf({ data: { found: { passages }, written: { ...answered, ...written } }, error: undefined, streaming: false });
      return state.kind === "answered" ? state.source : null;
    };
    expect(sourceOf({})).toEqual({ kind: "quoted" });
    const note = "the model was not called: credit budget spent: 10 of 10 credits used this month, and this call would cost 0.4; this answer is extractive";
    expect(sourceOf({ model: "gpt-4o-mini", modelNote: note })).toEqual({ kind: "credits-spent", detail: note });
    expect(sourceOf({ model: "gpt-4o-mini", modelNote: "the model was not called: language-model is failing; this answer is extractive" })?.kind).toBe("model-skipped");
    expect(sourceOf({ mode: "GENERATIVE", model: "gpt-4o-mini", credits: 0.25 })).toEqual({ kind: "written", model: "gpt-4o-mini", credits: 0.25 });
  });

  it("reports any other failure as it is (the service down, a rate limit)", () => {
    const down = new CombinedGraphQLErrors({ data: { found: null }, errors: [{ message: "The search service is unavailable.", extensions: { code: "SUBGRAPH_UNAVAILABLE" } }] });
    expect(answerStateOf({ data: { found: null }, error: down, streaming: false })).toEqual({ kind: "failed", error: down });
  });
});

describe("the panel's body in each state", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("answered: plain text, each [n] a keyboard-reachable link to its hit, named for screen readers, and the sources listed", () => {
    const html = render(answerStateOf({ data: { found: { passages }, written: answered }, error: undefined, streaming: false }));
    // [1] cites the document at its chunk, [2] the conversation at its message, both with the question to mark.
    expect(html).toContain('href="/documents/doc-3?chunk=chunk-7&amp;q=How+often+is+the+espresso+machine+descaled%3F"');
    expect(html).toContain('href="/conversations/conversation-9?message=message-42&amp;q=How+often+is+the+espresso+machine+descaled%3F"');
    expect(html).toMatch(/<a[^>]*class="citation"[^>]*>\[1\]<span class="visually-hidden"> kitchen\.md<\/span><\/a>/);
    expect(html).toMatch(/<a[^>]*class="citation"[^>]*>\[2\]<span class="visually-hidden"> Office coffee<\/span><\/a>/);
    // The web source opens in a new tab, and says so.
    expect(html).toMatch(/<a href="https:\/\/example\.com\/descale"[^>]*target="_blank"[^>]*rel="noopener noreferrer">Descaling guide<span class="visually-hidden"> \(opens in a new tab\)<\/span><\/a>/);
    expect(readable(html)).toContain("Quoted from the sources below. No language model is configured");
    expect(html.match(/<li/g)).toHaveLength(3);
  });

  it("answered with a model: which model wrote it and the credits it used; a caution when it is not grounded", () => {
    const html = render(answerStateOf({ data: { found: { passages }, written: { ...answered, mode: "GENERATIVE", model: "gpt-4o-mini", credits: 0.125, grounded: false, groundingNote: "dropped 1 citation to passages that were not given ([9])" } }, error: undefined, streaming: false }));
    expect(readable(html)).toContain("Written by gpt-4o-mini from the sources below; used 0.125 credits.");
    expect(readable(html)).toContain("Check the sources: dropped 1 citation to passages that were not given ([9]).");
  });

  it("credits spent: the answer quotes instead, and the page says why and who can change it", () => {
    const modelNote = "the model was not called: credit budget spent: 10 of 10 credits used this month, and this call would cost 0.4; this answer is extractive";
    const text = readable(render(answerStateOf({ data: { found: { passages }, written: { ...answered, model: "gpt-4o-mini", modelNote } }, error: undefined, streaming: false })));
    expect(text).toContain("Your organization's credits are spent for this month (10 of 10 credits used this month, and this call would cost 0.4)");
    expect(text).toContain("An administrator can raise the budget");
  });

  it("writing: the passages show before the answer", () => {
    const state = answerStateOf({ data: { found: { passages } }, error: undefined, streaming: true });
    const text = readable(render(state));
    expect(text).toContain("Writing the answer…");
    expect(text).toContain("kitchen.md");
    expect(text).toContain("Descale the espresso machine every 4 weeks");
    expect(statusText(state)).toBe("Writing the answer from 3 passages…");
  });

  it("no answer, refused, model error (with Try again only when retrying can help) and a failed request", () => {
    const none = answerStateOf({ data: { found: { passages: [] }, written: { ...answered, status: "NO_PASSAGES", text: null, citations: [], grounded: false } }, error: undefined, streaming: false });
    expect(readable(render(none))).toContain("No answer. Nothing you can see matched the question closely enough to answer it.");
    expect(statusText(none)).toBe("No answer.");

    const refused = answerStateOf({ data: { found: { passages }, written: { ...answered, status: "REFUSED", mode: "GENERATIVE", text: null, citations: [], grounded: false, groundingNote: 'the model declined to answer: "I cannot help with that."' } }, error: undefined, streaming: false });
    expect(readable(render(refused))).toContain('The language model declined to answer this question.It said: "I cannot help with that."');

    const retryable = render(answerStateOf({ data: { found: { passages } }, error: modelFailure("MODEL_TIMEOUT", true), streaming: false }));
    expect(retryable).toContain('role="alert"');
    expect(retryable).toContain('data-error-code="MODEL_TIMEOUT"');
    expect(readable(retryable)).toContain("Try again");
    expect(readable(retryable)).toContain("The language model did not answer this time");
    const lasting = render(answerStateOf({ data: { found: { passages } }, error: modelFailure("MODEL_UNAUTHORIZED", false), streaming: false }));
    expect(readable(lasting)).not.toContain("Try again");
    expect(readable(lasting)).toContain("Ask an administrator");

    // ErrorMessage reads the session's token (a page's <meta>): a page without one.
    vi.stubGlobal("document", { querySelector: () => null });
    const failed = render({ kind: "failed", error: new TypeError("Failed to fetch") });
    expect(failed).toContain('data-error-code="NETWORK_ERROR"');
    expect(readable(failed)).toContain("Try again");
  });
});

describe("the Sources list", () => {
  it("shows a text several hits hold once, naming the others under it, and keeps every number the answer cites", () => {
    const pasted = "Retry the whole transaction after a deadlock, not the statement.";
    const copies: AnswerPassage[] = [1, 2, 3].map((number) => ({
      ...passages[1]!,
      number,
      label: `[${number}]`,
      text: pasted,
      matches: [],
      truncatedAfter: number === 3,
      messageId: `message-${number}`,
      hit: { item: { ...(passages[1]!.hit.item as object), id: `conversation-${number}`, title: `Runbook copy ${number}` } as AnswerPassage["hit"]["item"] },
    }));
    const groups = groupIdenticalPassages([...copies, { ...passages[0]!, number: 4, label: "[4]" }]);
    // The third is cut after its text: another passage, shown on its own.
    expect(groups.map((group) => [group.passage.number, group.alsoIn.map((other) => other.number)])).toEqual([
      [1, [2]],
      [3, []],
      [4, []],
    ]);
    const html = render(answerStateOf({ data: { found: { passages: [...copies, { ...passages[0]!, number: 4, label: "[4]" }] }, written: answered }, error: undefined, streaming: false }));
    expect(html.match(/<li/g)).toHaveLength(3);
    expect(html.match(new RegExp(pasted.replace(/[.]/g, "\\."), "g"))).toHaveLength(2);
    expect(readable(html)).toContain("Same passage in [2] Runbook copy 2");
    expect(html).toContain('href="/conversations/conversation-2?message=message-2&amp;q=');
    expect(html).toMatch(/<li value="4">/);
  });
});

describe("the answer's text", () => {
  it("is cut at the citations' offsets, which must hold their labels", () => {
    const pieces = answerPieces(answerText, answered.citations);
    expect(pieces.map((piece) => piece.citation?.label ?? piece.text)).toEqual(["Descale the espresso machine every 4 weeks with citric acid. ", "[1]", " We descaled it last Monday, as the calendar says: once a month. ", "[2]"]);
    // A citation whose offsets do not hold its label stays text, never a link to the wrong place.
    const wrong = answerPieces("Text [1] more.", [{ label: "[1]", number: 1, start: 0, end: 3 }]);
    expect(wrong).toEqual([{ text: "Text [1] more." }]);
  });

  it("shows no raw Markdown: headings, emphasis, code, fences and table pipes are read as words", () => {
    const quoted = "## Descaling\n**Every 4 weeks**, run `descale --citric`. [1]\n| Step | Time |\n| --- | ---: |\n| Rinse | 5 min |\n```bash\nmake coffee\n```";
    const label = quoted.indexOf("[1]");
    const pieces = answerPieces(quoted, [{ label: "[1]", number: 1, start: label, end: label + 3 }]);
    const shown = pieces.map((piece) => piece.citation?.label ?? piece.text).join("");
    expect(shown).toBe("Descaling\nEvery 4 weeks, run descale --citric. [1]\nStep · Time\n\nRinse · 5 min\n\nmake coffee");
    expect(pieces.filter((piece) => piece.citation)).toHaveLength(1);
    expect(plainText("a | b | c")).toBe("a · b · c");
  });

  it("reads a passage whose lines were joined: marks inside a line go too, and the matched words stay marked", () => {
    // As the demo's extractive answers quoted it (a conversation's Markdown, its lines joined).
    const joined = "} } ```  Wrap the *whole* transaction [1] ## Common errors `jwt expired` means **skew**. | Pattern | Fix | |---|---| | Batch job | `ORDER BY id` |";
    expect(plainText(joined)).toBe("} } Wrap the whole transaction [1] Common errors jwt expired means skew. Pattern · Fix · Batch job · ORDER BY id");
    // Code keeps its operators: exponent, "or", and names with underscores.
    expect(plainText("50 * 2 ** attempt, C# and snake_case_name")).toBe("50 * 2 ** attempt, C# and snake_case_name");
    expect(plainText("if (!RETRYABLE.has(code) || attempt >= attempts) throw err;")).toBe("if (!RETRYABLE.has(code) || attempt >= attempts) throw err;");
    const text = "## Deadlocks\n**Retry** the `deadlock` | once |";
    const start = text.indexOf("deadlock`");
    const pieces = plainPassagePieces(text, [{ start: 3, end: 12 }, { start, end: start + 8 }]);
    expect(pieces).toEqual([
      { text: "Deadlocks", matched: true },
      { text: "\nRetry the ", matched: false },
      { text: "deadlock", matched: true },
      { text: " · once", matched: false },
    ]);
  });
});

describe("when the panel asks", () => {
  it("reads questions as questions and keywords as keywords", () => {
    expect(isQuestion("How often is the espresso machine descaled?")).toBe(true);
    expect(isQuestion("why is kafka consumer lag growing")).toBe(true);
    expect(isQuestion("deadlock?")).toBe(true);
    expect(isQuestion("kafka consumer lag")).toBe(false);
    expect(isQuestion("how")).toBe(false);
  });

  it("asks with the search's question, balance, providers and filters", () => {
    const input = answerInputOf({ query: "why?", limit: 20, alpha: 0.3, providers: ["documents.keyword"], filter: { kinds: ["DOCUMENT_CHUNK"] }, typoTolerance: false });
    expect(input).toEqual({ question: "why?", alpha: 0.3, providers: ["documents.keyword"], filter: { kinds: ["DOCUMENT_CHUNK"] }, passages: 5, maxLength: 1200 });
  });
});
