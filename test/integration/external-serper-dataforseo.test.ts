/**
 * The Serper and DataForSEO clients (subgraphs/external-search/providers/) against local
 * stand-ins that check what a real call sends (test/support/external/): the auth header and the
 * request body, the parsing of each vendor's documented answer, every failure as its
 * ExternalApiError kind, and hostile fields cleaned or dropped. No database is involved.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { ExternalApiError } from "../../lib/external-apis/errors.js";
import type { ExternalFailureKind } from "../../lib/external-apis/errors.js";
import { DataForSeoClient, DATAFORSEO_SNIPPET_MAX_CHARS, DATAFORSEO_TITLE_MAX_CHARS } from "../../subgraphs/external-search/providers/dataforseo.js";
import { SerperClient, SERPER_SNIPPET_MAX_CHARS, SERPER_TITLE_MAX_CHARS } from "../../subgraphs/external-search/providers/serper.js";
import type { WebResultData } from "../../subgraphs/external-search/providers/types.js";
import { DataForSeoStandIn } from "../support/external/dataforseo-stand-in.js";
import type { SerpStandInFault } from "../support/external/serp-stand-in-server.js";
import { SerperStandIn } from "../support/external/serper-stand-in.js";
import { deadlineOnceReceived } from "../support/external/deadline.js";

const QUERY = "how to descale an espresso machine";

let serper: SerperStandIn;
let dataForSeo: DataForSeoStandIn;

beforeAll(async () => {
  serper = await SerperStandIn.start();
  dataForSeo = await DataForSeoStandIn.start();
});

afterAll(async () => {
  await serper.close();
  await dataForSeo.close();
});

beforeEach(() => {
  serper.requests.length = 0;
  serper.fault = null;
  dataForSeo.requests.length = 0;
  dataForSeo.fault = null;
  dataForSeo.failWithStatus(null);
  dataForSeo.paymentRequired = false;
});

function call(limit = 10, timeoutMs = 5_000) {
  return { signal: AbortSignal.timeout(timeoutMs), limit };
}

async function failureOf(promise: Promise<unknown>): Promise<ExternalApiError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ExternalApiError);
    return error as ExternalApiError;
  }
  throw new Error("expected the call to fail, and it succeeded");
}

/** What every cleaned result must be, whatever the vendor sent. */
function expectClean(results: WebResultData[], titleMax: number, snippetMax: number): void {
  for (const result of results) {
    expect(result.url).toMatch(/^https?:\/\//);
    expect(result.title.length).toBeGreaterThan(0);
    expect(result.title.length).toBeLessThanOrEqual(titleMax);
    expect(result.snippet.length).toBeLessThanOrEqual(snippetMax);
    for (const text of [result.title, result.snippet]) {
      expect(text).not.toMatch(/<\s*\/?\s*(script|b|i|img|a)\b/i);
      expect(text).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/);
    }
    expect(Number.isInteger(result.position) && result.position >= 1).toBe(true);
  }
}

describe("SerperClient against the Serper stand-in", () => {
  const client = () => new SerperClient({ baseUrl: serper.baseUrl });
  const key = () => ({ apiKey: serper.apiKey });

  it("POSTs /search with X-API-KEY and {q, num}, and reads organic results, people also ask and related searches", async () => {
    const answer = await client().search(QUERY, key(), call(5));

    expect(serper.requests).toHaveLength(1);
    const [request] = serper.requests;
    expect(request!.method).toBe("POST");
    expect(request!.path).toBe("/search");
    expect(request!.headers["x-api-key"]).toBe(serper.apiKey);
    expect(request!.headers["content-type"]).toMatch(/^application\/json/);
    expect(request!.body).toEqual({ q: QUERY, num: 5 });

    expect(answer.organic).toHaveLength(5);
    expect(answer.organic[0]).toMatchObject({
      url: "https://www.example-coffee.com/guides/descaling",
      title: "How to Descale an Espresso Machine (Step-by-Step Guide)",
      position: 1,
      provider: "serper",
    });
    expect(answer.organic[0]!.snippet).toMatch(/^Descaling removes the limescale/);
    expect(answer.organic[0]!.fetchedAt).toBeInstanceOf(Date);
    expect(answer.organic.map((result) => result.position)).toEqual([1, 2, 3, 4, 5]);

    expect(answer.peopleAlsoAsk).toHaveLength(4);
    expect(answer.peopleAlsoAsk[0]).toEqual({
      question: "Can I use vinegar to descale my espresso machine?",
      snippet: expect.stringMatching(/^Most manufacturers advise against vinegar/),
      url: "https://www.example-coffee.com/guides/vinegar",
    });
    expect(answer.relatedSearches).toHaveLength(8);
    expect(answer.relatedSearches[0]).toBe("how to descale espresso machine with citric acid");
    expectClean(answer.organic, SERPER_TITLE_MAX_CHARS, SERPER_SNIPPET_MAX_CHARS);
  });

  it("bounds the limit it sends to Serper's 1..100", async () => {
    await client().search(QUERY, key(), call(0));
    await client().search(QUERY, key(), call(250));
    await client().search(QUERY, key(), call(7.6));
    expect(serper.requests.map((request) => (request.body as { num: number }).num)).toEqual([1, 100, 7]);
  });

  it("refuses an empty query without calling Serper", async () => {
    const error = await failureOf(client().search("   ", key(), call()));
    expect(error.kind).toBe("BAD_REQUEST");
    expect(serper.requests).toHaveLength(0);
  });

  it("a wrong key (Serper's 403) is UNAUTHORIZED, and the message does not carry the key", async () => {
    const error = await failureOf(client().search(QUERY, { apiKey: "wrong-key-123" }, call()));
    expect(error).toMatchObject({ kind: "UNAUTHORIZED", provider: "serper", httpStatus: 403, retryable: false });
    expect(error.message).not.toContain("wrong-key-123");
  });

  const faults: Array<[SerpStandInFault, ExternalFailureKind, number | undefined]> = [
    ["unauthorized", "UNAUTHORIZED", 401],
    ["rate-limited", "RATE_LIMITED", 429],
    ["server-error", "UPSTREAM_ERROR", 500],
    ["malformed-json", "BAD_RESPONSE", 200],
    ["wrong-shape", "BAD_RESPONSE", 200],
    ["oversized", "TOO_LARGE", 200],
  ];
  it.each(faults)("the %s fault is %s", async (fault, kind, httpStatus) => {
    serper.fault = fault;
    const error = await failureOf(client().search(QUERY, key(), call()));
    expect(error.kind).toBe(kind);
    expect(error.provider).toBe("serper");
    expect(error.httpStatus).toBe(httpStatus);
    expect(error.message).not.toContain(serper.apiKey);
  });

  it("429 carries Retry-After as retryAfterMs", async () => {
    serper.fault = "rate-limited";
    serper.retryAfter = "7";
    const error = await failureOf(client().search(QUERY, key(), call()));
    expect(error).toMatchObject({ kind: "RATE_LIMITED", retryAfterMs: 7_000, retryable: true });
  });

  it("a call that never answers is TIMEOUT at the caller's deadline", async () => {
    serper.fault = "hang";
    const error = await failureOf(client().search(QUERY, key(), { signal: deadlineOnceReceived(serper.requests), limit: 10 }));
    expect(error.kind).toBe("TIMEOUT");
  });

  it("an oversized body stops being read at the size limit", async () => {
    serper.fault = "oversized";
    const error = await failureOf(new SerperClient({ baseUrl: serper.baseUrl, maxResponseBytes: 256 * 1024 }).search(QUERY, key(), call()));
    expect(error.kind).toBe("TOO_LARGE");
    expect(error.message).toContain(String(256 * 1024));
  });

  it("an empty result is empty lists, not an error", async () => {
    serper.fault = "empty";
    await expect(client().search(QUERY, key(), call())).resolves.toEqual({ organic: [], peopleAlsoAsk: [], relatedSearches: [] });
  });

  it("an unreachable Serper is UPSTREAM_ERROR", async () => {
    const error = await failureOf(new SerperClient({ baseUrl: await closedPortUrl() }).search(QUERY, key(), call()));
    expect(error.kind).toBe("UPSTREAM_ERROR");
  });

  it("cleans hostile fields: markup and control characters removed, huge snippets cut, unsafe links dropped", async () => {
    serper.fault = "hostile";
    const answer = await client().search(QUERY, key(), call(20));
    expectClean(answer.organic, SERPER_TITLE_MAX_CHARS, SERPER_SNIPPET_MAX_CHARS);

    const urls = answer.organic.map((result) => result.url);
    expect(urls.some((url) => /^(javascript|data):/i.test(url))).toBe(false);
    expect(answer.organic.some((result) => result.title.includes("giveaway") || result.title.includes("Inline page"))).toBe(false);
    expect(urls).not.toContain("https://numbers.example.com/"); // its title was not text
    expect(answer.organic[0]!.title).toContain("Descaling");
    expect(answer.organic[0]!.title).not.toContain("alert(");
    expect(answer.organic.find((result) => result.title.includes("Citric"))!.title).toBe("Citric\ufffd acid descaling\ufffd guide"); // NUL shown as U+FFFD, BEL dropped
    const huge = answer.organic.find((result) => result.url.startsWith("https://homebarista.example.org/"));
    expect(huge!.snippet.length).toBeGreaterThan(100);
    // Serper's own positions are kept; one that is not a positive integer falls back to the list index.
    expect(answer.organic.map((result) => result.position)).toEqual([1, 3, 4, 8, 9, 10, 11, 12, 13, 14]);

    const [question] = answer.peopleAlsoAsk;
    expect(question!.question).toMatch(/Is vinegar\s*safe\s*for espresso machines\?/);
    expect(question!.question).not.toMatch(/<|onerror/);
    expect(question!.url).toBeNull();
    expect(answer.peopleAlsoAsk.some((entry) => entry.question === "")).toBe(false);
    expect(answer.relatedSearches[0]).toBe("descale with lemon juice");
    expect(answer.relatedSearches).not.toContain(7);
  });
});

describe("DataForSeoClient against the DataForSEO stand-in", () => {
  const client = () => new DataForSeoClient({ baseUrl: dataForSeo.baseUrl });
  const account = () => ({ login: dataForSeo.login, password: dataForSeo.password });

  it("POSTs one task with basic auth and reads only the organic items, ranked by rank_group", async () => {
    const results = await client().search(QUERY, account(), call(10));

    expect(dataForSeo.requests).toHaveLength(1);
    const [request] = dataForSeo.requests;
    expect(request!.method).toBe("POST");
    expect(request!.path).toBe("/v3/serp/google/organic/live/advanced");
    const expectedAuth = `Basic ${Buffer.from(`${dataForSeo.login}:${dataForSeo.password}`).toString("base64")}`;
    expect(request!.headers.authorization).toBe(expectedAuth);
    expect(request!.headers["content-type"]).toMatch(/^application\/json/);
    expect(request!.body).toEqual([{ keyword: QUERY, location_code: 2840, language_code: "en", depth: 10 }]);

    // The fixture's page mixes a featured snippet, a people-also-ask box, a video carousel and
    // related searches among four organic results: only the four come back.
    expect(results.map((result) => [result.position, result.url])).toEqual([
      [1, "https://www.example-coffee.com/guides/descaling"],
      [2, "https://support.example-appliances.com/espresso/descaling"],
      [3, "https://homebarista.example.org/forum/t/vinegar-vs-citric-acid/48213"],
      [4, "https://www.example-kitchen.com/how-often-descale-coffee-maker/"],
    ]);
    expect(results[1]).toMatchObject({
      title: "Descaling your machine | Manufacturer support",
      snippet: "Use only the descaling agent recommended for your model. Vinegar can damage seals and void the warranty.",
      provider: "dataforseo",
    });
    expect(results[0]!.fetchedAt).toBeInstanceOf(Date);
    expectClean(results, DATAFORSEO_TITLE_MAX_CHARS, DATAFORSEO_SNIPPET_MAX_CHARS);
  });

  it("asks for whole pages of depth (billed per 10) within 1..100 and cuts the answer to the limit", async () => {
    const two = await client().search(QUERY, account(), call(2));
    await client().search(QUERY, account(), call(25));
    await client().search(QUERY, account(), call(1_000));
    await client().search(QUERY, account(), call(0));
    expect(two).toHaveLength(2);
    expect(dataForSeo.requests.map((request) => (request.body as Array<{ depth: number }>)[0]!.depth)).toEqual([10, 30, 100, 10]);
  });

  it("uses the configured location and language", async () => {
    await new DataForSeoClient({ baseUrl: dataForSeo.baseUrl, locationCode: 2276, languageCode: "de" }).search("entkalken", account(), call());
    expect(dataForSeo.requests[0]!.body).toEqual([{ keyword: "entkalken", location_code: 2276, language_code: "de", depth: 10 }]);
  });

  it("a wrong password (HTTP 401, status 40100) is UNAUTHORIZED, and the message carries neither login nor password", async () => {
    const error = await failureOf(client().search(QUERY, { login: dataForSeo.login, password: "not-the-password" }, call()));
    expect(error).toMatchObject({ kind: "UNAUTHORIZED", provider: "dataforseo", httpStatus: 401, retryable: false });
    expect(error.message).not.toContain("not-the-password");
    expect(error.message).not.toContain(dataForSeo.login);
  });

  const statuses: Array<[number, "request" | "task", ExternalFailureKind, string]> = [
    [40100, "request", "UNAUTHORIZED", "You are not authorized to access this resource."],
    [40200, "request", "UNAUTHORIZED", "Payment Required."],
    [40201, "request", "UNAUTHORIZED", "Our algorithms found suspicious activity in your DataForSEO account."],
    [40203, "request", "UNAUTHORIZED", "The cost limit has been exceeded."],
    [40202, "request", "RATE_LIMITED", "The rate-limit per minute has been exceeded."],
    [40101, "task", "UPSTREAM_ERROR", "Internal SE Server Error."],
    [40501, "task", "BAD_REQUEST", "Invalid Field: 'depth'."],
    [40000, "request", "BAD_REQUEST", "You can set only one task at a time."],
    [50000, "request", "UPSTREAM_ERROR", "Internal Error."],
    [50301, "task", "UPSTREAM_ERROR", "3rd Party API Service Unavailable."],
    [40602, "task", "UPSTREAM_ERROR", "Task In Queue."],
  ];
  it.each(statuses)("status_code %i in the %s (HTTP 200) is %s", async (code, level, kind, message) => {
    dataForSeo.failWithStatus({ code, level, message });
    const error = await failureOf(client().search(QUERY, account(), call()));
    expect(error.kind).toBe(kind);
    expect(error.message).toContain(String(code));
    expect(error.message).toContain(level);
    expect(error.message).not.toContain(message); // the vendor's own text is not relayed
  });

  it("HTTP 402 Payment Required is UNAUTHORIZED: the account cannot pay until someone tops it up", async () => {
    dataForSeo.paymentRequired = true;
    const error = await failureOf(client().search(QUERY, account(), call()));
    expect(error).toMatchObject({ kind: "UNAUTHORIZED", httpStatus: 402, retryable: false });
  });

  it("status 40102 No Search Results is an empty list, as is the stand-in's empty fault", async () => {
    dataForSeo.failWithStatus({ code: 40102, level: "task", message: "No Search Results." });
    await expect(client().search(QUERY, account(), call())).resolves.toEqual([]);
    dataForSeo.failWithStatus(null);
    dataForSeo.fault = "empty";
    await expect(client().search(QUERY, account(), call())).resolves.toEqual([]);
  });

  const faults: Array<[SerpStandInFault, ExternalFailureKind, number | undefined]> = [
    ["unauthorized", "UNAUTHORIZED", 401],
    ["rate-limited", "RATE_LIMITED", 429],
    ["server-error", "UPSTREAM_ERROR", 500],
    ["malformed-json", "BAD_RESPONSE", 200],
    ["wrong-shape", "BAD_RESPONSE", 200],
    ["oversized", "TOO_LARGE", 200],
  ];
  it.each(faults)("the %s fault is %s", async (fault, kind, httpStatus) => {
    dataForSeo.fault = fault;
    const error = await failureOf(client().search(QUERY, account(), call()));
    expect(error.kind).toBe(kind);
    expect(error.provider).toBe("dataforseo");
    expect(error.httpStatus).toBe(httpStatus);
    expect(error.message).not.toContain(dataForSeo.password);
  });

  it("429 carries Retry-After as retryAfterMs", async () => {
    dataForSeo.fault = "rate-limited";
    dataForSeo.retryAfter = "3";
    const error = await failureOf(client().search(QUERY, account(), call()));
    expect(error).toMatchObject({ kind: "RATE_LIMITED", retryAfterMs: 3_000, retryable: true });
  });

  it("a call that never answers is TIMEOUT at the caller's deadline", async () => {
    dataForSeo.fault = "hang";
    const error = await failureOf(client().search(QUERY, account(), { signal: deadlineOnceReceived(dataForSeo.requests), limit: 10 }));
    expect(error.kind).toBe("TIMEOUT");
  });

  it("cleans hostile fields: markup and control characters removed, huge snippets cut, unsafe links dropped", async () => {
    dataForSeo.fault = "hostile";
    const results = await client().search(QUERY, account(), call(20));
    expectClean(results, DATAFORSEO_TITLE_MAX_CHARS, DATAFORSEO_SNIPPET_MAX_CHARS);
    expect(results.some((result) => /^(javascript|data):/i.test(result.url))).toBe(false);
    expect(results.some((result) => result.title.includes("giveaway") || result.title.includes("Inline page"))).toBe(false);
    expect(results.map((result) => result.url)).not.toContain("https://numbers.example.com/");
    expect(results[0]!.title).toContain("Descaling");
    expect(results[0]!.title).not.toContain("alert(");
    expect(results.find((result) => result.title.includes("Citric"))!.title).toBe("Citric\ufffd acid descaling\ufffd guide"); // NUL shown as U+FFFD, BEL dropped
    // rank_group given as text falls back to rank_absolute.
    expect(results.map((result) => result.position)).toEqual([1, 3, 4, 11]);
  });
});

/** A URL on which nothing listens (a port that was free a moment ago). */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
