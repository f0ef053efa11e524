/**
 * The external-search machinery one process runs: the provider clients, one set of resilience
 * policies (bulkheads and breakers only work when every call to a provider shares them), the
 * credential resolver, the credit ledger, the result store and the answer cache. The subgraph
 * (index.ts) and the unified search's providers (search.ts) each build one from config.
 */
import { createResultCache, type ResultCache } from "../../lib/cache/result-cache.js";
import type { Config } from "../../lib/config.js";
import type { Database } from "../../lib/database/connect.js";
import { ProviderPolicies } from "../../lib/external-apis/policies.js";
import type { Logger } from "../../lib/logger.js";
import type { LanguageModel } from "../../lib/language-models/language-model.js";
import { languageModelFrom, PaidAnswerModel } from "./answer-model.js";
import { CreditLedger } from "./credit-ledger.js";
import { ExternalSearchService, LANGUAGE_MODEL_POLICY, type ExternalClients } from "./external-search-service.js";
import { ProviderCredentials } from "./provider-credentials.js";
import { DataForSeoClient } from "./providers/dataforseo.js";
import { LinkedInClient } from "./providers/linkedin.js";
import { PerplexityClient } from "./providers/perplexity.js";
import { SerperClient } from "./providers/serper.js";
import { SlackClient } from "./providers/slack.js";
import { ExternalResultStore } from "./result-store.js";

export interface ExternalSearchRuntime {
  service: ExternalSearchService;
  credentials: ProviderCredentials;
  ledger: CreditLedger;
  results: ExternalResultStore;
  policies: ProviderPolicies;
  cache: ResultCache;
  /** Grounded answers' model calls, through the service's paid-call path; its `model` is null when none is configured. */
  answerModel: PaidAnswerModel;
  close(): Promise<void>;
}

export interface ExternalSearchRuntimeOptions {
  database: Database;
  config: Config;
  logger: Logger;
  /** Replaces the real clients (never in production; tests use the stand-ins through the real clients instead). */
  clients?: Partial<ExternalClients>;
  /** Replaces the model built from ANSWER_MODEL_* (tests: a real client pointed at a stand-in with settings of their own). */
  languageModel?: LanguageModel | null;
  /** Replaces the answer cache built from REDIS_URL (tests: a cache that misbehaves on purpose). */
  cache?: ResultCache;
}

export function createExternalSearchRuntime({ database, config, logger, clients = {}, languageModel, cache: givenCache }: ExternalSearchRuntimeOptions): ExternalSearchRuntime {
  const external = config.externalSearch;
  const credentials = new ProviderCredentials(database.prisma, external, config.secrets.keyring);
  const ledger = new CreditLedger(database.prisma, external.defaultMonthlyBudget);
  const results = new ExternalResultStore(database.prisma);
  const longestTtl = Math.max(external.serper.cacheTtlSeconds, external.perplexity.cacheTtlSeconds, external.dataforseo.cacheTtlSeconds, external.slack.cacheTtlSeconds, external.linkedin.cacheTtlSeconds);
  const cache = givenCache ?? createResultCache({ redisUrl: config.search.redisUrl, redisKeyPrefix: config.search.redisKeyPrefix, ttlSeconds: longestTtl, logger });
  const shared = {
    attemptTimeoutMs: external.attemptTimeoutMs,
    deadlineMs: external.callTimeoutMs,
    failuresToOpen: external.breakerFailures,
    halfOpenAfterMs: external.breakerCooldownMs,
    concurrency: external.maxConcurrentCalls,
    queue: external.maxQueuedCalls,
    organizationShare: external.maxCallsPerOrganization,
  };
  // A researched answer takes seconds to write: its one attempt gets the whole deadline.
  // An answer streams for up to its time budget: one attempt gets all of it (the model cuts
  // itself there), and one retry fits only when a throttled or failing first attempt ended early.
  const modelBudgetMs = external.answerModel?.timeBudgetMs ?? external.callTimeoutMs;
  const policies = new ProviderPolicies({
    defaults: shared,
    providers: {
      perplexity: { attemptTimeoutMs: external.callTimeoutMs, maxRetries: 1 },
      [LANGUAGE_MODEL_POLICY]: { attemptTimeoutMs: modelBudgetMs + 1_000, deadlineMs: modelBudgetMs + 5_000, maxRetries: 1 },
    },
  });
  const service = new ExternalSearchService({
    config: external,
    credentials,
    ledger,
    results,
    cache,
    policies,
    clients: {
      serper: clients.serper ?? new SerperClient({ baseUrl: external.serper.baseUrl }),
      dataforseo: clients.dataforseo ?? new DataForSeoClient({ baseUrl: external.dataforseo.baseUrl, locationCode: external.dataforseo.locationCode, languageCode: external.dataforseo.languageCode }),
      perplexity: clients.perplexity ?? new PerplexityClient({ baseURL: external.perplexity.baseUrl, model: external.perplexity.model }),
      slack: clients.slack ?? new SlackClient({ slackApiUrl: external.slack.baseUrl }),
      linkedin: clients.linkedin ?? new LinkedInClient({ baseUrl: external.linkedin.baseUrl, version: external.linkedin.version }),
    },
    logger,
  });
  const model = languageModel === undefined ? languageModelFrom(external.answerModel) : languageModel;
  const answerModel = new PaidAnswerModel(service, model, external.answerModel);
  return { service, credentials, ledger, results, policies, cache, answerModel, close: () => cache.close() };
}
