/**
 * Resolvers of the external-search subgraph (schema.graphql beside this file): argument checks,
 * and the mapping between the schema and the service. Every call, credit and cache rule lives in
 * external-search-service.ts; every entity a request touches goes through its loader.
 */
import type { GraphQLResolverMap } from "@apollo/subgraph/dist/schema-helper/index.js";
import DataLoader from "dataloader";
import { GraphQLError } from "graphql";
import { DateTime } from "../../lib/graphql/date-time.js";
import { resolveEntityReferences } from "../../lib/graphql/entity-references.js";
import { badUserInput } from "../../lib/graphql/errors.js";
import type { RequestContext } from "../../lib/graphql/subgraph-server.js";
import type { ProviderPolicies } from "../../lib/external-apis/policies.js";
import { requireAdmin } from "../../lib/tenancy/roles.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import type { CreditLedger, ExternalProvider } from "./credit-ledger.js";
import { MAX_QUERY_CHARACTERS, type ExternalSearchService, type LinkedInOrganizationLookup } from "./external-search-service.js";
import { linkedInOrganizationId, type CredentialsInput, type ProviderCredentials } from "./provider-credentials.js";
import { isResultId, type ExternalResultStore, type StoredResult } from "./result-store.js";

export interface ExternalSearchContext extends RequestContext {
  service: ExternalSearchService;
  credentials: ProviderCredentials;
  ledger: CreditLedger;
  policies: ProviderPolicies;
  /** Whether organizations' keys can be stored (SECRETS_ENCRYPTION_KEYS is set). */
  canStoreSecrets: boolean;
  /** Created on first use, after the tenant is known. */
  resultById(): DataLoader<string, StoredResult | null>;
}

export function createResultLoader(store: ExternalResultStore, tenant: TenantContext): DataLoader<string, StoredResult | null> {
  return new DataLoader(async (ids: readonly string[]) => {
    const rows = await store.findByIds(tenant, ids);
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id) ?? null);
  }, { maxBatchSize: 1000 });
}

const PROVIDERS: readonly ExternalProvider[] = ["SERPER", "PERPLEXITY", "DATAFORSEO", "SLACK", "LINKEDIN"];
const VANITY_NAME = /^[\p{L}\p{N}._-]{1,100}$/u;
const MAX_REPORT_DAYS = 92;
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A query as every provider takes it: control characters are spaces; 1 to 400 characters once trimmed. */
export function externalQuery(raw: string, field = "query"): string {
  if (raw.length > MAX_QUERY_CHARACTERS * 4) throw badUserInput(field, `must be at most ${MAX_QUERY_CHARACTERS} characters (got ${raw.length}).`);
  const text = raw.replace(/[\u0000-\u001f\u007f-\u009f]/g, " ").replace(/\s+/g, " ").trim();
  if (text.length === 0) throw badUserInput(field, "must not be empty.");
  if (text.length > MAX_QUERY_CHARACTERS) throw badUserInput(field, `must be at most ${MAX_QUERY_CHARACTERS} characters (got ${text.length}).`);
  if (UNPAIRED_SURROGATE.test(text)) throw badUserInput(field, "must be valid Unicode (it has an unpaired surrogate).");
  return text;
}

/** `linkedInOrganization`'s arguments: exactly one of id and vanityName, each checked. */
function linkedInLookup(args: { id?: string | null; vanityName?: string | null }): LinkedInOrganizationLookup {
  const hasId = args.id != null;
  const hasVanityName = args.vanityName != null;
  if (hasId === hasVanityName) throw badUserInput(hasId ? "vanityName" : "id", "give exactly one of `id` and `vanityName`.");
  if (hasId) return { linkedInId: linkedInOrganizationId(args.id, "id") };
  const vanityName = args.vanityName!.trim();
  if (!VANITY_NAME.test(vanityName)) {
    throw badUserInput("vanityName", `must be a LinkedIn page's vanity name: 1 to 100 letters, digits, ".", "_" or "-", as in linkedin.com/company/<vanityName> (got ${args.vanityName!.length} characters).`);
  }
  return { vanityName };
}

function limitOf(value: number | null | undefined, fallback: number, max: number): number {
  const limit = value ?? fallback;
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw badUserInput("limit", `must be an integer from 1 to ${max} (got ${limit}).`);
  return limit;
}

function monthStart(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

async function providerInfo(context: ExternalSearchContext, provider: ExternalProvider, own: Set<ExternalProvider>) {
  const tenant = context.requireTenant();
  const breaker = context.policies.breakerState(provider.toLowerCase(), tenant.organizationId);
  const settings = context.service;
  return {
    provider,
    configured: context.credentials.platformConfigured(provider) || (own.has(provider) && context.canStoreSecrets),
    hasOwnCredentials: own.has(provider),
    creditsPerCall: provider === "PERPLEXITY" ? settings.basePrice("PERPLEXITY") : settings.estimate(provider),
    creditsPer1kTokens: provider === "PERPLEXITY" ? settings.pricePer1kTokens() : null,
    cacheTtlSeconds: settings.cacheTtlSeconds(provider),
    breakerOpen: breaker.state === "open",
    retryAt: breaker.state === "open" ? (breaker.retryAt ?? null) : null,
  };
}

export const resolvers: GraphQLResolverMap<ExternalSearchContext> = {
  DateTime,

  Query: {
    _entities: resolveEntityReferences,
    webSearch(_source, args: { query: string; providers?: ("SERPER" | "DATAFORSEO")[] | null; limit?: number | null; dryRun?: boolean | null }, context) {
      const tenant = context.requireTenant();
      return context.service.webSearch(tenant, externalQuery(args.query), args.providers ?? null, limitOf(args.limit, 10, 50), args.dryRun ?? false);
    },
    discoverQuestions(_source, args: { query: string; dryRun?: boolean | null }, context) {
      return context.service.discoverQuestions(context.requireTenant(), externalQuery(args.query), args.dryRun ?? false);
    },
    research(_source, args: { query: string; dryRun?: boolean | null }, context) {
      return context.service.research(context.requireTenant(), externalQuery(args.query), args.dryRun ?? false);
    },
    slackSearch(_source, args: { query: string; limit?: number | null; dryRun?: boolean | null }, context) {
      return context.service.slackSearch(context.requireTenant(), externalQuery(args.query), limitOf(args.limit, 20, 50), args.dryRun ?? false);
    },
    linkedInOrganization(_source, args: { id?: string | null; vanityName?: string | null; dryRun?: boolean | null }, context) {
      const tenant = context.requireTenant();
      return context.service.linkedInOrganization(tenant, linkedInLookup(args), args.dryRun ?? false);
    },
    linkedInPosts(_source, args: { organization?: string | null; limit?: number | null; dryRun?: boolean | null }, context) {
      const tenant = context.requireTenant();
      const organization = args.organization == null ? null : linkedInOrganizationId(args.organization, "organization");
      return context.service.linkedInPostsResult(tenant, organization, limitOf(args.limit, 20, 100), args.dryRun ?? false);
    },
    async externalProviders(_source, _args, context) {
      const own = await context.credentials.ownProviders(context.requireTenant());
      return Promise.all(PROVIDERS.map((provider) => providerInfo(context, provider, own)));
    },
    credits(_source, args: { from?: Date | null; to?: Date | null }, context) {
      const tenant = context.requireTenant();
      const to = args.to ?? new Date();
      const from = args.from ?? monthStart(to);
      if (from >= to) throw badUserInput("from", "must be before `to`.");
      if (to.getTime() - from.getTime() > MAX_REPORT_DAYS * 86_400_000) throw badUserInput("to", `must be at most ${MAX_REPORT_DAYS} days after \`from\`.`);
      return context.ledger.report(tenant, from, to);
    },
  },

  Mutation: {
    async setExternalProviderCredentials(_source, args: { input: CredentialsInput }, context) {
      const tenant = context.requireTenant();
      // The organization's key decides whose account every member's searches go to.
      requireAdmin(tenant, `Storing the organization's ${args.input.provider} key`);
      if (!context.canStoreSecrets) {
        throw new GraphQLError("This deployment cannot store provider keys: SECRETS_ENCRYPTION_KEYS is not configured. Ask its operator to set it.", { extensions: { code: "SECRETS_NOT_CONFIGURED" } });
      }
      await context.credentials.store(tenant, args.input);
      return providerInfo(context, args.input.provider, await context.credentials.ownProviders(tenant));
    },
    async deleteExternalProviderCredentials(_source, args: { provider: ExternalProvider }, context) {
      const tenant = context.requireTenant();
      requireAdmin(tenant, `Removing the organization's ${args.provider} key`);
      await context.credentials.remove(tenant, args.provider);
      return providerInfo(context, args.provider, await context.credentials.ownProviders(tenant));
    },
    async setCreditBudget(_source, args: { monthlyBudget?: number | null }, context) {
      const tenant = context.requireTenant();
      requireAdmin(tenant, "Setting the organization's credit budget");
      await context.ledger.setBudget(tenant.organizationId, args.monthlyBudget ?? null, "admin");
      const now = new Date();
      return context.ledger.report(tenant, monthStart(now), now);
    },
  },

  CreditReport: {
    // The budget and balance are every member's business (they decide whether a search may
    // spend); the breakdown by day and provider is the organization's usage, for admins.
    usage(report: { usage: unknown }, _args, context) {
      requireAdmin(context.requireTenant(), "Reading the organization's credit usage by day and provider");
      return report.usage;
    },
  },

  WebResult: {
    async __resolveReference(reference: { id?: unknown }, context: ExternalSearchContext) {
      context.requireTenant();
      if (typeof reference.id !== "string") throw badUserInput("id", "must be a WebResult id string.");
      if (!isResultId(reference.id)) return null;
      const row = await context.resultById().load(reference.id);
      return row?.kind === "WEB" ? row : null;
    },
    provider: (result: { provider: string }) => result.provider.toUpperCase(),
  },

  LinkedInOrganization: {
    async __resolveReference(reference: { id?: unknown }, context: ExternalSearchContext) {
      context.requireTenant();
      if (typeof reference.id !== "string") throw badUserInput("id", "must be a LinkedInOrganization id string.");
      if (!isResultId(reference.id)) return null;
      const row = await context.resultById().load(reference.id);
      return row?.kind === "LINKEDIN_ORGANIZATION" ? row : null;
    },
    pageUrl: (organization: { vanityName: string | null }) => (organization.vanityName ? `https://www.linkedin.com/company/${encodeURIComponent(organization.vanityName)}/` : null),
  },

  LinkedInPost: {
    async __resolveReference(reference: { id?: unknown }, context: ExternalSearchContext) {
      context.requireTenant();
      if (typeof reference.id !== "string") throw badUserInput("id", "must be a LinkedInPost id string.");
      if (!isResultId(reference.id)) return null;
      const row = await context.resultById().load(reference.id);
      return row?.kind === "LINKEDIN_POST" ? row : null;
    },
  },

  SlackMessage: {
    async __resolveReference(reference: { id?: unknown }, context: ExternalSearchContext) {
      context.requireTenant();
      if (typeof reference.id !== "string") throw badUserInput("id", "must be a SlackMessage id string.");
      if (!isResultId(reference.id)) return null;
      const row = await context.resultById().load(reference.id);
      return row?.kind === "SLACK" ? row : null;
    },
  },
};
