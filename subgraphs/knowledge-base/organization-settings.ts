/**
 * What an organization's admins chose for it (organization_settings), and who may change its
 * knowledge bases as a consequence. The knowledge-base subgraph owns the settings because the
 * one setting so far decides who manages TEAM knowledge bases.
 */
import type { PrismaClient } from "../../generated/prisma/client.js";
import { withTenantScope } from "../../lib/database/tenant-scope.js";
import { forbidden } from "../../lib/graphql/errors.js";
import { requireAdmin } from "../../lib/tenancy/roles.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import type { KnowledgeBaseScope } from "./knowledge-base-store.js";

export interface OrganizationSettings {
  membersManageTeamKnowledgeBases: boolean;
  /** When an admin last changed a setting; null while every setting has its default. */
  updatedAt: Date | null;
}

export type OrganizationSettingsChange = Partial<Pick<OrganizationSettings, "membersManageTeamKnowledgeBases">>;

const DEFAULTS: OrganizationSettings = { membersManageTeamKnowledgeBases: false, updatedAt: null };

export class OrganizationSettingsStore {
  constructor(private readonly prisma: PrismaClient) {}

  async get(tenant: TenantContext): Promise<OrganizationSettings> {
    const row = await withTenantScope(this.prisma, tenant.organizationId, (db) =>
      db.organizationSettings.findUnique({ where: { organizationId: tenant.organizationId } }),
    );
    return row ? { membersManageTeamKnowledgeBases: row.membersManageTeamKnowledgeBases, updatedAt: row.updatedAt } : DEFAULTS;
  }

  /** Changes the settings given (admins only); the others keep their values. */
  async change(tenant: TenantContext, change: OrganizationSettingsChange): Promise<OrganizationSettings> {
    requireAdmin(tenant, "Changing the organization's settings");
    const row = await withTenantScope(this.prisma, tenant.organizationId, (db) =>
      db.organizationSettings.upsert({
        where: { organizationId: tenant.organizationId },
        create: { organizationId: tenant.organizationId, ...change },
        update: { ...change, updatedAt: new Date() },
      }),
    );
    return { membersManageTeamKnowledgeBases: row.membersManageTeamKnowledgeBases, updatedAt: row.updatedAt };
  }

  /**
   * FORBIDDEN unless the caller may change (create, delete, store keys for) a knowledge base of
   * this scope and team: COMPANY ones need an admin; TEAM ones an admin, or a member of that
   * team when the organization lets members manage their teams' knowledge bases. `doing` is
   * the action as the start of a sentence ("Deleting"). Whether the knowledge base is visible
   * at all (NOT_FOUND) is the store's question, asked before this one.
   */
  async requireManager(tenant: TenantContext, base: { scope: KnowledgeBaseScope; teamId: string | null }, doing: string): Promise<void> {
    if (tenant.role === "admin" || base.scope === "PLATFORM") return;
    if (base.scope === "COMPANY") return requireAdmin(tenant, `${doing} an organization-wide (COMPANY) knowledge base`);
    const settings = await this.get(tenant);
    if (settings.membersManageTeamKnowledgeBases && base.teamId !== null && tenant.teamIds.includes(base.teamId)) return;
    throw forbidden(
      `${doing} a TEAM knowledge base requires the admin role; your token's role is ${tenant.role}` +
        (settings.membersManageTeamKnowledgeBases ? ` and team ${base.teamId} is not one of your teams.` : ` (an admin can let members manage their own teams' knowledge bases with setOrganizationSettings).`),
    );
  }
}
