/**
 * Whose AWS identity a knowledge base or vector store call runs under. Three modes:
 *
 * - `platform`: ours. The keys configured for the platform when there are any, otherwise the
 *   SDK's default provider chain (environment, shared files, SSO, container and instance roles).
 * - `user-keys`: the organization's own access key, stored sealed with the SecretKeyring under
 *   the context `org:<id>/aws-credentials`. It is opened here and nowhere else, at call time,
 *   and never logged or returned: callers only ever get a provider function for the SDK.
 * - `assume-role`: a role in the organization's account that trusts ours. The platform identity
 *   calls STS AssumeRole (with the organization's external id, if it set one, against the
 *   confused-deputy problem) and signs with the temporary credentials. Those are cached per
 *   (role, external id, organization) until 5 minutes before they expire, and concurrent callers
 *   share one in-flight AssumeRole, so a burst of searches costs one STS call, not one each.
 */
import { createHash } from "node:crypto";
import { AssumeRoleCommand, STSClient } from "@aws-sdk/client-sts";
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from "@smithy/types";
import type { SecretKeyring } from "../secrets/keyring.js";
import { AwsBackendError, toAwsBackendError } from "./errors.js";
import { iamRoleArnProblem } from "./resource-names.js";

export type AwsCredentialSettings =
  | { mode: "platform" }
  | { mode: "user-keys"; /** `sealUserKeys`' output, as stored. */ sealedKeys: string }
  | { mode: "assume-role"; roleArn: string; externalId?: string | undefined };

export interface AwsAccessKey {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

export interface AwsCredentialSourceOptions {
  /** Opens `user-keys`; without it that mode fails with a message saying so. */
  keyring?: SecretKeyring | undefined;
  /** The platform's own keys; when absent, the SDK's default provider chain. */
  platformKeys?: AwsAccessKey | undefined;
  /** Where STS is: its region (default us-east-1) and, for stand-ins or VPC endpoints, its URL. */
  sts?: { region?: string | undefined; endpoint?: string | undefined } | undefined;
  /** Lifetime asked of AssumeRole, in seconds (STS allows 900 up to the role's maximum). Default 3600. */
  assumeRoleDurationSeconds?: number | undefined;
  /** How long before expiry cached role credentials are renewed. Default 5 minutes. */
  refreshMarginMs?: number | undefined;
  /** The clock, in ms since the epoch (tests move it). */
  now?: (() => number) | undefined;
}

const REFRESH_MARGIN_MS = 5 * 60 * 1000;
const EXTERNAL_ID = /^[\w+=,.@:/-]{2,1224}$/;

/** The keyring context a user's AWS keys are sealed under: a value copied to another organization does not open. */
export function userKeysContext(organizationId: string): string {
  return `org:${organizationId}/aws-credentials`;
}

/** Seals an organization's access key for storage (the only form in which it is kept). */
export function sealUserKeys(keyring: SecretKeyring, organizationId: string, key: AwsAccessKey): string {
  checkAccessKey(key);
  return keyring.seal(JSON.stringify({ accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey, sessionToken: key.sessionToken }), userKeysContext(organizationId));
}

/**
 * The session name AWS records in the organization's CloudTrail: says who we are and for whom.
 * STS allows `[\w+=,.@-]{2,64}`; organization ids are arbitrary, so a readable slug plus a
 * hash of the exact id.
 */
export function roleSessionNameFor(organizationId: string): string {
  const hash = createHash("sha256").update(organizationId, "utf8").digest("hex").slice(0, 16);
  const slug = organizationId.replace(/[^\w+=,.@-]+/g, "-").slice(0, 64 - "context-search--".length - hash.length);
  return `context-search-${slug}-${hash}`.replace(/--+/g, "-");
}

interface CachedRole {
  credentials?: AwsCredentialIdentity;
  inFlight?: Promise<AwsCredentialIdentity>;
}

export class AwsCredentialSource {
  private readonly now: () => number;
  private readonly refreshMarginMs: number;
  private readonly durationSeconds: number;
  private readonly platform: AwsCredentialIdentityProvider;
  private readonly roles = new Map<string, CachedRole>();
  private sts: STSClient | undefined;

  constructor(private readonly options: AwsCredentialSourceOptions = {}) {
    this.now = options.now ?? Date.now;
    this.refreshMarginMs = options.refreshMarginMs ?? REFRESH_MARGIN_MS;
    this.durationSeconds = options.assumeRoleDurationSeconds ?? 3600;
    if (!Number.isInteger(this.durationSeconds) || this.durationSeconds < 900 || this.durationSeconds > 43_200) {
      throw new RangeError(`assumeRoleDurationSeconds must be an integer from 900 to 43200 (STS's limits), got ${this.durationSeconds}`);
    }
    if (options.platformKeys) {
      const key = checkAccessKey(options.platformKeys);
      this.platform = async () => ({ ...key });
    } else {
      // An SDK client resolves an absent `credentials` to its default provider chain; borrowing
      // it from a client keeps us on the chain the SDK ships instead of a copy of it.
      this.platform = this.stsClient().config.credentials;
    }
  }

  /** The SDK credential provider for one organization's settings. Errors name what to fix, never a secret. */
  providerFor(settings: AwsCredentialSettings, organizationId: string): AwsCredentialIdentityProvider {
    switch (settings.mode) {
      case "platform":
        return this.platform;
      case "user-keys":
        return async () => this.openUserKeys(settings.sealedKeys, organizationId);
      case "assume-role": {
        const problem = iamRoleArnProblem(settings.roleArn);
        if (problem) throw new AwsBackendError("BAD_REQUEST", `the role ARN ${problem}`);
        if (settings.externalId !== undefined && !EXTERNAL_ID.test(settings.externalId)) {
          throw new AwsBackendError("BAD_REQUEST", "the external id must be 2-1224 characters of letters, digits and +=,.@:/-_");
        }
        return () => this.assumedRole(settings.roleArn, settings.externalId, organizationId);
      }
      default:
        throw new AwsBackendError("BAD_REQUEST", `unknown AWS credential mode "${String((settings as { mode: unknown }).mode)}" (platform, user-keys or assume-role)`);
    }
  }

  /** Closes the STS client's connections. */
  close(): void {
    this.sts?.destroy();
  }

  // Private: user keys are opened per call so that the plaintext lives only as long as the SDK holds it.
  private openUserKeys(sealed: string, organizationId: string): AwsCredentialIdentity {
    const keyring = this.options.keyring;
    if (!keyring) throw new AwsBackendError("ACCESS_DENIED", "this organization's AWS keys cannot be opened: SECRETS_ENCRYPTION_KEYS is not configured");
    let parsed: unknown;
    try {
      parsed = JSON.parse(keyring.open(sealed, userKeysContext(organizationId)));
    } catch {
      // The keyring's own message is already secret-free; it is replaced anyway so that nothing
      // about the sealed value reaches a provider report.
      throw new AwsBackendError("ACCESS_DENIED", "this organization's stored AWS keys do not open (altered, or sealed for another organization or key): enter them again");
    }
    const key = parsed as Partial<AwsAccessKey>;
    if (typeof key.accessKeyId !== "string" || typeof key.secretAccessKey !== "string") {
      throw new AwsBackendError("ACCESS_DENIED", "this organization's stored AWS keys are incomplete: enter them again");
    }
    return { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey, ...(key.sessionToken ? { sessionToken: key.sessionToken } : {}) };
  }

  private assumedRole(roleArn: string, externalId: string | undefined, organizationId: string): Promise<AwsCredentialIdentity> {
    const cacheKey = JSON.stringify([roleArn, externalId ?? null, organizationId]);
    let entry = this.roles.get(cacheKey);
    if (!entry) {
      entry = {};
      this.roles.set(cacheKey, entry);
    }
    const cached = entry.credentials;
    if (cached?.expiration && cached.expiration.getTime() - this.refreshMarginMs > this.now()) return Promise.resolve(cached);
    if (entry.inFlight) return entry.inFlight;
    const holder = entry;
    holder.inFlight = this.callAssumeRole(roleArn, externalId, organizationId)
      .then((credentials) => {
        holder.credentials = credentials;
        return credentials;
      })
      .finally(() => {
        // A failure is not cached: the next caller tries again.
        holder.inFlight = undefined;
      });
    return holder.inFlight;
  }

  private async callAssumeRole(roleArn: string, externalId: string | undefined, organizationId: string): Promise<AwsCredentialIdentity> {
    let output;
    try {
      output = await this.stsClient().send(
        new AssumeRoleCommand({
          RoleArn: roleArn,
          RoleSessionName: roleSessionNameFor(organizationId),
          DurationSeconds: this.durationSeconds,
          ...(externalId !== undefined ? { ExternalId: externalId } : {}),
        }),
      );
    } catch (error) {
      throw toAwsBackendError(error, `assuming role ${roleArn}`, false);
    }
    const credentials = output.Credentials;
    if (!credentials?.AccessKeyId || !credentials.SecretAccessKey || !credentials.SessionToken || !credentials.Expiration) {
      throw new AwsBackendError("ERROR", `assuming role ${roleArn}: STS answered without complete credentials`);
    }
    return {
      accessKeyId: credentials.AccessKeyId,
      secretAccessKey: credentials.SecretAccessKey,
      sessionToken: credentials.SessionToken,
      expiration: credentials.Expiration,
    };
  }

  private stsClient(): STSClient {
    if (!this.sts) {
      const { sts, platformKeys } = this.options;
      this.sts = new STSClient({
        region: sts?.region ?? "us-east-1",
        ...(sts?.endpoint ? { endpoint: sts.endpoint } : {}),
        // The platform identity signs AssumeRole; `this.platform` may not be set yet when the
        // default chain is borrowed from this very client, hence the late lookup.
        ...(platformKeys ? { credentials: () => this.platform() } : {}),
        maxAttempts: 2,
      });
    }
    return this.sts;
  }
}

function checkAccessKey(key: AwsAccessKey): AwsAccessKey {
  if (!/^[A-Z0-9]{16,128}$/.test(key.accessKeyId)) throw new AwsBackendError("BAD_REQUEST", "an AWS access key id is 16-128 upper-case letters and digits (e.g. AKIA…)");
  if (key.secretAccessKey.length < 16 || key.secretAccessKey.length > 256) throw new AwsBackendError("BAD_REQUEST", "an AWS secret access key is 16-256 characters");
  return key;
}
