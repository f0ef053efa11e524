/**
 * Roles within an organization. Every member may work with what is theirs (conversations,
 * documents, saved searches) and query what their organization shares; what changes the
 * organization as a whole (company-wide knowledge bases, capability mappings, the organization's
 * AWS and web API keys, the credit budget, its settings) or reports on everyone's usage needs
 * the admin role. A token carries the role in its role claim (`role` unless JWT_CLAIM_ROLE says
 * otherwise); a token without one is a member.
 */
import { forbidden } from "../graphql/errors.js";
import type { TenantContext } from "./token.js";

export const ROLES = ["member", "admin"] as const;
export type Role = (typeof ROLES)[number];

/**
 * FORBIDDEN unless the caller is an admin. `action` is what they tried, as the start of a
 * sentence ("Creating an organization-wide knowledge base"), so the message names the role it needs.
 */
export function requireAdmin(tenant: TenantContext, action: string): void {
  if (tenant.role !== "admin") throw forbidden(`${action} requires the admin role; your token's role is ${tenant.role}.`);
}
