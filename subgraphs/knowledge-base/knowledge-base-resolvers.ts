/**
 * Resolvers for knowledge bases, capabilities, the agent-facing knowledge queries and their
 * analytics (schema.graphql). resolvers.ts merges them with the document resolvers. Tenancy and
 * access scopes live in the stores; here are argument checks and the schema's shapes.
 */
import DataLoader from "dataloader";
import { GraphQLError, type GraphQLResolveInfo } from "graphql";
import { sealUserKeys } from "../../lib/aws/credentials.js";
import type { SecretKeyring } from "../../lib/secrets/keyring.js";
import { badUserInput, forbidden } from "../../lib/graphql/errors.js";
import { writeOnceFor } from "../../lib/graphql/idempotency-key.js";
import { decodeCursor, encodeCursor, isUuid, requireUuid, toConnection, validatePageSize } from "../../lib/graphql/pagination.js";
import type { RequestContext } from "../../lib/graphql/subgraph-server.js";
import type { PrismaClient } from "../../generated/prisma/client.js";
import { requireAdmin } from "../../lib/tenancy/roles.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { knowledgeAnalytics } from "./knowledge-analytics.js";
import type { KnowledgeBase, KnowledgeBasePageCursor, KnowledgeBaseScope, KnowledgeBaseStore } from "./knowledge-base-store.js";
import type { KnowledgeQueries } from "./knowledge-queries.js";
import type { OrganizationSettingsChange, OrganizationSettingsStore } from "./organization-settings.js";
import { isPassageId, type PassageStore, type StoredPassage } from "./passage-store.js";

export interface KnowledgeBaseLoaders {
  knowledgeBaseById: DataLoader<string, KnowledgeBase | null>;
  /** Whether the organization's own AWS keys are stored for a knowledge base. */
  hasStoredKeys: DataLoader<string, boolean>;
  /** How many of a LOCAL knowledge base's documents (that the caller may see) are PENDING or INDEXING. */
  documentsIndexing: DataLoader<string, number>;
  passageById: DataLoader<string, StoredPassage | null>;
  /** The caller's organization's own query count of another organization's knowledge base (a platform one). */
  ownQueryCount: DataLoader<string, number>;
}

export interface KnowledgeContext extends RequestContext {
  prisma: PrismaClient;
  knowledgeBases: KnowledgeBaseStore;
  knowledge: KnowledgeQueries;
  organizationSettings: OrganizationSettingsStore;
  /** Seals user keys; null when SECRETS_ENCRYPTION_KEYS is not configured. */
  keyring: SecretKeyring | null;
  knowledgeBaseLoaders(): KnowledgeBaseLoaders;
}

export function createKnowledgeBaseLoaders(store: KnowledgeBaseStore, passages: PassageStore, tenant: TenantContext): KnowledgeBaseLoaders {
  return {
    knowledgeBaseById: new DataLoader(async (ids: readonly string[]) => {
      // An id that is not a UUID cannot exist; asking PostgreSQL would only raise a cast error.
      const valid = [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
      const rows = valid.length > 0 ? await store.findByIds(tenant, valid) : [];
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => byId.get(id.toLowerCase()) ?? null);
    }, { maxBatchSize: 1000 }),
    hasStoredKeys: new DataLoader(async (ids: readonly string[]) => {
      const stored = await store.withStoredKeys(tenant, ids);
      return ids.map((id) => stored.has(id));
    }, { maxBatchSize: 1000 }),
    documentsIndexing: new DataLoader(async (ids: readonly string[]) => {
      const counts = await store.documentsIndexing(tenant, ids);
      return ids.map((id) => counts.get(id) ?? 0);
    }, { maxBatchSize: 1000 }),
    ownQueryCount: new DataLoader(async (ids: readonly string[]) => {
      const counts = await store.ownQueryCounts(tenant, ids.filter(isUuid));
      return ids.map((id) => counts.get(id) ?? 0);
    }, { maxBatchSize: 1000 }),
    passageById: new DataLoader(async (ids: readonly string[]) => {
      const rows = await passages.findByIds(tenant, ids);
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => byId.get(id) ?? null);
    }, { maxBatchSize: 1000 }),
  };
}

const SCOPES: readonly KnowledgeBaseScope[] = ["PLATFORM", "COMPANY", "TEAM"];
const MAX_QUERY_CHARACTERS = 1000;
const ACCESS_KEY_ID = /^[A-Z0-9]{16,128}$/;

const knowledgeBaseCursor = (row: KnowledgeBase) => encodeCursor("b", [row.scope, row.name, row.id]);

function decodeKnowledgeBaseCursor(after: string): KnowledgeBasePageCursor {
  return decodeCursor(after, "b", "after", ([scope, name, id]) =>
    SCOPES.includes(scope as KnowledgeBaseScope) && typeof name === "string" && isUuid(id) ? { scope: scope as KnowledgeBaseScope, name, id: id as string } : null,
  );
}

/** A knowledge query's text: 1 to 1,000 characters once trimmed; control characters become spaces. */
function knowledgeQueryText(query: string, field: string): string {
  const text = query.replace(/[\u0000-\u001f\u007f]/g, " ").trim();
  if (text.length === 0) throw badUserInput(field, "must not be empty.");
  if (text.length > MAX_QUERY_CHARACTERS) throw badUserInput(field, `must be at most ${MAX_QUERY_CHARACTERS} characters (got ${text.length}).`);
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)) throw badUserInput(field, "must be valid Unicode (it has an unpaired surrogate).");
  return text;
}

const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * A text argument as PostgreSQL can store it: NUL is refused by the driver and an unpaired
 * surrogate is not Unicode, and either would otherwise surface as an internal error.
 */
function storableText<T extends string | null | undefined>(value: T, field: string): T {
  if (typeof value !== "string") return value;
  const nul = value.indexOf("\u0000");
  if (nul >= 0) throw badUserInput(field, `must not contain NUL bytes (found one at index ${nul}).`);
  const surrogate = UNPAIRED_SURROGATE.exec(value);
  if (surrogate) throw badUserInput(field, `must be valid Unicode: unpaired surrogate U+${surrogate[0].charCodeAt(0).toString(16).toUpperCase()} at index ${surrogate.index}.`);
  return value;
}

function capabilityName(value: string, field: string): string {
  storableText(value, field);
  if (value.length < 1 || value.length > 100) throw badUserInput(field, `must be 1 to 100 characters (got ${value.length}).`);
  return value;
}

function limitOf(limit: number | null | undefined, field: string): number {
  const value = limit ?? 10;
  if (!Number.isInteger(value) || value < 1 || value > 100) throw badUserInput(field, `must be an integer from 1 to 100 (got ${value}).`);
  return value;
}

interface CreateKnowledgeBaseArgs {
  name: string;
  description?: string | null;
  scope: KnowledgeBaseScope;
  teamId?: string | null;
  category?: string | null;
  backend: "LOCAL" | "BEDROCK" | "S3VECTORS";
  region?: string | null;
  bedrockKnowledgeBaseId?: string | null;
  s3VectorsBucket?: string | null;
  s3VectorsIndex?: string | null;
  credentialMode?: "PLATFORM" | "USER_KEYS" | "ASSUME_ROLE" | null;
  roleArn?: string | null;
  externalId?: string | null;
  embeddingModel?: string | null;
}

export const knowledgeBaseResolvers = {
  Query: {
    knowledgeBase(_source: unknown, args: { id: string }, context: KnowledgeContext) {
      context.requireTenant();
      return context.knowledgeBaseLoaders().knowledgeBaseById.load(requireUuid(args.id, "id"));
    },
    async knowledgeBases(_source: unknown, args: { first?: number | null; after?: string | null; scope?: KnowledgeBaseScope | null }, context: KnowledgeContext) {
      const tenant = context.requireTenant();
      const first = validatePageSize(args.first, "first", 20);
      const after = args.after ? decodeKnowledgeBaseCursor(args.after) : null;
      const rows = await context.knowledgeBases.listPage(tenant, first + 1, after, args.scope ?? null);
      const loader = context.knowledgeBaseLoaders().knowledgeBaseById;
      for (const row of rows.slice(0, first)) loader.prime(row.id, row);
      return toConnection(rows, first, after !== null, knowledgeBaseCursor);
    },
    queryKnowledgeBase(_source: unknown, args: { input: { query: string; knowledgeBaseId?: string | null; limit?: number | null } }, context: KnowledgeContext) {
      const tenant = context.requireTenant();
      const { input } = args;
      const knowledgeBaseId = input.knowledgeBaseId ? requireUuid(input.knowledgeBaseId, "input.knowledgeBaseId") : null;
      return context.knowledge.queryKnowledgeBase(tenant, knowledgeQueryText(input.query, "input.query"), limitOf(input.limit, "input.limit"), knowledgeBaseId);
    },
    queryPlatformKnowledge(_source: unknown, args: { capability: string; query: string; limit?: number | null }, context: KnowledgeContext) {
      const tenant = context.requireTenant();
      return context.knowledge.queryPlatformKnowledge(tenant, capabilityName(args.capability, "capability"), knowledgeQueryText(args.query, "query"), limitOf(args.limit, "limit"));
    },
    knowledgeAnalytics(_source: unknown, args: { from: Date; to: Date }, context: KnowledgeContext) {
      const tenant = context.requireTenant();
      // Everyone's queries, other members' included: the organization's, not the caller's.
      requireAdmin(tenant, "Reading the organization's knowledge analytics");
      return knowledgeAnalytics(context.prisma, tenant, args.from, args.to);
    },
    organizationSettings(_source: unknown, _args: unknown, context: KnowledgeContext) {
      return context.organizationSettings.get(context.requireTenant());
    },
  },

  Mutation: {
    async createKnowledgeBase(_source: unknown, args: { input: CreateKnowledgeBaseArgs }, context: KnowledgeContext, info: GraphQLResolveInfo) {
      const tenant = context.requireTenant();
      const once = writeOnceFor(context.writes, tenant, info, args);
      const { input } = args;
      for (const field of ["name", "description", "teamId", "category", "region", "bedrockKnowledgeBaseId", "s3VectorsBucket", "s3VectorsIndex", "roleArn", "externalId", "embeddingModel"] as const) {
        storableText(input[field], `input.${field}`);
      }
      await context.organizationSettings.requireManager(tenant, { scope: input.scope, teamId: input.teamId ?? null }, "Creating");
      if (input.credentialMode === "USER_KEYS") {
        throw badUserInput("input.credentialMode", "create it with PLATFORM or ASSUME_ROLE, then store your keys with setKnowledgeBaseCredentials (which switches it to USER_KEYS).");
      }
      try {
        return await context.knowledgeBases.create(tenant, {
          name: input.name,
          description: input.description ?? null,
          scope: input.scope,
          teamId: input.teamId ?? null,
          category: input.category ?? null,
          backend: input.backend,
          awsRegion: input.region ?? null,
          bedrockKnowledgeBaseId: input.bedrockKnowledgeBaseId ?? null,
          s3VectorsBucket: input.s3VectorsBucket ?? null,
          s3VectorsIndex: input.s3VectorsIndex ?? null,
          credentialMode: input.credentialMode ?? null,
          roleArn: input.roleArn ?? null,
          externalId: input.externalId ?? null,
          embeddingModel: input.embeddingModel ?? null,
        }, once);
      } catch (error) {
        throw inInput(error);
      }
    },
    async setKnowledgeBaseCredentials(_source: unknown, args: { id: string; accessKeyId: string; secretAccessKey: string }, context: KnowledgeContext) {
      const tenant = context.requireTenant();
      const id = requireUuid(args.id, "id");
      await requireManagerOf(context, tenant, id, "Storing AWS keys for");
      if (!context.keyring) {
        throw new GraphQLError("This deployment cannot store AWS keys: SECRETS_ENCRYPTION_KEYS is not configured. Ask its operator to set it, or use credential mode ASSUME_ROLE.", {
          extensions: { code: "SECRETS_NOT_CONFIGURED" },
        });
      }
      if (!ACCESS_KEY_ID.test(args.accessKeyId)) throw badUserInput("accessKeyId", "must be an AWS access key id: 16 to 128 capital letters and digits (e.g. AKIA…).");
      if (args.secretAccessKey.length < 16 || args.secretAccessKey.length > 256 || /\s/.test(args.secretAccessKey)) {
        throw badUserInput("secretAccessKey", "must be an AWS secret access key: 16 to 256 characters without spaces.");
      }
      const sealed = sealUserKeys(context.keyring, tenant.organizationId, { accessKeyId: args.accessKeyId, secretAccessKey: args.secretAccessKey });
      const updated = await context.knowledgeBases.setUserKeys(tenant, id, sealed);
      const loaders = context.knowledgeBaseLoaders();
      loaders.hasStoredKeys.prime(id, true);
      return updated;
    },
    async setKnowledgeBaseRole(_source: unknown, args: { id: string; roleArn: string; externalId?: string | null }, context: KnowledgeContext) {
      const tenant = context.requireTenant();
      const id = requireUuid(args.id, "id");
      storableText(args.roleArn, "roleArn");
      storableText(args.externalId, "externalId");
      await requireManagerOf(context, tenant, id, "Changing the role of");
      const updated = await context.knowledgeBases.setAssumeRole(tenant, id, args.roleArn, args.externalId ?? null);
      context.knowledgeBaseLoaders().hasStoredKeys.prime(id, false);
      return updated;
    },
    async deleteKnowledgeBase(_source: unknown, args: { id: string }, context: KnowledgeContext) {
      const tenant = context.requireTenant();
      const id = requireUuid(args.id, "id");
      await requireManagerOf(context, tenant, id, "Deleting");
      await context.knowledgeBases.delete(tenant, id);
      return { id };
    },
    mapCapability(_source: unknown, args: { capability: string; knowledgeBaseId: string; priority?: number | null; maxResults?: number | null; minScore?: number | null }, context: KnowledgeContext) {
      const tenant = context.requireTenant();
      // A mapping answers queryPlatformKnowledge for everyone in the organization.
      requireAdmin(tenant, "Mapping a capability to a knowledge base");
      return context.knowledgeBases.mapCapability(tenant, {
        capability: capabilityName(args.capability, "capability"),
        knowledgeBaseId: requireUuid(args.knowledgeBaseId, "knowledgeBaseId"),
        priority: args.priority ?? 0,
        maxResults: args.maxResults ?? 5,
        minScore: args.minScore ?? 0,
      });
    },
    setOrganizationSettings(_source: unknown, args: { input: { [K in keyof OrganizationSettingsChange]?: OrganizationSettingsChange[K] | null } }, context: KnowledgeContext) {
      // A setting given as null is left as it is, like one left out.
      const change = Object.fromEntries(Object.entries(args.input).filter(([, value]) => value !== null && value !== undefined)) as OrganizationSettingsChange;
      return context.organizationSettings.change(context.requireTenant(), change);
    },
  },

  KnowledgeBase: {
    __resolveReference(reference: { id?: unknown }, context: KnowledgeContext) {
      if (typeof reference.id !== "string") throw badUserInput("id", `must be a UUID string, got ${reference.id === undefined ? "no id" : typeof reference.id}`);
      context.requireTenant();
      return context.knowledgeBaseLoaders().knowledgeBaseById.load(reference.id);
    },
    /** LOCAL knowledge bases read SYNCING while documents the caller may see are being indexed; the others keep what their last query found. */
    async status(base: KnowledgeBase, _args: unknown, context: KnowledgeContext) {
      if (base.backend !== "LOCAL" || base.status === "ERROR") return base.status;
      return (await context.knowledgeBaseLoaders().documentsIndexing.load(base.id)) > 0 ? "SYNCING" : base.status;
    },
    async statusReason(base: KnowledgeBase, _args: unknown, context: KnowledgeContext) {
      if (base.backend !== "LOCAL" || base.status === "ERROR") return base.statusReason;
      const indexing = await context.knowledgeBaseLoaders().documentsIndexing.load(base.id);
      return indexing > 0 ? `${indexing} document${indexing === 1 ? " is" : "s are"} being indexed` : base.statusReason;
    },
    /**
     * Its own count where the caller's organization owns it; for another organization's (a
     * platform one), the caller's organization's own queries of it: how often every organization
     * asks it is not any one organization's business.
     */
    async queryCount(base: KnowledgeBase, _args: unknown, context: KnowledgeContext) {
      const tenant = context.requireTenant();
      return base.organizationId === tenant.organizationId ? base.queryCount : context.knowledgeBaseLoaders().ownQueryCount.load(base.id);
    },
    backend(base: KnowledgeBase) {
      if (base.backend === "BEDROCK") return { __typename: "BedrockBackend", kind: "BEDROCK", knowledgeBaseId: base.bedrockKnowledgeBaseId, region: base.awsRegion };
      if (base.backend === "S3VECTORS") return { __typename: "S3VectorsBackend", kind: "S3VECTORS", bucket: base.s3VectorsBucket, index: base.s3VectorsIndex, region: base.awsRegion };
      return { __typename: "LocalBackend", kind: "LOCAL" };
    },
    async credentials(base: KnowledgeBase, _args: unknown, context: KnowledgeContext) {
      if (!base.credentialMode) return null;
      // Platform knowledge bases never carry an organization's keys (their credentials are the platform's).
      const hasStoredKeys = base.scope === "PLATFORM" ? false : await context.knowledgeBaseLoaders().hasStoredKeys.load(base.id);
      return { mode: base.credentialMode, roleArn: base.roleArn, externalId: base.externalId, hasStoredKeys };
    },
  },

  KnowledgeBasePassage: {
    __resolveReference(reference: { id?: unknown }, context: KnowledgeContext) {
      if (typeof reference.id !== "string") throw badUserInput("id", `must be a passage id string, got ${reference.id === undefined ? "no id" : typeof reference.id}`);
      context.requireTenant();
      // An id this subgraph could not have issued names nothing: null, like a passage pruned since.
      return isPassageId(reference.id) ? context.knowledgeBaseLoaders().passageById.load(reference.id) : null;
    },
    knowledgeBase(passage: StoredPassage, _args: unknown, context: KnowledgeContext) {
      return context.knowledgeBaseLoaders().knowledgeBaseById.load(passage.knowledgeBaseId);
    },
  },

  KnowledgeBaseBackend: {
    __resolveType: (backend: { __typename: string }) => backend.__typename,
  },

  CapabilityMapping: {
    knowledgeBase(mapping: { knowledgeBaseId: string }, _args: unknown, context: KnowledgeContext) {
      return context.knowledgeBaseLoaders().knowledgeBaseById.load(mapping.knowledgeBaseId);
    },
  },

  KnowledgeBaseUsage: {
    knowledgeBase(usage: { knowledgeBaseId: string | null }, _args: unknown, context: KnowledgeContext) {
      return usage.knowledgeBaseId ? context.knowledgeBaseLoaders().knowledgeBaseById.load(usage.knowledgeBaseId) : null;
    },
  },
};

/**
 * FORBIDDEN unless the caller may change this knowledge base (organization-settings.ts says
 * who may). One it cannot see is left to the store, which answers NOT_FOUND as for one that
 * does not exist, so another organization's ids stay indistinguishable from unknown ones.
 */
async function requireManagerOf(context: KnowledgeContext, tenant: TenantContext, id: string, doing: string): Promise<void> {
  const base = await context.knowledgeBaseLoaders().knowledgeBaseById.load(id);
  // Before anything else is checked (keys, the keyring): no organization changes the platform's.
  if (base?.scope === "PLATFORM") throw forbidden(`${doing} knowledge base ${id} is not possible: it is curated by the platform (its operators change it with npm run platform-kb); every organization may read it, none may change it.`);
  if (base) await context.organizationSettings.requireManager(tenant, base, doing);
}

/** The store names fields as the model does (`name`, `awsRegion`); the client sent them inside `input`, under the schema's names. */
function inInput(error: unknown): unknown {
  if (!(error instanceof GraphQLError) || error.extensions.code !== "BAD_USER_INPUT" || typeof error.extensions.field !== "string") return error;
  const renamed: Record<string, string> = { awsRegion: "region" };
  const field = `input.${renamed[error.extensions.field] ?? error.extensions.field}`;
  return badUserInput(field, error.message.replace(/^[^:]*: /, ""));
}
