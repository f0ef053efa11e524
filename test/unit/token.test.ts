import { describe, expect, it } from "@jest/globals";
import { SignJWT } from "jose";
import { signToken, verifyBearerToken } from "../../lib/tenancy/token.js";
import { TEST_AUTH } from "../support/tenants.js";

const secret = new TextEncoder().encode(TEST_AUTH.jwtSecret);

async function rejection(header: string | undefined, settings = TEST_AUTH) {
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
