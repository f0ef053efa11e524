/**
 * Knowledge bases and the capabilities that map to them. A caller sees the platform's knowledge
 * bases (every organization may read them: the migration's `platform_read` policy), their
 * organization's company-wide ones, and those of their teams; any other knowledge base is
 * NOT_FOUND, exactly like one that does not exist.
 *
 * Secrets never pass through a listing: a user's AWS keys live in knowledge_base_credentials,
 * a table no method here reads except `sealedCredentials`, which the code that calls AWS uses.
 */
import { Prisma, type PrismaClient } from "../../generated/prisma/client.js";
import type { KnowledgeBase, KnowledgeBaseCapability } from "../../generated/prisma/client.js";
import type { AwsCredentialMode, KnowledgeBaseBackend, KnowledgeBaseScope, KnowledgeBaseStatus } from "../../generated/prisma/enums.js";
import { awsRegionProblem, bedrockKnowledgeBaseIdProblem, externalIdProblem, iamRoleArnProblem, s3VectorBucketProblem, s3VectorsIndexProblem } from "../../lib/aws/resource-names.js";
import { createdEntity, writeOnce, type WriteOnce } from "../../lib/database/idempotency.js";
import { withTenantLoads } from "../../lib/database/replica-reads.js";
import { withTenantScope, type TenantTransaction } from "../../lib/database/tenant-scope.js";
import { badUserInput, forbidden, notFound } from "../../lib/graphql/errors.js";
import type { TenantContext } from "../../lib/tenancy/token.js";

export type { AwsCredentialMode, KnowledgeBase, KnowledgeBaseBackend, KnowledgeBaseCapability, KnowledgeBaseScope, KnowledgeBaseStatus };

/**
 * The organization that owns platform knowledge bases. No identity provider issues it; the
 * migration creates its row. Tokens naming it must be refused by whoever issues them.
 */
export const PLATFORM_ORGANIZATION_ID = "__platform__";

export const MAX_KNOWLEDGE_BASE_NAME_LENGTH = 200;
export const MAX_CATEGORY_LENGTH = 100;

export interface NewKnowledgeBase {
  name: string;
  description: string | null;
  /** COMPANY or TEAM for an organization; PLATFORM only through `createPlatform`. */
  scope: KnowledgeBaseScope;
  /** The team of a TEAM knowledge base: one of the creator's teams. */
  teamId?: string | null;
  category: string | null;
  embeddingModel?: string | null;
  backend: KnowledgeBaseBackend;
  awsRegion?: string | null;
  bedrockKnowledgeBaseId?: string | null;
  s3VectorsBucket?: string | null;
  s3VectorsIndex?: string | null;
  credentialMode?: AwsCredentialMode | null;
  roleArn?: string | null;
  /** Sent with AssumeRole as its ExternalId (ASSUME_ROLE only); not a secret. */
  externalId?: string | null;
  /** The user's AWS keys, already sealed by lib/secrets (credential mode USER_KEYS). */
  sealedSecret?: string | null;
}

export interface CapabilityMappingInput {
  capability: string;
  knowledgeBaseId: string;
  priority: number;
  maxResults: number;
  minScore: number;
}

export type CapabilityMapping = KnowledgeBaseCapability & { knowledgeBase: KnowledgeBase };

/** Where a page of knowledge bases ends, in listing order (scope, name, id). */
export interface KnowledgeBasePageCursor {
  scope: KnowledgeBaseScope;
  name: string;
  id: string;
}

/** Listing order: the enum's order in PostgreSQL, which the migration declares PLATFORM, COMPANY, TEAM. */
const SCOPE_ORDER: readonly KnowledgeBaseScope[] = ["PLATFORM", "COMPANY", "TEAM"];

export class KnowledgeBaseStore {
  constructor(private readonly prisma: PrismaClient) {}

  private scoped<T>(organizationId: string, work: (db: TenantTransaction) => Promise<T>): Promise<T> {
    return withTenantScope(this.prisma, organizationId, work);
  }

  /** A COMPANY or TEAM knowledge base of the caller's organization. */
  /** `once`: the write's Idempotency-Key and liveness (lib/database/idempotency.ts); without it, a plain write. */
  async create(tenant: TenantContext, input: NewKnowledgeBase, once?: WriteOnce): Promise<KnowledgeBase> {
    if (input.scope === "PLATFORM") throw badUserInput("scope", "PLATFORM knowledge bases are curated by the platform; create a COMPANY or TEAM one.");
    if (input.scope === "TEAM" && (!input.teamId || !tenant.teamIds.includes(input.teamId))) {
      throw badUserInput("teamId", `a TEAM knowledge base needs one of your teams (${tenant.teamIds.length ? tenant.teamIds.join(", ") : "your token names none"}).`);
    }
    if (input.scope === "COMPANY" && input.teamId) throw badUserInput("teamId", "a COMPANY knowledge base has no team; use scope TEAM.");
    return this.insert(tenant.organizationId, input, async (tx) => ensureOrganization(tx, tenant.organizationId), once);
  }

  /** A platform knowledge base, readable by every organization (seeding, administration). */
  createPlatform(input: Omit<NewKnowledgeBase, "scope" | "teamId">): Promise<KnowledgeBase> {
    return this.insert(PLATFORM_ORGANIZATION_ID, { ...input, scope: "PLATFORM", teamId: null }, async () => undefined);
  }

  /** Deletes a platform knowledge base (the operator's command; it deletes the documents first). Returns whether there was one. */
  async deletePlatform(id: string): Promise<boolean> {
    const deleted = await this.scoped(PLATFORM_ORGANIZATION_ID, (tx) => tx.knowledgeBase.deleteMany({ where: { id, organizationId: PLATFORM_ORGANIZATION_ID, scope: "PLATFORM" } }));
    return deleted.count > 0;
  }

  private insert(organizationId: string, input: NewKnowledgeBase, before: (tx: TenantTransaction) => Promise<void>, once?: WriteOnce): Promise<KnowledgeBase> {
    validateKnowledgeBase(input);
    return this.scoped(organizationId, (tx) => writeOnce(tx, organizationId, once, async () => {
      await before(tx);
      const created = await tx.knowledgeBase.create({
        data: {
          organizationId,
          name: input.name,
          description: input.description,
          scope: input.scope,
          teamId: input.teamId ?? null,
          category: input.category,
          embeddingModel: input.embeddingModel ?? null,
          backend: input.backend,
          awsRegion: input.awsRegion ?? null,
          bedrockKnowledgeBaseId: input.bedrockKnowledgeBaseId ?? null,
          s3VectorsBucket: input.s3VectorsBucket ?? null,
          s3VectorsIndex: input.s3VectorsIndex ?? null,
          credentialMode: input.credentialMode ?? null,
          roleArn: input.roleArn ?? null,
          externalId: input.externalId ?? null,
        },
      });
      if (input.sealedSecret) {
        await tx.knowledgeBaseCredentials.create({ data: { knowledgeBaseId: created.id, organizationId, sealedSecret: input.sealedSecret } });
      }
      return created;
    }, createdKnowledgeBase));
  }

  /** Every knowledge base the caller may query: platform first, then company, then their teams', by name. */
  list(tenant: TenantContext): Promise<KnowledgeBase[]> {
    return this.scoped(tenant.organizationId, (db) =>
      db.knowledgeBase.findMany({ where: visibleTo(tenant), orderBy: [{ scope: "asc" }, { name: "asc" }, { id: "asc" }] }),
    );
  }

  /**
   * The knowledge bases the unified search asks as such, in listing order, at most `limit`: the
   * BEDROCK and S3VECTORS ones the caller may query, and the platform's LOCAL ones (the
   * organization's own LOCAL ones are its documents, which the documents providers rank).
   */
  listSearchable(tenant: TenantContext, limit: number): Promise<KnowledgeBase[]> {
    return this.scoped(tenant.organizationId, (db) =>
      db.knowledgeBase.findMany({
        where: { AND: [visibleTo(tenant), { OR: [{ backend: { in: ["BEDROCK", "S3VECTORS"] } }, { backend: "LOCAL", scope: "PLATFORM" }] }] },
        orderBy: [{ scope: "asc" }, { name: "asc" }, { id: "asc" }],
        take: limit,
      }),
    );
  }

  /**
   * Records how one of the organization's own knowledge bases last answered: ERROR with the
   * reason after a lasting failure (`failure`), ACTIVE after a success. Platform knowledge
   * bases are not the tenant's to mark (and row-level security would refuse the write).
   */
  async setHealth(tenant: TenantContext, id: string, failure: string | null): Promise<void> {
    await this.scoped(tenant.organizationId, (db) =>
      db.knowledgeBase.updateMany({
        where: { id, organizationId: tenant.organizationId },
        data: failure === null ? { status: "ACTIVE", statusReason: null } : { status: "ERROR", statusReason: failure.slice(0, 500) },
      }),
    );
  }

  /**
   * Of these LOCAL knowledge bases, how many of each one's documents the caller may see are
   * still waiting for or in indexing: one statement (for DataLoader). Those knowledge bases
   * read SYNCING until their documents are READY or FAILED.
   */
  async documentsIndexing(tenant: TenantContext, ids: readonly string[]): Promise<Map<string, number>> {
    const rows = await this.scoped(tenant.organizationId, (db) =>
      db.document.groupBy({
        by: ["knowledgeBaseId"],
        where: {
          knowledgeBaseId: { in: [...ids] },
          organizationId: tenant.organizationId,
          status: { in: ["PENDING", "INDEXING"] },
          OR: [{ ownerId: tenant.userId }, ...(tenant.teamIds.length > 0 ? [{ teamId: { in: [...tenant.teamIds] } }] : [])],
        },
        _count: { _all: true },
      }),
    );
    return new Map(rows.flatMap((row) => (row.knowledgeBaseId ? [[row.knowledgeBaseId, row._count._all] as const] : [])));
  }

  /**
   * The caller's organization's own query counts of these knowledge bases of other organizations
   * (platform ones): one statement (for DataLoader). Absent: never asked.
   */
  async ownQueryCounts(tenant: TenantContext, ids: readonly string[]): Promise<Map<string, number>> {
    const rows = await this.scoped(tenant.organizationId, (db) =>
      db.knowledgeBaseQueryCount.findMany({
        where: { organizationId: tenant.organizationId, knowledgeBaseId: { in: [...ids] } },
        select: { knowledgeBaseId: true, queryCount: true },
      }),
    );
    return new Map(rows.map((row) => [row.knowledgeBaseId, row.queryCount]));
  }

  /** A page of `list`, after `after`, optionally of one scope. */
  listPage(tenant: TenantContext, take: number, after: KnowledgeBasePageCursor | null, scope: KnowledgeBaseScope | null): Promise<KnowledgeBase[]> {
    const where: Prisma.KnowledgeBaseWhereInput[] = [visibleTo(tenant)];
    if (scope) where.push({ scope });
    if (after) {
      // Prisma has no `gt` on enums: the scopes after the cursor's are listed instead.
      const laterScopes = SCOPE_ORDER.slice(SCOPE_ORDER.indexOf(after.scope) + 1);
      where.push({
        OR: [
          ...(laterScopes.length > 0 ? [{ scope: { in: [...laterScopes] } }] : []),
          { scope: after.scope, name: { gt: after.name } },
          { scope: after.scope, name: after.name, id: { gt: after.id } },
        ],
      });
    }
    return this.scoped(tenant.organizationId, (db) =>
      db.knowledgeBase.findMany({ where: { AND: where }, orderBy: [{ scope: "asc" }, { name: "asc" }, { id: "asc" }], take }),
    );
  }

  /** Of `ids`, those with the organization's own AWS keys stored: one statement. Reads no secret. */
  async withStoredKeys(tenant: TenantContext, ids: readonly string[]): Promise<Set<string>> {
    const rows = await this.scoped(tenant.organizationId, (db) =>
      db.knowledgeBaseCredentials.findMany({ where: { knowledgeBaseId: { in: [...ids] }, organizationId: tenant.organizationId }, select: { knowledgeBaseId: true } }),
    );
    return new Set(rows.map((row) => row.knowledgeBaseId));
  }

  /**
   * Stores the organization's own AWS keys (already sealed) for one of its BEDROCK or
   * S3VECTORS knowledge bases and switches it to USER_KEYS. There is no per-knowledge-base
   * owner: who may set keys is the caller's role (organization-settings.ts, checked by the resolver).
   */
  async setUserKeys(tenant: TenantContext, id: string, sealedSecret: string): Promise<KnowledgeBase> {
    return this.scoped(tenant.organizationId, async (tx) => {
      const base = await this.writable(tx, tenant, id, "store keys for");
      if (base.backend === "LOCAL") throw badUserInput("id", `knowledge base ${id} is LOCAL: it calls no AWS service, so it takes no AWS keys.`);
      await tx.knowledgeBaseCredentials.upsert({
        where: { organizationId_knowledgeBaseId: { organizationId: tenant.organizationId, knowledgeBaseId: id } },
        create: { knowledgeBaseId: id, organizationId: tenant.organizationId, sealedSecret },
        update: { sealedSecret, updatedAt: new Date() },
      });
      return tx.knowledgeBase.update({ where: { id }, data: { credentialMode: "USER_KEYS", roleArn: null, externalId: null, updatedAt: new Date() } });
    });
  }

  /**
   * Switches one of the organization's BEDROCK or S3VECTORS knowledge bases to ASSUME_ROLE with
   * this role and external id (null: none), dropping any stored keys. A role STS refused under
   * the old setting is not remembered under the new one (lib/aws/credentials.ts keys by both).
   */
  async setAssumeRole(tenant: TenantContext, id: string, roleArn: string, externalId: string | null): Promise<KnowledgeBase> {
    const roleProblem = iamRoleArnProblem(roleArn);
    if (roleProblem) throw badUserInput("roleArn", `${roleProblem}.`);
    const externalProblem = externalId === null ? null : externalIdProblem(externalId);
    if (externalProblem) throw badUserInput("externalId", `${externalProblem}.`);
    return this.scoped(tenant.organizationId, async (tx) => {
      const base = await this.writable(tx, tenant, id, "change the role of");
      if (base.backend === "LOCAL") throw badUserInput("id", `knowledge base ${id} is LOCAL: it calls no AWS service, so it assumes no role.`);
      await tx.knowledgeBaseCredentials.deleteMany({ where: { organizationId: tenant.organizationId, knowledgeBaseId: id } });
      return tx.knowledgeBase.update({ where: { id }, data: { credentialMode: "ASSUME_ROLE", roleArn, externalId, updatedAt: new Date() } });
    });
  }

  /** Deletes one of the organization's knowledge bases; its mappings and keys go with it (cascade), its documents stay. */
  async delete(tenant: TenantContext, id: string): Promise<void> {
    await this.scoped(tenant.organizationId, async (tx) => {
      await this.writable(tx, tenant, id, "delete");
      await tx.knowledgeBase.delete({ where: { id } });
    });
  }

  // Private: a knowledge base the caller may change: visible, and their organization's (platform ones are read-only to tenants).
  private async writable(tx: TenantTransaction, tenant: TenantContext, id: string, what: string): Promise<KnowledgeBase> {
    const base = await tx.knowledgeBase.findFirst({ where: { id, ...visibleTo(tenant) } });
    if (!base) throw notFound("KnowledgeBase", id);
    if (base.scope === "PLATFORM") throw forbidden(`knowledge base ${id} is curated by the platform; you cannot ${what} it.`);
    return base;
  }

  /**
   * Knowledge bases among `ids` the caller may query: one statement (for DataLoader). On the
   * replica when the request may read there (lib/database/replica-reads.ts: read-your-writes decides).
   */
  findByIds(tenant: TenantContext, ids: readonly string[]): Promise<KnowledgeBase[]> {
    return withTenantLoads(this.prisma, tenant.organizationId, (db) => db.knowledgeBase.findMany({ where: { id: { in: [...ids] }, ...visibleTo(tenant) } }));
  }

  async get(tenant: TenantContext, id: string): Promise<KnowledgeBase> {
    const [found] = await this.findByIds(tenant, [id]);
    if (!found) throw notFound("KnowledgeBase", id);
    return found;
  }

  /**
   * The sealed AWS keys of a knowledge base of the caller's own organization, or null when it
   * has none. For the code that calls AWS only; never return the value through the API.
   */
  async sealedCredentials(tenant: TenantContext, knowledgeBaseId: string): Promise<string | null> {
    const row = await this.scoped(tenant.organizationId, (db) =>
      db.knowledgeBaseCredentials.findFirst({
        where: { knowledgeBaseId, organizationId: tenant.organizationId, knowledgeBase: visibleTo(tenant) },
        select: { sealedSecret: true },
      }),
    );
    return row?.sealedSecret ?? null;
  }

  /**
   * Maps a capability of the caller's organization to a knowledge base the caller may query
   * (their own or a platform one); mapping it again updates priority and limits.
   */
  async mapCapability(tenant: TenantContext, input: CapabilityMappingInput): Promise<KnowledgeBaseCapability> {
    validateMapping(input);
    return this.scoped(tenant.organizationId, async (tx) => {
      const base = await tx.knowledgeBase.findFirst({ where: { id: input.knowledgeBaseId, ...visibleTo(tenant) }, select: { id: true } });
      if (!base) throw notFound("KnowledgeBase", input.knowledgeBaseId);
      await ensureOrganization(tx, tenant.organizationId);
      const limits = { priority: input.priority, maxResults: input.maxResults, minScore: input.minScore };
      return tx.knowledgeBaseCapability.upsert({
        where: {
          organizationId_capability_knowledgeBaseId: { organizationId: tenant.organizationId, capability: input.capability, knowledgeBaseId: input.knowledgeBaseId },
        },
        create: { organizationId: tenant.organizationId, capability: input.capability, knowledgeBaseId: input.knowledgeBaseId, ...limits },
        update: limits,
      });
    });
  }

  /**
   * The knowledge bases a capability maps to, in priority order (lower first; on a tie the
   * organization's own mapping before the platform's). Both the organization's and the
   * platform's mappings count, each only to a knowledge base the caller may query.
   */
  capabilityMappings(tenant: TenantContext, capability: string): Promise<CapabilityMapping[]> {
    return this.scoped(tenant.organizationId, async (db) => {
      const mappings = await db.knowledgeBaseCapability.findMany({
        where: {
          capability,
          organizationId: { in: [tenant.organizationId, PLATFORM_ORGANIZATION_ID] },
          knowledgeBase: visibleTo(tenant),
        },
        include: { knowledgeBase: true },
        orderBy: [{ priority: "asc" }, { createdAt: "asc" }, { id: "asc" }],
      });
      const own = (mapping: KnowledgeBaseCapability) => (mapping.organizationId === tenant.organizationId ? 0 : 1);
      // Stable: within a priority, the organization's mappings come first.
      return mappings.sort((a, b) => a.priority - b.priority || own(a) - own(b));
    });
  }
}

/** Platform knowledge bases, the organization's company-wide ones, and its TEAM ones of the caller's teams. */
function visibleTo(tenant: TenantContext): Prisma.KnowledgeBaseWhereInput {
  return {
    OR: [
      { organizationId: PLATFORM_ORGANIZATION_ID, scope: "PLATFORM" },
      { organizationId: tenant.organizationId, scope: "COMPANY" },
      ...(tenant.teamIds.length > 0 ? [{ organizationId: tenant.organizationId, scope: "TEAM" as const, teamId: { in: tenant.teamIds } }] : []),
    ],
  };
}

function validateKnowledgeBase(input: NewKnowledgeBase): void {
  if (input.name.trim().length === 0) throw badUserInput("name", "must not be empty.");
  if (input.name.length > MAX_KNOWLEDGE_BASE_NAME_LENGTH) throw badUserInput("name", `must be at most ${MAX_KNOWLEDGE_BASE_NAME_LENGTH} characters (got ${input.name.length}).`);
  if (input.embeddingModel && (input.embeddingModel.length > 200 || input.embeddingModel.trim().length === 0)) {
    throw badUserInput("embeddingModel", `must be a model id of 1 to 200 characters (got ${input.embeddingModel.length}).`);
  }
  if (input.category !== null && input.category.length > MAX_CATEGORY_LENGTH) {
    throw badUserInput("category", `must be at most ${MAX_CATEGORY_LENGTH} characters (got ${input.category.length}).`);
  }
  const needs = (field: keyof NewKnowledgeBase, why: string) => {
    if (!input[field]) throw badUserInput(field, `is required ${why}.`);
  };
  if (input.backend === "LOCAL") {
    if (input.credentialMode) throw badUserInput("credentialMode", "a LOCAL knowledge base calls no AWS service; leave it out.");
  } else {
    needs("awsRegion", `for a ${input.backend} knowledge base`);
    needs("credentialMode", `for a ${input.backend} knowledge base (PLATFORM, USER_KEYS or ASSUME_ROLE)`);
    if (input.backend === "BEDROCK") needs("bedrockKnowledgeBaseId", "for a BEDROCK knowledge base");
    if (input.backend === "S3VECTORS") {
      needs("s3VectorsBucket", "for an S3VECTORS knowledge base");
      needs("s3VectorsIndex", "for an S3VECTORS knowledge base");
    }
  }
  if (input.credentialMode === "ASSUME_ROLE") needs("roleArn", "with credential mode ASSUME_ROLE");
  else if (input.roleArn) throw badUserInput("roleArn", "is used only with credential mode ASSUME_ROLE.");
  if (input.externalId && input.credentialMode !== "ASSUME_ROLE") throw badUserInput("externalId", "is used only with credential mode ASSUME_ROLE (it is sent to STS with AssumeRole).");
  if (input.credentialMode === "USER_KEYS") needs("sealedSecret", "with credential mode USER_KEYS");
  else if (input.sealedSecret) throw badUserInput("sealedSecret", "is used only with credential mode USER_KEYS.");
  // The shapes last, once every field that must be there is: AWS would refuse them only at query time.
  const shapes: [keyof NewKnowledgeBase, (value: string) => string | null][] = [
    ["awsRegion", awsRegionProblem],
    ["bedrockKnowledgeBaseId", bedrockKnowledgeBaseIdProblem],
    ["s3VectorsBucket", s3VectorBucketProblem],
    ["s3VectorsIndex", s3VectorsIndexProblem],
    ["roleArn", iamRoleArnProblem],
    ["externalId", externalIdProblem],
  ];
  for (const [field, problemOf] of shapes) {
    const value = input[field];
    const problem = typeof value === "string" ? problemOf(value) : null;
    if (problem) throw badUserInput(field, `${problem}.`);
  }
}

function validateMapping(input: CapabilityMappingInput): void {
  if (input.capability.length < 1 || input.capability.length > 100) throw badUserInput("capability", `must be 1 to 100 characters (got ${input.capability.length}).`);
  if (!Number.isInteger(input.priority)) throw badUserInput("priority", `must be an integer (got ${input.priority}).`);
  if (!Number.isInteger(input.maxResults) || input.maxResults < 1 || input.maxResults > 100) throw badUserInput("maxResults", `must be an integer from 1 to 100 (got ${input.maxResults}).`);
  if (!(input.minScore >= 0 && input.minScore <= 1)) throw badUserInput("minScore", `must be between 0 and 1 (got ${input.minScore}).`);
}

async function ensureOrganization(tx: TenantTransaction, organizationId: string): Promise<void> {
  await tx.$executeRaw`INSERT INTO organizations (id) VALUES (${organizationId}) ON CONFLICT (id) DO NOTHING`;
}

const createdKnowledgeBase = createdEntity<KnowledgeBase>("KnowledgeBase", (knowledgeBase) => knowledgeBase.id, (tx, organizationId, id) => tx.knowledgeBase.findFirst({ where: { organizationId, id } }));
