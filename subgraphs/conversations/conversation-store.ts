/**
 * All reads and writes of conversations and messages. Every method takes the caller's tenant
 * and puts its organization into the SQL itself: there is no query in this file that can
 * return or change another organization's row. Soft-deleted conversations are invisible to
 * every read.
 */
import { Prisma, type PrismaClient } from "../../generated/prisma/client.js";
import type { Conversation, Message } from "../../generated/prisma/client.js";
import type { MessageRole } from "../../generated/prisma/enums.js";
import { createdEntity, earlierAnswer, writeOnce, type ReceiptFormat, type WriteOnce } from "../../lib/database/idempotency.js";
import { withTenantLoads } from "../../lib/database/replica-reads.js";
import { withTenantScope, type TenantTransaction } from "../../lib/database/tenant-scope.js";
import { forbidden, notFound } from "../../lib/graphql/errors.js";
import type { TenantContext } from "../../lib/tenancy/token.js";

export type { Conversation, Message };

/** A person of an organization as the users table records them (the `sub` of their token is the id). */
export interface Person {
  id: string;
  name: string | null;
  email: string | null;
}

export interface NewMessage {
  role: MessageRole;
  content: string;
  tokenCount: number;
}

export interface ConversationPageCursor {
  createdAt: Date;
  id: string;
}

/** One page of one conversation's messages, as asked for by a `messages(first, after)` field. */
export interface MessagePageRequest {
  conversationId: string;
  /** Rows to fetch (the page size plus one, to learn whether another page follows). */
  take: number;
  /** Return messages with a position greater than this (-1 for the first page). */
  afterPosition: number;
}

export class ConversationStore {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Every statement of this store runs in the caller's tenant scope (lib/database/tenant-scope.ts):
   * the filters below name the organization, and the database's row-level security would hide
   * any other organization's rows even from a statement that forgot to.
   */
  private scoped<T>(tenant: TenantContext, work: (db: TenantTransaction) => Promise<T>): Promise<T> {
    return withTenantScope(this.prisma, tenant.organizationId, work);
  }

  /**
   * The DataLoaders' entity loads (loaders.ts): the same scope, on the replica when the request
   * may read there (lib/database/replica-reads.ts: read-your-writes decides).
   */
  private loaded<T>(tenant: TenantContext, work: (db: TenantTransaction) => Promise<T>): Promise<T> {
    return withTenantLoads(this.prisma, tenant.organizationId, work);
  }

  /** Live conversations among `ids` in the tenant's organization: one SQL statement however many ids. */
  findByIds(tenant: TenantContext, ids: readonly string[]): Promise<Conversation[]> {
    return this.loaded(tenant, (db) =>
      db.conversation.findMany({
        where: { id: { in: [...ids] }, organizationId: tenant.organizationId, deletedAt: null },
      }),
    );
  }

  /**
   * The people of the tenant's organization among `ids` (conversation owners, document owners):
   * one SQL statement however many ids. Ids of no recorded person are simply absent.
   */
  findUsersByIds(tenant: TenantContext, ids: readonly string[]): Promise<Person[]> {
    return this.loaded(tenant, (db) =>
      db.user.findMany({
        where: { id: { in: [...ids] }, organizationId: tenant.organizationId },
        select: { id: true, name: true, email: true },
      }),
    );
  }

  /** The teams of the tenant's organization among `ids`, with their names: one SQL statement. */
  findTeamsByIds(tenant: TenantContext, ids: readonly string[]): Promise<{ id: string; name: string }[]> {
    return this.loaded(tenant, (db) =>
      db.team.findMany({
        where: { id: { in: [...ids] }, organizationId: tenant.organizationId },
        select: { id: true, name: true },
      }),
    );
  }

  /** Newest first by creation time, with the id breaking ties so pages never overlap or skip. */
  listPage(tenant: TenantContext, take: number, after: ConversationPageCursor | null): Promise<Conversation[]> {
    return this.scoped(tenant, (db) =>
      db.conversation.findMany({
        where: {
          organizationId: tenant.organizationId,
          deletedAt: null,
          ...(after ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] } : {}),
        },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take,
      }),
    );
  }

  count(tenant: TenantContext): Promise<number> {
    return this.scoped(tenant, (db) => db.conversation.count({ where: { organizationId: tenant.organizationId, deletedAt: null } }));
  }

  /**
   * Pages of messages for many conversations in one statement per distinct (take, after)
   * pair — in practice one, since a query asks every conversation for the same page. A window
   * function cuts each conversation's page, so 20 conversations cost one round trip, not 20.
   */
  async messagePages(tenant: TenantContext, requests: readonly MessagePageRequest[]): Promise<Message[][]> {
    const groups = new Map<string, { take: number; afterPosition: number; ids: Set<string> }>();
    for (const request of requests) {
      const key = `${request.take}:${request.afterPosition}`;
      const group = groups.get(key) ?? { take: request.take, afterPosition: request.afterPosition, ids: new Set<string>() };
      group.ids.add(request.conversationId);
      groups.set(key, group);
    }
    const pages = new Map<string, Message[]>();
    for (const [key, group] of groups) {
      const rows = await this.loaded(tenant, (db) => db.$queryRaw<RawMessage[]>`
        SELECT id, conversation_id, organization_id, position, role::text AS role, content, token_count, created_at
        FROM (
          SELECT m.*, row_number() OVER (PARTITION BY m.conversation_id ORDER BY m.position) AS rank
          FROM messages m
          WHERE m.organization_id = ${tenant.organizationId}
            AND m.conversation_id = ANY(${[...group.ids]}::uuid[])
            AND m.position > ${group.afterPosition}
        ) ranked
        WHERE rank <= ${group.take}
        ORDER BY conversation_id, position`);
      for (const row of rows) {
        const pageKey = `${key}:${row.conversation_id}`;
        const page = pages.get(pageKey) ?? [];
        page.push(fromRawMessage(row));
        pages.set(pageKey, page);
      }
    }
    return requests.map((request) => pages.get(`${request.take}:${request.afterPosition}:${request.conversationId}`) ?? []);
  }

  /** `once`: the write's Idempotency-Key and liveness (lib/database/idempotency.ts); without it, a plain write. */
  async create(tenant: TenantContext, title: string, messages: NewMessage[], once?: WriteOnce): Promise<Conversation> {
    return this.scoped(tenant, (tx) =>
      writeOnce(tx, tenant.organizationId, once, async () => {
        await ensureMember(tx, tenant);
        const conversation = await tx.conversation.create({
          data: { organizationId: tenant.organizationId, userId: tenant.userId, title },
        });
        if (messages.length === 0) return conversation;
        await tx.message.createMany({ data: messages.map((message, position) => messageRow(tenant, conversation.id, message, position)) });
        return tx.conversation.findUniqueOrThrow({ where: { organizationId_id: { organizationId: tenant.organizationId, id: conversation.id } } });
      }, createdConversation),
    );
  }

  /** The first answer of a keyed createConversation or appendMessages that committed, or null (earlierAnswer). */
  answeredBefore(tenant: TenantContext, once: WriteOnce, operation: "create"): Promise<Conversation | null>;
  answeredBefore(tenant: TenantContext, once: WriteOnce, operation: "append"): Promise<AppendedMessages | null>;
  async answeredBefore(tenant: TenantContext, once: WriteOnce, operation: "create" | "append"): Promise<Conversation | AppendedMessages | null> {
    if (!once.claim) return null;
    const receipts: ReceiptFormat<Conversation | AppendedMessages> = (operation === "create" ? createdConversation : appendedMessages) as ReceiptFormat<Conversation | AppendedMessages>;
    return this.scoped(tenant, (tx) => earlierAnswer(tx, tenant.organizationId, once, receipts));
  }

  async rename(tenant: TenantContext, id: string, title: string): Promise<Conversation> {
    return this.scoped(tenant, async (tx) => {
      await lockOwnedConversation(tx, tenant, id);
      return tx.conversation.update({ where: { organizationId_id: { organizationId: tenant.organizationId, id } }, data: { title } });
    });
  }

  /**
   * The ownership check of a change, as one indexed read without a lock: for work that should
   * only be done for the owner (counting tokens) before the change's own locked transaction,
   * which checks again. NOT_FOUND and FORBIDDEN exactly as in the locked check.
   */
  async requireOwned(tenant: TenantContext, id: string): Promise<void> {
    const row = await this.scoped(tenant, (db) =>
      db.conversation.findFirst({
        where: { id, organizationId: tenant.organizationId, deletedAt: null },
        select: { userId: true },
      }),
    );
    if (!row) throw notFound("Conversation", id);
    if (row.userId !== tenant.userId) throw forbidden(`Only the owner of conversation ${id} can change it.`);
  }

  async append(tenant: TenantContext, id: string, messages: NewMessage[], once?: WriteOnce): Promise<AppendedMessages> {
    return this.scoped(tenant, (tx) =>
      writeOnce(tx, tenant.organizationId, once, async () => {
        // The row lock serializes concurrent appends to one conversation, so positions never collide.
        const locked = await lockOwnedConversation(tx, tenant, id);
        const created = await tx.message.createManyAndReturn({
          data: messages.map((message, index) => messageRow(tenant, id, message, locked.message_count + index)),
        });
        const conversation = await tx.conversation.findUniqueOrThrow({ where: { organizationId_id: { organizationId: tenant.organizationId, id } } });
        return { conversation, messages: created.sort((a, b) => a.position - b.position) };
      }, appendedMessages),
    );
  }

  async softDelete(tenant: TenantContext, id: string): Promise<Date> {
    return this.scoped(tenant, async (tx) => {
      await lockOwnedConversation(tx, tenant, id);
      const deleted = await tx.conversation.update({ where: { organizationId_id: { organizationId: tenant.organizationId, id } }, data: { deletedAt: new Date() } });
      return deleted.deletedAt!;
    });
  }
}

type Transaction = Prisma.TransactionClient;

export interface AppendedMessages {
  conversation: Conversation;
  messages: Message[];
}

// Receipts of keyed writes: the created ids. A retry reads the conversation as it is now and the
// very messages the first call appended (not whatever was appended since).
const createdConversation = createdEntity<Conversation>("Conversation", (conversation) => conversation.id, (tx, organizationId, id) => tx.conversation.findUnique({ where: { organizationId_id: { organizationId, id } } }));

const appendedMessages: ReceiptFormat<AppendedMessages> = {
  of: ({ conversation, messages }) => ({ conversationId: conversation.id, messageIds: messages.map((message) => message.id) }),
  async replay(tx, receipt, organizationId) {
    const ids = Array.isArray(receipt.messageIds) ? receipt.messageIds : [];
    const conversation = await tx.conversation.findUniqueOrThrow({ where: { organizationId_id: { organizationId, id: String(receipt.conversationId) } } });
    return { conversation, messages: await tx.message.findMany({ where: { organizationId, id: { in: ids } }, orderBy: { position: "asc" } }) };
  },
};

interface LockedConversation {
  id: string;
  organization_id: string;
  user_id: string;
  message_count: number;
}

/**
 * Locks a live conversation of the caller's organization for the rest of the transaction and
 * checks that the caller owns it. Another organization's conversation is NOT_FOUND, exactly
 * like one that does not exist; a colleague's is FORBIDDEN (they can already read it).
 */
async function lockOwnedConversation(tx: Transaction, tenant: TenantContext, id: string): Promise<LockedConversation> {
  const [row] = await tx.$queryRaw<LockedConversation[]>`
    SELECT id::text, organization_id, user_id, message_count
    FROM conversations
    WHERE id = ${id}::uuid AND organization_id = ${tenant.organizationId} AND deleted_at IS NULL
    FOR UPDATE`;
  if (!row) throw notFound("Conversation", id);
  if (row.user_id !== tenant.userId) throw forbidden(`Only the owner of conversation ${id} can change it.`);
  return row;
}

/**
 * Organizations and users come from the identity provider's tokens; the first write of a new
 * organization or user creates its row (just-in-time provisioning), so there is no separate
 * sign-up step that could drift from the identity provider.
 */
async function ensureMember(tx: Transaction, tenant: TenantContext): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO organizations (id) VALUES (${tenant.organizationId}) ON CONFLICT (id) DO NOTHING`;
  await tx.$executeRaw`
    INSERT INTO users (organization_id, id, name, email)
    VALUES (${tenant.organizationId}, ${tenant.userId}, ${tenant.userName}, ${tenant.userEmail})
    ON CONFLICT (organization_id, id) DO NOTHING`;
}

function messageRow(tenant: TenantContext, conversationId: string, message: NewMessage, position: number) {
  return {
    conversationId,
    organizationId: tenant.organizationId,
    position,
    role: message.role,
    content: message.content,
    tokenCount: message.tokenCount,
  };
}

interface RawMessage {
  id: string;
  conversation_id: string;
  organization_id: string;
  position: number;
  role: MessageRole;
  content: string;
  token_count: number;
  created_at: Date;
}

function fromRawMessage(row: RawMessage): Message {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    organizationId: row.organization_id,
    position: row.position,
    role: row.role,
    content: row.content,
    tokenCount: row.token_count,
    createdAt: row.created_at,
  };
}
