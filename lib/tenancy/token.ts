/**
 * Bearer tokens: who is calling, in which organization, with which teams. The gateway verifies
 * the token once, before it plans anything; each subgraph verifies it again with the same code,
 * so a subgraph reached directly (or behind someone else's router) is exactly as protected.
 *
 * Keys: an HS256 shared secret (`JWT_SECRET`), and/or the RS256/ES256 public keys of an identity
 * provider published as a JWKS (`JWT_JWKS_URL`; fetched on first use, cached, and fetched again
 * when a token names a key id the cached set lacks, which is how providers rotate keys).
 *
 * Rules: `exp` is required (a token without one would be valid forever); `iat`, when present,
 * may not be in the future; and a token may not live longer than `maxLifetimeSeconds`, measured
 * from the earlier of `iat` and now (so both its declared lifetime, exp − iat, and what is left of
 * it, exp − now, are bounded: a token minted with `iat` ten years ahead and `exp` an hour after it
 * is refused), so a leaked long-lived token is refused even when its signature is good.
 * `clockToleranceSeconds` absorbs clock skew between the identity provider and us.
 *
 * Claims (names configurable, for providers that namespace them): the user id (`sub`), the
 * organization id (`org`), team ids (`teams`, optional), the role in the organization (`role`,
 * optional: `member` or `admin`, see roles.ts), and optionally `name` and `email` (used to create
 * the user record on first write).
 */
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { LRUCache } from "lru-cache";
import { unauthenticated } from "../graphql/errors.js";
import { ROLES, type Role } from "./roles.js";

export interface TenantContext {
  organizationId: string;
  userId: string;
  teamIds: string[];
  /** What the caller may administer in their organization (roles.ts); `member` when the token names no role. */
  role: Role;
  /** Profile claims, when the token has them. */
  userName: string | null;
  userEmail: string | null;
}

/** Which claims carry the user, the organization, the teams and the role. */
export interface ClaimNames {
  user: string;
  organization: string;
  teams: string;
  role: string;
}

export interface TokenSettings {
  /** HS256 shared secret; null when only keys from the JWKS are accepted. */
  jwtSecret: string | null;
  issuer: string | null;
  audience: string | null;
  /** URL of the identity provider's JWKS (RS256 / ES256 public keys); null: HS256 only. */
  jwksUrl?: string | null;
  /** Longest lifetime a token may have (default 31 days). */
  maxLifetimeSeconds?: number;
  /** Clock skew allowed on exp, nbf and iat (default 30 s). */
  clockToleranceSeconds?: number;
  claims?: Partial<ClaimNames>;
  /**
   * Least time between two JWKS fetches (default 30 s): a token naming an unknown key id makes
   * the verifier refetch the set (how rotations are picked up), but no more often than this, so
   * tokens with random key ids cannot make us hammer the identity provider.
   */
  jwksCooldownSeconds?: number;
}

export const DEFAULT_CLAIM_NAMES: ClaimNames = { user: "sub", organization: "org", teams: "teams", role: "role" };
const DEFAULT_MAX_LIFETIME_SECONDS = 31 * 24 * 3600;
const DEFAULT_CLOCK_TOLERANCE_SECONDS = 30;

const MAX_ID_LENGTH = 128;
const RESERVED_ORGANIZATION_ID = /^__.*__$/;
const MAX_TEAMS = 1000;
/** A bearer token longer than this is refused before any decoding: no identity provider issues one. */
const MAX_TOKEN_LENGTH = 8 * 1024;
/** A verified token is trusted again without re-verifying for at most this long (and never past its exp). */
const VERIFIED_TTL_MS = 5 * 60_000;

/** The token of an `Authorization: Bearer <token>` header, or null when the header has another shape. */
export function bearerToken(authorization: string): string | null {
  if (authorization.length > MAX_TOKEN_LENGTH + 16) return null;
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] ?? null;
}

/**
 * Verifies tokens for one set of settings and remembers the ones that verified (until they
 * expire, at most five minutes), so a client that sends the same token with every request pays
 * for one signature check, not one per request and per subgraph.
 */
export class TokenVerifier {
  private readonly secret: Uint8Array | null;
  private readonly jwks: JWTVerifyGetKey | null;
  private readonly algorithms: string[];
  private readonly claims: ClaimNames;
  private readonly maxLifetimeSeconds: number;
  private readonly clockToleranceSeconds: number;
  private readonly verified = new LRUCache<string, { tenant: TenantContext; until: number }>({ max: 20_000 });

  constructor(private readonly settings: TokenSettings) {
    this.secret = settings.jwtSecret ? new TextEncoder().encode(settings.jwtSecret) : null;
    this.jwks = settings.jwksUrl ? createRemoteJWKSet(new URL(settings.jwksUrl), { timeoutDuration: 3_000, cooldownDuration: (settings.jwksCooldownSeconds ?? 30) * 1000, cacheMaxAge: 10 * 60_000 }) : null;
    if (!this.secret && !this.jwks) throw new Error("TokenSettings need a jwtSecret, a jwksUrl, or both");
    this.algorithms = [...(this.secret ? ["HS256"] : []), ...(this.jwks ? ["RS256", "ES256"] : [])];
    this.claims = { ...DEFAULT_CLAIM_NAMES, ...settings.claims };
    this.maxLifetimeSeconds = settings.maxLifetimeSeconds ?? DEFAULT_MAX_LIFETIME_SECONDS;
    this.clockToleranceSeconds = settings.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS;
  }

  /** The caller an `Authorization` header names, or UNAUTHENTICATED saying what is wrong with it. */
  async verify(authorization: string | null | undefined): Promise<TenantContext> {
    if (!authorization) throw unauthenticated("Missing Authorization header: send `Authorization: Bearer <token>`.");
    const token = bearerToken(authorization);
    if (!token) throw unauthenticated("Malformed Authorization header: expected `Bearer <token>`.");
    const known = this.verified.get(token);
    if (known && Date.now() < known.until) return known.tenant;
    if (token.length > MAX_TOKEN_LENGTH) throw unauthenticated(`Token is longer than ${MAX_TOKEN_LENGTH} characters.`);

    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.key, {
        algorithms: this.algorithms,
        requiredClaims: ["exp"],
        clockTolerance: this.clockToleranceSeconds,
        ...(this.settings.issuer ? { issuer: this.settings.issuer } : {}),
        ...(this.settings.audience ? { audience: this.settings.audience } : {}),
      }));
    } catch (error) {
      throw unauthenticated(this.describeVerificationFailure(error));
    }
    const exp = payload.exp!;
    const now = Date.now() / 1000;
    if (typeof payload.iat === "number" && payload.iat > now + this.clockToleranceSeconds) {
      throw unauthenticated(`Token was issued ${Math.round(payload.iat - now)} s in the future (\`iat\`): check the identity provider's clock.`);
    }
    const lifetime = exp - Math.min(typeof payload.iat === "number" ? payload.iat : now, now);
    if (lifetime > this.maxLifetimeSeconds + this.clockToleranceSeconds) {
      throw unauthenticated(`Token lives ${Math.round(lifetime)} s, longer than the ${this.maxLifetimeSeconds} s this service accepts: request a shorter-lived token.`);
    }
    const tenant = this.tenantFromClaims(payload);
    this.verified.set(token, { tenant, until: Math.min(exp * 1000, Date.now() + VERIFIED_TTL_MS) });
    return tenant;
  }

  /** The verified caller of a token this verifier has already accepted and that is still valid, without any async work. */
  known(authorization: string | null | undefined): TenantContext | null {
    const token = authorization ? bearerToken(authorization) : null;
    const known = token ? this.verified.get(token) : undefined;
    return known && Date.now() < known.until ? known.tenant : null;
  }

  // HS256 tokens are checked against the shared secret, the others against the JWKS (jwtVerify
  // has already refused any algorithm not in `algorithms`).
  private readonly key = async (header: { alg?: string }, token: Parameters<JWTVerifyGetKey>[1]) => {
    if (header.alg === "HS256" && this.secret) return this.secret;
    if (this.jwks) return this.jwks(header as Parameters<JWTVerifyGetKey>[0], token);
    throw new joseErrors.JOSEAlgNotAllowed(`"${header.alg}" is not accepted`);
  };

  private tenantFromClaims(claims: JWTPayload): TenantContext {
    const userId = claims[this.claims.user];
    const organizationId = claims[this.claims.organization];
    if (!isId(userId)) throw unauthenticated(`Token has no valid \`${this.claims.user}\` claim (the user id)${untrimmed(userId)}.`);
    if (!isId(organizationId)) throw unauthenticated(`Token has no valid \`${this.claims.organization}\` claim (the organization id)${untrimmed(organizationId)}.`);
    // Ids wrapped in double underscores are the platform's own (e.g. `__platform__`, which owns
    // the platform knowledge bases every organization reads): no identity provider's token may
    // act as one.
    if (RESERVED_ORGANIZATION_ID.test(organizationId)) throw unauthenticated(`Token claim \`${this.claims.organization}\` names a reserved organization id.`);
    const teams = claims[this.claims.teams] ?? [];
    if (!Array.isArray(teams) || teams.length > MAX_TEAMS || !teams.every(isId)) {
      throw unauthenticated(`Token claim \`${this.claims.teams}\` must be an array of at most ${MAX_TEAMS} team id strings, none empty or with blanks around it.`);
    }
    return {
      organizationId,
      userId,
      teamIds: [...new Set(teams as string[])],
      role: this.roleFromClaims(claims),
      userName: typeof claims.name === "string" ? claims.name.slice(0, 200) : null,
      userEmail: typeof claims.email === "string" ? claims.email.slice(0, 320) : null,
    };
  }

  // No role claim (or null) is `member`, the role that can change nothing organization-wide. Any
  // other value that is not exactly a role is refused rather than read as member: "Admin" or
  // "administrator" is an identity provider configured for a different spelling, and an admin
  // silently demoted would only meet FORBIDDEN errors far from the cause, while a refusal names it.
  private roleFromClaims(claims: JWTPayload): Role {
    const role = claims[this.claims.role];
    if (role === undefined || role === null) return "member";
    if (typeof role === "string" && (ROLES as readonly string[]).includes(role)) return role as Role;
    const shown = typeof role === "string" ? `"${role.slice(0, 40)}"` : `a${Array.isArray(role) ? "n array" : ` ${typeof role}`}`;
    throw unauthenticated(`Token claim \`${this.claims.role}\` must be one of ${ROLES.map((name) => `"${name}"`).join(", ")} (lower case) or absent (member), got ${shown}.`);
  }

  private describeVerificationFailure(error: unknown): string {
    if (error instanceof joseErrors.JWTExpired) return "Token has expired: request a new one.";
    if (error instanceof joseErrors.JWTClaimValidationFailed) {
      if (error.claim === "exp") return "Token has no `exp` claim: tokens must expire.";
      return `Token claim \`${error.claim}\` is not accepted: ${error.reason}.`;
    }
    if (error instanceof joseErrors.JOSEAlgNotAllowed) return `Token algorithm not accepted: tokens must be signed with ${this.algorithms.join(" or ")}.`;
    if (error instanceof joseErrors.JWSSignatureVerificationFailed) return "Token signature is invalid.";
    if (error instanceof joseErrors.JWKSNoMatchingKey) return "Token is signed with a key the identity provider does not publish.";
    // Anything that is not a verdict on the token itself (a JWKS fetch that failed or timed out).
    if (error instanceof joseErrors.JWKSTimeout || !(error instanceof joseErrors.JOSEError)) return "Token cannot be verified right now: the identity provider's keys are unavailable; try again.";
    return "Token is malformed or cannot be verified.";
  }
}

/**
 * An id as tokens must carry it: 1 to MAX_ID_LENGTH characters, no control characters, and no
 * blank before or after. "acme " is refused rather than read as another organization than "acme"
 * (or "__platform__ " as one the reserved-id check does not recognize): rows are keyed by the id
 * exactly as written, so a padded id would open a new, empty tenant.
 */
function isId(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_ID_LENGTH && !/[\u0000-\u001f]/.test(value) && value.trim() === value;
}

/** Why an id that is otherwise fine was refused, for the error: ": it has blanks around it". */
function untrimmed(value: unknown): string {
  return typeof value === "string" && value.length > 0 && value.trim() !== value ? ` (${JSON.stringify(value.slice(0, 40))} has blanks around it; send the id without them)` : "";
}

// One verifier (and so one cache and one JWKS) per settings object: callers pass the same
// configuration object with every request.
const verifiers = new WeakMap<TokenSettings, TokenVerifier>();

export function tokenVerifier(settings: TokenSettings): TokenVerifier {
  let verifier = verifiers.get(settings);
  if (!verifier) {
    verifier = new TokenVerifier(settings);
    verifiers.set(settings, verifier);
  }
  return verifier;
}

export function verifyBearerToken(authorization: string | null | undefined, settings: TokenSettings): Promise<TenantContext> {
  return tokenVerifier(settings).verify(authorization);
}

export interface TokenClaims {
  userId: string;
  organizationId: string;
  teamIds?: string[];
  /** Left out: no role claim, which verifies as `member`. */
  role?: Role;
  name?: string;
  email?: string;
}

/** Signs an HS256 token the subgraphs accept: used by `npm start` for its dev token, by `npm run token` and by tests. */
export async function signToken(claims: TokenClaims, settings: TokenSettings, expiresIn: string | number = "12h"): Promise<string> {
  if (!settings.jwtSecret) throw new Error("signToken needs a jwtSecret (JWT_SECRET): tokens of a JWKS come from the identity provider");
  const names = { ...DEFAULT_CLAIM_NAMES, ...settings.claims };
  let jwt = new SignJWT({
    [names.organization]: claims.organizationId,
    [names.teams]: claims.teamIds ?? [],
    ...(claims.role ? { [names.role]: claims.role } : {}),
    ...(claims.name ? { name: claims.name } : {}),
    ...(claims.email ? { email: claims.email } : {}),
    ...(names.user !== "sub" ? { [names.user]: claims.userId } : {}),
  })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(claims.userId)
    .setIssuedAt()
    .setExpirationTime(expiresIn);
  if (settings.issuer) jwt = jwt.setIssuer(settings.issuer);
  if (settings.audience) jwt = jwt.setAudience(settings.audience);
  return jwt.sign(new TextEncoder().encode(settings.jwtSecret));
}
