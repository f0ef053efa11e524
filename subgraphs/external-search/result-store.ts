/**
 * Web results, Slack messages and LinkedIn organizations and posts as entities (external_results):
 * what lets a search hit, a `webSearch` answer or a research citation name a `WebResult`,
 * `SlackMessage`, `LinkedInOrganization` or `LinkedInPost` the gateway loads from this subgraph. A row belongs to the organization that retrieved it and is kept a
 * day after its last retrieval (longer than any cached page can point at it). The id of a web
 * result is a hash of (organization, provider, normalized URL): the same page found again is
 * the same entity, its title and snippet refreshed.
 */
import { createHash } from "node:crypto";
import type { PrismaClient } from "../../generated/prisma/client.js";
import type { ExternalProvider } from "../../generated/prisma/enums.js";
import { noteWriteOutsideMutation } from "../../lib/database/read-session.js";
import { withTenantLoads } from "../../lib/database/replica-reads.js";
import { withTenantScope } from "../../lib/database/tenant-scope.js";
import { normalizeUrl } from "../../lib/external-apis/sanitize.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import type { LinkedInOrganizationData, LinkedInPostData, SlackMessageData, WebResultData } from "./providers/types.js";

export const RESULT_RETENTION_HOURS = 24;
const RESULT_ID = /^[0-9a-f]{32}$/;

export interface StoredWebResult extends WebResultData {
  id: string;
}

export interface StoredSlackMessage extends SlackMessageData {
  /** Our entity id (the Slack id `<channel>:<ts>` is `slackId`). */
  id: string;
  slackId: string;
}

/** A LinkedIn organization as an entity: `id` is ours, `linkedInId` LinkedIn's. */
export interface StoredLinkedInOrganization extends LinkedInOrganizationData {
  id: string;
}

export interface StoredLinkedInPost extends LinkedInPostData {
  id: string;
}

export type StoredResult =
  | ({ kind: "WEB" } & StoredWebResult)
  | ({ kind: "SLACK" } & StoredSlackMessage)
  | ({ kind: "LINKEDIN_ORGANIZATION" } & StoredLinkedInOrganization)
  | ({ kind: "LINKEDIN_POST" } & StoredLinkedInPost);

/** The GraphQL typename of each kind of stored result. */
export const TYPENAME_OF_KIND = { WEB: "WebResult", SLACK: "SlackMessage", LINKEDIN_ORGANIZATION: "LinkedInOrganization", LINKEDIN_POST: "LinkedInPost" } as const;

export function isResultId(id: unknown): id is string {
  return typeof id === "string" && RESULT_ID.test(id);
}

const PROVIDER_ENUM: Record<WebResultData["provider"], ExternalProvider> = { serper: "SERPER", perplexity: "PERPLEXITY", dataforseo: "DATAFORSEO", slack: "SLACK", linkedin: "LINKEDIN" };
// Results come from search providers only; a language model's calls store none.
type ResultProvider = Exclude<ExternalProvider, "LANGUAGE_MODEL">;
const PROVIDER_NAME: Record<ResultProvider, WebResultData["provider"]> = { SERPER: "serper", PERPLEXITY: "perplexity", DATAFORSEO: "dataforseo", SLACK: "slack", LINKEDIN: "linkedin" };

function hashId(...parts: string[]): string {
  return createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 32);
}

export function webResultId(organizationId: string, result: Pick<WebResultData, "provider" | "url">): string {
  return hashId(organizationId, "web", result.provider, normalizeUrl(result.url));
}

export function slackMessageId(organizationId: string, message: Pick<SlackMessageData, "id">): string {
  return hashId(organizationId, "slack", message.id);
}

export function linkedInOrganizationEntityId(organizationId: string, linkedInId: string): string {
  return hashId(organizationId, "linkedin-organization", linkedInId);
}

export function linkedInPostId(organizationId: string, urn: string): string {
  return hashId(organizationId, "linkedin-post", urn);
}

export class ExternalResultStore {
  constructor(private readonly prisma: PrismaClient) {}

  /** Stores web results retrieved for `tenant` (one statement) and returns them with their ids, in order. */
  async saveWebResults(tenant: TenantContext, results: readonly WebResultData[]): Promise<StoredWebResult[]> {
    const stored = results.map((result) => ({ ...result, id: webResultId(tenant.organizationId, result) }));
    await this.save(
      tenant,
      stored.map((result) => ({ id: result.id, kind: "WEB" as const, provider: PROVIDER_ENUM[result.provider], url: result.url, title: result.title, snippet: result.snippet, position: result.position, channelId: null, channelName: null, author: null, postedAt: null, fetchedAt: result.fetchedAt })),
    );
    return stored;
  }

  async saveSlackMessages(tenant: TenantContext, messages: readonly SlackMessageData[]): Promise<StoredSlackMessage[]> {
    const stored = messages.map((message) => ({ ...message, slackId: message.id, id: slackMessageId(tenant.organizationId, message) }));
    await this.save(
      tenant,
      stored.map((message, index) => ({ id: message.id, kind: "SLACK" as const, provider: "SLACK" as const, url: message.permalink, title: message.channelName ?? "", snippet: message.text, position: index + 1, channelId: message.channelId, channelName: message.channelName, author: message.author, postedAt: message.postedAt, fetchedAt: new Date() })),
    );
    return stored;
  }

  /**
   * LinkedIn organizations and posts share the table's columns: `channel_id` holds the LinkedIn
   * organization id (a post's author), `channel_name` an organization's vanity name or a post's
   * URN, `title` an organization's name or the title of the article a post shares, `snippet` the
   * description or the post's text, `url` the website or the post's link, `posted_at` when a
   * post was published.
   */
  async saveLinkedInOrganization(tenant: TenantContext, organization: LinkedInOrganizationData): Promise<StoredLinkedInOrganization> {
    const stored = { ...organization, id: linkedInOrganizationEntityId(tenant.organizationId, organization.linkedInId) };
    await this.save(tenant, [
      { id: stored.id, kind: "LINKEDIN_ORGANIZATION", provider: "LINKEDIN", url: stored.website, title: stored.name, snippet: stored.description ?? "", position: 1, channelId: stored.linkedInId, channelName: stored.vanityName, author: null, postedAt: null, fetchedAt: new Date() },
    ]);
    return stored;
  }

  async saveLinkedInPosts(tenant: TenantContext, posts: readonly LinkedInPostData[]): Promise<StoredLinkedInPost[]> {
    const stored = posts.map((post) => ({ ...post, id: linkedInPostId(tenant.organizationId, post.urn) }));
    await this.save(
      tenant,
      stored.map((post, index) => ({ id: post.id, kind: "LINKEDIN_POST" as const, provider: "LINKEDIN" as const, url: post.url, title: post.articleTitle ?? "", snippet: post.text, position: index + 1, channelId: post.organizationId, channelName: post.urn, author: null, postedAt: post.publishedAt, fetchedAt: new Date() })),
    );
    return stored;
  }

  /**
   * Results among `ids` the caller's organization retrieved: one statement (for DataLoader and
   * cached pages). On the replica when the request may read there (lib/database/replica-reads.ts).
   */
  async findByIds(tenant: TenantContext, ids: readonly string[]): Promise<StoredResult[]> {
    const candidates = [...new Set(ids.filter(isResultId))];
    if (candidates.length === 0) return [];
    const rows = await withTenantLoads(this.prisma, tenant.organizationId, (tx) =>
      tx.externalResult.findMany({ where: { id: { in: candidates }, organizationId: tenant.organizationId } }),
    );
    return rows.map((row): StoredResult => {
      if (row.kind === "LINKEDIN_ORGANIZATION") {
        return { kind: "LINKEDIN_ORGANIZATION", id: row.id, linkedInId: row.channelId ?? "", name: row.title, vanityName: row.channelName, website: row.url, description: row.snippet || null };
      }
      if (row.kind === "LINKEDIN_POST") {
        return { kind: "LINKEDIN_POST", id: row.id, urn: row.channelName ?? "", organizationId: row.channelId, text: row.snippet, articleTitle: row.title || null, url: row.url ?? "", publishedAt: row.postedAt ?? row.fetchedAt };
      }
      return row.kind === "SLACK"
        ? {
            kind: "SLACK",
            id: row.id,
            slackId: `${row.channelId}:${row.postedAt?.getTime() ?? 0}`,
            channelId: row.channelId ?? "",
            channelName: row.channelName,
            author: row.author,
            text: row.snippet,
            permalink: row.url,
            postedAt: row.postedAt ?? row.fetchedAt,
          }
        : { kind: "WEB", id: row.id, url: row.url ?? "", title: row.title, snippet: row.snippet, position: row.position, provider: PROVIDER_NAME[row.provider as ResultProvider], fetchedAt: row.fetchedAt };
    });
  }

  // Private: one upsert for the batch, which also prunes the organization's rows not retrieved for a day.
  private async save(
    tenant: TenantContext,
    rows: { id: string; kind: StoredResult["kind"]; provider: ExternalProvider; url: string | null; title: string; snippet: string; position: number; channelId: string | null; channelName: string | null; author: string | null; postedAt: Date | null; fetchedAt: Date }[],
  ): Promise<void> {
    const unique = [...new Map(rows.map((row) => [row.id, row])).values()];
    if (unique.length === 0) return;
    // The gateway loads these results as entities right after this search answers (read-your-writes).
    noteWriteOutsideMutation();
    await withTenantScope(this.prisma, tenant.organizationId, (tx) => tx.$executeRaw`
      WITH pruned AS (
        DELETE FROM external_results
        WHERE organization_id = ${tenant.organizationId}
          AND retrieved_at < now() - make_interval(hours => ${RESULT_RETENTION_HOURS})
          AND id <> ALL(${unique.map((row) => row.id)}::text[])
      )
      INSERT INTO external_results (id, organization_id, kind, provider, url, title, snippet, position, channel_id, channel_name, author, posted_at, fetched_at)
      SELECT r.id, ${tenant.organizationId}, r.kind::"ExternalResultKind", r.provider::"ExternalProvider", r.url, r.title, r.snippet, r.position, r.channel_id, r.channel_name, r.author, r.posted_at, r.fetched_at
      FROM unnest(
        ${unique.map((row) => row.id)}::text[],
        ${unique.map((row) => row.kind)}::text[],
        ${unique.map((row) => row.provider)}::text[],
        ${unique.map((row) => row.url)}::text[],
        ${unique.map((row) => row.title.slice(0, 300))}::text[],
        ${unique.map((row) => row.snippet.slice(0, 4000))}::text[],
        ${unique.map((row) => row.position)}::int[],
        ${unique.map((row) => row.channelId)}::text[],
        ${unique.map((row) => row.channelName)}::text[],
        ${unique.map((row) => row.author)}::text[],
        ${unique.map((row) => row.postedAt)}::timestamptz[],
        ${unique.map((row) => row.fetchedAt)}::timestamptz[]
      ) AS r(id, kind, provider, url, title, snippet, position, channel_id, channel_name, author, posted_at, fetched_at)
      ON CONFLICT (organization_id, id) DO UPDATE SET
        title = EXCLUDED.title, snippet = EXCLUDED.snippet, position = EXCLUDED.position,
        fetched_at = EXCLUDED.fetched_at, retrieved_at = now()`);
  }
}
