import type { Role } from "../../lib/tenancy/roles.js";
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

/** A token of the test secret; a member's unless `role` says admin, as an identity provider's without a role claim. */
export function tokenFor(organizationId: string, userId: string, teamIds: string[] = [], role: Role = "member"): Promise<string> {
  return signToken({ organizationId, userId, teamIds, role, name: `${userId} name` }, TEST_AUTH);
}
