/**
 * Passages the unified search retrieved from remote knowledge bases (knowledge_base_passages):
 * what lets a Bedrock or S3 Vectors hit be a `KnowledgeBasePassage` entity that the gateway
 * loads from this subgraph like a conversation or a document chunk.
 *
 * A passage belongs to the organization whose search retrieved it. Reading it back also needs
 * its knowledge base to be one the caller may still query (a teammate who left the team, or a
 * knowledge base deleted since, sees nothing): the read joins knowledge_bases under the same
 * visibility rule as every listing. Remote text is not trusted: it is cut to 8,000 characters,
 * and NUL bytes and unpaired surrogates (which PostgreSQL refuses) become U+FFFD.
 */
import { createHash } from "node:crypto";
import { Prisma, type PrismaClient } from "../../generated/prisma/client.js";
import { noteWriteOutsideMutation } from "../../lib/database/read-session.js";
import { withTenantLoads } from "../../lib/database/replica-reads.js";
import { withTenantScope } from "../../lib/database/tenant-scope.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { PLATFORM_ORGANIZATION_ID } from "./knowledge-base-store.js";

export const MAX_PASSAGE_CHARACTERS = 8_000;
export const MAX_URI_CHARACTERS = 2_048;
/** A day after its last retrieval; a cached search page lives at most SEARCH_CACHE_TTL_SECONDS (<= a day). */
export const PASSAGE_RETENTION_HOURS = 24;
const PASSAGE_ID = /^[0-9a-f]{32}$/;

export interface RetrievedPassageRow {
  knowledgeBaseId: string;
  text: string;
  uri: string | null;
  page: number | null;
}

export interface StoredPassage {
  id: string;
  knowledgeBaseId: string;
  text: string;
  uri: string | null;
  page: number | null;
  retrievedAt: Date;
}

const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Text as PostgreSQL can store it, cut at a code point boundary. */
export function storablePassageText(text: string, max: number): string {
  const clean = text.replace(UNSTORABLE, "\ufffd");
  if (clean.length <= max) return clean;
  const cut = clean.slice(0, max);
  // Do not leave half of a surrogate pair at the end.
  return /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/** The passage's id: the same passage of the same knowledge base, retrieved by the same organization, is one row. */
export function passageIdFor(organizationId: string, row: RetrievedPassageRow): string {
  return createHash("sha256").update(`${organizationId}\u0000${row.knowledgeBaseId}\u0000${row.uri ?? ""}\u0000${row.text}`).digest("hex").slice(0, 32);
}

/**
 * Whether the knowledge base `b` (knowledge_bases) is one the caller may query: the rule every
 * read of passages joins under (findByIds, and search highlights).
 */
export function knowledgeBaseVisibleSql(tenant: TenantContext): Prisma.Sql {
  return Prisma.sql`(
    (b.organization_id = ${PLATFORM_ORGANIZATION_ID} AND b.scope = 'PLATFORM')
    OR (b.organization_id = ${tenant.organizationId} AND b.scope = 'COMPANY')
    OR (b.organization_id = ${tenant.organizationId} AND b.scope = 'TEAM' AND b.team_id = ANY(${[...tenant.teamIds]}::text[]))
  )`;
}

export function isPassageId(id: unknown): id is string {
  return typeof id === "string" && PASSAGE_ID.test(id);
}

export class PassageStore {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Stores (or refreshes) passages just retrieved for `tenant`, and returns their ids in order.
   * One statement however many passages; it also drops the organization's passages not
   * retrieved for a day, which the (organization, retrieved_at) index makes a short range scan.
   */
  async upsert(tenant: TenantContext, rows: readonly RetrievedPassageRow[]): Promise<string[]> {
    const clean = rows.map((row) => ({
      knowledgeBaseId: row.knowledgeBaseId,
      text: storablePassageText(row.text, MAX_PASSAGE_CHARACTERS),
      uri: row.uri === null ? null : storablePassageText(row.uri, MAX_URI_CHARACTERS),
      page: row.page !== null && Number.isInteger(row.page) && row.page >= 0 && row.page < 1_000_000 ? row.page : null,
    }));
    const ids = clean.map((row) => passageIdFor(tenant.organizationId, row));
    if (clean.length === 0) return ids;
    // The same passage twice in one batch would make ON CONFLICT touch a row twice (an error): keep the first.
    const first = new Map<string, (typeof clean)[number]>();
    clean.forEach((row, index) => first.has(ids[index]!) || first.set(ids[index]!, row));
    const unique = [...first];
    // The gateway loads these passages as entities right after this search answers (read-your-writes).
    noteWriteOutsideMutation();
    await withTenantScope(this.prisma, tenant.organizationId, (tx) => tx.$executeRaw`
      WITH pruned AS (
        DELETE FROM knowledge_base_passages
        WHERE organization_id = ${tenant.organizationId}
          AND retrieved_at < now() - make_interval(hours => ${PASSAGE_RETENTION_HOURS})
          AND id <> ALL(${unique.map(([id]) => id)}::text[])
      )
      INSERT INTO knowledge_base_passages (id, organization_id, knowledge_base_id, text, uri, page)
      SELECT p.id, ${tenant.organizationId}, p.knowledge_base_id, p.text, p.uri, p.page
      FROM unnest(
        ${unique.map(([id]) => id)}::text[],
        ${unique.map(([, row]) => row.knowledgeBaseId)}::uuid[],
        ${unique.map(([, row]) => row.text)}::text[],
        ${unique.map(([, row]) => row.uri)}::text[],
        ${unique.map(([, row]) => row.page)}::int[]
      ) AS p(id, knowledge_base_id, text, uri, page)
      ON CONFLICT (organization_id, id) DO UPDATE SET retrieved_at = now()`);
    return ids;
  }

  /**
   * Passages among `ids` the caller may see now: one statement (for DataLoader and the cached-page
   * check). On the replica when the request may read there (lib/database/replica-reads.ts).
   */
  async findByIds(tenant: TenantContext, ids: readonly string[], options: { statementTimeoutMs?: number } = {}): Promise<StoredPassage[]> {
    const candidates = [...new Set(ids.filter(isPassageId))];
    if (candidates.length === 0) return [];
    const rows = await withTenantLoads(
      this.prisma,
      tenant.organizationId,
      (tx) => tx.$queryRaw<{ id: string; knowledge_base_id: string; text: string; uri: string | null; page: number | null; retrieved_at: Date }[]>`
        SELECT p.id, p.knowledge_base_id::text AS knowledge_base_id, p.text, p.uri, p.page, p.retrieved_at
        FROM knowledge_base_passages p
        JOIN knowledge_bases b ON b.id = p.knowledge_base_id
        WHERE p.id = ANY(${candidates}::text[])
          AND p.organization_id = ${tenant.organizationId}
          AND ${knowledgeBaseVisibleSql(tenant)}`,
      options.statementTimeoutMs ? { statementTimeoutMs: options.statementTimeoutMs } : {},
    );
    return rows.map((row) => ({ id: row.id, knowledgeBaseId: row.knowledge_base_id, text: row.text, uri: row.uri, page: row.page, retrievedAt: row.retrieved_at }));
  }
}
