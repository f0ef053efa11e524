/**
 * All reads and writes of saved searches. A saved search belongs to one user in one
 * organization: every statement here runs in the caller's tenant scope and names both the
 * organization and the user, so another user's saved search (a colleague's or another
 * organization's) is not found, exactly like one that never existed.
 */
import DataLoader from "dataloader";
import { Prisma, type PrismaClient, type SavedSearch as SavedSearchRow } from "../../generated/prisma/client.js";
import { createdEntity, writeOnce, type WriteOnce } from "../../lib/database/idempotency.js";
import { withTenantLoads } from "../../lib/database/replica-reads.js";
import { withTenantScope, type TenantTransaction } from "../../lib/database/tenant-scope.js";
import { badUserInput, notFound } from "../../lib/graphql/errors.js";
import { isUuid } from "../../lib/graphql/pagination.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import type { SearchFilterInput } from "./search-filter-input.js";

/** How many saved searches one user may keep. */
export const MAX_SAVED_SEARCHES_PER_USER = 100;

export interface ProviderWeight {
  provider: string;
  weight: number;
}

/** A saved search as the schema's SavedSearch shows it. */
export interface SavedSearch {
  id: string;
  name: string;
  query: string;
  alpha: number;
  /** Null: ask every provider. */
  providers: string[] | null;
  weights: ProviderWeight[];
  /** Null: no filter. */
  filter: SearchFilterInput | null;
  typoTolerance: boolean;
  createdAt: Date;
  updatedAt: Date;
  lastRunAt: Date | null;
}

/** What `saveSearch` stores, already validated (saved-search-input.ts). */
export interface NewSavedSearch {
  name: string;
  query: string;
  alpha: number;
  providers: string[] | null;
  weights: ProviderWeight[];
  filter: SearchFilterInput | null;
  typoTolerance: boolean;
}

export interface SavedSearchPageCursor {
  createdAt: Date;
  id: string;
}

export class SavedSearchStore {
  constructor(private readonly prisma: PrismaClient) {}

  private scoped<T>(tenant: TenantContext, work: (db: TenantTransaction) => Promise<T>): Promise<T> {
    return withTenantScope(this.prisma, tenant.organizationId, work);
  }

  /**
   * The caller's own saved searches among `ids`: one statement however many ids (the `_entities`
   * loader). On the replica when the request may read there (lib/database/replica-reads.ts:
   * read-your-writes decides; a mutation's own reads stay on the primary).
   */
  async findByIds(tenant: TenantContext, ids: readonly string[]): Promise<SavedSearch[]> {
    const rows = await withTenantLoads(this.prisma, tenant.organizationId, (db) =>
      db.savedSearch.findMany({ where: { id: { in: [...ids] }, organizationId: tenant.organizationId, userId: tenant.userId } }),
    );
    return rows.map(toSavedSearch);
  }

  /** Newest first, the id breaking ties so pages never overlap or skip. */
  async listPage(tenant: TenantContext, take: number, after: SavedSearchPageCursor | null): Promise<SavedSearch[]> {
    const rows = await this.scoped(tenant, (db) =>
      db.savedSearch.findMany({
        where: {
          organizationId: tenant.organizationId,
          userId: tenant.userId,
          ...(after ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] } : {}),
        },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take,
      }),
    );
    return rows.map(toSavedSearch);
  }

  /**
   * Saves a search, refusing the user's 101st and a name they already use. A lock per user
   * serializes their saves, so two saves at 99 cannot both pass the count.
   */
  /** `once`: the write's Idempotency-Key and liveness (lib/database/idempotency.ts); without it, a plain write. */
  async create(tenant: TenantContext, search: NewSavedSearch, once?: WriteOnce): Promise<SavedSearch> {
    const row = await withDuplicateNameAs("input.name", search.name, () =>
      this.scoped(tenant, (db) => writeOnce(db, tenant.organizationId, once, async () => {
        await db.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`saved-searches:${tenant.organizationId}:${tenant.userId}`}, 0))`;
        const count = await db.savedSearch.count({ where: { organizationId: tenant.organizationId, userId: tenant.userId } });
        if (count >= MAX_SAVED_SEARCHES_PER_USER) {
          throw badUserInput("input", `you already have ${MAX_SAVED_SEARCHES_PER_USER} saved searches, the most one user may keep: delete one (deleteSavedSearch) before saving another`);
        }
        return db.savedSearch.create({
          data: {
            organizationId: tenant.organizationId,
            userId: tenant.userId,
            name: search.name,
            query: search.query,
            alpha: search.alpha,
            // Prisma reads a NULL text[] as []: an empty list is never valid input, so [] means "all providers" too.
            providers: search.providers ?? [],
            weights: search.weights as unknown as Prisma.InputJsonValue,
            // Instants as ISO strings (JSON has no dates): toSavedSearch reads them back.
            filter: search.filter === null ? Prisma.DbNull : (JSON.parse(JSON.stringify(search.filter)) as Prisma.InputJsonValue),
            typoTolerance: search.typoTolerance,
          },
        });
      }, savedSearchRow)),
    );
    return toSavedSearch(row);
  }

  async rename(tenant: TenantContext, id: string, name: string): Promise<SavedSearch> {
    const row = await withDuplicateNameAs("name", name, () =>
      withNotFoundAs(id, () => this.scoped(tenant, (db) => db.savedSearch.update({ where: { organizationId_id: { organizationId: tenant.organizationId, id }, userId: tenant.userId }, data: { name } }))),
    );
    return toSavedSearch(row);
  }

  async delete(tenant: TenantContext, id: string): Promise<void> {
    const { count } = await this.scoped(tenant, (db) => db.savedSearch.deleteMany({ where: { id, organizationId: tenant.organizationId, userId: tenant.userId } }));
    if (count === 0) throw notFound("SavedSearch", id);
  }

  /** One of the caller's saved searches, or NOT_FOUND. */
  async require(tenant: TenantContext, id: string): Promise<SavedSearch> {
    const [found] = await this.findByIds(tenant, [id]);
    if (!found) throw notFound("SavedSearch", id);
    return found;
  }

  /**
   * Records a run: this run's hit keys and time replace the previous run's, in one UPDATE that
   * also returns the keys it replaced (null before the first run). The previous keys are read
   * under the row's lock in that same statement, so two runs at once each get the keys of the
   * run before them, and neither reports the other's hits as new twice.
   */
  async recordRun(tenant: TenantContext, id: string, hitKeys: string[]): Promise<{ savedSearch: SavedSearch; previousHitKeys: string[] | null }> {
    const rows = await this.scoped(tenant, (db) =>
      db.$queryRaw<(Omit<SavedSearchRow, "providers"> & { providers: string[] | null; previousHitKeys: unknown })[]>`
        UPDATE saved_searches AS s
        SET last_hit_keys = ${JSON.stringify(hitKeys)}::jsonb, last_run_at = now()
        FROM (
          SELECT organization_id, id, last_hit_keys FROM saved_searches
          WHERE id = ${id}::uuid AND organization_id = ${tenant.organizationId} AND user_id = ${tenant.userId}
          FOR UPDATE
        ) AS previous
        WHERE s.organization_id = previous.organization_id AND s.id = previous.id
        RETURNING s.id::text AS id, s.organization_id AS "organizationId", s.user_id AS "userId", s.name, s.query, s.alpha,
                  s.providers, s.weights, s.filter, s.typo_tolerance AS "typoTolerance", s.created_at AS "createdAt", s.updated_at AS "updatedAt", s.last_run_at AS "lastRunAt",
                  s.last_hit_keys AS "lastHitKeys", previous.last_hit_keys AS "previousHitKeys"`,
    );
    const row = rows[0];
    if (!row) throw notFound("SavedSearch", id);
    const previous = Array.isArray(row.previousHitKeys) ? row.previousHitKeys.filter((key): key is string => typeof key === "string") : null;
    return { savedSearch: toSavedSearch({ ...row, providers: row.providers ?? [] }), previousHitKeys: previous };
  }
}

const savedSearchRow = createdEntity<SavedSearchRow>("SavedSearch", (row) => row.id, (tx, organizationId, id) => tx.savedSearch.findUnique({ where: { organizationId_id: { organizationId, id } } }));

function toSavedSearch(row: SavedSearchRow): SavedSearch {
  return {
    id: row.id,
    name: row.name,
    query: row.query,
    alpha: row.alpha,
    providers: row.providers.length > 0 ? row.providers : null,
    weights: Array.isArray(row.weights) ? (row.weights as unknown as ProviderWeight[]) : [],
    filter: savedFilter(row.filter),
    typoTolerance: row.typoTolerance,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    lastRunAt: row.lastRunAt,
  };
}

/** The stored filter with its instants as Dates again; null for none. */
function savedFilter(stored: unknown): SearchFilterInput | null {
  if (stored === null || typeof stored !== "object" || Array.isArray(stored)) return null;
  const filter = { ...(stored as SearchFilterInput) };
  const range = (value: { from?: unknown; to?: unknown } | null | undefined) =>
    value ? { from: typeof value.from === "string" ? new Date(value.from) : null, to: typeof value.to === "string" ? new Date(value.to) : null } : value;
  if (filter.created) filter.created = range(filter.created as { from?: unknown; to?: unknown });
  if (filter.updated) filter.updated = range(filter.updated as { from?: unknown; to?: unknown });
  return filter;
}

/** A unique violation on (organization, user, name) is the caller's duplicate name. */
async function withDuplicateNameAs<T>(field: string, name: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
      throw badUserInput(field, `you already have a saved search named "${name}": choose another name, or rename or delete that one`);
    }
    throw error;
  }
}

/** Prisma's "record to update not found" is NOT_FOUND, the same for a missing row and another user's. */
async function withNotFoundAs<T>(id: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2025") throw notFound("SavedSearch", id);
    throw error;
  }
}

/**
 * SavedSearch by id for one request, with the caller baked in: every id asked for in one tick
 * (e.g. a batch of `_entities` references) becomes one SELECT, and the cache dies with the request.
 */
export function createSavedSearchLoader(store: SavedSearchStore, tenant: TenantContext): DataLoader<string, SavedSearch | null> {
  return new DataLoader<string, SavedSearch | null>(
    async (ids) => {
      // An id that is not a UUID cannot exist: null, and PostgreSQL never sees it.
      const valid = [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
      const rows = valid.length > 0 ? await store.findByIds(tenant, valid) : [];
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => (isUuid(id) ? (byId.get(id.toLowerCase()) ?? null) : null));
    },
    { maxBatchSize: 1000 },
  );
}
