/**
 * Per-request DataLoaders. They are created for each request with that request's tenant baked
 * in, so their caches can never serve one organization's rows to another, and they die with
 * the request.
 */
import DataLoader from "dataloader";
import { isUuid } from "../../lib/graphql/pagination.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import type { Conversation, ConversationStore, Message, MessagePageRequest, Person } from "./conversation-store.js";

export interface ConversationLoaders {
  /** Conversation by id: all ids asked for in one tick (e.g. 50 `_entities` references) become one SQL query. */
  conversationById: DataLoader<string, Conversation | null>;
  /** A page of a conversation's messages: the pages asked for in one tick become one SQL query. */
  messagePage: DataLoader<MessagePageRequest, Message[], string>;
  /** A person by id (the owners of a page of hits or documents): one SQL query per tick; null when none is recorded. */
  personById: DataLoader<string, Person | null>;
  /** A team's name by id (documents' sharing, the caller's teams): one SQL query per tick; null when none is recorded. */
  teamNameById: DataLoader<string, string | null>;
}

/** A user id is a token's `sub`, a team id one of its `teams`: bounded so a forged reference cannot make a large statement. */
const MAX_TOKEN_ID_LENGTH = 200;

const isTokenId = (id: unknown): id is string => typeof id === "string" && id.length > 0 && id.length <= MAX_TOKEN_ID_LENGTH;

export function createConversationLoaders(store: ConversationStore, tenant: TenantContext): ConversationLoaders {
  return {
    conversationById: new DataLoader<string, Conversation | null>(
      async (ids) => {
        // An id that is not a UUID (or not even a string, whatever the types say) cannot exist:
        // it gets null, and neither PostgreSQL nor the other ids of the batch ever see it.
        const valid = ids.filter(isUuid).map((id) => id.toLowerCase());
        const rows = valid.length > 0 ? await store.findByIds(tenant, valid) : [];
        const byId = new Map(rows.map((row) => [row.id, row]));
        return ids.map((id) => (isUuid(id) ? (byId.get(id.toLowerCase()) ?? null) : null));
      },
      { maxBatchSize: 1000 },
    ),
    messagePage: new DataLoader<MessagePageRequest, Message[], string>((requests) => store.messagePages(tenant, requests), {
      cacheKeyFn: (request) => `${request.conversationId}:${request.take}:${request.afterPosition}`,
      maxBatchSize: 500,
    }),
    personById: new DataLoader<string, Person | null>(
      async (ids) => {
        const valid = ids.filter(isTokenId);
        const rows = valid.length > 0 ? await store.findUsersByIds(tenant, valid) : [];
        const byId = new Map(rows.map((row) => [row.id, row]));
        return ids.map((id) => byId.get(id) ?? null);
      },
      { maxBatchSize: 1000 },
    ),
    teamNameById: new DataLoader<string, string | null>(
      async (ids) => {
        const valid = ids.filter(isTokenId);
        const rows = valid.length > 0 ? await store.findTeamsByIds(tenant, valid) : [];
        const byId = new Map(rows.map((row) => [row.id, row.name]));
        return ids.map((id) => byId.get(id) ?? null);
      },
      { maxBatchSize: 1000 },
    ),
  };
}
