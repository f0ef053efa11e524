/**
 * The Perplexity and Slack clients of the external-search subgraph, with the real `openai` and
 * `@slack/web-api` packages, against local stand-ins of the two APIs (test/support/external/):
 * what they send (auth, bodies), what they make of the answers, each failure as its kind, and
 * hostile fields cleaned. No database: these clients keep nothing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from "@jest/globals";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ExternalApiError } from "../../lib/external-apis/errors.js";
import { PerplexityClient } from "../../subgraphs/external-search/providers/perplexity.js";
import { SlackClient } from "../../subgraphs/external-search/providers/slack.js";
import { deadlineOnceReceived } from "../support/external/deadline.js";
import { PerplexityStandIn } from "../support/external/perplexity-stand-in.js";
import { SlackStandIn } from "../support/external/slack-stand-in.js";
import { useFakeClock } from "../support/fake-clock.js";

const PERPLEXITY_KEY = "pplx-test-3f9c2a";
const SLACK_TOKEN = "xoxp-1111-2222-3333-abcdef";
const FETCHED_AT = new Date("2026-01-05T10:00:00Z");
// Small caps so the oversized answers (1 MiB) are refused quickly; the recorded ones fit.
const MAX_RESPONSE_BYTES = 256 * 1024;

/** The ExternalApiError a call failed with (the test fails if it did not fail, or with another error). */
async function failureOf(call: Promise<unknown>): Promise<ExternalApiError> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!("error" in outcome)) throw new Error(`expected the call to fail, it returned ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(ExternalApiError);
  return outcome.error as ExternalApiError;
}

function callOptions(limit = 10, deadlineMs = 5_000) {
  return { signal: AbortSignal.timeout(deadlineMs), limit };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("Perplexity client (openai package) against the Perplexity stand-in", () => {
  let standIn: PerplexityStandIn;
  let client: PerplexityClient;

  beforeAll(async () => {
    standIn = await PerplexityStandIn.start();
    standIn.apiKeys.add(PERPLEXITY_KEY);
    standIn.oversizedBytes = 1024 * 1024;
    client = new PerplexityClient({ baseURL: standIn.baseURL, maxResponseBytes: MAX_RESPONSE_BYTES, now: () => FETCHED_AT });
  });
  afterEach(() => {
    standIn.fault = undefined;
    standIn.sources = "both";
    standIn.requests.length = 0;
  });
  afterAll(() => standIn.close());

  it("sends the key as a Bearer token and the query as the user's turn after a system prompt, to model sonar", async () => {
    await client.research("How does PostgreSQL rank full-text matches?", { apiKey: PERPLEXITY_KEY }, callOptions());
    expect(standIn.requests).toHaveLength(1);
    const [request] = standIn.requests;
    expect(request!.path).toBe("/chat/completions");
    expect(request!.headers.authorization).toBe(`Bearer ${PERPLEXITY_KEY}`);
    expect(request!.headers["openai-organization"]).toBeUndefined();
    expect(request!.body!.model).toBe("sonar");
    const messages = request!.body!.messages!;
    expect(messages.map((message) => message.role)).toEqual(["system", "user"]);
    expect(messages[1]!.content).toBe("How does PostgreSQL rank full-text matches?");
    expect(String(messages[0]!.content).length).toBeGreaterThan(20);
  });

  it("reads the answer, its citations (titled from search_results, numbered as the answer cites them) and the token usage", async () => {
    const answer = await client.research("postgres ranking", { apiKey: PERPLEXITY_KEY }, callOptions());
    expect(answer.answer).toMatch(/^PostgreSQL's built-in rankers, \*\*ts_rank\*\*/);
    expect(answer.answer).toContain("[3]");
    expect(answer.model).toBe("sonar");
    expect(answer.usage).toEqual({ promptTokens: 14, completionTokens: 182 });
    expect(answer.citations).toEqual([
      {
        url: "https://www.postgresql.org/docs/current/textsearch-controls.html",
        title: "PostgreSQL: Documentation: 12.3. Controlling Text Search",
        snippet: "ts_rank and ts_rank_cd rank documents by the frequency of matching lexemes and by their proximity.",
        position: 1,
        provider: "perplexity",
        fetchedAt: FETCHED_AT,
      },
      expect.objectContaining({ url: "https://en.wikipedia.org/wiki/Okapi_BM25", title: "Okapi BM25 - Wikipedia", position: 2 }),
      expect.objectContaining({ url: "https://github.com/pgvector/pgvector", position: 3 }),
    ]);
  });

  it("reads answers that carry only `citations` (titled by host) or only `search_results`", async () => {
    standIn.sources = "citations";
    const citationsOnly = await client.research("postgres ranking", { apiKey: PERPLEXITY_KEY }, callOptions());
    expect(citationsOnly.citations.map((citation) => [citation.title, citation.snippet, citation.position])).toEqual([
      ["postgresql.org", "", 1],
      ["en.wikipedia.org", "", 2],
      ["github.com", "", 3],
    ]);

    standIn.sources = "search_results";
    const resultsOnly = await client.research("postgres ranking", { apiKey: PERPLEXITY_KEY }, callOptions());
    expect(resultsOnly.citations.map((citation) => [citation.url, citation.position])).toEqual([
      ["https://www.postgresql.org/docs/current/textsearch-controls.html", 1],
      ["https://en.wikipedia.org/wiki/Okapi_BM25", 2],
      ["https://github.com/pgvector/pgvector", 3],
    ]);
    expect(resultsOnly.citations[1]!.title).toBe("Okapi BM25 - Wikipedia");
  });

  it("keeps at most `limit` citations and sends the configured model", async () => {
    const pro = new PerplexityClient({ baseURL: standIn.baseURL, model: "sonar-pro" });
    const answer = await pro.research("postgres ranking", { apiKey: PERPLEXITY_KEY }, callOptions(2));
    expect(standIn.requests[0]!.body!.model).toBe("sonar-pro");
    expect(answer.model).toBe("sonar-pro");
    expect(answer.citations.map((citation) => citation.position)).toEqual([1, 2]);
  });

  it("a refused key is UNAUTHORIZED", async () => {
    const error = await failureOf(client.research("q", { apiKey: "pplx-wrong" }, callOptions()));
    expect(error).toMatchObject({ kind: "UNAUTHORIZED", provider: "perplexity", httpStatus: 401, retryable: false });
    expect(error.message).not.toContain("pplx-wrong");
  });

  it("429 is RATE_LIMITED with the Retry-After it asked for, and the SDK does not retry it itself", async () => {
    standIn.fault = "rate-limited";
    standIn.retryAfterSeconds = 7;
    const error = await failureOf(client.research("q", { apiKey: PERPLEXITY_KEY }, callOptions()));
    expect(error).toMatchObject({ kind: "RATE_LIMITED", retryAfterMs: 7_000, httpStatus: 429, retryable: true });
    expect(standIn.requests).toHaveLength(1);
  });

  it("500 is UPSTREAM_ERROR, asked once", async () => {
    standIn.fault = "internal";
    const error = await failureOf(client.research("q", { apiKey: PERPLEXITY_KEY }, callOptions()));
    expect(error).toMatchObject({ kind: "UPSTREAM_ERROR", httpStatus: 500 });
    expect(standIn.requests).toHaveLength(1);
  });

  it("an answer that never comes is a TIMEOUT at the call's deadline", async () => {
    standIn.fault = "hang";
    const error = await failureOf(client.research("q", { apiKey: PERPLEXITY_KEY }, { signal: deadlineOnceReceived(standIn.requests), limit: 10 }));
    expect(error.kind).toBe("TIMEOUT");
  });

  it("a body that is not JSON is BAD_RESPONSE", async () => {
    standIn.fault = "malformed-json";
    const error = await failureOf(client.research("q", { apiKey: PERPLEXITY_KEY }, callOptions()));
    expect(error.kind).toBe("BAD_RESPONSE");
  });

  it("an empty answer is an empty answer, not a failure", async () => {
    standIn.fault = "empty";
    const answer = await client.research("q", { apiKey: PERPLEXITY_KEY }, callOptions());
    expect(answer).toMatchObject({ answer: "", citations: [] });
  });

  it("a body over the size limit is TOO_LARGE, cut off unread", async () => {
    standIn.fault = "oversized";
    const error = await failureOf(client.research("q", { apiKey: PERPLEXITY_KEY }, callOptions()));
    expect(error.kind).toBe("TOO_LARGE");
  });

  it("an unreachable server is UPSTREAM_ERROR", async () => {
    const nowhere = new PerplexityClient({ baseURL: `http://127.0.0.1:${await closedPort()}` });
    const error = await failureOf(nowhere.research("q", { apiKey: PERPLEXITY_KEY }, callOptions()));
    expect(error.kind).toBe("UPSTREAM_ERROR");
  });

  it("hostile fields are cleaned: no HTML or NUL in text, only http(s) citations, numbering kept", async () => {
    standIn.fault = "hostile";
    const answer = await client.research("q", { apiKey: PERPLEXITY_KEY }, callOptions());
    for (const text of [answer.answer, answer.model, ...answer.citations.flatMap((citation) => [citation.title, citation.snippet])]) {
      expect(text).not.toMatch(/[<>\u0000]/);
    }
    expect(answer.answer).toContain("PostgreSQL ranks with ts_rank [1].");
    expect(answer.citations.map((citation) => [citation.url, citation.position])).toEqual([
      ["https://en.wikipedia.org/wiki/Okapi_BM25", 2],
      ["https://github.com/pgvector/pgvector", 5],
    ]);
    expect(answer.citations[0]!.title).toContain("BM25");
  });
});

describe("Slack client (@slack/web-api) against the Slack stand-in", () => {
  let standIn: SlackStandIn;
  let client: SlackClient;

  beforeAll(async () => {
    standIn = await SlackStandIn.start();
    standIn.userTokens.add(SLACK_TOKEN);
    standIn.userTokens.add("xoxb-bot-token");
    standIn.oversizedBytes = 1024 * 1024;
    client = new SlackClient({ slackApiUrl: standIn.slackApiUrl, maxResponseBytes: MAX_RESPONSE_BYTES });
  });
  afterEach(() => {
    standIn.fault = undefined;
    standIn.requests.length = 0;
  });
  afterAll(() => standIn.close());

  it("calls search.messages form-encoded with the user token as a Bearer header (not in the body)", async () => {
    await client.searchMessages("deploy freeze", { token: SLACK_TOKEN }, callOptions(5));
    expect(standIn.requests).toHaveLength(1);
    const [request] = standIn.requests;
    expect(request!.method).toBe("POST");
    expect(request!.path).toBe("/api/search.messages");
    expect(request!.headers.authorization).toBe(`Bearer ${SLACK_TOKEN}`);
    expect(request!.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(request!.args).toEqual({ query: "deploy freeze", count: "5", sort: "score", highlight: "false" });
    expect(request!.rawBody).not.toContain("xoxp");
  });

  it("reads matches as messages: id <channel>:<ts>, channel, author, text out of Slack's markup, permalink, time", async () => {
    const messages = await client.searchMessages("deploy freeze", { token: SLACK_TOKEN }, callOptions());
    expect(messages).toEqual([
      {
        id: "C01ABCDE2FG:1735812245.001900",
        channelId: "C01ABCDE2FG",
        channelName: "eng-releases",
        author: "maria.lopez",
        text: "Deploy freeze starts Friday 18:00 UTC, see the freeze checklist & ping @U02BCDEF3GH with exceptions",
        permalink: "https://acme.slack.com/archives/C01ABCDE2FG/p1735812245001900",
        postedAt: new Date(1735812245001),
      },
      expect.objectContaining({
        id: "C03HIJKL4MN:1735725900.000400",
        channelName: "incidents",
        author: "devon",
        text: "Rolled back 4.12 before the deploy freeze; postmortem in #incidents tomorrow",
        postedAt: new Date(1735725900000),
      }),
    ]);
  });

  it("asks for `limit` matches (at most Slack's 100) and keeps no more", async () => {
    const one = await client.searchMessages("deploy freeze", { token: SLACK_TOKEN }, callOptions(1));
    expect(one).toHaveLength(1);
    await client.searchMessages("deploy freeze", { token: SLACK_TOKEN }, callOptions(500));
    expect(standIn.requests[1]!.args.count).toBe("100");
  });

  it("a refused token (ok:false invalid_auth) and a bot token (not_allowed_token_type) are UNAUTHORIZED", async () => {
    const unknown = await failureOf(client.searchMessages("q", { token: "xoxp-unknown" }, callOptions()));
    expect(unknown).toMatchObject({ kind: "UNAUTHORIZED", provider: "slack", retryable: false });
    expect(unknown.message).toContain("invalid_auth");
    expect(unknown.message).not.toContain("xoxp-unknown");
    const bot = await failureOf(client.searchMessages("q", { token: "xoxb-bot-token" }, callOptions()));
    expect(bot.kind).toBe("UNAUTHORIZED");
    expect(bot.message).toContain("not_allowed_token_type");
  });

  it("an empty query refused by Slack (ok:false invalid_arguments) is BAD_REQUEST", async () => {
    const error = await failureOf(client.searchMessages("", { token: SLACK_TOKEN }, callOptions()));
    expect(error.kind).toBe("BAD_REQUEST");
  });

  it("429 is RATE_LIMITED with Retry-After, rejected at once rather than slept through or retried", async () => {
    standIn.fault = "rate-limited";
    standIn.retryAfterSeconds = 30;
    // On Jest's fake clock, with no deadline: a client that slept on the Retry-After (or on any
    // backoff) would never settle, so settling at all is "at once", whatever the machine's load.
    useFakeClock();
    try {
      const error = await failureOf(client.searchMessages("q", { token: SLACK_TOKEN }, { signal: new AbortController().signal, limit: 10 }));
      expect(error).toMatchObject({ kind: "RATE_LIMITED", retryAfterMs: 30_000, retryable: true });
      expect(standIn.requests).toHaveLength(1);
    } finally {
      jest.useRealTimers();
    }
  });

  it("429 without a readable Retry-After is still RATE_LIMITED (the client reports it as a plain Error)", async () => {
    standIn.fault = "rate-limited";
    standIn.retryAfterSeconds = null;
    try {
      const error = await failureOf(client.searchMessages("q", { token: SLACK_TOKEN }, callOptions()));
      expect(error).toMatchObject({ kind: "RATE_LIMITED", httpStatus: 429, retryAfterMs: undefined });
    } finally {
      standIn.retryAfterSeconds = 30;
    }
  });

  it("500 is UPSTREAM_ERROR, asked once", async () => {
    standIn.fault = "internal";
    const error = await failureOf(client.searchMessages("q", { token: SLACK_TOKEN }, callOptions()));
    expect(error).toMatchObject({ kind: "UPSTREAM_ERROR", httpStatus: 500 });
    expect(standIn.requests).toHaveLength(1);
  });

  it("an answer that never comes is a TIMEOUT at the call's deadline", async () => {
    standIn.fault = "hang";
    const error = await failureOf(client.searchMessages("q", { token: SLACK_TOKEN }, { signal: deadlineOnceReceived(standIn.requests), limit: 10 }));
    expect(error.kind).toBe("TIMEOUT");
  });

  it("a body that is not JSON is BAD_RESPONSE", async () => {
    standIn.fault = "malformed-json";
    const error = await failureOf(client.searchMessages("q", { token: SLACK_TOKEN }, callOptions()));
    expect(error.kind).toBe("BAD_RESPONSE");
  });

  it("no matches is an empty list", async () => {
    standIn.fault = "empty";
    expect(await client.searchMessages("q", { token: SLACK_TOKEN }, callOptions())).toEqual([]);
  });

  it("a body over the size limit is TOO_LARGE, cut off unread", async () => {
    standIn.fault = "oversized";
    const error = await failureOf(client.searchMessages("q", { token: SLACK_TOKEN }, callOptions()));
    expect(error.kind).toBe("TOO_LARGE");
  });

  it("an unreachable server is UPSTREAM_ERROR", async () => {
    const nowhere = new SlackClient({ slackApiUrl: `http://127.0.0.1:${await closedPort()}/api/` });
    const error = await failureOf(nowhere.searchMessages("q", { token: SLACK_TOKEN }, callOptions()));
    expect(error.kind).toBe("UPSTREAM_ERROR");
  });

  it("hostile fields are cleaned: no HTML or NUL, a javascript: permalink dropped, unlinkable matches left out", async () => {
    standIn.fault = "hostile";
    const messages = await client.searchMessages("q", { token: SLACK_TOKEN }, callOptions());
    expect(messages.map((message) => message.id)).toEqual(["C01ABCDE2FG:1735812245.001900", "C03HIJKL4MN:1735725900.000400"]);
    const [first] = messages;
    for (const text of [first!.text, first!.author, first!.channelName]) {
      expect(text).not.toMatch(/[<>\u0000]/);
    }
    expect(first!.text).toContain("Freeze starts Friday");
    expect(first!.channelName).toContain("eng-releases");
    expect(first!.permalink).toBeNull();
    expect(messages[1]!.permalink).toBe("https://acme.slack.com/archives/C03HIJKL4MN/p1735725900000400");
  });
});
