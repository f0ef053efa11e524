/**
 * A local stand-in for Serper's search endpoint (https://google.serper.dev/search). It is NOT
 * Serper: a node:http server that speaks the request and answer shapes Serper documents, so the
 * real SerperClient runs against it with its base URL pointed here.
 *
 * What it checks, as Serper does: `POST /search`; the `X-API-KEY` header equal to the key it was
 * started with (otherwise 403 `{"message":"Unauthorized.","statusCode":403}`, Serper's answer to
 * a wrong key); a JSON body with a non-empty string `q` and, when present, an integer `num` in
 * 1..100 (otherwise 400). What it serves: serper-search.json, a recorded-shape answer
 * (searchParameters, answerBox, organic with sitelinks, peopleAlsoAsk, relatedSearches,
 * credits), with `q` and `num` echoed and `organic` cut to `num`. What it cannot check: Google's
 * ranking, the other Serper endpoints (/images, /news, /places) and parameters (gl, hl, page).
 */
import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { HOSTILE, SerpStandInServer, header, sendJson, sendTruncatedJson, streamOversized } from "./serp-stand-in-server.js";
import type { RecordedRequest, SerpStandInFault } from "./serp-stand-in-server.js";

interface SerperAnswerFixture {
  searchParameters: Record<string, unknown>;
  organic: Array<Record<string, unknown>>;
  peopleAlsoAsk: Array<Record<string, unknown>>;
  relatedSearches: Array<Record<string, unknown>>;
  [field: string]: unknown;
}

const FIXTURE = JSON.parse(readFileSync(new URL("./serper-search.json", import.meta.url), "utf8")) as SerperAnswerFixture;

export class SerperStandIn {
  /** The fault the next requests get, until set back to null. */
  fault: SerpStandInFault | null = null;
  /** Sent as `Retry-After` with the "rate-limited" fault. */
  retryAfter = "7";
  /** Bytes streamed by the "oversized" fault. */
  oversizedBytes = 3 * 1024 * 1024;
  /** How long it waits before answering a valid request (a slow provider), in milliseconds. */
  delayMs = 0;
  /**
   * While set, valid requests also wait for this before answering: a slow provider whose answer
   * the test lets go when it has seen what must come first. Orders events without betting on a
   * delay being longer than a busy machine's other work.
   */
  hold: Promise<void> | null = null;
  /**
   * Sets `hold` until the returned function is called, or `limitMs` at most: a provider slow for
   * exactly as long as the test needs. The limit lets the answer go when what the test waits for
   * never comes (a gateway that does not stream), so an order check fails instead of hanging.
   */
  holdUntilReleased(limitMs: number): () => void {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const limit = new Promise<void>((resolve) => setTimeout(resolve, limitMs).unref());
    this.hold = Promise.race([released, limit]);
    return release;
  }

  /** Called as it sends each answer to a valid request (tests order it against what they read). */
  onAnswer: (() => void) | null = null;

  private constructor(
    private readonly server: SerpStandInServer,
    /** The only key it accepts. */
    readonly apiKey: string,
  ) {}

  static async start(apiKey = "serper-test-key-0123456789abcdef"): Promise<SerperStandIn> {
    let standIn: SerperStandIn | undefined;
    const server = await SerpStandInServer.listen((request, res) => standIn!.answer(request, res));
    standIn = new SerperStandIn(server, apiKey);
    return standIn;
  }

  get baseUrl(): string {
    return this.server.baseUrl;
  }

  /** Every request received, in order. */
  get requests(): RecordedRequest[] {
    return this.server.requests;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private async answer(request: RecordedRequest, res: ServerResponse): Promise<void> {
    if (request.method !== "POST" || request.path !== "/search") {
      return sendJson(res, 404, { message: "Not found", statusCode: 404 });
    }
    if (header(request.headers, "x-api-key") !== this.apiKey) {
      return sendJson(res, 403, { message: "Unauthorized.", statusCode: 403 });
    }
    const body = request.body as { q?: unknown; num?: unknown } | undefined;
    if (!header(request.headers, "content-type")?.startsWith("application/json") || typeof body !== "object" || body === null) {
      return sendJson(res, 400, { message: "Request body must be JSON", statusCode: 400 });
    }
    if (typeof body.q !== "string" || !body.q.trim()) {
      return sendJson(res, 400, { message: "Query is required", statusCode: 400 });
    }
    if (body.num !== undefined && !(Number.isInteger(body.num) && (body.num as number) >= 1 && (body.num as number) <= 100)) {
      return sendJson(res, 400, { message: "num must be an integer between 1 and 100", statusCode: 400 });
    }
    const q = body.q;
    const num = (body.num as number | undefined) ?? 10;
    const answer = { ...FIXTURE, searchParameters: { ...FIXTURE.searchParameters, q, num }, organic: FIXTURE.organic.slice(0, num) };
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    if (this.hold) await this.hold;
    this.onAnswer?.();

    switch (this.fault) {
      case "hang":
        return; // never answered; the connection closes when the client gives up or the stand-in closes
      case "unauthorized":
        return sendJson(res, 401, { message: "Unauthorized.", statusCode: 401 });
      case "rate-limited":
        return sendJson(res, 429, { message: "Too many requests, slow down.", statusCode: 429 }, { "Retry-After": this.retryAfter });
      case "server-error":
        return sendJson(res, 500, { message: "Internal server error", statusCode: 500 });
      case "malformed-json":
        return sendTruncatedJson(res, answer);
      case "wrong-shape":
        // Valid JSON, but `organic` as an object keyed by position instead of a list.
        return sendJson(res, 200, { ...answer, organic: Object.fromEntries(answer.organic.map((entry, index) => [String(index + 1), entry])) });
      case "empty":
        // Serper leaves out the blocks Google did not show; organic stays, empty.
        return sendJson(res, 200, { searchParameters: answer.searchParameters, organic: [], credits: 1 });
      case "oversized":
        return streamOversized(res, `{"searchParameters":${JSON.stringify(answer.searchParameters)},"organic":[`, this.oversizedBytes);
      case "hostile":
        return sendJson(res, 200, hostileAnswer(answer));
      case null:
        return sendJson(res, 200, answer);
    }
  }
}

/**
 * The real answer with hostile entries put in among the genuine ones: markup in a title, NUL and
 * terminal escapes, a 100 KB snippet, javascript: and data: links, a title that is not a string,
 * a nonsensical position, markup in a question and in a related search.
 */
function hostileAnswer(answer: SerperAnswerFixture): SerperAnswerFixture {
  const [first, second, third, ...rest] = answer.organic;
  return {
    ...answer,
    organic: [
      { ...first, title: HOSTILE.scriptTitle },
      { title: "Free descaler giveaway", link: HOSTILE.javascriptUrl, snippet: "Click to claim", position: 2 },
      { ...second, title: HOSTILE.nulTitle, snippet: HOSTILE.nulSnippet, position: 3 },
      { ...third, snippet: HOSTILE.hugeSnippet, position: 4 },
      { title: "Inline page", link: HOSTILE.dataUrl, snippet: "data URL", position: 5 },
      { title: 42, link: "https://numbers.example.com/", snippet: "a title that is a number", position: 6 },
      "not an object",
      ...rest.map((entry, index) => ({ ...entry, position: index === 0 ? -3 : 8 + index })),
    ],
    peopleAlsoAsk: [
      { question: HOSTILE.htmlQuestion, snippet: HOSTILE.nulSnippet, title: "Vinegar", link: HOSTILE.javascriptUrl },
      ...answer.peopleAlsoAsk.slice(1),
      { question: "", snippet: "a question with no question", link: "https://empty.example.com/" },
    ],
    relatedSearches: [{ query: HOSTILE.htmlRelated }, { query: 7 }, ...answer.relatedSearches.slice(1)],
  } as SerperAnswerFixture;
}
