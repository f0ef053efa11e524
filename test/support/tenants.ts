import { signToken, type TokenSettings } from "../../lib/tenancy/token.js";

/**
 * The auth settings tests run with. The clock tolerance is a second (the default is 30 s) so
 * that tests of expired tokens need not wait half a minute.
 */
export const TEST_AUTH: TokenSettings & { subgraphSigningSecret: string } = {
  jwtSecret: "test-secret-that-is-long-enough-for-hs256!!",
  issuer: null,
  audience: null,
  clockToleranceSeconds: 1,
  subgraphSigningSecret: "test-subgraph-signing-secret-long-enough-0123456789",
};

export function tokenFor(organizationId: string, userId: string, teamIds: string[] = []): Promise<string> {
  return signToken({ organizationId, userId, teamIds, name: `${userId} name` }, TEST_AUTH);
}
