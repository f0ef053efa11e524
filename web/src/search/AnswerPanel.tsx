/**
 * The answer above the results (issue 40, "Answers on top"): for the search shown (its question,
 * balance, providers and filters), a grounded answer whose every `[n]` links to the hit it cites,
 * with the passages shown first and the answer streamed in when it is written (`@defer`,
 * answer-operations.ts). The states a person is told about are in answer-state.ts.
 *
 * When it is asked. An answer repeats the search (twice: passages, then answer) and, where a
 * language model is configured, spends the organization's credits on every call; results also
 * refresh as a person refines the query. So:
 * - a question ("How do I …?", "why is … failing") is answered at once when the answer is free
 *   (no model here: the answer quotes the passages, at no cost), as Glean and Perplexity do;
 * - keywords ("kafka lag") get an "Answer" button: they mostly want the list, and an answer
 *   nobody reads is a search made for nothing;
 * - where a model writes answers, nothing is spent until the person asks, and the button says so:
 *   spending credits on each question typed (or on each pause while typing) is not what anyone
 *   expects of a search box. Not knowing whether a model is configured counts as "it may cost".
 * A search already answered is read from Apollo's cache, not asked (or paid for) again.
 */
import { useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { Link } from "react-router";
import { skipToken, useQuery } from "@apollo/client/react";
import { ErrorMessage } from "../components/ErrorMessage";
import { ANSWER_SETTINGS, STREAMED_ANSWER, answerInputOf, isQuestion, type AnswerPassage } from "./answer-operations";
import { answerStateOf, type AnswerSource, type AnswerState } from "./answer-state";
import { answerPieces, groupIdenticalPassages, plainPassagePieces } from "./answer-text";
import { FROM_RESULTS, hitSource, type HitSource } from "./hit-links";
import type { SearchInput } from "./operations";
import "./AnswerPanel.css";

/**
 * `resultsShown`: the search's first page is on the screen (or failed). Nothing is asked before:
 * on the embedded database (one connection) the answer's searches would queue beside the
 * results' and delay them, and the results are what a person reads first.
 */
export function AnswerPanel({ search, resultsShown }: { search: SearchInput; resultsShown: boolean }) {
  const input = useMemo(() => answerInputOf(search), [JSON.stringify(search)]);
  const key = JSON.stringify(input);
  const { data: settingsData, loading: settingsQueryLoading } = useQuery(ANSWER_SETTINGS, resultsShown ? { errorPolicy: "all" } : skipToken);
  const modelLoading = settingsQueryLoading || (!resultsShown && !settingsData);
  const settings = settingsData?.answerSettings ?? null;
  // Unknown (the search service did not say) counts as "may cost": nothing is spent unasked.
  const costsCredits = settings?.spendsCredits ?? true;
  const [askedFor, setAskedFor] = useState<string | null>(null);
  const automatic = resultsShown && !modelLoading && !costsCredits && isQuestion(input.question);
  const asked = automatic || askedFor === key;

  const { data, error, loading, dataState, refetch } = useQuery(STREAMED_ANSWER, asked ? { variables: { input }, errorPolicy: "all" } : skipToken);
  const state = asked ? answerStateOf({ data: data as Parameters<typeof answerStateOf>[0]["data"], error, streaming: loading || dataState === "streaming" }) : null;

  // The button that asked is gone once the answer is on its way: focus goes to the answer's heading, not to the page's top.
  const heading = useRef<HTMLHeadingElement>(null);
  const focusHeading = useRef(false);
  useEffect(() => {
    if (asked && focusHeading.current) {
      focusHeading.current = false;
      heading.current?.focus();
    }
  }, [asked]);

  if ((modelLoading || !resultsShown) && !asked) return null;
  const retry = () => {
    refetch().catch(() => undefined);
  };
  return (
    <section className="answer-panel card" aria-labelledby="answer-title" data-state={state?.kind ?? "offered"}>
      <h2 id="answer-title" ref={heading} tabIndex={-1}>
        Answer
      </h2>
      {/* Heard, not seen: the body below shows the same progress to the eye. */}
      <p role="status" className="visually-hidden">
        {state ? statusText(state) : ""}
      </p>
      {state ? (
        <AnswerBody state={state} question={input.question} onRetry={retry} />
      ) : (
        <div className="answer-offer">
          <button
            type="button"
            onClick={() => {
              focusHeading.current = true;
              setAskedFor(key);
            }}
          >
            Answer “{input.question}”
          </button>
          <p className="hint">
            {!settings
              ? "Written from the top results, with citations; it may use your organization's credits."
              : settings.spendsCredits
                ? `${settings.model ?? "A language model"} writes it from the top results, with citations; each answer uses your organization's credits.`
                : "Quoted from the top results, with citations; free."}
          </p>
        </div>
      )}
    </section>
  );
}

/** What the live region says as the answer streams in. */
export function statusText(state: AnswerState): string {
  switch (state.kind) {
    case "searching":
      return "Finding passages to answer from…";
    case "writing":
      return `Writing the answer from ${state.passages.length} passage${state.passages.length === 1 ? "" : "s"}…`;
    case "answered": {
      const cited = new Set(state.answer.citations.map((citation) => citation.number)).size;
      return `Answer ready, citing ${cited} source${cited === 1 ? "" : "s"}.`;
    }
    case "no-answer":
      return "No answer.";
    case "refused":
      return "The language model declined to answer.";
    case "model-error":
      return "The answer could not be written.";
    case "failed":
      return "The answer could not be found.";
  }
}

/** Everything under the heading, for one state: exported for the component tests, which render each state. */
export function AnswerBody({ state, question, onRetry }: { state: AnswerState; question: string; onRetry: () => void }) {
  switch (state.kind) {
    case "searching":
      return <p className="answer-progress">Finding passages to answer from…</p>;
    case "writing":
      return (
        <>
          <p className="answer-progress">Writing the answer…</p>
          <Sources passages={state.passages} question={question} />
        </>
      );
    case "answered": {
      const sources = new Map(state.passages.map((passage) => [passage.number, passage]));
      return (
        <>
          <p className="answer-text">
            {answerPieces(state.answer.text, state.answer.citations).map((piece, index) =>
              piece.citation ? (
                <Citation key={index} label={piece.citation.label} passage={sources.get(piece.citation.number)} question={question} />
              ) : (
                <span key={index}>{piece.text}</span>
              ),
            )}
          </p>
          {!state.answer.grounded && state.answer.groundingNote ? <p className="answer-caution">Check the sources: {state.answer.groundingNote}.</p> : null}
          <SourceNote source={state.source} />
          <Sources passages={state.passages} question={question} />
        </>
      );
    }
    case "no-answer":
      return (
        <div className="answer-none">
          <p>
            <strong>No answer.</strong> {state.detail}
          </p>
          <p className="hint">The results below may still help; try a question with the words your documents use.</p>
        </div>
      );
    case "refused":
      return (
        <>
          <div className="answer-none">
            <p>
              <strong>The language model declined to answer this question.</strong>
            </p>
            {state.detail ? <p className="hint">It said: {state.detail.replace(/^the model declined to answer:?\s*/i, "") || "nothing more"}</p> : null}
          </div>
          <Sources passages={state.passages} question={question} />
        </>
      );
    case "model-error":
      return (
        <>
          <div role="alert" className="error-box" data-error-code={state.code}>
            <strong>{state.retryable ? "The language model did not answer this time" : "The language model could not answer"}</strong>
            <p>
              {state.message} <code className="error-code">{state.code}</code>
            </p>
            {state.retryable ? (
              <button type="button" onClick={onRetry}>
                Try again
              </button>
            ) : (
              <p className="hint">Ask an administrator to check the model's configuration.</p>
            )}
          </div>
          <Sources passages={state.passages} question={question} />
        </>
      );
    case "failed":
      return <ErrorMessage error={state.error} onRetry={onRetry} />;
  }
}

function SourceNote({ source }: { source: AnswerSource }) {
  switch (source.kind) {
    case "quoted":
      return <p className="hint answer-source">Quoted from the sources below. No language model is configured, so answers quote and cost nothing.</p>;
    case "credits-spent":
      return (
        <p className="answer-caution answer-source">
          Your organization's credits are spent for this month ({whyNotCalled(source.detail).replace(/^credit budget spent: /, "")}), so this
          answer quotes the sources instead of being written by the language model. An administrator can raise the budget on the Credits page.
        </p>
      );
    case "model-skipped":
      return <p className="answer-caution answer-source">The language model was not asked ({whyNotCalled(source.detail)}), so this answer quotes the sources.</p>;
    case "written":
      return (
        <p className="hint answer-source">
          Written by {source.model ?? "a language model"} from the sources below; used {formatCredits(source.credits)} credit{source.credits === 1 ? "" : "s"}.
        </p>
      );
  }
}

/** The reason inside the API's modelNote ("the model was not called: …; this answer is extractive"), which the sentence around it already says. */
const whyNotCalled = (note: string) => note.replace(/^the model was not called: /, "").replace(/; this answer is extractive$/, "");

const formatCredits = (credits: number) => (Number.isInteger(credits) ? String(credits) : credits.toFixed(3).replace(/0+$/, ""));

/** A `[n]` of the answer: a link to the hit it cites, named by it for screen readers. */
function Citation({ label, passage, question }: { label: string; passage: AnswerPassage | undefined; question: string }) {
  const source = passage?.hit.item ? hitSource(passage.hit.item, passage.messageId, question) : null;
  if (!source) return <span className="citation">{label}</span>;
  return (
    <SourceLink source={source} className="citation" title={source.name}>
      {label}
      <span className="visually-hidden"> {source.name}</span>
    </SourceLink>
  );
}

function SourceLink({ source, className, title, children }: { source: HitSource; className?: string; title?: string; children: ReactNode }) {
  const { target } = source;
  if (target?.to) {
    return (
      <Link to={target.to} state={FROM_RESULTS} className={className} title={title}>
        {children}
      </Link>
    );
  }
  if (target?.href) {
    return (
      <a href={target.href} className={className} title={title} target="_blank" rel="noopener noreferrer">
        {children}
        <span className="visually-hidden"> (opens in a new tab)</span>
      </a>
    );
  }
  return <span className={className}>{children}</span>;
}

/** The passages the answer is (being) written from, numbered as its citations are; a text shown once however many hits hold it. */
function Sources({ passages, question }: { passages: AnswerPassage[]; question: string }) {
  if (!passages.length) return null;
  const sourceOf = (passage: AnswerPassage) => (passage.hit.item ? hitSource(passage.hit.item, passage.messageId, question) : null);
  return (
    <>
      <h3 className="answer-sources-title">Sources</h3>
      <ol className="answer-sources">
        {groupIdenticalPassages(passages).map(({ passage, alsoIn }) => {
          const source = sourceOf(passage);
          return (
            <li key={passage.number} value={passage.number}>
              {source ? <SourceLink source={source}>{source.name}</SourceLink> : <span className="hint">This item was deleted after the search ran.</span>}
              <p className="answer-passage">
                {passage.truncatedBefore ? "…" : null}
                {plainPassagePieces(passage.text, passage.matches).map((piece, index) => (piece.matched ? <mark key={index}>{piece.text}</mark> : <span key={index}>{piece.text}</span>))}
                {passage.truncatedAfter ? "…" : null}
              </p>
              {alsoIn.length > 0 ? (
                <p className="hint answer-same-passage">
                  Same passage in{" "}
                  {alsoIn.map((other, index) => {
                    const otherSource = sourceOf(other);
                    return (
                      <span key={other.number}>
                        {index > 0 ? ", " : null}
                        {other.label} {otherSource ? <SourceLink source={otherSource}>{otherSource.name}</SourceLink> : "a deleted item"}
                      </span>
                    );
                  })}
                </p>
              ) : null}
            </li>
          );
        })}
      </ol>
    </>
  );
}
