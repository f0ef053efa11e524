/**
 * Property-based hostile input (fast-check) over every argument a client controls, through the
 * real gateway (Rust planner) and, for a few, against a subgraph directly: search input, titles
 * and message contents, ids and `_entities` representations, both connections' cursors, and raw
 * variables of the wrong shape. The generated text mixes random Unicode (astral characters
 * included), NUL and other control characters, lone surrogates (sent as `\ud800` escapes in a
 * body this file writes itself), tsquery operators and SQL fragments; a few runs carry 1 MB.
 *
 * The property: every response is a normal answer or a GraphQL error whose `extensions.code` is
 * one a client can act on, never INTERNAL_SERVER_ERROR, never HTTP 5xx, never a stack or SQL in a
 * message; nothing of organization A ever shows up in organization B's answers; and afterwards the
 * stack still answers a normal query and A's conversations are as A left them.
 *
 * Runs are few and seeded (fast-check prints the seed and the shrunk counterexample on failure),
 * so the file takes about a minute on a loaded 2-core machine. Rate limits and both caches are off:
 * every generated request must reach the code under test.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { loadConfig } from "../../lib/config.js";
import { encodeCursor } from "../../lib/graphql/pagination.js";
import { startStack, type RunningStack } from "../../app/stack.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { postRaw, type RawResponse } from "../support/graphql.js";
import { recordingLogger } from "../support/recording-logger.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

/** Fixed, so a failure reproduces; fast-check names it (and the shrunk path) in the failure message. */
const SEED = 20_260_801;

/** Codes a client can act on. Anything else (INTERNAL_SERVER_ERROR above all) is a defect. */
const KNOWN_CODES = new Set([
  "BAD_USER_INPUT",
  "UNAUTHENTICATED",
  "NOT_FOUND",
  "FORBIDDEN",
  "OPERATION_LIMIT_EXCEEDED",
  "RATE_LIMITED",
  "GRAPHQL_PARSE_FAILED",
  "GRAPHQL_VALIDATION_FAILED",
  "BAD_REQUEST",
  "OVERLOADED",
]);

/**
 * What a leaked internal error looks like: a stack frame, a file of ours, Prisma's or PostgreSQL's
 * own wording. None of these words occur in the generated input, so an echo of the input cannot match.
 */
const LEAK = /\n\s+at \S|node_modules|\.(?:ts|js|mjs):\d+|prisma|\$queryRaw|syntax error at|violates|invalid byte sequence|unterminated|ERROR: |relation "|column "|pg_|Unexpected error/i;

/** Organization A holds the secret; organization B is the attacker. */
const SECRET = "zebracornium";
const A = { organizationId: "org-props-a", userId: "alice" };
const B = { organizationId: "org-props-b", userId: "bob" };

let db: TestDatabase;
let stack: RunningStack;
let tokenA: string;
let tokenB: string;
const aIds: string[] = [];
let bOwnId: string;
let conversationCursor: string;
let messageCursor: string;
let searchCursor: string;
const logger = recordingLogger();
/** The error-level lines (an internal error is logged with its stack), to report them. */
const errorLines = () => logger.lines.filter((line) => line.startsWith("error"));
let requests = 0;

const gatewayUrl = () => stack.gateway.url;
const subgraphUrl = (name: string) => stack.subgraphs.find((subgraph) => subgraph.name === name)!.url;

type Answer = RawResponse;

/** Every request of the run goes through here, counted. */
function post(url: string, body: string | Record<string, unknown>, token: string | null = tokenB): Promise<Answer> {
  requests += 1;
  return postRaw(url, body, { token, accept: "application/graphql-response+json, application/json" });
}

/**
 * The property every response must have. Throws (so fast-check shrinks and reports) with what
 * was sent and what came back.
 */
function expectWellBehaved(answer: Answer, sent: unknown, asAttacker = true): void {
  const fail = (why: string) => {
    const request = typeof sent === "string" ? sent : JSON.stringify(sent);
    throw new Error(`${why}\n  sent: ${request.slice(0, 600)}\n  got HTTP ${answer.status}: ${answer.text.slice(0, 1_200)}`);
  };
  if (answer.status >= 500) fail("HTTP 5xx");
  if (!answer.body || typeof answer.body !== "object") fail("the body is not a JSON object");
  const { data, errors } = answer.body!;
  if (errors === undefined) {
    if (answer.status !== 200) fail("a non-200 answer without errors");
    if (data === undefined || data === null) fail("neither data nor errors");
  } else {
    if (!Array.isArray(errors) || errors.length === 0) fail("errors is not a non-empty list");
    for (const error of errors) {
      const code = error.extensions?.code;
      if (typeof code !== "string" || !KNOWN_CODES.has(code)) fail(`an error with code ${String(code)}`);
      if (typeof error.message !== "string" || LEAK.test(error.message)) fail("an error message with a stack, a file or SQL in it");
      if (error.extensions && ("stacktrace" in error.extensions || "exception" in error.extensions)) fail("a stack trace in extensions");
    }
  }
  if (!asAttacker) return;
  // Organization B must never see A's text or A's conversations in what it gets back.
  const echoed = (typeof sent === "string" ? sent : JSON.stringify(sent)).includes(SECRET);
  if (!echoed && answer.text.includes(SECRET)) fail("organization A's text in organization B's answer");
  const dataText = JSON.stringify(data ?? null);
  for (const id of aIds) if (dataText.includes(id)) fail("organization A's conversation id in organization B's data");
}

/** How each property's requests ended ("data" or an error code), printed at the end: proof the deep paths were reached. */
const outcomes = new Map<string, Map<string, number>>();

function tally(answer: Answer): void {
  const property = expect.getState().currentTestName ?? "setup";
  const outcome = answer.body?.errors?.[0]?.extensions?.code ?? (answer.body?.data ? "data" : "none");
  const counts = outcomes.get(property) ?? new Map<string, number>();
  counts.set(String(outcome), (counts.get(String(outcome)) ?? 0) + 1);
  outcomes.set(property, counts);
}

/** Share of a property's requests that got a normal answer. */
function answeredShare(property: string): number {
  const counts = [...(outcomes.get(property)?.entries() ?? [])];
  const total = counts.reduce((sum, [, count]) => sum + count, 0);
  return (counts.find(([outcome]) => outcome === "data")?.[1] ?? 0) / Math.max(total, 1);
}

async function call(url: string, query: string, variables: Record<string, unknown>, token: string | null = tokenB): Promise<Answer> {
  const sent = { query, variables };
  const answer = await post(url, sent, token);
  expectWellBehaved(answer, sent, token !== tokenA);
  tally(answer);
  return answer;
}

// ---------------------------------------------------------------------------------------------
// Arbitraries

const char = (min: number, max: number) => fc.integer({ min, max }).map((code) => String.fromCharCode(code));
const controlCharacter = fc.oneof(char(0, 0x1f), char(0x7f, 0x9f), fc.constant("\u0000"));
const loneSurrogate = char(0xd800, 0xdfff);
const astral = fc.integer({ min: 0x10000, max: 0x10ffff }).map((code) => String.fromCodePoint(code));
const oddCharacter = fc.constantFrom("\ufeff", "\u2028", "\u2029", "\ufffe", "\uffff", "\u202e", "\u0301", "\u200b", "🦓", "👩‍👩‍👧", "\\", '"', "'", "`");
const tsqueryOperator = fc.constantFrom("&", "|", "!", "<->", "<2>", ":*", ":A", ":ab*", "(", ")", "!!", "&&", "||", "'", "''", "' & '", "\\:", "*:", "<0>", "<-1>", "<99999>");
const sqlFragment = fc.constantFrom(
  "'; DROP TABLE conversations; --",
  "' OR '1'='1",
  "\" OR 1=1 --",
  "1; SELECT 1",
  "$1",
  "$$",
  "$tag$",
  "/*",
  "*/",
  "--",
  "::text",
  "::regclass",
  "%",
  "_",
  "\\x00",
  "E'\\\\x00'",
  "NULL",
  "\\",
  "' UNION SELECT id, title FROM conversations --",
  "SET ROLE postgres",
  "current_setting('app.organization_id')",
);
const word = fc.constantFrom("deadlock", "order", "service", "lisbon", "the", "a", "hostile", "probe");

/** Text an attacker would send: short runs of every kind above, in any order. */
const hostileText = fc
  .array(fc.oneof(fc.string({ unit: "binary", maxLength: 12 }), controlCharacter, loneSurrogate, astral, oddCharacter, tsqueryOperator, sqlFragment, word, fc.constant(" ")), {
    maxLength: 14,
  })
  .map((pieces) => pieces.join(""));

const anyNumber = fc.oneof(
  fc.integer(),
  fc.integer({ min: -3, max: 1_000 }),
  fc.double(),
  fc.constantFrom(0, -0, 1e308, -1e308, Number.MAX_SAFE_INTEGER, 2 ** 31, -(2 ** 31) - 1, 5e-324, 0.5, 1),
);

/** A cursor: hostile text, a real one altered, or a well-formed one of any kind with any parts. */
function cursorArbitrary(real: () => string) {
  return fc.oneof(
    hostileText,
    fc.tuple(fc.nat(), fc.constantFrom("A", "_", "-", "=", "\u0000", "é")).map(([at, replacement]) => {
      const cursor = real();
      const index = at % Math.max(cursor.length, 1);
      return cursor.slice(0, index) + replacement + cursor.slice(index + 1);
    }),
    fc.tuple(fc.constantFrom("c", "m", "s", "x", ""), fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 4 })).map(([kind, parts]) => encodeCursor(kind, parts)),
    fc.jsonValue({ maxDepth: 3 }).map((value) => Buffer.from(JSON.stringify(value) ?? "null").toString("base64url")),
    fc.constant("A".repeat(100_000)),
  );
}

/** Mostly a value the API accepts, sometimes anything: a search must get past validation often enough to reach the providers. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, hostile: fc.Arbitrary<U>) => fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: hostile, weight: 1 });
const providerName = fc.oneof(fc.constantFrom("conversations.keyword", "conversations.semantic"), hostileText);

const searchInput = fc.record(
  {
    query: fc.oneof(hostileText, fc.constant(SECRET), fc.constant(`${SECRET}:*`), fc.constant(`!${SECRET}`)),
    alpha: mostly(fc.double({ min: 0, max: 1, noNaN: true }), anyNumber),
    limit: mostly(fc.integer({ min: 1, max: 100 }), anyNumber),
    providers: mostly(fc.constant(undefined), fc.array(providerName, { maxLength: 4 })),
    weights: mostly(fc.constant(undefined), fc.array(fc.record({ provider: providerName, weight: mostly(fc.double({ min: 0, max: 10, noNaN: true }), anyNumber) }), { maxLength: 3 })),
    rrfK: mostly(fc.integer({ min: 1, max: 1_000 }), anyNumber),
    minScore: mostly(fc.constant(undefined), anyNumber),
    after: mostly(fc.constant(undefined), cursorArbitrary(() => searchCursor)),
  },
  { requiredKeys: ["query"] },
);

const messageInput = fc.record(
  {
    role: mostly(fc.constantFrom("USER", "ASSISTANT", "SYSTEM", "TOOL"), hostileText),
    content: hostileText,
    tokenCount: mostly(fc.constant(undefined), anyNumber),
  },
  { requiredKeys: ["role", "content"] },
);

/** An id: hostile text, a random UUID, a UUID of organization A's (or B's own), in any case. */
const idArbitrary = fc.oneof(
  hostileText,
  fc.uuid(),
  fc.nat().map((index) => aIds[index % aIds.length]!),
  fc.nat().map((index) => aIds[index % aIds.length]!.toUpperCase()),
  fc.nat().map((index) => ` ${aIds[index % aIds.length]!}`),
  fc.nat().map((index) => `${aIds[index % aIds.length]!}\u0000`),
);

const fcOptions = (numRuns: number) => ({ numRuns, seed: SEED });

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  db = await createTestDatabase();
  const config = loadConfig({
    GATEWAY_PORT: "0",
    CONVERSATIONS_PORT: "0",
    SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0",
    EMBEDDER: "hashing",
    SEARCH_INDEXER: "false",
    QUERY_PLANNER: "rust",
    SEARCH_CACHE_TTL_SECONDS: "0",
    GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0",
    RATE_LIMIT_ORGANIZATION_POINTS: "0",
    RATE_LIMIT_USER_POINTS: "0",
    RATE_LIMIT_ANONYMOUS_POINTS: "0",
  });
  stack = await startStack({ config: { ...config, auth: { ...TEST_AUTH, usingDevSecret: false } }, database: db.database, logger, gateway: { runtimeLogLevel: false } });
  tokenA = await tokenFor(A.organizationId, A.userId);
  tokenB = await tokenFor(B.organizationId, B.userId);
  const create = `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`;
  for (let i = 0; i < 3; i++) {
    const created = await call(gatewayUrl(), create, { input: { title: `${SECRET} plan ${i}`, messages: [{ role: "USER", content: `the ${SECRET} deadlock in the order service ${i}` }, { role: "ASSISTANT", content: `${SECRET} answer` }] } }, tokenA);
    aIds.push(created.body!.data!.createConversation.id);
  }
  for (let i = 0; i < 3; i++) {
    const created = await call(gatewayUrl(), create, { input: { title: `hostile probe ${i}`, messages: [{ role: "USER", content: "probe deadlock order service" }, { role: "USER", content: "second message" }] } }, tokenB);
    bOwnId = created.body!.data!.createConversation.id;
  }
  // Real cursors of each kind, for the properties to alter.
  const page = await call(gatewayUrl(), `{ conversations(first: 1) { pageInfo { endCursor } nodes { messages(first: 1) { pageInfo { endCursor } } } } }`, {});
  conversationCursor = page.body!.data!.conversations.pageInfo.endCursor;
  messageCursor = page.body!.data!.conversations.nodes[0].messages.pageInfo.endCursor;
  const searched = await call(gatewayUrl(), `{ search(input: { query: "probe", limit: 1, alpha: 1 }) { pageInfo { endCursor } } }`, {});
  searchCursor = searched.body!.data!.search.pageInfo.endCursor ?? encodeCursor("s", ["x", 1, [[2, 0]]]);
}, 120_000);

afterAll(async () => {
  const lines = [...outcomes].map(([property, counts]) => `  ${property}: ${[...counts].map(([outcome, count]) => `${outcome} ${count}`).join(", ")}`);
  process.stderr.write(`hostile-input properties, ${requests} requests (seed ${SEED}):\n${lines.join("\n")}\n`);
  await stack?.stop();
  await db?.dispose();
});

const SEARCH = `query($input: SearchInput!) { search(input: $input) { hits { score item { ... on Conversation { id title } } } providers { name status error } pageInfo { hasNextPage endCursor } } }`;

describe("hostile input through the gateway", () => {
  it("search: every input field at once", async () => {
    await fc.assert(
      fc.asyncProperty(searchInput, async (input) => {
        await call(gatewayUrl(), SEARCH, { input });
      }),
      fcOptions(250),
    );
    // Most inputs must get past validation to the providers, or the property tested little.
    expect(answeredShare(expect.getState().currentTestName!)).toBeGreaterThan(0.3);
  }, 180_000);

  it("search: the query text alone, with every other field at its default", async () => {
    await fc.assert(
      fc.asyncProperty(hostileText, async (query) => {
        const answer = await call(gatewayUrl(), SEARCH, { input: { query } });
        // A well-formed search of B's never reports a provider failure for its text alone.
        for (const provider of answer.body?.data?.search?.providers ?? []) {
          // SKIPPED says why (here: the external providers are not configured); OK has no error.
          expect([provider.name, provider.status, provider.error]).toEqual([provider.name, expect.stringMatching(/^(OK|SKIPPED)$/), provider.status === "OK" ? null : expect.any(String)]);
        }
      }),
      fcOptions(150),
    );
  }, 180_000);

  it("conversations: titles and message contents on create, rename and append (own and foreign ids)", async () => {
    const create = `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id title messageCount tokenCount } }`;
    const rename = `mutation($id: ID!, $title: String!) { renameConversation(id: $id, title: $title) { id title } }`;
    const append = `mutation($id: ID!, $messages: [MessageInput!]!) { appendMessages(conversationId: $id, messages: $messages) { conversation { id messageCount } messages { position content } } }`;
    await fc.assert(
      fc.asyncProperty(hostileText, fc.array(messageInput, { maxLength: 3 }), fc.boolean(), idArbitrary, async (title, messages, own, foreignId) => {
        await call(gatewayUrl(), create, { input: { title, messages } });
        await call(gatewayUrl(), rename, { id: own ? bOwnId : foreignId, title });
        await call(gatewayUrl(), append, { id: own ? bOwnId : foreignId, messages });
      }),
      fcOptions(120),
    );
  }, 180_000);

  it("ids: conversation(id) and deleteConversation of anything", async () => {
    await fc.assert(
      fc.asyncProperty(idArbitrary, async (id) => {
        const answer = await call(gatewayUrl(), `query($id: ID!) { conversation(id: $id) { id title messages { nodes { content } } } }`, { id });
        expect(answer.body?.data?.conversation ?? null).toBeNull();
        // Only foreign or made-up ids reach delete: B's own conversation must survive the run.
        await call(gatewayUrl(), `mutation($id: ID!) { deleteConversation(id: $id) { id } }`, { id });
      }),
      fcOptions(150),
    );
  }, 180_000);

  it("cursors and page sizes of both connections", async () => {
    const query = `query($first: Int, $after: String, $messagesFirst: Int, $messagesAfter: String) {
      conversations(first: $first, after: $after) { totalCount pageInfo { endCursor } nodes { id title messages(first: $messagesFirst, after: $messagesAfter) { pageInfo { endCursor } nodes { content } } } }
    }`;
    await fc.assert(
      fc.asyncProperty(
        mostly(fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }), anyNumber),
        fc.oneof(fc.constant(undefined), fc.constant(0).map(() => conversationCursor), cursorArbitrary(() => conversationCursor)),
        mostly(fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }), anyNumber),
        fc.oneof(fc.constant(undefined), fc.constant(0).map(() => messageCursor), cursorArbitrary(() => messageCursor)),
        async (first, after, messagesFirst, messagesAfter) => {
          await call(gatewayUrl(), query, { first, after, messagesFirst, messagesAfter });
        },
      ),
      fcOptions(150),
    );
  }, 180_000);

  it("raw variables: wrong types, deep nesting, huge numbers and NaN-like values", async () => {
    const queries = [
      SEARCH,
      `query($id: ID!) { conversation(id: $id) { id } }`,
      `query($first: Int, $after: String) { conversations(first: $first, after: $after) { nodes { id } } }`,
      `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`,
    ];
    const nested = fc.integer({ min: 1, max: 60 }).map((depth) => `${'{"input":'.repeat(depth)}1${"}".repeat(depth)}`);
    const rawValue = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value) ?? "null"),
      nested,
      fc.constantFrom("1e400", "-1e400", "123456789012345678901234567890", "-0", "0.0000000000000000000001", '"NaN"', '"Infinity"', '"-Infinity"', '"1e309"', '"0x10"', "[]", "[[[[[[[[[[]]]]]]]]]]", '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{}}}'),
    );
    const variableNames = fc.constantFrom("input", "id", "first", "after", "query", "__proto__");
    const variables = fc.oneof(
      fc.dictionary(variableNames, rawValue, { maxKeys: 3 }).map((entries) => `{${Object.entries(entries).map(([name, value]) => `${JSON.stringify(name)}:${value}`).join(",")}}`),
      rawValue,
      fc.constantFrom('"not an object"', "42", "null", "[1,2]"),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...queries), variables, async (query, rawVariables) => {
        const body = `{"query":${JSON.stringify(query)},"variables":${rawVariables}}`;
        const answer = await post(gatewayUrl(), body);
        expectWellBehaved(answer, body);
        tally(answer);
      }),
      fcOptions(200),
    );
  }, 180_000);

  it("lone surrogates and NUL as JSON escapes written into the body by hand", async () => {
    const escape = fc.constantFrom("\\ud800", "\\udfff", "\\udfff\\ud800", "\\ud83d", "\\ud83d\\ud83d", "\\u0000", "\\u001f", "\\u007f", "\\ufffe");
    // At least one escape, anywhere among ordinary text.
    const escapes = fc
      .tuple(escape, fc.array(fc.oneof(escape, fc.constantFrom("a", "deadlock", " ", "&", "'", ":*", SECRET)), { maxLength: 9 }), fc.nat())
      .map(([first, rest, at]) => [...rest.slice(0, at % (rest.length + 1)), first, ...rest.slice(at % (rest.length + 1))]);
    await fc.assert(
      fc.asyncProperty(escapes, fc.constantFrom("search", "title", "content", "id", "after"), async (pieces, where) => {
        const text = `"${pieces.join("")}"`;
        const bodies: Record<string, string> = {
          search: `{"query":${JSON.stringify(SEARCH)},"variables":{"input":{"query":${text}}}}`,
          title: `{"query":"mutation($t: String!) { createConversation(input: { title: $t }) { id title } }","variables":{"t":${text}}}`,
          content: `{"query":"mutation($id: ID!, $c: String!) { appendMessages(conversationId: $id, messages: [{ role: USER, content: $c }]) { messages { content } } }","variables":{"id":"${bOwnId}","c":${text}}}`,
          id: `{"query":"query($id: ID!) { conversation(id: $id) { id } }","variables":{"id":${text}}}`,
          after: `{"query":"query($a: String) { conversations(after: $a) { nodes { id } } }","variables":{"a":${text}}}`,
        };
        const body = bodies[where]!;
        expect(body).toMatch(/\\u/);
        const answer = await post(gatewayUrl(), body);
        expectWellBehaved(answer, body);
        tally(answer);
      }),
      fcOptions(120),
    );
  }, 180_000);

  it("strings of 1 MB in search, titles, contents, ids and cursors", async () => {
    const megabyte = fc.tuple(fc.constantFrom("a", "é", "🦓", "\u0000", "& ", "' OR 1=1 ", "\ud800"), fc.constantFrom("search", "title", "content", "id", "after")).map(([unit, where]) => ({
      text: unit.repeat(Math.ceil(1_000_000 / unit.length)),
      where,
    }));
    await fc.assert(
      fc.asyncProperty(megabyte, async ({ text, where }) => {
        if (where === "search") await call(gatewayUrl(), SEARCH, { input: { query: text } });
        if (where === "title") await call(gatewayUrl(), `mutation($t: String!) { createConversation(input: { title: $t }) { id } }`, { t: text });
        if (where === "content") await call(gatewayUrl(), `mutation($id: ID!, $c: String!) { appendMessages(conversationId: $id, messages: [{ role: USER, content: $c }]) { messages { position } } }`, { id: bOwnId, c: text });
        if (where === "id") await call(gatewayUrl(), `query($id: ID!) { conversation(id: $id) { id } }`, { id: text });
        if (where === "after") await call(gatewayUrl(), `query($a: String) { conversations(after: $a) { nodes { id } } }`, { a: text });
      }),
      fcOptions(8),
    );
  }, 300_000);
});

describe("hostile input against the subgraphs directly", () => {
  it("_entities: representations of any shape, with B's token and without one", async () => {
    const representation = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record({ __typename: fc.oneof(fc.constant("Conversation"), hostileText), id: fc.oneof(idArbitrary, fc.jsonValue({ maxDepth: 2 })) }),
      fc.nat().map((index) => ({ __typename: "Conversation", id: aIds[index % aIds.length] })),
    );
    const query = `query($r: [_Any!]!) { _entities(representations: $r) { ... on Conversation { id title messages { nodes { content } } } } }`;
    await fc.assert(
      fc.asyncProperty(fc.array(representation, { minLength: 1, maxLength: 5 }), fc.boolean(), async (representations, withToken) => {
        const answer = await call(subgraphUrl("conversations"), query, { r: representations }, withToken ? tokenB : null);
        for (const entity of answer.body?.data?._entities ?? []) expect(entity === null || !aIds.includes(entity.id)).toBe(true);
      }),
      fcOptions(150),
    );
  }, 180_000);

  it("search and createConversation on their own subgraphs", async () => {
    await fc.assert(
      fc.asyncProperty(searchInput, hostileText, async (input, title) => {
        await call(subgraphUrl("search"), SEARCH.replace(" item { ... on Conversation { id title } }", " item { __typename }"), { input });
        await call(subgraphUrl("conversations"), `mutation($t: String!) { createConversation(input: { title: $t, messages: [{ role: USER, content: $t }] }) { id } }`, { t: title });
      }),
      fcOptions(100),
    );
  }, 180_000);
});

describe("after the run", () => {
  it("still answers a normal query, and organization A is untouched and invisible to B", async () => {
    const health = await call(gatewayUrl(), `{ __typename }`, {}, null);
    expect(health.body?.data).toEqual({ __typename: "Query" });

    const mine = await call(gatewayUrl(), `{ conversations(first: 100) { totalCount nodes { id title messageCount } } }`, {}, tokenA);
    const aConversations = mine.body!.data!.conversations;
    expect(aConversations.totalCount).toBe(3);
    expect(aConversations.nodes.map((node: { id: string }) => node.id).sort()).toEqual([...aIds].sort());
    for (const node of aConversations.nodes) {
      expect(node.title).toMatch(new RegExp(`^${SECRET} plan \\d$`));
      expect(node.messageCount).toBe(2);
    }

    // B lists everything it has (every page) and searches A's word: nothing of A's.
    let after: string | null = null;
    for (let page = 0; page < 50; page++) {
      const answer: Answer = await call(gatewayUrl(), `query($after: String) { conversations(first: 100, after: $after) { nodes { id title } pageInfo { hasNextPage endCursor } } }`, { after });
      const connection = answer.body!.data!.conversations;
      for (const node of connection.nodes) expect(aIds).not.toContain(node.id);
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    for (const alpha of [0, 0.5, 1]) {
      const searched = await call(gatewayUrl(), SEARCH, { input: { query: `${SECRET} plan deadlock`, alpha, limit: 100 } });
      for (const hit of searched.body!.data!.search.hits) expect(aIds).not.toContain(hit.item?.id);
    }
    // A itself still finds its own conversations.
    const own = await call(gatewayUrl(), SEARCH, { input: { query: SECRET, alpha: 1 } }, tokenA);
    expect(own.body!.data!.search.hits.length).toBe(3);

    expect(errorLines()).toEqual([]);
  }, 120_000);
});
