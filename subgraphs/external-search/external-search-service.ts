/**
 * Every paid or rate-limited call this subgraph makes goes through `call()`, in this order:
 *
 *   1. credentials: the organization's own key, else the platform's; none → SKIPPED "not configured";
 *   2. the cache (per organization, per provider TTL): a hit is CACHED and spends nothing;
 *   3. a dry run stops here: SKIPPED with the estimate;
 *   4. an open breaker for (provider, organization) → SKIPPED with when it retries, before any
 *      credit is reserved;
 *   5. the credit reservation (credit-ledger.ts): a spent budget → SKIPPED "credit budget spent";
 *   6. the call itself under the resilience policies (lib/external-apis/policies.ts: bulkhead,
 *      breaker, retries honouring Retry-After, timeouts);
 *   7. settlement: the call's record and its ledger row together, at the real price (0 when it
 *      failed; released when it was never sent); a good answer is cached.
 *
 * `webSearch`, `discoverQuestions`, `research`, `slackSearch`, `linkedInOrganization` and
 * `linkedInPosts` (the GraphQL operations), the unified search's `web.*`, `slack.messages` and
 * `linkedin.posts` providers (search.ts) and grounded answers' model calls (answer-model.ts:
 * priced by the prompt's tokens, never cached) all use it, so a budget, a breaker and a cached
 * answer mean the same wherever a call comes from.
 */
import { createHash } from "node:crypto";
import type { ResultCache } from "../../lib/cache/result-cache.js";
import type { ExternalSearchConfig } from "../../lib/config.js";
import type { ProviderPolicies } from "../../lib/external-apis/policies.js";
import { normalizeUrl } from "../../lib/external-apis/sanitize.js";
import type { Logger } from "../../lib/logger.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { CreditBudgetSpentError, roundCredits, type CreditLedger, type ExternalProvider } from "./credit-ledger.js";
import type { CredentialsByProvider, ProviderCredentials } from "./provider-credentials.js";
import type { DataForSeoApi, LinkedInApi, LinkedInOrganizationData, LinkedInPostData, PerplexityApi, RelatedQuestion, ResearchAnswer, SerpAnswer, SerperApi, SlackApi, SlackMessageData, WebResultData } from "./providers/types.js";
import type { ExternalResultStore, StoredLinkedInOrganization, StoredLinkedInPost, StoredSlackMessage, StoredWebResult } from "./result-store.js";

export const MAX_QUERY_CHARACTERS = 400;
/** Results asked of a web provider per call: one size, so webSearch, discoverQuestions and the unified search share cached answers. */
export const WEB_RESULTS_PER_CALL = 10;
/** Tokens a research answer is expected to take, for its estimate. */
export const EXPECTED_RESEARCH_TOKENS = 1_000;

export type CallStatus = "OK" | "CACHED" | "SKIPPED" | "TIMEOUT" | "ERROR";

export interface CallReport {
  provider: ExternalProvider;
  status: CallStatus;
  reason: string | null;
  credits: number;
  estimatedCredits: number;
  returned: number;
  tookMs: number;
}

export interface ExternalClients {
  serper: SerperApi;
  perplexity: PerplexityApi;
  dataforseo: DataForSeoApi;
  slack: SlackApi;
  linkedin: LinkedInApi;
}

export interface ExternalSearchDependencies {
  config: ExternalSearchConfig;
  credentials: ProviderCredentials;
  ledger: CreditLedger;
  results: ExternalResultStore;
  cache: ResultCache;
  policies: ProviderPolicies;
  clients: ExternalClients;
  logger: Logger;
}

interface CallSpec<P extends ExternalProvider, T> {
  provider: P;
  operation: string;
  query: string;
  /** What distinguishes this call's answer beyond provider and query (e.g. the result count). */
  variant: string;
  dryRun: boolean;
  signal?: AbortSignal | undefined;
  /**
   * What of the credentials, beyond whose they are, decides the answer (LinkedIn: the page the
   * stored token reads): part of the cache key, so that changing it never serves the old answer.
   */
  scope?(credentials: CredentialsByProvider[P]): string;
  run(credentials: CredentialsByProvider[P], signal: AbortSignal): Promise<T>;
  count(value: T): number;
  /** The real price once the answer is in; default the estimate. */
  price?(value: T): number;
  /** What this call is estimated to cost when it depends on the call (a model's prompt); default the provider's estimate(). */
  estimate?: number;
}

interface CallResult<T> {
  report: CallReport;
  value: T | null;
  /** Why a call that was sent failed (TIMEOUT or ERROR), as the resilience policies reported it. */
  error?: Error;
}

/** A language model's call (answer-model.ts): what the paid-call path needs of it. */
export type LanguageModelCallSpec<T> = Pick<CallSpec<"LANGUAGE_MODEL", T>, "operation" | "query" | "dryRun" | "signal" | "run" | "price"> & { estimate: number };

export interface WebSearchAnswer {
  results: StoredWebResult[];
  calls: CallReport[];
  credits: number;
  estimatedCredits: number;
  dryRun: boolean;
}

const POLICY_NAME: Record<ExternalProvider, string> = { SERPER: "serper", PERPLEXITY: "perplexity", DATAFORSEO: "dataforseo", SLACK: "slack", LINKEDIN: "linkedin", LANGUAGE_MODEL: "language-model" };

/** The name a language model's bulkhead and breakers go by in the resilience policies. */
export const LANGUAGE_MODEL_POLICY = POLICY_NAME.LANGUAGE_MODEL;

/** Which LinkedIn organization to look up: by LinkedIn's numeric id or by its page's vanity name. */
export type LinkedInOrganizationLookup = { linkedInId: string } | { vanityName: string };

export class ExternalSearchService {
  constructor(private readonly deps: ExternalSearchDependencies) {}

  /** What one call of a provider costs before it runs (Perplexity: the base price plus the expected tokens). */
  estimate(provider: ExternalProvider): number {
    const { serper, perplexity, dataforseo, slack } = this.deps.config;
    switch (provider) {
      case "SERPER":
        return serper.credits;
      case "PERPLEXITY":
        return roundCredits(perplexity.credits + (perplexity.creditsPer1kTokens * EXPECTED_RESEARCH_TOKENS) / 1000);
      case "DATAFORSEO":
        return dataforseo.credits;
      case "SLACK":
        return slack.credits;
      case "LINKEDIN":
        return this.deps.config.linkedin.credits;
      case "LANGUAGE_MODEL": {
        // Without its prompt, a call is priced at its longest answer.
        const model = this.deps.config.answerModel;
        return model ? this.languageModelPrice(0, model.maxOutputTokens) : 0;
      }
    }
  }

  /** What a language model's call costs for these tokens (ANSWER_MODEL_CREDITS_PER_1K_*). */
  languageModelPrice(inputTokens: number, outputTokens: number): number {
    const model = this.deps.config.answerModel;
    if (!model) return 0;
    return roundCredits((inputTokens * model.creditsPer1kInputTokens + outputTokens * model.creditsPer1kOutputTokens) / 1000);
  }

  /** Credits per call before tokens (Perplexity's base price; the whole price of the others). */
  basePrice(provider: ExternalProvider): number {
    return provider === "PERPLEXITY" ? this.deps.config.perplexity.credits : this.estimate(provider);
  }

  /** Perplexity's price per thousand tokens, on top of its base price. */
  pricePer1kTokens(): number {
    return this.deps.config.perplexity.creditsPer1kTokens;
  }

  cacheTtlSeconds(provider: ExternalProvider): number {
    // Answers are never cached: the prompt holds the organization's passages and the caller's
    // question, and an answer is written for that one request.
    if (provider === "LANGUAGE_MODEL") return 0;
    return this.deps.config[POLICY_NAME[provider] as "serper" | "perplexity" | "dataforseo" | "slack" | "linkedin"].cacheTtlSeconds;
  }

  /** One language model call of a grounded answer (answer-model.ts), through the same steps as every paid call. */
  languageModelCall<T>(tenant: TenantContext, spec: LanguageModelCallSpec<T>): Promise<CallResult<T>> {
    return this.call<"LANGUAGE_MODEL", T>(tenant, { ...spec, provider: "LANGUAGE_MODEL", variant: "answer", count: () => 1 });
  }

  /** Organic results of one web provider (also the unified search's web.* providers). */
  webResults(tenant: TenantContext, provider: "SERPER" | "DATAFORSEO", query: string, dryRun: boolean, signal?: AbortSignal): Promise<CallResult<WebResultData[]>> {
    if (provider === "SERPER") {
      return this.serp(tenant, query, dryRun, signal).then(({ report, value }) => ({ report, value: value?.organic ?? null }));
    }
    return this.call(tenant, {
      provider: "DATAFORSEO",
      operation: "web_search",
      query,
      variant: `n${WEB_RESULTS_PER_CALL}`,
      dryRun,
      signal,
      run: (credentials, callSignal) => this.deps.clients.dataforseo.search(query, credentials, { signal: callSignal, limit: WEB_RESULTS_PER_CALL }),
      count: (results) => results.length,
    });
  }

  /** Stores web results as WebResult entities for `tenant` (search hits name them). */
  storeWebResults(tenant: TenantContext, results: readonly WebResultData[]): Promise<StoredWebResult[]> {
    return this.deps.results.saveWebResults(tenant, results);
  }

  /** Several web providers' results merged by rank, duplicate URLs collapsed (the better-ranked copy stays). */
  async webSearch(tenant: TenantContext, query: string, providers: readonly ("SERPER" | "DATAFORSEO")[] | null, limit: number, dryRun: boolean): Promise<WebSearchAnswer> {
    const asked = providers && providers.length > 0 ? [...new Set(providers)] : (["SERPER", "DATAFORSEO"] as const);
    const answers = await Promise.all(asked.map((provider) => this.webResults(tenant, provider, query, dryRun)));
    const merged = mergeByRank(answers.map(({ value }) => value ?? []), limit);
    const results = await this.deps.results.saveWebResults(tenant, merged);
    return { results, ...summary(answers.map(({ report }) => report), dryRun) };
  }

  /** People-also-ask questions and related searches, deduplicated (one Serper call, shared with webSearch's cache). */
  async discoverQuestions(tenant: TenantContext, query: string, dryRun: boolean) {
    const { report, value } = await this.serp(tenant, query, dryRun);
    return {
      questions: dedupeBy(value?.peopleAlsoAsk ?? [], (question: RelatedQuestion) => questionKey(question.question)),
      relatedSearches: dedupeBy(value?.relatedSearches ?? [], questionKey),
      ...summary([report], dryRun),
    };
  }

  /** A researched answer with its citations as WebResults. */
  async research(tenant: TenantContext, query: string, dryRun: boolean) {
    const { perplexity } = this.deps.config;
    const { report, value } = await this.call<"PERPLEXITY", ResearchAnswer>(tenant, {
      provider: "PERPLEXITY",
      operation: "research",
      query,
      variant: perplexity.model,
      dryRun,
      run: (credentials, signal) => this.deps.clients.perplexity.research(query, credentials, { signal, limit: 20 }),
      count: (answer) => answer.citations.length,
      price: (answer) => perplexity.credits + (perplexity.creditsPer1kTokens * (answer.usage.promptTokens + answer.usage.completionTokens)) / 1000,
    });
    const citations = value ? await this.deps.results.saveWebResults(tenant, value.citations) : [];
    return { answer: value?.answer ?? null, citations, model: value?.model ?? null, ...summary([report], dryRun) };
  }

  /** Slack messages of the organization's workspace (also the unified search's slack.messages provider). */
  async slackMessages(tenant: TenantContext, query: string, limit: number, dryRun: boolean, signal?: AbortSignal): Promise<{ messages: StoredSlackMessage[]; report: CallReport }> {
    const { report, value } = await this.call<"SLACK", SlackMessageData[]>(tenant, {
      provider: "SLACK",
      operation: "slack_search",
      query,
      variant: `n${limit}`,
      dryRun,
      signal,
      run: (credentials, callSignal) => this.deps.clients.slack.searchMessages(query, credentials, { signal: callSignal, limit }),
      count: (messages) => messages.length,
    });
    const messages = value ? await this.deps.results.saveSlackMessages(tenant, value) : [];
    return { messages, report };
  }

  async slackSearch(tenant: TenantContext, query: string, limit: number, dryRun: boolean) {
    const { messages, report } = await this.slackMessages(tenant, query, limit, dryRun);
    return { messages, ...summary([report], dryRun) };
  }

  /** One LinkedIn organization, by id or vanity name, stored as a LinkedInOrganization entity; null when LinkedIn has none. */
  async linkedInOrganization(tenant: TenantContext, lookup: LinkedInOrganizationLookup, dryRun: boolean) {
    const byId = "linkedInId" in lookup;
    const { report, value } = await this.call<"LINKEDIN", LinkedInOrganizationData | null>(tenant, {
      provider: "LINKEDIN",
      operation: "linkedin_organization",
      // Vanity names are case-insensitive at LinkedIn: one cached answer for every spelling.
      query: byId ? `id:${lookup.linkedInId}` : `vanityName:${lookup.vanityName.toLowerCase()}`,
      variant: "v1",
      dryRun,
      run: (credentials, signal) =>
        byId ? this.deps.clients.linkedin.organizationById(lookup.linkedInId, credentials, { signal }) : this.deps.clients.linkedin.organizationByVanityName(lookup.vanityName, credentials, { signal }),
      count: (organization) => (organization ? 1 : 0),
    });
    const organization: StoredLinkedInOrganization | null = value ? await this.deps.results.saveLinkedInOrganization(tenant, value) : null;
    return { organization, ...summary([report], dryRun) };
  }

  /**
   * Published posts of a LinkedIn organization (null: the page stored with the organization's
   * token), newest first, stored as LinkedInPost entities. Also the unified search's
   * `linkedin.posts`, which reads the stored page's posts and matches them itself.
   */
  async linkedInPosts(tenant: TenantContext, linkedInId: string | null, limit: number, dryRun: boolean, signal?: AbortSignal): Promise<{ posts: StoredLinkedInPost[]; report: CallReport }> {
    const { report, value } = await this.call<"LINKEDIN", LinkedInPostData[]>(tenant, {
      provider: "LINKEDIN",
      operation: "linkedin_posts",
      query: linkedInId ? `posts of urn:li:organization:${linkedInId}` : "posts of the stored page",
      variant: `n${limit}`,
      dryRun,
      signal,
      scope: (credentials) => (linkedInId ? "" : credentials.linkedInOrganization),
      run: (credentials, callSignal) => this.deps.clients.linkedin.organizationPosts(linkedInId ?? credentials.linkedInOrganization, credentials, { signal: callSignal, limit }),
      count: (posts) => posts.length,
    });
    const posts = value ? await this.deps.results.saveLinkedInPosts(tenant, value) : [];
    return { posts, report };
  }

  /** `linkedInPosts` (the GraphQL operation): the posts with the call's summary. */
  async linkedInPostsResult(tenant: TenantContext, linkedInId: string | null, limit: number, dryRun: boolean) {
    const { posts, report } = await this.linkedInPosts(tenant, linkedInId, limit, dryRun);
    return { posts, ...summary([report], dryRun) };
  }

  // Private: one Serper results page, shared by webSearch, discoverQuestions and web.serper.
  private serp(tenant: TenantContext, query: string, dryRun: boolean, signal?: AbortSignal): Promise<CallResult<SerpAnswer>> {
    return this.call<"SERPER", SerpAnswer>(tenant, {
      provider: "SERPER",
      operation: "serp",
      query,
      variant: `n${WEB_RESULTS_PER_CALL}`,
      dryRun,
      signal,
      run: (credentials, callSignal) => this.deps.clients.serper.search(query, credentials, { signal: callSignal, limit: WEB_RESULTS_PER_CALL }),
      count: (answer) => answer.organic.length,
    });
  }

  // Private: the steps in the file's header, for one provider call.
  private async call<P extends ExternalProvider, T>(tenant: TenantContext, spec: CallSpec<P, T>): Promise<CallResult<T>> {
    const started = performance.now();
    const estimatedCredits = spec.estimate ?? this.estimate(spec.provider);
    const report = (status: CallStatus, reason: string | null, credits = 0, returned = 0): CallReport => ({
      provider: spec.provider,
      status,
      reason,
      credits: roundCredits(credits),
      estimatedCredits,
      returned,
      tookMs: Math.round(performance.now() - started),
    });
    const name = POLICY_NAME[spec.provider];

    const credentials = await this.deps.credentials.resolve(tenant, spec.provider);
    if (!credentials) {
      return { report: report("SKIPPED", notConfigured(spec.provider)), value: null };
    }
    const cacheKey = this.cacheKey(tenant, spec, spec.scope?.(credentials) ?? "");
    const ttl = this.cacheTtlSeconds(spec.provider);
    if (ttl > 0) {
      const cached = await this.deps.cache.get(cacheKey);
      if (cached !== null) {
        const value = JSON.parse(cached, reviveDates) as T;
        return { report: report("CACHED", null, 0, spec.count(value)), value };
      }
    }
    if (spec.dryRun) return { report: report("SKIPPED", "dry run: nothing was called or spent"), value: null };
    const breaker = this.deps.policies.breakerState(name, tenant.organizationId);
    // Past its cool-down an open breaker lets a trial call through (the policies decide); before it, nothing is reserved.
    if (breaker.state === "open" && breaker.retryAt && breaker.retryAt.getTime() > Date.now()) {
      const wait = Math.ceil((breaker.retryAt.getTime() - Date.now()) / 1000);
      return { report: report("SKIPPED", `${name} is failing: its circuit breaker is open after ${breaker.consecutiveFailures} failures in a row; next try in ${wait} s`), value: null };
    }

    let reservation;
    try {
      reservation = await this.deps.ledger.reserve(tenant, spec.provider, spec.operation, spec.query, estimatedCredits);
    } catch (error) {
      if (error instanceof CreditBudgetSpentError) return { report: report("SKIPPED", error.message), value: null };
      throw error;
    }

    const outcome = await this.deps.policies.settle(name, tenant.organizationId, (signal) => spec.run(credentials, signal), { signal: spec.signal });
    const latencyMs = performance.now() - started;
    switch (outcome.status) {
      case "OK": {
        const price = Math.max(0, spec.price?.(outcome.value) ?? estimatedCredits);
        const returned = spec.count(outcome.value);
        await this.deps.ledger.settle(tenant, reservation, { status: "OK", results: returned, credits: price, latencyMs, error: null });
        // Sent now and not awaited (set never rejects): a stalled cache must not hold an answer
        // that is paid for and in hand. A lookup sent after it queues behind it on the cache's
        // one connection, so the next identical call still finds it.
        if (ttl > 0) void this.deps.cache.set(cacheKey, JSON.stringify(outcome.value), ttl);
        return { report: report("OK", null, price, returned), value: outcome.value };
      }
      case "SKIPPED":
        await this.deps.ledger.release(tenant, reservation);
        return { report: report("SKIPPED", outcome.reason), value: null };
      case "TIMEOUT":
        await this.deps.ledger.settle(tenant, reservation, { status: "TIMEOUT", results: 0, credits: 0, latencyMs, error: outcome.message });
        return { report: report("TIMEOUT", outcome.message), value: null, error: outcome.error };
      case "CANCELLED":
        await this.deps.ledger.settle(tenant, reservation, { status: "ERROR", results: 0, credits: 0, latencyMs, error: outcome.message });
        return { report: report("TIMEOUT", `${name}: the request went away before it answered`), value: null };
      default: {
        if (outcome.kind === "INTERNAL") this.deps.logger.error(`${name} call failed unexpectedly`, outcome.error);
        const reason = outcome.kind === "INTERNAL" ? `${name}: the call failed; the server log has the details` : outcome.message;
        await this.deps.ledger.settle(tenant, reservation, { status: "ERROR", results: 0, credits: 0, latencyMs, error: reason });
        return { report: report("ERROR", reason), value: null, error: outcome.error };
      }
    }
  }

  private cacheKey(tenant: TenantContext, spec: CallSpec<ExternalProvider, unknown>, scope: string): string {
    const digest = createHash("sha256").update(`${tenant.organizationId}\u0000${spec.query}${scope ? `\u0000${scope}` : ""}`).digest("hex").slice(0, 40);
    return `external:${spec.provider}:${spec.operation}:${spec.variant}:${digest}`;
  }
}

function notConfigured(provider: ExternalProvider): string {
  switch (provider) {
    case "SERPER":
      return "serper is not configured: the platform sets SERPER_API_KEY, or your organization stores its key with setExternalProviderCredentials";
    case "PERPLEXITY":
      return "perplexity is not configured: the platform sets PERPLEXITY_API_KEY, or your organization stores its key with setExternalProviderCredentials";
    case "DATAFORSEO":
      return "dataforseo is not configured: the platform sets DATAFORSEO_LOGIN and DATAFORSEO_PASSWORD, or your organization stores its login with setExternalProviderCredentials";
    case "SLACK":
      return "slack is not configured: store your organization's Slack user token (search:read) with setExternalProviderCredentials";
    case "LINKEDIN":
      return "linkedin is not configured: an admin stores your organization's LinkedIn access token and page id with setExternalProviderCredentials";
    case "LANGUAGE_MODEL":
      return "no answer model is configured: the platform sets ANSWER_MODEL_PROVIDER and ANSWER_MODEL";
  }
}

function summary(reports: CallReport[], dryRun: boolean) {
  return {
    calls: reports,
    credits: roundCredits(reports.reduce((sum, report) => sum + report.credits, 0)),
    // What it would cost without the cache, for the providers that can be called.
    estimatedCredits: roundCredits(reports.filter((report) => !report.reason?.includes("not configured")).reduce((sum, report) => sum + report.estimatedCredits, 0)),
    dryRun,
  };
}

/** Interleaves ranked lists (first of each, then second of each, …), keeping the first copy of each normalized URL. */
export function mergeByRank(lists: readonly (readonly WebResultData[])[], limit: number): WebResultData[] {
  const merged: WebResultData[] = [];
  const seen = new Set<string>();
  const longest = Math.max(0, ...lists.map((list) => list.length));
  for (let rank = 0; rank < longest && merged.length < limit; rank++) {
    for (const list of lists) {
      const result = list[rank];
      if (!result) continue;
      const key = normalizeUrl(result.url);
      if (seen.has(key)) continue;
      seen.add(key);
      merged.push(result);
      if (merged.length >= limit) break;
    }
  }
  return merged;
}

/** Questions compare without case, punctuation or repeated spaces. */
function questionKey(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
}

function dedupeBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = key(item);
    if (!k || seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function reviveDates(key: string, value: unknown): unknown {
  return (key === "fetchedAt" || key === "postedAt" || key === "publishedAt") && typeof value === "string" ? new Date(value) : value;
}
