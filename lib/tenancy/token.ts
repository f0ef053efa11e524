/**
 * Bearer tokens: who is calling, in which organization, with which teams. The gateway only
 * forwards the Authorization header; each subgraph verifies the token itself, so a subgraph
 * reached directly (or behind someone else's router) is exactly as protected as behind ours.
 *
 * Claims: `sub` (user id), `org` (organization id), `teams` (team ids, optional), and optionally
 * `name` and `email` (used to create the user record on first write). HS256 for now.
 */
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { unauthenticated } from "../graphql/errors.js";

export interface TenantContext {
  organizationId: string;
  userId: string;
  teamIds: string[];
  /** Profile claims, when the token has them. */
  userName: string | null;
  userEmail: string | null;
}

export interface TokenSettings {
  jwtSecret: string;
  issuer: string | null;
  audience: string | null;
}

const MAX_ID_LENGTH = 128;
const MAX_TEAMS = 1000;

/** The token of an `Authorization: Bearer <token>` header, or null when the header has another shape. */
export function bearerToken(authorization: string): string | null {
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] ?? null;
}

export async function verifyBearerToken(authorization: string | null | undefined, settings: TokenSettings): Promise<TenantContext> {
  if (!authorization) {
    throw unauthenticated("Missing Authorization header: send `Authorization: Bearer <token>`.");
  }
  const token = bearerToken(authorization);
  if (!token) {
    throw unauthenticated("Malformed Authorization header: expected `Bearer <token>`.");
  }
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, secretKey(settings.jwtSecret), {
      algorithms: ["HS256"],
      ...(settings.issuer ? { issuer: settings.issuer } : {}),
      ...(settings.audience ? { audience: settings.audience } : {}),
    }));
  } catch (error) {
    throw unauthenticated(describeVerificationFailure(error));
  }
  return tenantFromClaims(payload);
}

function tenantFromClaims(claims: Record<string, unknown>): TenantContext {
  const userId = claims.sub;
  const organizationId = claims.org;
  if (!isId(userId)) throw unauthenticated("Token has no valid `sub` claim (the user id).");
  if (!isId(organizationId)) throw unauthenticated("Token has no valid `org` claim (the organization id).");
  const teams = claims.teams ?? [];
  if (!Array.isArray(teams) || teams.length > MAX_TEAMS || !teams.every(isId)) {
    throw unauthenticated("Token claim `teams` must be an array of team id strings.");
  }
  return {
    organizationId,
    userId,
    teamIds: [...new Set(teams as string[])],
    userName: typeof claims.name === "string" ? claims.name.slice(0, 200) : null,
    userEmail: typeof claims.email === "string" ? claims.email.slice(0, 320) : null,
  };
}

function isId(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_ID_LENGTH && !/[\u0000-\u001f]/.test(value);
}

function describeVerificationFailure(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return "Token has expired: request a new one.";
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `Token claim \`${error.claim}\` is not accepted: ${error.reason}.`;
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return "Token algorithm not accepted: tokens must be signed with HS256.";
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return "Token signature is invalid.";
  return "Token is malformed or cannot be verified.";
}

function secretKey(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

export interface TokenClaims {
  userId: string;
  organizationId: string;
  teamIds?: string[];
  name?: string;
  email?: string;
}

/** Signs a token the subgraphs accept: used by `npm start` for its dev token, by `npm run token` and by tests. */
export async function signToken(claims: TokenClaims, settings: TokenSettings, expiresIn: string | number = "12h"): Promise<string> {
  let jwt = new SignJWT({
    org: claims.organizationId,
    teams: claims.teamIds ?? [],
    ...(claims.name ? { name: claims.name } : {}),
    ...(claims.email ? { email: claims.email } : {}),
  })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(claims.userId)
    .setIssuedAt()
    .setExpirationTime(expiresIn);
  if (settings.issuer) jwt = jwt.setIssuer(settings.issuer);
  if (settings.audience) jwt = jwt.setAudience(settings.audience);
  return jwt.sign(secretKey(settings.jwtSecret));
}
