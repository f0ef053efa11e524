/**
 * Whose key a provider call uses: the organization's own (stored sealed with lib/secrets under
 * the context `org:<id>/external/<provider>`, so a value copied to another organization or
 * provider does not open), else the platform's from the environment, else none (the provider
 * is not configured for that organization). Keys are opened here, at call time, and never
 * returned, logged or put in an error message.
 */
import type { PrismaClient } from "../../generated/prisma/client.js";
import type { ExternalProvider } from "../../generated/prisma/enums.js";
import { BriefCache } from "../../lib/cache/brief-cache.js";
import type { ExternalSearchConfig } from "../../lib/config.js";
import { withTenantScope } from "../../lib/database/tenant-scope.js";
import { badUserInput } from "../../lib/graphql/errors.js";
import type { SecretKeyring } from "../../lib/secrets/keyring.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import type { DataForSeoCredentials, LinkedInCredentials, PerplexityCredentials, SerperCredentials, SlackCredentials } from "./providers/types.js";

export interface CredentialsByProvider {
  SERPER: SerperCredentials;
  PERPLEXITY: PerplexityCredentials;
  DATAFORSEO: DataForSeoCredentials;
  SLACK: SlackCredentials;
  LINKEDIN: LinkedInCredentials;
  /** The answer model's key is the deployment's own (ANSWER_MODEL_*), held by its client: nothing to hand over. */
  LANGUAGE_MODEL: { platform: true };
}

export interface CredentialsInput {
  provider: ExternalProvider;
  apiKey?: string | null;
  login?: string | null;
  password?: string | null;
  token?: string | null;
  linkedInOrganization?: string | null;
}

export function credentialsContext(organizationId: string, provider: ExternalProvider): string {
  return `org:${organizationId}/external/${provider.toLowerCase()}`;
}

const PRINTABLE = /^[\x21-\x7e]+$/;

/** The fields a provider takes, checked, as they will be stored (sealed). */
export function validateCredentials(input: CredentialsInput): CredentialsByProvider[ExternalProvider] {
  const field = (name: "apiKey" | "login" | "password" | "token", min: number, max: number): string => {
    const value = input[name];
    if (typeof value !== "string" || value.length === 0) throw badUserInput(`input.${name}`, `${input.provider} needs ${name}.`);
    if (value.length < min || value.length > max || !PRINTABLE.test(value)) {
      throw badUserInput(`input.${name}`, `must be ${min} to ${max} printable characters without spaces (got ${value.length} characters).`);
    }
    return value;
  };
  const unused = (names: ("apiKey" | "login" | "password" | "token" | "linkedInOrganization")[]) => {
    for (const name of names) if (input[name] != null) throw badUserInput(`input.${name}`, `${input.provider} does not take ${name}.`);
  };
  switch (input.provider) {
    case "SERPER":
    case "PERPLEXITY":
      unused(["login", "password", "token", "linkedInOrganization"]);
      return { apiKey: field("apiKey", 8, 256) };
    case "DATAFORSEO":
      unused(["apiKey", "token", "linkedInOrganization"]);
      return { login: field("login", 3, 256), password: field("password", 8, 256) };
    case "SLACK": {
      unused(["apiKey", "login", "password", "linkedInOrganization"]);
      const token = field("token", 16, 512);
      if (!/^xox[pbea]-/.test(token)) throw badUserInput("input.token", "must be a Slack token (xoxp-… for a user token with search:read).");
      return { token };
    }
    case "LINKEDIN": {
      unused(["apiKey", "login", "password"]);
      // LinkedIn's access tokens are opaque and run to several hundred characters.
      const token = field("token", 16, 4096);
      return { token, linkedInOrganization: linkedInOrganizationId(input.linkedInOrganization, "input.linkedInOrganization") };
    }
    case "LANGUAGE_MODEL":
      throw badUserInput("input.provider", "LANGUAGE_MODEL is this deployment's answer model (ANSWER_MODEL_*): organizations cannot store their own key for it.");
  }
}

/**
 * A LinkedIn organization's numeric id from its digits or its URN (urn:li:organization:N), or
 * BAD_USER_INPUT naming `field`.
 */
export function linkedInOrganizationId(value: string | null | undefined, field: string): string {
  if (typeof value !== "string" || value.trim() === "") throw badUserInput(field, "LinkedIn needs the id of the organization's page: its number, or urn:li:organization:<number>.");
  const match = /^(?:urn:li:organization:)?([1-9]\d{0,19})$/.exec(value.trim());
  if (!match) throw badUserInput(field, `must be a LinkedIn organization id: digits, or urn:li:organization:<digits> (got ${JSON.stringify(value.slice(0, 60))}).`);
  return match[1]!;
}

/** How long a process trusts what it last read of an organization's stored keys (another process's change shows within this). */
const OWN_PROVIDERS_TTL_MS = 5_000;

export class ProviderCredentials {
  /**
   * Which providers each organization stored keys for, briefly: every unified search asks every
   * external provider, and most organizations store none, so "not configured" must not cost a
   * statement per provider per search. One read per organization at a time: when the entry
   * expires under load, every search in flight misses at once, and each of them asks for every
   * external provider (the search-path benchmark counted 2.85 of these lookups per search at 50
   * connections before this). store/remove invalidate it, so a read that started before a
   * change is never kept.
   */
  private readonly own = new BriefCache<string, Set<ExternalProvider>>({ ttlMs: OWN_PROVIDERS_TTL_MS });

  constructor(
    private readonly prisma: PrismaClient,
    private readonly config: ExternalSearchConfig,
    private readonly keyring: SecretKeyring | null,
  ) {}

  /** Whether the platform has its own key for the provider (environment). */
  platformConfigured(provider: ExternalProvider): boolean {
    return this.platformKeys(provider) !== null;
  }

  /** The providers the organization has stored its own keys for: one statement, no secret read. */
  async ownProviders(tenant: TenantContext): Promise<Set<ExternalProvider>> {
    const organizationId = tenant.organizationId;
    return this.own.get(organizationId, async () => {
      const rows = await withTenantScope(this.prisma, organizationId, (tx) =>
        tx.externalProviderCredentials.findMany({ where: { organizationId }, select: { provider: true } }),
      );
      return new Set(rows.map((row) => row.provider));
    });
  }

  /** The keys a call for `tenant` uses, or null when the provider is not configured for it. */
  async resolve<P extends ExternalProvider>(tenant: TenantContext, provider: P): Promise<CredentialsByProvider[P] | null> {
    if (!(await this.ownProviders(tenant)).has(provider)) return this.platformKeys(provider) as CredentialsByProvider[P] | null;
    const row = await withTenantScope(this.prisma, tenant.organizationId, (tx) =>
      tx.externalProviderCredentials.findUnique({ where: { organizationId_provider: { organizationId: tenant.organizationId, provider } }, select: { sealedSecret: true } }),
    );
    if (row) {
      if (!this.keyring) return null;
      return JSON.parse(this.keyring.open(row.sealedSecret, credentialsContext(tenant.organizationId, provider))) as CredentialsByProvider[P];
    }
    return this.platformKeys(provider) as CredentialsByProvider[P] | null;
  }

  /** Stores the organization's own key, sealed. */
  async store(tenant: TenantContext, input: CredentialsInput): Promise<void> {
    if (!this.keyring) throw new Error("SECRETS_NOT_CONFIGURED");
    const keys = validateCredentials(input);
    const sealedSecret = this.keyring.seal(JSON.stringify(keys), credentialsContext(tenant.organizationId, input.provider));
    await withTenantScope(this.prisma, tenant.organizationId, (tx) =>
      tx.externalProviderCredentials.upsert({
        where: { organizationId_provider: { organizationId: tenant.organizationId, provider: input.provider } },
        create: { organizationId: tenant.organizationId, provider: input.provider, sealedSecret },
        update: { sealedSecret },
      }),
    );
    this.forget(tenant.organizationId);
  }

  async remove(tenant: TenantContext, provider: ExternalProvider): Promise<void> {
    await withTenantScope(this.prisma, tenant.organizationId, (tx) => tx.externalProviderCredentials.deleteMany({ where: { organizationId: tenant.organizationId, provider } }));
    this.forget(tenant.organizationId);
  }

  private forget(organizationId: string): void {
    this.own.invalidate(organizationId);
  }

  private platformKeys(provider: ExternalProvider): CredentialsByProvider[ExternalProvider] | null {
    const { serper, perplexity, dataforseo } = this.config;
    switch (provider) {
      case "SERPER":
        return serper.apiKey ? { apiKey: serper.apiKey } : null;
      case "PERPLEXITY":
        return perplexity.apiKey ? { apiKey: perplexity.apiKey } : null;
      case "DATAFORSEO":
        return dataforseo.login && dataforseo.password ? { login: dataforseo.login, password: dataforseo.password } : null;
      case "SLACK":
      case "LINKEDIN":
        return null;
      case "LANGUAGE_MODEL":
        return this.config.answerModel ? { platform: true } : null;
    }
  }
}
