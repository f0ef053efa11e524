/**
 * `SearchHit.highlights` through the gateway, on a real database and the real stack, with web
 * search and Slack as local stand-ins: matched words are the query's terms under PostgreSQL's
 * English stemming and slice out of the passage exactly (UTF-16 offsets), conversations give
 * their best messages with id and role, documents their chunks, web results and Slack messages
 * their snippets; a page costs one highlights statement per domain on it, however many hits.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { RunningStack } from "../../app/stack.js";
import type { TestDatabase } from "../support/database.js";
import { uploadReadyDocument } from "../support/documents.js";
import { SerperStandIn } from "../support/external/serper-stand-in.js";
import { SlackStandIn } from "../support/external/slack-stand-in.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { startTestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

const SLACK_TOKEN = "xoxp-1234567890-highlights-token";

let db: TestDatabase;
let stack: RunningStack;
let serper: SerperStandIn;
let slack: SlackStandIn;
let ada: string;
let otto: string;
let explainerId: string;
const messageIds: Record<string, string> = {};

interface Highlight {
  text: string;
  matches: { start: number; end: number }[];
  truncatedBefore: boolean;
  truncatedAfter: boolean;
  messageId: string | null;
  role: string | null;
}
interface Hit {
  item: { __typename: string; id: string } | null;
  highlights: Highlight[] | null;
}

const SEARCH = `query($input: SearchInput!, $limit: Int) {
  search(input: $input) {
    hits {
      item { __typename ... on Conversation { id } ... on DocumentChunk { id } ... on WebResult { id } ... on SlackMessage { id } }
      highlights(limit: $limit) { text matches { start end } truncatedBefore truncatedAfter messageId role }
    }
    providers { name status error }
    cached
  }
}`;

const gql = (token: string, query: string, variables: Record<string, unknown> = {}) => graphql(stack.gateway.url, query, variables, { token });

async function search(token: string, input: Record<string, unknown>, limit?: number): Promise<{ hits: Hit[]; cached: boolean }> {
  const response = await gql(token, SEARCH, { input, ...(limit === undefined ? {} : { limit }) });
  expect(response.errors).toBeUndefined();
  return response.data!.search;
}

const matchedWords = (highlight: Highlight) => highlight.matches.map((range) => highlight.text.slice(range.start, range.end));
// Every highlights statement analyzes the query (queryTermsSql); a page's passages read by the
// database's parser (the fallback of english-analyzer.ts) show as ts_parse.
const highlightStatements = () => db.database.statements.log.filter((sql) => sql.includes("query_terms AS MATERIALIZED"));
const parsingStatements = () => db.database.statements.log.filter((sql) => sql.includes("ts_parse('default'"));

async function createConversation(token: string, title: string, messages: { role: string; content: string }[]): Promise<{ id: string; messages: { id: string }[] }> {
  const response = await gql(token, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id messages { nodes { id } } } }`, { input: { title, messages } });
  expect(response.errors).toBeUndefined();
  const created = response.data!.createConversation;
  return { id: created.id, messages: created.messages.nodes };
}

beforeAll(async () => {
  [serper, slack] = await Promise.all([SerperStandIn.start(), SlackStandIn.start()]);
  slack.userTokens.add(SLACK_TOKEN);
  ({ db, stack } = await startTestStack({
    SEARCH_CACHE_TTL_SECONDS: "60", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0",
    SECRETS_ENCRYPTION_KEYS: `test-key:${randomBytes(32).toString("base64")}`,
    SERPER_API_KEY: serper.apiKey, SERPER_BASE_URL: serper.baseUrl,
    SLACK_API_URL: slack.slackApiUrl,
    // Generous: on a busy machine PGlite's one connection queues every write and search, and a
    // gateway that gave up on a subgraph would fail the setup, not what this file tests.
    SEARCH_PROVIDER_TIMEOUT_MS: "30000", UPSTREAM_TIMEOUT_MS: "120000",
  }));
  ada = await tokenFor("org-highlights", "ada", ["sre"], "admin");
  otto = await tokenFor("org-elsewhere", "otto", ["sre"], "admin");
  const explainer = await createConversation(ada, "Nightly job failures", [
    { role: "USER", content: "Why did the nightly billing job fail again?" },
    { role: "ASSISTANT", content: "It deadlocked: two transactions took row locks on the orders table in opposite order, and PostgreSQL killed one to break the deadlock." },
    { role: "USER", content: "How do we stop these deadlocks from coming back?" },
    { role: "TOOL", content: "billing: 2 retries scheduled" },
  ]);
  explainerId = explainer.id;
  const [question, answer, followUp] = explainer.messages.map((message) => message.id);
  Object.assign(messageIds, { question, answer, followUp });
  // Text of every kind: emoji and a ZWJ sequence, astral letters, combining marks, a tab, markup-like text.
  await createConversation(ada, "Unicode notes", [
    { role: "USER", content: "👩‍💻 saw 𝔘𝔫𝔦 and cafe\u0301 logs:\t<b>deadlocked</b> 🔒 deadlock, then deadlocks & \"deadlocking\"" },
  ]);
  // A few at a time: PGlite runs one statement at a time, and a busy machine must not time out the gateway.
  for (let start = 0; start < 22; start += 4) {
    await Promise.all(Array.from({ length: Math.min(4, 22 - start) }, (_, offset) => createConversation(ada, `Incident ${start + offset}`, [{ role: "USER", content: `Worker ${start + offset} reported a deadlock on queue ${start + offset}.` }])));
  }
  await createConversation(otto, "Another organization's deadlock", [{ role: "USER", content: "Our secret deadlock postmortem for otto only." }]);

  await uploadReadyDocument(stack.gateway.url, ada, "locking.md", "# Locking guide\n\nDeadlocks happen when two sessions wait on each other's locks. Take locks in one order and keep transactions short.\n");
  const stored = await gql(ada, `mutation($input: ExternalProviderCredentialsInput!) { setExternalProviderCredentials(input: $input) { configured } }`, { input: { provider: "SLACK", token: SLACK_TOKEN } });
  expect(stored.errors).toBeUndefined();
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
  await Promise.all([serper?.close(), slack?.close()]);
});

describe("highlights through the gateway", () => {
  it("marks the query's terms under English stemming, as slices of the passage", async () => {
    const { hits } = await search(ada, { query: "deadlocks", limit: 20, providers: ["conversations.keyword", "documents.keyword"] });
    expect(hits.length).toBeGreaterThan(10);
    for (const hit of hits) {
      expect(hit.highlights!.length).toBeGreaterThan(0);
      for (const highlight of hit.highlights!) {
        expect(highlight.matches.length).toBeGreaterThan(0);
        for (const word of matchedWords(highlight)) expect(word).toMatch(/^deadlock(s|ed|ing)?$/i);
      }
    }
    const explainer = hits.find((hit) => hit.item?.id === explainerId)!;
    // Its two matching messages, best first (the answer has two matches), with id and role; the others did not match.
    expect(explainer.highlights!.map((highlight) => [highlight.messageId, highlight.role, matchedWords(highlight)])).toEqual([
      [messageIds.answer, "ASSISTANT", ["deadlocked", "deadlock"]],
      [messageIds.followUp, "USER", ["deadlocks"]],
    ]);
    const chunk = hits.find((hit) => hit.item?.__typename === "DocumentChunk")!;
    expect(chunk.highlights).toHaveLength(1);
    expect(chunk.highlights![0]).toMatchObject({ messageId: null, role: null });
    expect(matchedWords(chunk.highlights![0]!)).toEqual(["Deadlocks"]);
    // Nothing of the other organization: its conversation is no hit, and no passage quotes it.
    expect(JSON.stringify(hits)).not.toContain("otto");
  });

  it("keeps UTF-16 ranges right around emoji, astral letters, combining marks, tabs and markup-like text", async () => {
    const { hits } = await search(ada, { query: "deadlock", limit: 30, providers: ["conversations.keyword"] });
    const unicode = hits.flatMap((hit) => hit.highlights ?? []).find((highlight) => highlight.text.includes("👩‍💻"))!;
    expect(unicode.text).toBe("👩‍💻 saw 𝔘𝔫𝔦 and cafe\u0301 logs: <b>deadlocked</b> 🔒 deadlock, then deadlocks & \"deadlocking\"");
    expect(matchedWords(unicode)).toEqual(["deadlocked", "deadlock", "deadlocks", "deadlocking"]);
    expect(unicode.matches[0]!.start).toBe(unicode.text.indexOf("deadlocked"));
  });

  it("bounds passages per hit by the limit argument and refuses a limit out of range", async () => {
    const one = await search(ada, { query: "deadlocks", limit: 20, providers: ["conversations.keyword"] }, 1);
    const explainer = one.hits.find((hit) => hit.item?.id === explainerId)!;
    expect(explainer.highlights!.map((highlight) => highlight.messageId)).toEqual([messageIds.answer]);
    for (const limit of [0, 11]) {
      const response = await gql(ada, SEARCH, { input: { query: "deadlocks", limit: 2, providers: ["conversations.keyword"] }, limit });
      expect(errorCodes(response)).toContain("BAD_USER_INPUT");
      expect(response.errors![0]!.message).toContain("limit");
      expect(response.errors![0]!.message).toContain("between 1 and 10");
    }
  });

  it("issues one highlights statement per domain on the page, however many hits it holds", async () => {
    db.database.statements.reset();
    const small = await search(ada, { query: "deadlock worker queue", limit: 3, providers: ["conversations.keyword"] });
    expect(small.hits).toHaveLength(3);
    expect(highlightStatements()).toHaveLength(1);
    db.database.statements.reset();
    const page = await search(ada, { query: "deadlock worker queue", limit: 20, providers: ["conversations.keyword"] });
    expect(page.hits).toHaveLength(20);
    expect(page.hits.every((hit) => hit.highlights!.length > 0)).toBe(true);
    expect(highlightStatements()).toHaveLength(1);
    // Conversations' passages were read in JavaScript: nothing was parsed by the database.
    expect(parsingStatements()).toHaveLength(0);
    // Conversations and a document chunk on one page: one statement each.
    db.database.statements.reset();
    const mixed = await search(ada, { query: "deadlocks locks", limit: 20, providers: ["conversations.keyword", "documents.keyword"] });
    expect(new Set(mixed.hits.map((hit) => hit.item!.__typename))).toEqual(new Set(["Conversation", "DocumentChunk"]));
    expect(highlightStatements()).toHaveLength(2);
  });

  it("asks the database for the words of a passage JavaScript reads differently (an e-mail address among the query's terms)", async () => {
    const mail = await createConversation(ada, "Mail routing", [
      { role: "USER", content: "Write to ops@example.com about the deadlock, not to example.org." },
      { role: "ASSISTANT", content: "The deadlock report went out." },
    ]);
    db.database.statements.reset();
    const { hits } = await search(ada, { query: "ops@example.com deadlock", limit: 30, providers: ["conversations.keyword"] });
    const hit = hits.find((candidate) => candidate.item?.id === mail.id)!;
    // PostgreSQL reads the address as one token: it is marked whole, and "example" in "example.org" is no match.
    expect(hit.highlights!.map(matchedWords)).toEqual([["ops@example.com", "deadlock"], ["deadlock"]]);
    // The page's statement, and one more for the passage the database had to read.
    expect(highlightStatements()).toHaveLength(2);
    expect(parsingStatements()).toHaveLength(1);
  });

  it("computes highlights for a page served from the result cache too", async () => {
    const input = { query: "deadlocked transactions", limit: 5, providers: ["conversations.keyword"] };
    const fresh = await search(ada, input);
    const cached = await search(ada, input);
    expect(fresh.cached).toBe(false);
    expect(cached.cached).toBe(true);
    expect(cached.hits).toEqual(fresh.hits);
    expect(cached.hits[0]!.highlights!.length).toBeGreaterThan(0);
  });

  it("keeps a cached page's corrections, and marks the correction in its highlights as on the fresh page", async () => {
    const query = `query($input: SearchInput!) { search(input: $input) { cached suggestion corrections { word searchedAs } hits { item { ... on Conversation { id } } highlights { text matches { start end } } } } }`;
    const input = { query: "deadlokced transactions", limit: 5, alpha: 1, providers: ["conversations.keyword"] };
    const run = async () => {
      const response = await gql(ada, query, { input });
      expect(response.errors).toBeUndefined();
      return response.data!.search;
    };
    const fresh = await run();
    const cached = await run();
    expect([fresh.cached, cached.cached]).toEqual([false, true]);
    expect(fresh.corrections).toHaveLength(1);
    expect(fresh.corrections[0].word).toBe("deadlokced");
    expect(fresh.corrections[0].searchedAs.length).toBeGreaterThan(0);
    const { cached: _fresh, ...freshPage } = fresh;
    const { cached: _cached, ...cachedPage } = cached;
    expect(cachedPage).toEqual(freshPage);
    // The correction's forms are marked, not only "transactions".
    const marked = fresh.hits.flatMap((hit: Hit) => hit.highlights!.flatMap(matchedWords)).map((word: string) => word.toLowerCase());
    expect(marked.some((word: string) => word.startsWith("deadlock"))).toBe(true);
  });

  it("gives a hit found by meaning only one passage without ranges", async () => {
    const { hits } = await search(ada, { query: "zyzzyva", alpha: 0, limit: 5, providers: ["conversations.semantic"] });
    expect(hits.length).toBeGreaterThan(0);
    for (const hit of hits) {
      expect(hit.highlights).toHaveLength(1);
      expect(hit.highlights![0]!.matches).toEqual([]);
      expect(hit.highlights![0]!.messageId).not.toBeNull();
    }
    const explainer = hits.find((hit) => hit.item?.id === explainerId);
    if (explainer) expect(explainer.highlights![0]!.messageId).toBe(messageIds.question);
  });

  it("highlights web results and Slack messages from their stored snippets", async () => {
    const web = await search(ada, { query: "descale espresso", limit: 10, providers: ["web.serper"] });
    expect(web.hits.length).toBeGreaterThan(0);
    const words = web.hits.flatMap((hit) => (hit.highlights ?? []).flatMap(matchedWords));
    expect(words.length).toBeGreaterThan(0);
    for (const word of words) expect(word).toMatch(/^(descal(e|es|ed|ing|er|ers)?|espresso)$/i);
    expect(words.some((word) => /^descaling$/i.test(word))).toBe(true);

    const messages = await search(ada, { query: "deploy freeze", limit: 10, providers: ["slack.messages"] });
    expect(messages.hits.length).toBeGreaterThan(0);
    const first = messages.hits[0]!;
    expect(first.item!.__typename).toBe("SlackMessage");
    expect(matchedWords(first.highlights![0]!).map((word) => word.toLowerCase())).toEqual(expect.arrayContaining(["deploy", "freeze"]));
  });
});

describe("Markdown in the highlighted text", () => {
  // Every construct that showed as raw markup in snippets: headings, emphasis, code spans and
  // fences, links, tables, lists, strikethrough, then enough prose to be cut to a window.
  const markdown = [
    "## Kestrel **rollout** checklist",
    "",
    "Before the kestrel rollout, check the `kestrel_timeout` setting and read [the runbook](https://wiki.example/kestrel-runbook).",
    "",
    "| Service | Kestrel p99 | Owner |",
    "| --- | ---: | --- |",
    "| api | 340 ms | *ada* |",
    "",
    "```sql",
    "SELECT count(*) FROM kestrel_rollouts; -- kestrel",
    "```",
    "",
    "- first, drain the **kestrel** queue",
    "- then ~~skip~~ nothing",
    "",
    ...Array.from({ length: 4 }, (_, index) => `Paragraph ${index} says nothing about birds and keeps the message long enough to be cut into a window of three hundred characters.`),
    "",
    "> In the end the kestrel __rollout__ went fine.",
  ].join("\n");
  const MARKUP = /\||```|~~|\*\*|__|^#+ |^\s*[-*+] |\]\(|`/m;

  const checkPlain = (highlight: Highlight) => {
    expect(highlight.text).not.toMatch(MARKUP);
    expect(highlight.text).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    expect(highlight.text.length).toBeLessThanOrEqual(300);
    expect(highlight.text).toBe(highlight.text.trim());
    expect(highlight.matches.length).toBeGreaterThan(0);
    for (const word of matchedWords(highlight)) expect(word).toMatch(/^kestrel$/i);
    // Cut on words: an edge of a cut passage is never inside a word.
    if (highlight.truncatedBefore) expect(highlight.text).toMatch(/^[\p{L}\p{N}]/u);
  };

  it("gives a conversation's Markdown message as plain text, the ranges on the matched words", async () => {
    const conversation = await createConversation(ada, "Kestrel rollout", [
      { role: "USER", content: "What is left before the kestrel rollout?" },
      { role: "TOOL", content: JSON.stringify({ tool: "search_docs", query: "kestrel rollout", results: [{ title: "Kestrel \"runbook\"", url: "https://wiki.example/kestrel" }] }, null, 2) },
      { role: "ASSISTANT", content: markdown },
    ]);
    const { hits } = await search(ada, { query: "kestrel", limit: 5, providers: ["conversations.keyword"] }, 3);
    const hit = hits.find((candidate) => candidate.item?.id === conversation.id)!;
    const answer = hit.highlights!.find((highlight) => highlight.messageId === conversation.messages[2]!.id)!;
    expect(answer.role).toBe("ASSISTANT");
    checkPlain(answer);
    // The densest window is the top of the message: its blocks, one a line, the table's cells without pipes.
    expect(answer.truncatedBefore).toBe(false);
    expect(answer.truncatedAfter).toBe(true);
    expect(answer.text.split("\n").slice(0, 4)).toEqual([
      "Kestrel rollout checklist",
      "Before the kestrel rollout, check the kestrel_timeout setting and read the runbook.",
      "Service · Kestrel p99 · Owner",
      "api · 340 ms · ada",
    ]);
    expect(answer.text).not.toContain("wiki.example");
    // The tool's JSON reads as `key: value` lines.
    const tool = hit.highlights!.find((highlight) => highlight.role === "TOOL")!;
    expect(tool.text).toBe('tool: search_docs\nquery: kestrel rollout\ntitle: Kestrel "runbook"\nurl: https://wiki.example/kestrel');
    expect(matchedWords(tool).slice(0, 2)).toEqual(["kestrel", "Kestrel"]);
    expect(matchedWords(answer).length).toBeGreaterThanOrEqual(4);
  });

  it("does the same for a Markdown document's chunks", async () => {
    await uploadReadyDocument(stack.gateway.url, ada, "kestrel.md", `# Kestrel handbook\n\n${markdown}\n`);
    const { hits } = await search(ada, { query: "kestrel", limit: 10, providers: ["documents.keyword"] }, 3);
    const passages = hits.flatMap((hit) => (hit.item?.__typename === "DocumentChunk" ? (hit.highlights ?? []) : []));
    expect(passages.length).toBeGreaterThan(0);
    for (const passage of passages) checkPlain(passage);
  });

  it("writes an extractive answer from those passages that quotes no pipes, fences or emphasis markers", async () => {
    const response = await gql(ada, `query($input: AnswerInput!) { answer(input: $input) { status mode text passages { text } } }`, {
      input: { question: "Who owns the kestrel rollout and what is its p99?", providers: ["conversations.keyword", "documents.keyword"] },
    });
    expect(response.errors).toBeUndefined();
    const answer = response.data!.answer;
    expect(answer).toMatchObject({ status: "ANSWERED", mode: "EXTRACTIVE" });
    expect(answer.text).toMatch(/kestrel/i);
    expect(answer.text).not.toMatch(MARKUP);
    expect(answer.passages.length).toBeGreaterThan(0);
    for (const passage of answer.passages) expect(passage.text).not.toMatch(MARKUP);
  });
});
