/**
 * Resolvers of the conversations subgraph: argument validation and mapping between the schema
 * (schema.graphql beside this file) and the store. Data access and tenancy live in the store.
 */
import type { GraphQLResolverMap } from "@apollo/subgraph/dist/schema-helper/index.js";
import { badUserInput } from "../../lib/graphql/errors.js";
import { writeOnceFor } from "../../lib/graphql/idempotency-key.js";
import { DateTime } from "../../lib/graphql/date-time.js";
import { resolveEntityReferences } from "../../lib/graphql/entity-references.js";
import { decodeCursor, encodeCursor, requireUuid, toConnection, validatePageSize } from "../../lib/graphql/pagination.js";
import type { RequestContext } from "../../lib/graphql/subgraph-server.js";
import { countTokensOfEach } from "../../lib/text/token-count.js";
import type { Conversation, ConversationPageCursor, ConversationStore, Message, NewMessage, Person } from "./conversation-store.js";
import type { ConversationLoaders } from "./loaders.js";
import type { MessageRole } from "../../generated/prisma/enums.js";

export interface ConversationsContext extends RequestContext {
  store: ConversationStore;
  /** Created on first use, after the tenant is known. */
  loaders(): ConversationLoaders;
}

export const LIMITS = {
  titleLength: 500,
  messageLength: 100_000,
  messagesPerCall: 100,
} as const;

interface MessageInput {
  role: MessageRole;
  content: string;
  tokenCount?: number | null;
}


/** What a person is called on screen: their recorded name, else their email's local part, else their id. */
export function displayName(id: string, person: Person | null): string {
  const name = person?.name?.trim();
  if (name) return name;
  const local = person?.email?.split("@")[0]?.trim();
  return local || id;
}

const conversationCursor = (row: Conversation) => encodeCursor("c", [row.createdAt.toISOString(), row.id]);
const messageCursor = (row: Message) => encodeCursor("m", [row.position]);

function decodeConversationCursor(after: string): ConversationPageCursor {
  return decodeCursor(after, "c", "after", ([createdAt, id]) => {
    const date = typeof createdAt === "string" ? new Date(createdAt) : null;
    return date && !Number.isNaN(date.getTime()) && typeof id === "string" && /^[0-9a-f-]{36}$/i.test(id) ? { createdAt: date, id } : null;
  });
}

function decodeMessageCursor(after: string): number {
  return decodeCursor(after, "m", "after", ([position]) => (Number.isInteger(position) && (position as number) >= 0 ? (position as number) : null));
}

function validateTitle(title: string, field: string): string {
  const trimmed = title.trim();
  if (trimmed.length === 0) throw badUserInput(field, "must not be empty or only whitespace");
  if (trimmed.length > LIMITS.titleLength) {
    throw badUserInput(field, `must be at most ${LIMITS.titleLength} characters, got ${trimmed.length}`);
  }
  requireStorableText(trimmed, field);
  return trimmed;
}

/**
 * Checks every message without counting anything: bad input fails fast and cheap, and counting
 * (the expensive part) waits until the caller is known to be allowed to write.
 */
function validateMessages(messages: readonly MessageInput[], field: string, allowEmpty: boolean): readonly MessageInput[] {
  if (!allowEmpty && messages.length === 0) throw badUserInput(field, "must contain at least one message");
  if (messages.length > LIMITS.messagesPerCall) {
    throw badUserInput(field, `must contain at most ${LIMITS.messagesPerCall} messages per call, got ${messages.length}`);
  }
  messages.forEach((message, index) => {
    if (message.content.trim().length === 0) throw badUserInput(`${field}[${index}].content`, "must not be empty");
    if (message.content.length > LIMITS.messageLength) {
      throw badUserInput(`${field}[${index}].content`, `must be at most ${LIMITS.messageLength} characters, got ${message.content.length}`);
    }
    requireStorableText(message.content, `${field}[${index}].content`);
    if (message.tokenCount != null && (message.tokenCount < 0 || message.tokenCount > 10_000_000)) {
      throw badUserInput(`${field}[${index}].tokenCount`, `must be between 0 and 10000000, got ${message.tokenCount}`);
    }
  });
  return messages;
}

/** Counts the tokens of the messages that came without a count: one worker task for all of them. */
async function withTokenCounts(messages: readonly MessageInput[]): Promise<NewMessage[]> {
  const uncounted = messages.filter((message) => message.tokenCount == null).map((message) => message.content);
  const counts = uncounted.length > 0 ? await countTokensOfEach(uncounted) : [];
  let next = 0;
  return messages.map((message) => ({
    role: message.role,
    content: message.content,
    tokenCount: message.tokenCount ?? counts[next++]!,
  }));
}

// PostgreSQL text cannot hold U+0000 (the driver fails the whole statement), and an unpaired
// surrogate is not Unicode at all: the drivers would silently store U+FFFD in its place.
const NUL = "\u0000";
const UNPAIRED_SURROGATE = /\p{Surrogate}/u;

function requireStorableText(text: string, field: string): void {
  const nul = text.indexOf(NUL);
  if (nul >= 0) throw badUserInput(field, `must not contain NUL characters (U+0000), found one at index ${nul}: remove or replace it`);
  const surrogate = UNPAIRED_SURROGATE.exec(text);
  if (surrogate) {
    const code = surrogate[0].charCodeAt(0).toString(16).toUpperCase();
    throw badUserInput(field, `must be valid Unicode: unpaired surrogate U+${code} at index ${surrogate.index}`);
  }
}

/**
 * `__resolveReference` of an entity keyed by a token's string id (User, Team): any string id is
 * one, and one the organization has no record of shows its id as its name (schema). A reference
 * without a string id is BAD_USER_INPUT on that reference alone.
 */
function referenceByStringId(noun: string) {
  return (reference: { id?: unknown }, context: ConversationsContext) => {
    if (typeof reference.id !== "string") throw badUserInput("id", `must be a ${noun} id string, got ${reference.id === undefined ? "no id" : typeof reference.id}`);
    context.requireTenant();
    return { id: reference.id };
  };
}

export const resolvers: GraphQLResolverMap<ConversationsContext> = {
  DateTime,
  MessageRole: { USER: "user", ASSISTANT: "assistant", SYSTEM: "system", TOOL: "tool" },

  Query: {
    _entities: resolveEntityReferences,
    viewerTeams(_source: unknown, _args: unknown, context: ConversationsContext) {
      return [...new Set(context.requireTenant().teamIds)].map((id) => ({ id }));
    },
    conversation(_source, args: { id: string }, context) {
      context.requireTenant();
      return context.loaders().conversationById.load(requireUuid(args.id, "id"));
    },
    async conversations(_source, args: { first?: number | null; after?: string | null }, context) {
      const tenant = context.requireTenant();
      const first = validatePageSize(args.first, "first", 20);
      const after = args.after ? decodeConversationCursor(args.after) : null;
      const rows = await context.store.listPage(tenant, first + 1, after);
      // Later references to these conversations in the same request (e.g. `_entities`) hit the cache.
      const loader = context.loaders().conversationById;
      for (const row of rows.slice(0, first)) loader.prime(row.id, row);
      return { ...toConnection(rows, first, after !== null, conversationCursor), tenant };
    },
  },

  ConversationConnection: {
    totalCount(connection: { tenant: ReturnType<RequestContext["requireTenant"]> }, _args, context) {
      return context.store.count(connection.tenant);
    },
  },

  Mutation: {
    async createConversation(_source, args: { input: { title: string; messages?: MessageInput[] | null } }, context, info) {
      const tenant = context.requireTenant();
      const once = writeOnceFor(context.writes, tenant, info, args);
      const title = validateTitle(args.input.title, "input.title");
      const valid = validateMessages(args.input.messages ?? [], "input.messages", true);
      // A retry of a write that committed is answered before its tokens are counted again.
      const earlier = valid.length > 0 ? await context.store.answeredBefore(tenant, once, "create") : null;
      return earlier ?? context.store.create(tenant, title, await withTokenCounts(valid), once);
    },
    async renameConversation(_source, args: { id: string; title: string }, context) {
      const tenant = context.requireTenant();
      const id = requireUuid(args.id, "id");
      return context.store.rename(tenant, id, validateTitle(args.title, "title"));
    },
    async appendMessages(_source, args: { conversationId: string; messages: MessageInput[] }, context, info) {
      const tenant = context.requireTenant();
      const once = writeOnceFor(context.writes, tenant, info, args);
      const id = requireUuid(args.conversationId, "conversationId");
      const valid = validateMessages(args.messages, "messages", false);
      // One indexed read before any counting: a stranger's or a colleague's request costs no more.
      // (The append's own locked read checks again, in case the conversation changed meanwhile.)
      await context.store.requireOwned(tenant, id);
      // A retry of a write that committed is answered before its tokens are counted again.
      return (await context.store.answeredBefore(tenant, once, "append")) ?? context.store.append(tenant, id, await withTokenCounts(valid), once);
    },
    async deleteConversation(_source, args: { id: string }, context) {
      const tenant = context.requireTenant();
      const id = requireUuid(args.id, "id");
      return { id, deletedAt: await context.store.softDelete(tenant, id) };
    },
  },

  User: {
    __resolveReference: referenceByStringId("user"),
    async name(user: { id: string }, _args: unknown, context: ConversationsContext) {
      const person = await context.loaders().personById.load(user.id);
      return displayName(user.id, person);
    },
  },

  Team: {
    __resolveReference: referenceByStringId("team"),
    async name(team: { id: string }, _args: unknown, context: ConversationsContext) {
      return (await context.loaders().teamNameById.load(team.id)) ?? team.id;
    },
  },

  Conversation: {
    /**
     * A reference without a string id is malformed: BAD_USER_INPUT on that reference alone (see
     * lib/graphql/entity-references.ts). A string that is not a UUID names a conversation that
     * cannot exist, so it is null, like a deleted one or another organization's: references are
     * ids another subgraph handed out, and the answer must not tell these cases apart.
     */
    __resolveReference(reference: { id?: unknown }, context: ConversationsContext) {
      if (typeof reference.id !== "string") throw badUserInput("id", `must be a UUID string, got ${reference.id === undefined ? "no id" : typeof reference.id}`);
      context.requireTenant();
      return context.loaders().conversationById.load(reference.id);
    },
    ownerId: (conversation: Conversation) => conversation.userId,
    owner: (conversation: Conversation) => ({ id: conversation.userId }),
    async messages(conversation: Conversation, args: { first?: number | null; after?: string | null }, context) {
      context.requireTenant();
      const first = validatePageSize(args.first, "first", 50);
      const afterPosition = args.after ? decodeMessageCursor(args.after) : -1;
      const rows = await context.loaders().messagePage.load({ conversationId: conversation.id, take: first + 1, afterPosition });
      return toConnection(rows, first, afterPosition >= 0, messageCursor);
    },
  },
};
