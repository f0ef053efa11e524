/**
 * The external-search subgraph's part in the unified search: `web.serper`, `web.dataforseo`,
 * `slack.messages` and `linkedin.posts`, keyword-kind providers whose hits are WebResult,
 * SlackMessage and LinkedInPost entities.
 * Each is one call through ExternalSearchService, so credits, budgets, breakers and the answer
 * cache apply exactly as for `webSearch` and `slackSearch`; a provider that is not configured,
 * whose breaker is open or whose budget is spent is reported SKIPPED with the reason. The search
 * subgraph reaches it through the subgraph's index.ts, which re-exports this module.
 *
 * Filters: web providers apply `sites` as Google's `site:` operators in the query they send
 * (Serper and DataForSEO both pass it to Google), and drop any result whose host is not one of
 * the sites should the engine ignore the operator; no other field describes a web result, so a
 * search filtered by any other field skips them. Slack's search modifiers work in whole days
 * and by Slack's own user and channel ids, not by our filter's values: Slack applies none.
 * LinkedIn has no keyword search of posts for third parties: `linkedin.posts` reads the recent
 * posts of the organization's stored page (one call, cached whatever the query) and ranks them
 * here by the query's words (PostgreSQL's english lexemes, as highlights match them); it applies
 * no filter either.
 */
import type { Config } from "../../lib/config.js";
import type { Database } from "../../lib/database/connect.js";
import type { AnswerModel } from "../../lib/language-models/language-model.js";
import type { Logger } from "../../lib/logger.js";
import { SearchProviderSkippedError, type DomainSearch, type ProviderHit, type ProviderRequest, type SearchProvider } from "../../lib/retrieval/search-provider.js";
import { MAX_QUERY_CHARACTERS, type CallReport, type ExternalSearchService } from "./external-search-service.js";
import { externalResultHighlights } from "./highlights.js";
import { createExternalSearchRuntime, type ExternalSearchRuntimeOptions } from "./runtime.js";
import { hostMatchesSites, type FilterField } from "../../lib/retrieval/search-filter.js";
import { runLexeme } from "../../lib/retrieval/english-analyzer.js";
import { TYPENAME_OF_KIND, type StoredLinkedInPost } from "./result-store.js";

/** Slack messages asked per search (one call; the cache keys on it). */
const SLACK_MESSAGES_PER_CALL = 20;
/** Recent LinkedIn posts read per search and matched here (one call whatever the query, so the cache serves every query). */
export const LINKEDIN_POSTS_PER_CALL = 50;
const WORD_RUN = /[\p{L}\p{N}]+/gu;

function outcome(report: CallReport): void {
  if (report.status === "SKIPPED") throw new SearchProviderSkippedError(report.reason ?? "skipped", !report.reason?.includes("is not configured"));
  if (report.status === "TIMEOUT" || report.status === "ERROR") throw new Error(report.reason ?? `${report.provider.toLowerCase()} failed`);
}

function tooLong(query: string): void {
  if (query.length > MAX_QUERY_CHARACTERS) throw new SearchProviderSkippedError(`external providers take queries of at most ${MAX_QUERY_CHARACTERS} characters (this one has ${query.length})`, false);
}

/** The query with the sites as Google operators: `q site:a.com` or `q (site:a.com OR site:b.org)`. */
export function withSites(query: string, sites: readonly string[] | null | undefined): string {
  if (!sites || sites.length === 0) return query;
  const operators = sites.map((site) => `site:${site}`);
  return `${query} ${operators.length === 1 ? operators[0] : `(${operators.join(" OR ")})`}`;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return "";
  }
}

class WebProvider implements SearchProvider {
  readonly kind = "KEYWORD" as const;
  readonly itemTypes = ["WebResult"];
  readonly filters: readonly FilterField[] = ["sites"];
  readonly latency = "REMOTE" as const;
  readonly name: string;
  readonly description: string;

  constructor(
    private readonly service: ExternalSearchService,
    private readonly provider: "SERPER" | "DATAFORSEO",
  ) {
    this.name = provider === "SERPER" ? "web.serper" : "web.dataforseo";
    this.description =
      provider === "SERPER"
        ? `Google results through Serper (${service.estimate("SERPER")} credits per uncached search).`
        : `Live Google results through DataForSEO (${service.estimate("DATAFORSEO")} credits per uncached search).`;
  }

  async search({ tenant, query, window, signal, filter }: ProviderRequest): Promise<ProviderHit[]> {
    const sites = filter?.sites ?? null;
    const sent = withSites(query, sites);
    tooLong(sent);
    const { report, value } = await this.service.webResults(tenant, this.provider, sent, false, signal);
    outcome(report);
    const results = (value ?? []).filter((result) => sites === null || hostMatchesSites(hostOf(result.url), sites));
    const stored = await this.service.storeWebResults(tenant, results.slice(0, window));
    return stored.map((result) => ({ ref: { typename: "WebResult", id: result.id }, nativeScore: 1 / result.position, attributes: { site: hostOf(result.url) } }));
  }
}

class SlackProvider implements SearchProvider {
  readonly name = "slack.messages";
  readonly kind = "KEYWORD" as const;
  readonly itemTypes = ["SlackMessage"];
  readonly filters: readonly FilterField[] = [];
  readonly latency = "REMOTE" as const;
  readonly description = "Messages of your organization's Slack workspace that match (search.messages with your organization's token).";

  constructor(private readonly service: ExternalSearchService) {}

  async search({ tenant, query, window, signal }: ProviderRequest): Promise<ProviderHit[]> {
    tooLong(query);
    const { messages, report } = await this.service.slackMessages(tenant, query, SLACK_MESSAGES_PER_CALL, false, signal);
    outcome(report);
    return messages.slice(0, window).map((message, index) => ({ ref: { typename: "SlackMessage", id: message.id }, nativeScore: 1 / (index + 1) }));
  }
}

class LinkedInPostsProvider implements SearchProvider {
  readonly name = "linkedin.posts";
  readonly kind = "KEYWORD" as const;
  readonly itemTypes = ["LinkedInPost"];
  readonly filters: readonly FilterField[] = [];
  readonly latency = "REMOTE" as const;
  readonly description: string;

  constructor(private readonly service: ExternalSearchService) {
    this.description = `Recent posts of your organization's LinkedIn page that match (read with your organization's token, ${service.estimate("LINKEDIN")} credits per uncached read; LinkedIn offers no keyword search, so the words are matched here).`;
  }

  async search({ tenant, query, window, signal }: ProviderRequest): Promise<ProviderHit[]> {
    tooLong(query);
    const { posts, report } = await this.service.linkedInPosts(tenant, null, LINKEDIN_POSTS_PER_CALL, false, signal);
    outcome(report);
    return rankPostsByWords(posts, query)
      .slice(0, window)
      .map(({ post, score }) => ({ ref: { typename: "LinkedInPost", id: post.id }, nativeScore: score }));
  }
}

/** Lexemes of a text's runs of letters and digits, with their counts (stop words dropped). */
function lexemeCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [run] of text.matchAll(WORD_RUN)) {
    const lexeme = runLexeme(run);
    if (lexeme) counts.set(lexeme, (counts.get(lexeme) ?? 0) + 1);
  }
  return counts;
}

/**
 * Posts that share a word with the query, best first: each query lexeme a post holds adds
 * 1 + ln(its count), so more of the query's words beat one word repeated; ties go to the newer
 * post. A post with none of the words is no hit.
 */
export function rankPostsByWords(posts: readonly StoredLinkedInPost[], query: string): { post: StoredLinkedInPost; score: number }[] {
  const wanted = [...lexemeCounts(query).keys()];
  if (wanted.length === 0) return [];
  const ranked: { post: StoredLinkedInPost; score: number }[] = [];
  for (const post of posts) {
    const counts = lexemeCounts(`${post.articleTitle ?? ""} ${post.text}`);
    let score = 0;
    for (const lexeme of wanted) {
      const count = counts.get(lexeme) ?? 0;
      if (count > 0) score += 1 + Math.log(count);
    }
    if (score > 0) ranked.push({ post, score });
  }
  return ranked.sort((a, b) => b.score - a.score || b.post.publishedAt.getTime() - a.post.publishedAt.getTime());
}

export interface ExternalSearchDomain extends DomainSearch {
  /**
   * The language model of grounded answers behind the paid-call path (credits, breaker, dry run);
   * `model` null when none is configured. `maxOutputTokens` is the deployment's cap
   * (ANSWER_MODEL_MAX_OUTPUT_TOKENS, 0 without a model): a request asking more gets that many.
   */
  answerModel: AnswerModel & { readonly maxOutputTokens: number };
}

export function externalSearch(dependencies: ExternalSearchRuntimeOptions & { database: Database; config: Config; logger: Logger }): ExternalSearchDomain {
  const runtime = createExternalSearchRuntime(dependencies);
  const { service, results } = runtime;
  return {
    domain: "external-search",
    answerModel: runtime.answerModel,
    providers: [new WebProvider(service, "SERPER"), new WebProvider(service, "DATAFORSEO"), new SlackProvider(service), new LinkedInPostsProvider(service)],
    async liveEntities(tenant, refs) {
      const ids = refs.filter((ref) => ref.typename === "WebResult" || ref.typename === "SlackMessage" || ref.typename === "LinkedInPost").map((ref) => ref.id);
      if (ids.length === 0) return new Set();
      const rows = await results.findByIds(tenant, ids);
      return new Set(rows.map((row) => `${TYPENAME_OF_KIND[row.kind]}:${row.id}`));
    },
    highlights: (tenant, refs, query, options) => externalResultHighlights(dependencies.database.prisma, tenant, refs, query, options),
    close: () => runtime.close(),
  };
}
