/**
 * When the answer panel asks for an answer (web/src/search/AnswerPanel.tsx): a question is
 * answered at once only where answers are free (no language model configured); keywords, and
 * every question where a model would spend credits, wait for the person's "Answer" click. Rendered
 * with Apollo Client's static prerender, whose re-renders run each query the panel sends against
 * a MockLink: a query the panel must not send has no mock, so sending it would fail the render.
 */
import { renderToStaticMarkup } from "react-dom/server";
import { MemoryRouter } from "react-router";
import { ApolloClient, InMemoryCache } from "@apollo/client";
import { Defer20220824Handler } from "@apollo/client/incremental";
import { ApolloProvider } from "@apollo/client/react";
import { prerenderStatic } from "@apollo/client/react/ssr";
import { MockLink } from "@apollo/client/testing";
import { describe, expect, it } from "vitest";
import { AnswerPanel } from "../src/search/AnswerPanel";
import { ANSWER_SETTINGS, STREAMED_ANSWER, answerInputOf } from "../src/search/answer-operations";
import type { SearchInput } from "../src/search/operations";

const QUESTION = "How often is the espresso machine descaled?";

function modelMock(configured: boolean | "down"): MockLink.MockedResponse {
  if (configured === "down") {
    return { request: { query: ANSWER_SETTINGS }, result: { data: { answerSettings: null }, errors: [{ message: "The search service is unavailable.", extensions: { code: "SUBGRAPH_UNAVAILABLE" } }] } };
  }
  return { request: { query: ANSWER_SETTINGS }, result: { data: { answerSettings: { __typename: "AnswerSettings", model: configured ? "gpt-4o-mini" : null, spendsCredits: configured } } } };
}

function answerMock(search: SearchInput): MockLink.MockedResponse {
  const text = "Descale the espresso machine every 4 weeks. [1]";
  return {
    request: { query: STREAMED_ANSWER, variables: { input: answerInputOf(search) } },
    result: {
      data: {
        found: {
          __typename: "Answer",
          passages: [
            {
              __typename: "AnswerPassage",
              number: 1,
              label: "[1]",
              text: "Descale the espresso machine every 4 weeks.",
              matches: [{ __typename: "TextRange", start: 0, end: 7 }],
              truncatedBefore: false,
              truncatedAfter: false,
              messageId: null,
              hit: { __typename: "SearchHit", item: { __typename: "DocumentChunk", id: "chunk-7", headingPath: [], page: null, document: { __typename: "Document", id: "doc-3", fileName: "kitchen.md" } } },
            },
          ],
        },
        written: {
          __typename: "Answer",
          status: "ANSWERED",
          mode: "EXTRACTIVE",
          text,
          citations: [{ __typename: "AnswerCitation", label: "[1]", number: 1, start: text.indexOf("[1]"), end: text.indexOf("[1]") + 3 }],
          grounded: true,
          groundingNote: null,
          truncated: false,
          model: null,
          modelNote: null,
          credits: 0,
        },
      },
    },
  };
}

/** The members of `SearchItem`, so the cache matches a hit's inline fragments as the gateway's answers need. */
const cache = () => new InMemoryCache({ possibleTypes: { SearchItem: ["Conversation", "DocumentChunk", "KnowledgeBasePassage", "WebResult", "SlackMessage", "LinkedInPost"] } });

async function renderPanel(search: SearchInput, mocks: MockLink.MockedResponse[]): Promise<string> {
  const client = new ApolloClient({ link: new MockLink(mocks), cache: cache(), incrementalHandler: new Defer20220824Handler() });
  const { result } = await prerenderStatic({
    tree: (
      <ApolloProvider client={client}>
        <MemoryRouter>
          <AnswerPanel search={search} resultsShown />
        </MemoryRouter>
      </ApolloProvider>
    ),
    renderFunction: renderToStaticMarkup,
    maxRerenders: 10,
  });
  return result;
}

const question: SearchInput = { query: QUESTION, limit: 20 };
const keywords: SearchInput = { query: "espresso descaling", limit: 20 };

describe("when the answer panel asks", () => {
  it("answers a question at once where answers are free (quoted: no language model)", async () => {
    const html = await renderPanel(question, [modelMock(false), answerMock(question)]);
    expect(html).toContain('data-state="answered"');
    expect(html).toContain('aria-labelledby="answer-title"');
    expect(html).toMatch(/<a[^>]*class="citation"[^>]*href="\/documents\/doc-3\?chunk=chunk-7&amp;q=How\+often/);
  });

  it("offers a free answer for keywords, and asks nothing until clicked", async () => {
    const html = await renderPanel(keywords, [modelMock(false)]);
    expect(html).toContain('data-state="offered"');
    expect(html).toContain("Answer “espresso descaling”");
    expect(html).toContain("free");
  });

  it("asks nothing, even for a question, where a language model would spend credits, and says it will", async () => {
    const html = await renderPanel(question, [modelMock(true)]);
    expect(html).toContain('data-state="offered"');
    expect(html).toContain("uses your organization&#x27;s credits");
  });

  it("treats not knowing whether a model is configured as 'it may cost'", async () => {
    const html = await renderPanel(question, [modelMock("down")]);
    expect(html).toContain('data-state="offered"');
    expect(html).toContain("credits");
  });

  it("shows nothing, and asks nothing, until the results are on the screen", async () => {
    const client = new ApolloClient({ link: new MockLink([]), cache: cache(), incrementalHandler: new Defer20220824Handler() });
    const { result } = await prerenderStatic({
      tree: (
        <ApolloProvider client={client}>
          <MemoryRouter>
            <AnswerPanel search={question} resultsShown={false} />
          </MemoryRouter>
        </ApolloProvider>
      ),
      renderFunction: renderToStaticMarkup,
    });
    expect(result).toBe("");
  });
});
