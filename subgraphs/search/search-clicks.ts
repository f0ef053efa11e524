/**
 * `recordSearchClick`: which hit of a search a person opened, at which 1-based position, for
 * click-through in `searchAnalytics`. A click names its search by `SearchResult.searchId` (the
 * search's query log row, query-log.ts), and counts only when that search is the caller's
 * organization's and recent; any other id (unknown, too old, another organization's) is the same
 * NOT_FOUND, so the answer never tells whether a search exists elsewhere. The row's key is
 * (organization, search, item): a second click on the same hit of the same search changes
 * nothing, so double clicks and retries count once.
 */
import { GraphQLError } from "graphql";
import type { PrismaClient } from "../../generated/prisma/client.js";
import { withTenantScope } from "../../lib/database/tenant-scope.js";
import { badUserInput } from "../../lib/graphql/errors.js";
import { requireUuid } from "../../lib/graphql/pagination.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import type { QueryLog } from "./query-log.js";
import { MAX_WINDOW } from "./search-service.js";

/** How long after a search its hits' clicks are taken: a tab left open for a day is a new visit. */
export const CLICK_WINDOW_HOURS = 24;
/** The deepest position a click may name: a search's fused list never holds more hits. */
export const MAX_CLICK_POSITION = MAX_WINDOW;
/** The longest item id (ids are UUIDs or providers' ids; web results' can be long). */
export const MAX_ITEM_ID_LENGTH = 512;

const ITEM_KINDS = new Set(["CONVERSATION", "DOCUMENT_CHUNK", "KNOWLEDGE_BASE_PASSAGE", "WEB_RESULT", "SLACK_MESSAGE", "LINKEDIN_POST"]);

export interface RecordSearchClickInput {
  searchId: string;
  position: number;
  itemId: string;
  itemKind: string;
}

export interface RecordedSearchClick {
  searchId: string;
  itemKind: string;
  itemId: string;
  position: number;
  /** When the click was first recorded. */
  at: Date;
  /** False when this search's click on this item was already recorded (this one changed nothing). */
  firstClick: boolean;
}

/** The input checked before any statement runs, or BAD_USER_INPUT naming the field. */
export function validateSearchClick(input: RecordSearchClickInput): RecordSearchClickInput {
  const searchId = requireUuid(input.searchId, "input.searchId");
  if (!Number.isInteger(input.position) || input.position < 1 || input.position > MAX_CLICK_POSITION) {
    throw badUserInput("input.position", `must be the hit's 1-based position in the search's list, 1 to ${MAX_CLICK_POSITION}, got ${input.position}`);
  }
  if (input.itemId.length === 0 || input.itemId.length > MAX_ITEM_ID_LENGTH || input.itemId.trim().length === 0 || input.itemId.includes("\0")) {
    throw badUserInput("input.itemId", `must be the hit's item id (SearchHit.item's id): 1 to ${MAX_ITEM_ID_LENGTH} characters, got ${input.itemId.length}`);
  }
  if (!ITEM_KINDS.has(input.itemKind)) throw badUserInput("input.itemKind", `must be a SearchItemKind, got ${input.itemKind.slice(0, 40)}`);
  return { ...input, searchId };
}

function searchNotFound(searchId: string): GraphQLError {
  return new GraphQLError(`No search ${searchId} of your organization in the last ${CLICK_WINDOW_HOURS} hours: pass the searchId of a recent search's answer.`, {
    extensions: { code: "NOT_FOUND", id: searchId },
  });
}

export class SearchClickStore {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly queryLog: QueryLog,
  ) {}

  async record(tenant: TenantContext, raw: RecordSearchClickInput): Promise<RecordedSearchClick> {
    const input = validateSearchClick(raw);
    let recorded = await this.tryRecord(tenant, input);
    // The log is written in batches (query-log.ts): a click a moment after its search may come
    // before the search's row. Writing what this process holds settles that; a search logged by
    // another process has been written by the time its client could click (half a second).
    if (recorded === null) {
      await this.queryLog.flush();
      recorded = await this.tryRecord(tenant, input);
    }
    if (recorded === null) throw searchNotFound(input.searchId);
    return recorded;
  }

  /** Null when the caller's organization has no such recent search. */
  private tryRecord(tenant: TenantContext, input: RecordSearchClickInput): Promise<RecordedSearchClick | null> {
    const org = tenant.organizationId;
    return withTenantScope(this.prisma, org, async (db) => {
      const [search] = await db.$queryRaw<{ created_at: Date }[]>`
        SELECT created_at FROM search_queries
        WHERE organization_id = ${org} AND id = ${input.searchId}::uuid
          AND created_at >= now() - make_interval(hours => ${CLICK_WINDOW_HOURS})`;
      if (!search) return null;
      const inserted = await db.$queryRaw<{ created_at: Date }[]>`
        INSERT INTO search_clicks (organization_id, search_id, item_kind, item_id, position, user_id, searched_at)
        VALUES (${org}, ${input.searchId}::uuid, ${input.itemKind}, ${input.itemId}, ${input.position}, ${tenant.userId}, ${search.created_at})
        ON CONFLICT (organization_id, search_id, item_kind, item_id) DO NOTHING
        RETURNING created_at`;
      if (inserted[0]) return { searchId: input.searchId, itemKind: input.itemKind, itemId: input.itemId, position: input.position, at: inserted[0].created_at, firstClick: true };
      const [first] = await db.$queryRaw<{ position: number; created_at: Date }[]>`
        SELECT position, created_at FROM search_clicks
        WHERE organization_id = ${org} AND search_id = ${input.searchId}::uuid AND item_kind = ${input.itemKind} AND item_id = ${input.itemId}`;
      return { searchId: input.searchId, itemKind: input.itemKind, itemId: input.itemId, position: first!.position, at: first!.created_at, firstClick: false };
    });
  }
}
