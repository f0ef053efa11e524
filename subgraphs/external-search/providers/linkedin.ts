/**
 * LinkedIn: an organization's page and its posts, through LinkedIn's versioned REST API
 * (Community Management), with the organization's own 3-legged OAuth access token:
 *
 *   GET {base}/organizations/{id}                              Organization Lookup, by id
 *   GET {base}/organizations?q=vanityName&vanityName={name}    Organization Lookup, finder by vanity name
 *   GET {base}/posts?author={urn}&q=author&count={n}&sortBy=LAST_MODIFIED   Posts API, finder by author
 *
 * each with `Authorization: Bearer <token>`, `LinkedIn-Version: YYYYMM` and
 * `X-Restli-Protocol-Version: 2.0.0`. What the API does not allow, and so this client does not
 * do: search members or posts by keyword (there is no such endpoint for third parties), read a
 * member's profile other than the token's own, or read a page's posts without one of its admin
 * roles (`r_organization_social`). Non-administrators get only an organization's id, name,
 * vanity name, website, logo and locations; its description is null for them.
 *
 * Failures: 401 is a token that expired (LinkedIn's tokens live 60 days) or was revoked, 403 a
 * token without the permission or role, both UNAUTHORIZED and never retried; 429 (LinkedIn's
 * daily quotas per application and per member) is RATE_LIMITED with its Retry-After honoured
 * by the policies; bodies are read under a size cap (boundedFetch) and every field is cleaned
 * (lib/external-apis/sanitize.ts) before anything keeps it.
 */
import { boundedFetch, type BoundedResponse } from "../../../lib/external-apis/bounded-fetch.js";
import { ExternalApiError } from "../../../lib/external-apis/errors.js";
import { plainText, safeUrl } from "../../../lib/external-apis/sanitize.js";
import type { CallOptions, LinkedInApi, LinkedInCredentials, LinkedInOrganizationData, LinkedInPostData } from "./types.js";

const PROVIDER = "linkedin";
export const LINKEDIN_API_URL = "https://api.linkedin.com/rest";
export const LINKEDIN_DEFAULT_VERSION = "202611";
/** The Posts API's finder returns at most 100 posts a page. */
export const LINKEDIN_MAX_POSTS = 100;
const MAX_NAME_CHARS = 200;
const MAX_DESCRIPTION_CHARS = 2_000;
/** LinkedIn caps a post's commentary at 3,000 characters. */
const MAX_POST_CHARS = 3_000;
const MAX_TITLE_CHARS = 300;
const MAX_VANITY_CHARS = 100;

const NUMERIC_ID = /^[1-9]\d{0,19}$/;
const POST_URN = /^urn:li:(?:share|ugcPost):\d{1,25}$/;
const ORGANIZATION_URN = /^urn:li:organization:(\d{1,20})$/;

export interface LinkedInClientOptions {
  /** Default https://api.linkedin.com/rest (a stand-in's URL in tests). */
  baseUrl?: string;
  /** The LinkedIn-Version header (YYYYMM). */
  version?: string;
  /** Largest response body read, in bytes. Default boundedFetch's. */
  maxResponseBytes?: number;
}

export class LinkedInClient implements LinkedInApi {
  private readonly baseUrl: string;
  private readonly version: string;
  private readonly maxResponseBytes: number | undefined;

  constructor(options: LinkedInClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? LINKEDIN_API_URL).replace(/\/+$/, "");
    this.version = options.version ?? LINKEDIN_DEFAULT_VERSION;
    this.maxResponseBytes = options.maxResponseBytes;
  }

  async organizationById(linkedInId: string, credentials: LinkedInCredentials, options: Pick<CallOptions, "signal">): Promise<LinkedInOrganizationData | null> {
    if (!NUMERIC_ID.test(linkedInId)) throw new ExternalApiError("BAD_REQUEST", PROVIDER, "was asked for an organization id that is not a number");
    const response = await this.get(`/organizations/${linkedInId}`, credentials, options.signal, true);
    if (!response) return null;
    const organization = parseOrganization(response.json());
    if (!organization) throw badResponse("answered without an organization's id and name");
    return organization;
  }

  async organizationByVanityName(vanityName: string, credentials: LinkedInCredentials, options: Pick<CallOptions, "signal">): Promise<LinkedInOrganizationData | null> {
    const name = vanityName.trim();
    if (!name || name.length > MAX_VANITY_CHARS) throw new ExternalApiError("BAD_REQUEST", PROVIDER, `was asked for a vanity name of ${name.length} characters`);
    const response = await this.get(`/organizations?q=vanityName&vanityName=${encodeURIComponent(name)}`, credentials, options.signal, false);
    const elements = elementsOf(response!.json());
    // The finder answers the page with exactly this handle (case-insensitive), or nothing.
    for (const element of elements) {
      const organization = parseOrganization(element);
      if (organization) return organization;
    }
    return null;
  }

  async organizationPosts(linkedInId: string, credentials: LinkedInCredentials, options: CallOptions): Promise<LinkedInPostData[]> {
    if (!NUMERIC_ID.test(linkedInId)) throw new ExternalApiError("BAD_REQUEST", PROVIDER, "was asked for the posts of an organization id that is not a number");
    const count = Math.max(1, Math.min(LINKEDIN_MAX_POSTS, Math.floor(Number.isFinite(options.limit) ? options.limit : 10)));
    const author = encodeURIComponent(`urn:li:organization:${linkedInId}`);
    const response = await this.get(`/posts?author=${author}&q=author&count=${count}&sortBy=LAST_MODIFIED`, credentials, options.signal, false);
    return parsePosts(response!.json(), count);
  }

  // Private: one GET with LinkedIn's headers; null for a 404 when `notFoundIsNull`.
  private async get(path: string, credentials: LinkedInCredentials, signal: AbortSignal, notFoundIsNull: boolean): Promise<BoundedResponse | null> {
    try {
      return await boundedFetch(
        `${this.baseUrl}${path}`,
        {
          method: "GET",
          headers: {
            Authorization: `Bearer ${credentials.token}`,
            "LinkedIn-Version": this.version,
            "X-Restli-Protocol-Version": "2.0.0",
            Accept: "application/json",
          },
        },
        { provider: PROVIDER, signal, maxBytes: this.maxResponseBytes },
      );
    } catch (error) {
      if (!(error instanceof ExternalApiError)) throw error;
      if (error.httpStatus === 404 && notFoundIsNull) return null;
      if (error.httpStatus === 401) {
        return unauthorized(401, "refused the organization's token (HTTP 401): it expired or was revoked; an admin reconnects LinkedIn with setExternalProviderCredentials");
      }
      if (error.httpStatus === 403) {
        return unauthorized(403, "refused the request (HTTP 403): the token lacks the permission (r_organization_social, rw_organization_admin) or its member is not an administrator of that page");
      }
      throw error;
    }
  }
}

function unauthorized(status: number, message: string): never {
  throw new ExternalApiError("UNAUTHORIZED", PROVIDER, message, undefined, status);
}

/** An Organization (Organization Lookup API); null when it has no usable id or name. */
export function parseOrganization(value: unknown): LinkedInOrganizationData | null {
  if (!isRecord(value)) return null;
  const id = typeof value.id === "number" && Number.isSafeInteger(value.id) && value.id > 0 ? String(value.id) : typeof value.id === "string" && NUMERIC_ID.test(value.id) ? value.id : null;
  const name = plainText(value.localizedName ?? localized(value.name), MAX_NAME_CHARS);
  if (!id || !name) return null;
  const vanity = typeof value.vanityName === "string" && /^[\p{L}\p{N}._-]{1,100}$/u.test(value.vanityName) ? value.vanityName : null;
  return {
    linkedInId: id,
    name,
    vanityName: vanity,
    website: safeUrl(value.localizedWebsite ?? localized(value.website)),
    description: plainText(value.localizedDescription ?? localized(value.description), MAX_DESCRIPTION_CHARS) || null,
  };
}

/**
 * The Posts API's finder answer as posts, newest first as LinkedIn sent them. Kept: PUBLISHED
 * posts with a readable URN and time that are shown in the feed (a post with
 * `feedDistribution: NONE` is an ad's "dark" creative, never on the page). Dropped one by one,
 * not the whole answer.
 */
export function parsePosts(body: unknown, limit: number): LinkedInPostData[] {
  const posts: LinkedInPostData[] = [];
  const seen = new Set<string>();
  for (const element of elementsOf(body)) {
    if (posts.length >= limit) break;
    if (!isRecord(element)) continue;
    const urn = typeof element.id === "string" && POST_URN.test(element.id) ? element.id : null;
    if (!urn || seen.has(urn)) continue;
    if (element.lifecycleState !== undefined && element.lifecycleState !== "PUBLISHED") continue;
    if (isRecord(element.distribution) && element.distribution.feedDistribution === "NONE") continue;
    const publishedAt = timeOf(element.publishedAt) ?? timeOf(element.createdAt);
    if (!publishedAt) continue;
    seen.add(urn);
    const author = typeof element.author === "string" ? ORGANIZATION_URN.exec(element.author) : null;
    const article = isRecord(element.content) && isRecord(element.content.article) ? element.content.article : null;
    posts.push({
      urn,
      organizationId: author?.[1] ?? null,
      text: plainText(littleTextToText(element.commentary), MAX_POST_CHARS),
      articleTitle: article ? plainText(article.title, MAX_TITLE_CHARS) || null : null,
      url: `https://www.linkedin.com/feed/update/${urn}/`,
      publishedAt,
    });
  }
  return posts;
}

/**
 * LinkedIn's "little text format" (commentary) as text: a mention `@[Name](urn:li:…)` becomes
 * `@Name`, a hashtag `{hashtag|\#|word}` becomes `#word`, and a backslash-escaped reserved
 * character (`\#`, `\(`, `\@` …) the character. What remains still goes through plainText.
 */
export function littleTextToText(value: unknown): string {
  if (typeof value !== "string") return "";
  return value
    .replace(/@\[((?:\\.|[^\]\\]){0,300})\]\(urn:li:[A-Za-z]+:[^)\s]{1,100}\)/g, (_whole, name: string) => `@${name}`)
    .replace(/\{hashtag\|\\?#\|((?:\\.|[^}\\]){1,300})\}/g, (_whole, word: string) => `#${word}`)
    .replace(/\\([|{}@[\]()<>#\\*_~])/g, "$1");
}

// Private: `elements` of a Rest.li collection answer (finders), which must be a list.
function elementsOf(body: unknown): unknown[] {
  if (!isRecord(body) || !Array.isArray(body.elements)) throw badResponse("answered without `elements`: not a Rest.li collection");
  return body.elements;
}

// Private: a MultiLocaleString's text ({ localized: { en_US: "…" }, preferredLocale }).
function localized(value: unknown): unknown {
  if (!isRecord(value) || !isRecord(value.localized)) return undefined;
  const preferred = isRecord(value.preferredLocale) ? `${String(value.preferredLocale.language)}_${String(value.preferredLocale.country)}` : "";
  return value.localized[preferred] ?? Object.values(value.localized)[0];
}

/** Epoch milliseconds as a Date, when they are a plausible time (1970 to 2200). */
function timeOf(value: unknown): Date | null {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0 || value > 7_258_118_400_000) return null;
  return new Date(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function badResponse(message: string): ExternalApiError {
  return new ExternalApiError("BAD_RESPONSE", PROVIDER, message, undefined, 200);
}
