/**
 * A local stand-in for DataForSEO's live Google organic SERP
 * (`POST https://api.dataforseo.com/v3/serp/google/organic/live/advanced`). It is NOT DataForSEO:
 * a node:http server that speaks the request and answer shapes DataForSEO documents, so the real
 * DataForSeoClient runs against it with its base URL pointed here.
 *
 * What it checks, as DataForSEO does: the path (HTTP 404 otherwise); HTTP basic auth with the
 * login and password it was started with (HTTP 401 with status_code 40100 otherwise); a JSON
 * array of exactly one task (status 40000 "You can set only one task at a time." otherwise)
 * with a non-empty `keyword`, a `location_code` or `location_name`, a `language_code` or
 * `language_name`, and a `depth` in 1..700 when present (task status 40501 "Invalid Field"
 * otherwise). What it serves: dataforseo-organic-live-advanced.json, a documented-shape answer
 * (request envelope, one task, one result page whose items mix featured_snippet, organic,
 * people_also_ask, video and related_searches) with the task's fields echoed in `data`.
 * DataForSEO reports most failures inside an HTTP 200 (`failWithStatus`); the HTTP faults of
 * SerpStandInFault stand for what a proxy in front of it, or its documented 401/500, would send.
 * What it cannot check: Google's ranking, locations and languages beyond their presence, billing.
 */
import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { HOSTILE, SerpStandInServer, header, sendJson, sendTruncatedJson, streamOversized } from "./serp-stand-in-server.js";
import type { RecordedRequest, SerpStandInFault } from "./serp-stand-in-server.js";

interface DataForSeoEnvelope {
  status_code: number;
  status_message: string;
  tasks: Array<DataForSeoTask> | null;
  [field: string]: unknown;
}
interface DataForSeoTask {
  status_code: number;
  status_message: string;
  data: Record<string, unknown>;
  result: Array<{ keyword: string; items: Array<Record<string, unknown>> | null; [field: string]: unknown }> | null;
  [field: string]: unknown;
}

const FIXTURE = JSON.parse(readFileSync(new URL("./dataforseo-organic-live-advanced.json", import.meta.url), "utf8")) as DataForSeoEnvelope;

export const DATAFORSEO_STAND_IN_PATH = "/v3/serp/google/organic/live/advanced";

/** A status DataForSEO reports inside an HTTP 200, for the whole request or for the task. */
export interface DataForSeoStatusFault {
  code: number;
  message: string;
  level: "request" | "task";
}

export class DataForSeoStandIn {
  fault: SerpStandInFault | null = null;
  /** When set, answers HTTP 200 with this status_code (overrides `fault`). */
  statusFault: DataForSeoStatusFault | null = null;
  /** When set, answers HTTP 402 "Payment Required", DataForSEO's documented billing failure (overrides both). */
  paymentRequired = false;
  retryAfter = "7";
  oversizedBytes = 3 * 1024 * 1024;

  private constructor(
    private readonly server: SerpStandInServer,
    readonly login: string,
    readonly password: string,
  ) {}

  static async start(login = "api@acme.example", password = "dfs-test-password-0123"): Promise<DataForSeoStandIn> {
    let standIn: DataForSeoStandIn | undefined;
    const server = await SerpStandInServer.listen((request, res) => standIn!.answer(request, res));
    standIn = new DataForSeoStandIn(server, login, password);
    return standIn;
  }

  get baseUrl(): string {
    return this.server.baseUrl;
  }

  get requests(): RecordedRequest[] {
    return this.server.requests;
  }

  /** Reports `code` in an HTTP 200, as DataForSEO does for its own errors; null to stop. */
  failWithStatus(fault: DataForSeoStatusFault | null): void {
    this.statusFault = fault;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private async answer(request: RecordedRequest, res: ServerResponse): Promise<void> {
    if (request.method !== "POST" || request.path !== DATAFORSEO_STAND_IN_PATH) {
      return sendJson(res, 404, envelope(40400, "Not Found.", null));
    }
    if (!this.authorized(header(request.headers, "authorization"))) {
      return sendJson(res, 401, envelope(40100, "You are not authorized to access this resource. See your login details here: https://app.dataforseo.com/api-access .", null));
    }
    const tasks = request.body;
    if (!Array.isArray(tasks) || tasks.length === 0) {
      // 40503 "POST Data Is Invalid." is from memory of the docs, not the list we checked; our client never sends this.
      return sendJson(res, 200, envelope(40503, "POST Data Is Invalid.", null));
    }
    if (tasks.length > 1) {
      return sendJson(res, 200, envelope(40000, "You can set only one task at a time.", null));
    }
    const sent = tasks[0] as Record<string, unknown>;
    const invalid = invalidField(sent);
    if (invalid) return sendJson(res, 200, withTask(taskOf(40501, `Invalid Field: '${invalid}'.`, sent, null)));

    const page = { ...FIXTURE.tasks![0]!.result![0]!, keyword: sent.keyword as string };
    const answer = withTask(taskOf(20000, "Ok.", sent, [page]));

    if (this.paymentRequired) return sendJson(res, 402, envelope(40200, "Payment Required.", null));
    if (this.statusFault) {
      const { code, message, level } = this.statusFault;
      if (level === "request") return sendJson(res, 200, envelope(code, message, null));
      return sendJson(res, 200, withTask(taskOf(code, message, sent, null)));
    }
    switch (this.fault) {
      case "hang":
        return;
      case "unauthorized":
        return sendJson(res, 401, envelope(40100, "You are not authorized to access this resource.", null));
      case "rate-limited":
        return sendJson(res, 429, { message: "Too Many Requests" }, { "Retry-After": this.retryAfter });
      case "server-error":
        return sendJson(res, 500, envelope(50000, "Internal Error.", null));
      case "malformed-json":
        return sendTruncatedJson(res, answer);
      case "wrong-shape":
        // `tasks` as an object rather than the documented array.
        return sendJson(res, 200, { ...answer, tasks: { "0": answer.tasks![0] } });
      case "empty":
        // What DataForSEO sends when Google has no results for the keyword.
        return sendJson(res, 200, withTask(taskOf(40102, "No Search Results.", sent, null)));
      case "oversized":
        return streamOversized(res, `{"version":"0.1.20250428","status_code":20000,"status_message":"Ok.","tasks":[{"status_code":20000,"result":[{"items":[`, this.oversizedBytes);
      case "hostile":
        return sendJson(res, 200, withTask(taskOf(20000, "Ok.", sent, [{ ...page, items: hostileItems(page.items ?? []) }])));
      case null:
        return sendJson(res, 200, answer);
    }
  }

  private authorized(value: string | undefined): boolean {
    const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(value ?? "");
    if (!match) return false;
    return Buffer.from(match[1]!, "base64").toString("utf8") === `${this.login}:${this.password}`;
  }
}

/** The first field DataForSEO would refuse in the task, or null. */
function invalidField(task: Record<string, unknown>): string | null {
  if (typeof task !== "object" || task === null) return "task";
  if (typeof task.keyword !== "string" || !task.keyword.trim() || task.keyword.length > 700) return "keyword";
  if (!Number.isInteger(task.location_code) && typeof task.location_name !== "string") return "location_code";
  if (typeof task.language_code !== "string" && typeof task.language_name !== "string") return "language_code";
  if (task.depth !== undefined && !(Number.isInteger(task.depth) && (task.depth as number) >= 1 && (task.depth as number) <= 700)) return "depth";
  return null;
}

function envelope(code: number, message: string, tasks: DataForSeoTask[] | null): DataForSeoEnvelope {
  return {
    version: FIXTURE.version,
    status_code: code,
    status_message: message,
    time: "0.1342 sec.",
    cost: 0,
    tasks_count: tasks?.length ?? 0,
    tasks_error: tasks?.filter((task) => task.status_code !== 20000).length ?? 0,
    tasks,
  };
}

function withTask(task: DataForSeoTask): DataForSeoEnvelope {
  return { ...envelope(20000, "Ok.", [task]), cost: task.cost as number };
}

function taskOf(code: number, message: string, sent: Record<string, unknown>, result: DataForSeoTask["result"]): DataForSeoTask {
  const template = FIXTURE.tasks![0]!;
  return {
    ...template,
    status_code: code,
    status_message: message,
    cost: code === 20000 || code === 40102 ? template.cost : 0,
    result_count: result?.length ?? 0,
    data: { ...template.data, ...sent },
    result,
  };
}

/** The real items with hostile organic ones put in among them (see HOSTILE). */
function hostileItems(items: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const organic = items.filter((item) => item.type === "organic");
  const [first, second, third, fourth] = organic;
  return [
    items[0]!,
    { ...first, title: HOSTILE.scriptTitle },
    { ...second, rank_group: 2, url: HOSTILE.javascriptUrl, title: "Free descaler giveaway" },
    { ...third, rank_group: 3, title: HOSTILE.nulTitle, description: HOSTILE.nulSnippet },
    { ...fourth, rank_group: 4, description: HOSTILE.hugeSnippet },
    { ...first, rank_group: 5, url: HOSTILE.dataUrl, title: "Inline page" },
    { ...first, rank_group: 6, url: "https://numbers.example.com/", title: 42 },
    { ...first, rank_group: "7", rank_absolute: 11, url: "https://rank.example.com/page", title: "A rank given as text" },
  ];
}
