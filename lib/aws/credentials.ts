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
 *   A refusal (the role does not exist, does not trust us, or wants another external id) is
 *   remembered for the same key for `refusalTtlMs` (60 s by default): queries in that window
 *   fail at once with the same error and no STS call, so a broken role costs one STS call a
 *   minute, not one per query. Changing the role ARN or external id changes the key, so a
 *   corrected setting is tried at once. Both caches live in this process: with N instances a
 *   broken role costs at most N calls a window (docs/shared-state.md says why that is enough).
 */
import { createHash } from "node:crypto";
import type { STSClient } from "@aws-sdk/client-sts";
import { LRUCache } from "lru-cache";
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from "@smithy/types";
import type { SecretKeyring } from "../secrets/keyring.js";
import { AwsBackendError, toAwsBackendError } from "./errors.js";
import { externalIdProblem, iamRoleArnProblem } from "./resource-names.js";

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
  /** How long a role STS refused is refused again without asking STS, in ms. Default 60 s; 0 asks every time. */
  refusalTtlMs?: number | undefined;
  /** The clock, in ms since the epoch (tests move it). */
  now?: (() => number) | undefined;
}

const REFRESH_MARGIN_MS = 5 * 60 * 1000;
export const DEFAULT_REFUSAL_TTL_MS = 60_000;
/**
 * What STS says when the role will not be assumed until someone changes something: it does not
 * trust us, wants another external id, does not exist, or the request is malformed. Throttling,
 * timeouts and STS's own errors pass by themselves and are never remembered.
 */
const LASTING_REFUSALS: ReadonlySet<AwsBackendError["status"]> = new Set(["ACCESS_DENIED", "NOT_FOUND", "BAD_REQUEST"]);

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

interface Refusal {
  error: AwsBackendError;
  until: number;
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
  private readonly refusalTtlMs: number;
  private readonly roles = new Map<string, CachedRole>();
  /** Bounded: a hostile organization cycling through role ARNs cannot grow it without end. */
  private readonly refusals = new LRUCache<string, Refusal>({ max: 10_000 });
  private sts: STSClient | undefined;
  private stsLoading: Promise<STSClient> | undefined;

  constructor(private readonly options: AwsCredentialSourceOptions = {}) {
    this.now = options.now ?? Date.now;
    this.refreshMarginMs = options.refreshMarginMs ?? REFRESH_MARGIN_MS;
    this.durationSeconds = options.assumeRoleDurationSeconds ?? 3600;
    this.refusalTtlMs = options.refusalTtlMs ?? DEFAULT_REFUSAL_TTL_MS;
    if (!Number.isFinite(this.refusalTtlMs) || this.refusalTtlMs < 0) throw new RangeError(`refusalTtlMs must be 0 or more, got ${this.refusalTtlMs}`);
    if (!Number.isInteger(this.durationSeconds) || this.durationSeconds < 900 || this.durationSeconds > 43_200) {
      throw new RangeError(`assumeRoleDurationSeconds must be an integer from 900 to 43200 (STS's limits), got ${this.durationSeconds}`);
    }
    if (options.platformKeys) {
      const key = checkAccessKey(options.platformKeys);
      this.platform = async () => ({ ...key });
    } else {
      // An SDK client resolves an absent `credentials` to its default provider chain; borrowing
      // it from a client keeps us on the chain the SDK ships instead of a copy of it. The client
      // (and the SDK) is loaded on the first call: most deployments never ask AWS anything, and
      // loading it cost every start (issue 38).
      this.platform = async (identityProperties) => (await this.stsClient()).config.credentials(identityProperties);
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
        const externalProblem = settings.externalId === undefined ? null : externalIdProblem(settings.externalId);
        if (externalProblem) throw new AwsBackendError("BAD_REQUEST", `the external id ${externalProblem}`);
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
    const refusal = this.refusals.get(cacheKey);
    if (refusal && refusal.until > this.now()) {
      const seconds = Math.max(1, Math.ceil((refusal.until - this.now()) / 1000));
      return Promise.reject(new AwsBackendError(refusal.error.status, `${refusal.error.message} (STS refused it moments ago; it is asked again in ${seconds} s, or at once if the role ARN or external id changes)`, refusal.error.awsErrorName));
    }
    const holder = entry;
    holder.inFlight = this.callAssumeRole(roleArn, externalId, organizationId)
      .then((credentials) => {
        holder.credentials = credentials;
        this.refusals.delete(cacheKey);
        return credentials;
      })
      .catch((error: unknown) => {
        // A lasting refusal is remembered for a short while; any other failure is tried again by the next caller.
        if (error instanceof AwsBackendError && LASTING_REFUSALS.has(error.status) && this.refusalTtlMs > 0) {
          this.refusals.set(cacheKey, { error, until: this.now() + this.refusalTtlMs });
        }
        throw error;
      })
      .finally(() => {
        holder.inFlight = undefined;
      });
    return holder.inFlight;
  }

  private async callAssumeRole(roleArn: string, externalId: string | undefined, organizationId: string): Promise<AwsCredentialIdentity> {
    let output;
    try {
      const { AssumeRoleCommand } = await import("@aws-sdk/client-sts");
      output = await (await this.stsClient()).send(
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

  private stsClient(): Promise<STSClient> {
    this.stsLoading ??= import("@aws-sdk/client-sts").then(({ STSClient }) => {
      const { sts, platformKeys } = this.options;
      this.sts = new STSClient({
        region: sts?.region ?? "us-east-1",
        ...(sts?.endpoint ? { endpoint: sts.endpoint } : {}),
        // The platform identity signs AssumeRole; `this.platform` may not be set yet when the
        // default chain is borrowed from this very client, hence the late lookup.
        ...(platformKeys ? { credentials: () => this.platform() } : {}),
        maxAttempts: 2,
      });
      return this.sts;
    });
    return this.stsLoading;
  }
}

function checkAccessKey(key: AwsAccessKey): AwsAccessKey {
  if (!/^[A-Z0-9]{16,128}$/.test(key.accessKeyId)) throw new AwsBackendError("BAD_REQUEST", "an AWS access key id is 16-128 upper-case letters and digits (e.g. AKIA…)");
  if (key.secretAccessKey.length < 16 || key.secretAccessKey.length > 256) throw new AwsBackendError("BAD_REQUEST", "an AWS secret access key is 16-256 characters");
  return key;
}
