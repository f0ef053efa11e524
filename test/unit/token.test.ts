import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { exportJWK, generateKeyPair, SignJWT, type JWK } from "jose";
import { signToken, verifyBearerToken, type TokenSettings } from "../../lib/tenancy/token.js";
import { TEST_AUTH } from "../support/tenants.js";

const secret = new TextEncoder().encode(TEST_AUTH.jwtSecret!);

async function rejection(header: string | undefined, settings: TokenSettings = TEST_AUTH) {
  try {
    await verifyBearerToken(header, settings);
  } catch (error) {
    return error as { message: string; extensions: { code: string } };
  }
  throw new Error("expected the token to be rejected");
}

describe("verifyBearerToken", () => {
  it("returns the tenant a signed token names", async () => {
    const token = await signToken({ organizationId: "org-1", userId: "user-1", teamIds: ["t1", "t2", "t1"], email: "u@example.com" }, TEST_AUTH);
    await expect(verifyBearerToken(`Bearer ${token}`, TEST_AUTH)).resolves.toEqual({
      organizationId: "org-1",
      userId: "user-1",
      teamIds: ["t1", "t2"],
      role: "member",
      userName: null,
      userEmail: "u@example.com",
    });
  });

  it.each([
    ["no header", undefined, /Missing Authorization/],
    ["a non-bearer scheme", "Basic dXNlcjpwYXNz", /Malformed Authorization/],
    ["garbage", "Bearer not.a.jwt", /malformed/i],
  ])("rejects %s as UNAUTHENTICATED", async (_name, header, message) => {
    const error = await rejection(header);
    expect(error.extensions.code).toBe("UNAUTHENTICATED");
    expect(error.message).toMatch(message);
  });

  it("rejects a token signed with another secret, an expired one, and one without org", async () => {
    const other = await signToken({ organizationId: "o", userId: "u" }, { ...TEST_AUTH, jwtSecret: "another-secret-that-is-also-long-enough!!" });
    expect((await rejection(`Bearer ${other}`)).message).toMatch(/signature/);
    const expired = await signToken({ organizationId: "o", userId: "u" }, TEST_AUTH, Math.floor(Date.now() / 1000) - 5);
    expect((await rejection(`Bearer ${expired}`)).message).toMatch(/expired/);
    const noOrg = await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("u").setExpirationTime("1h").sign(secret);
    expect((await rejection(`Bearer ${noOrg}`)).message).toMatch(/`org`/);
    const badTeams = await new SignJWT({ org: "o", teams: "admins" }).setProtectedHeader({ alg: "HS256" }).setSubject("u").setExpirationTime("1h").sign(secret);
    expect((await rejection(`Bearer ${badTeams}`)).message).toMatch(/teams/);
  });

  it("refuses unsigned tokens (alg none)", async () => {
    const header = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
    const payload = Buffer.from(JSON.stringify({ sub: "u", org: "o", exp: Math.floor(Date.now() / 1000) + 60 })).toString("base64url");
    expect((await rejection(`Bearer ${header}.${payload}.`)).extensions.code).toBe("UNAUTHENTICATED");
  });

  it("checks issuer and audience when configured", async () => {
    const settings = { ...TEST_AUTH, issuer: "https://idp.example", audience: "context-search" };
    const good = await signToken({ organizationId: "o", userId: "u" }, settings);
    await expect(verifyBearerToken(`Bearer ${good}`, settings)).resolves.toMatchObject({ organizationId: "o" });
    const wrongAudience = await signToken({ organizationId: "o", userId: "u" }, { ...settings, audience: "other" });
    expect((await rejection(`Bearer ${wrongAudience}`, settings)).message).toMatch(/aud/);
  });
});

describe("token rules", () => {
  it("refuses a token without exp: it would be valid forever", async () => {
    const forever = await new SignJWT({ org: "o" }).setProtectedHeader({ alg: "HS256" }).setSubject("u").setIssuedAt().sign(secret);
    const error = await rejection(`Bearer ${forever}`);
    expect(error.extensions.code).toBe("UNAUTHENTICATED");
    expect(error.message).toMatch(/`exp`/);
  });

  it("refuses a token that lives longer than the configured maximum, with or without iat", async () => {
    const settings = { ...TEST_AUTH, maxLifetimeSeconds: 3_600 };
    const day = await signToken({ organizationId: "o", userId: "u" }, settings, "24h");
    expect((await rejection(`Bearer ${day}`, settings)).message).toMatch(/longer than the 3600 s/);
    const noIat = await new SignJWT({ org: "o" }).setProtectedHeader({ alg: "HS256" }).setSubject("u").setExpirationTime("2h").sign(secret);
    expect((await rejection(`Bearer ${noIat}`, settings)).message).toMatch(/longer than/);
    const hour = await signToken({ organizationId: "o", userId: "u" }, settings, "50m");
    await expect(verifyBearerToken(`Bearer ${hour}`, settings)).resolves.toMatchObject({ userId: "u" });
  });

  it("refuses a token issued in the future, which would otherwise pass the lifetime check from its iat", async () => {
    const settings = { ...TEST_AUTH, maxLifetimeSeconds: 86_400, clockToleranceSeconds: 30 };
    const now = Math.floor(Date.now() / 1000);
    const tenYears = 10 * 365 * 86_400;
    // exp ten years ahead, iat an hour before it: exp − iat is an hour, but it is valid for ten years.
    const ahead = await new SignJWT({ org: "o" }).setProtectedHeader({ alg: "HS256" }).setSubject("u").setIssuedAt(now + tenYears - 3_600).setExpirationTime(now + tenYears).sign(secret);
    const refused = await rejection(`Bearer ${ahead}`, settings);
    expect(refused.extensions.code).toBe("UNAUTHENTICATED");
    expect(refused.message).toMatch(/issued \d+ s in the future \(`iat`\)/);
    // Within the clock tolerance a future iat is skew, not an attack.
    const skewed = await new SignJWT({ org: "o" }).setProtectedHeader({ alg: "HS256" }).setSubject("u").setIssuedAt(now + 10).setExpirationTime(now + 3_600).sign(secret);
    await expect(verifyBearerToken(`Bearer ${skewed}`, settings)).resolves.toMatchObject({ userId: "u" });
    // An iat in the past still bounds the declared lifetime.
    const old = await new SignJWT({ org: "o" }).setProtectedHeader({ alg: "HS256" }).setSubject("u").setIssuedAt(now - 2 * 86_400).setExpirationTime(now + 3_600).sign(secret);
    expect((await rejection(`Bearer ${old}`, settings)).message).toMatch(/longer than the 86400 s/);
  });

  it("accepts a token that expired within the clock tolerance, and not after it", async () => {
    const settings = { ...TEST_AUTH, clockToleranceSeconds: 30 };
    const justExpired = await signToken({ organizationId: "o", userId: "u" }, settings, Math.floor(Date.now() / 1000) - 10);
    await expect(verifyBearerToken(`Bearer ${justExpired}`, settings)).resolves.toMatchObject({ userId: "u" });
    const longExpired = await signToken({ organizationId: "o", userId: "u" }, settings, Math.floor(Date.now() / 1000) - 60);
    expect((await rejection(`Bearer ${longExpired}`, settings)).message).toMatch(/expired/);
  });

  it("reads the user, organization and teams from configured claim names", async () => {
    const settings = { ...TEST_AUTH, claims: { organization: "https://example.com/org", teams: "groups", user: "uid" } };
    const token = await signToken({ organizationId: "acme", userId: "ann", teamIds: ["a"] }, settings);
    await expect(verifyBearerToken(`Bearer ${token}`, settings)).resolves.toMatchObject({ organizationId: "acme", userId: "ann", teamIds: ["a"] });
    // The default names are not read any more.
    const plain = await signToken({ organizationId: "acme", userId: "ann" }, TEST_AUTH);
    expect((await rejection(`Bearer ${plain}`, settings)).message).toMatch(/`uid`/);
  });

  it("reads the role: admin or member, member when the claim is absent or null, from a configured claim name", async () => {
    const admin = await signToken({ organizationId: "acme", userId: "ann", role: "admin" }, TEST_AUTH);
    await expect(verifyBearerToken(`Bearer ${admin}`, TEST_AUTH)).resolves.toMatchObject({ role: "admin" });
    const member = await signToken({ organizationId: "acme", userId: "bob", role: "member" }, TEST_AUTH);
    await expect(verifyBearerToken(`Bearer ${member}`, TEST_AUTH)).resolves.toMatchObject({ role: "member" });
    const none = await signToken({ organizationId: "acme", userId: "cid" }, TEST_AUTH);
    await expect(verifyBearerToken(`Bearer ${none}`, TEST_AUTH)).resolves.toMatchObject({ role: "member" });
    const nulled = await new SignJWT({ org: "acme", role: null }).setProtectedHeader({ alg: "HS256" }).setSubject("dee").setExpirationTime("1h").sign(secret);
    await expect(verifyBearerToken(`Bearer ${nulled}`, TEST_AUTH)).resolves.toMatchObject({ role: "member" });

    const settings = { ...TEST_AUTH, claims: { role: "https://example.com/role" } };
    const namespaced = await signToken({ organizationId: "acme", userId: "eve", role: "admin" }, settings);
    await expect(verifyBearerToken(`Bearer ${namespaced}`, settings)).resolves.toMatchObject({ role: "admin" });
    // The default name is not read any more: its admin claim is just an unknown claim.
    const plain = await signToken({ organizationId: "acme", userId: "fay", role: "admin" }, TEST_AUTH);
    await expect(verifyBearerToken(`Bearer ${plain}`, settings)).resolves.toMatchObject({ role: "member" });
  });

  it.each([
    ["a differently cased role", "Admin", /got "Admin"/],
    ["an unknown role", "owner", /got "owner"/],
    ["a list of roles", ["admin"], /got an array/],
    ["a number", 1, /got a number/],
  ])("refuses %s as UNAUTHENTICATED, naming the claim and the allowed values", async (_name, role, got) => {
    const token = await new SignJWT({ org: "acme", role }).setProtectedHeader({ alg: "HS256" }).setSubject("gus").setExpirationTime("1h").sign(secret);
    const error = await rejection(`Bearer ${token}`);
    expect(error.extensions.code).toBe("UNAUTHENTICATED");
    expect(error.message).toMatch(/`role` must be one of "member", "admin"/);
    expect(error.message).toMatch(got);
  });

  it("refuses a token that names a reserved organization such as the platform's own", async () => {
    const platform = await signToken({ organizationId: "__platform__", userId: "mallory" }, TEST_AUTH);
    expect((await rejection(`Bearer ${platform}`)).message).toMatch(/reserved organization/);
  });

  it.each([
    ["an organization id with a trailing blank", { organizationId: "acme ", userId: "ann" }, /organization id.*"acme " has blanks around it/],
    ["the platform's id with a trailing blank", { organizationId: "__platform__ ", userId: "mallory" }, /organization id.*has blanks around it/],
    ["a user id with a leading no-break space", { organizationId: "acme", userId: "\u00a0ann" }, /user id.*has blanks around it/],
    ["a team id with blanks", { organizationId: "acme", userId: "ann", teamIds: ["sre "] }, /team id strings, none empty or with blanks/],
  ])("refuses %s as UNAUTHENTICATED rather than as another tenant", async (_name, claims, message) => {
    const token = await signToken(claims, TEST_AUTH);
    const error = await rejection(`Bearer ${token}`);
    expect(error.extensions.code).toBe("UNAUTHENTICATED");
    expect(error.message).toMatch(message);
  });

  it("refuses an oversized token before decoding it", async () => {
    const error = await rejection(`Bearer ${"a".repeat(20_000)}`);
    expect(error.extensions.code).toBe("UNAUTHENTICATED");
  });
});

describe("keys from a JWKS (RS256 and ES256)", () => {
  let server: http.Server;
  let jwksUrl: string;
  let published: JWK[] = [];
  let fetches = 0;

  beforeAll(async () => {
    server = http.createServer((_request, response) => {
      fetches += 1;
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ keys: published }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function keyPair(alg: "RS256" | "ES256", kid: string) {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } };
  }
  const sign = (alg: string, kid: string, key: CryptoKey | Uint8Array, claims: Record<string, unknown> = { org: "acme" }) =>
    new SignJWT(claims).setProtectedHeader({ alg, kid }).setSubject("ann").setIssuedAt().setExpirationTime("10m").sign(key);

  it("verifies RS256 and ES256 tokens with the published keys, and follows a key rotation", async () => {
    const rsa = await keyPair("RS256", "rsa-1");
    const ec = await keyPair("ES256", "ec-1");
    published = [rsa.jwk, ec.jwk];
    const settings = { jwtSecret: null, jwksUrl, issuer: null, audience: null, jwksCooldownSeconds: 0 };
    await expect(verifyBearerToken(`Bearer ${await sign("RS256", "rsa-1", rsa.privateKey)}`, settings)).resolves.toMatchObject({ organizationId: "acme", userId: "ann" });
    await expect(verifyBearerToken(`Bearer ${await sign("ES256", "ec-1", ec.privateKey)}`, settings)).resolves.toMatchObject({ organizationId: "acme" });

    // The provider rotates: a new key id appears, and tokens signed with it verify after a refetch.
    const rotated = await keyPair("RS256", "rsa-2");
    published = [rotated.jwk];
    const before = fetches;
    await expect(verifyBearerToken(`Bearer ${await sign("RS256", "rsa-2", rotated.privateKey)}`, settings)).resolves.toMatchObject({ organizationId: "acme" });
    expect(fetches).toBeGreaterThan(before);
  });

  it("refuses HS256 tokens when only a JWKS is configured (no algorithm confusion), and keys nobody published", async () => {
    const rsa = await keyPair("RS256", "rsa-3");
    published = [rsa.jwk];
    const settings = { jwtSecret: null, jwksUrl, issuer: null, audience: null };
    const hs = await sign("HS256", "rsa-3", new TextEncoder().encode("a-secret-someone-guessed-that-is-long-enough"));
    expect((await rejection(`Bearer ${hs}`, settings)).message).toMatch(/algorithm not accepted/);
    const stranger = await keyPair("RS256", "not-published");
    expect((await rejection(`Bearer ${await sign("RS256", "not-published", stranger.privateKey)}`, settings)).extensions.code).toBe("UNAUTHENTICATED");
  });
});
