import { signToken, type TokenSettings } from "../../lib/tenancy/token.js";

export const TEST_AUTH: TokenSettings = { jwtSecret: "test-secret-that-is-long-enough-for-hs256!!", issuer: null, audience: null };

export function tokenFor(organizationId: string, userId: string, teamIds: string[] = []): Promise<string> {
  return signToken({ organizationId, userId, teamIds, name: `${userId} name` }, TEST_AUTH);
}
