/**
 * What the two documents providers know of an organization's chunks before they search them:
 * its BM25 collection statistics (chunk count and average length), read by `documents.keyword`
 * on the caller's tenant reader, and from them whether it has any chunk at all.
 *
 * Most organizations in a conversations-only deployment have no document, yet every unified
 * search asked both providers: the keyword provider counted nothing (not kept: small
 * organizations' statistics are read live) and the semantic provider embedded the query and ran
 * a vector search that found nothing. "No chunks" is now kept for a few seconds, and both
 * providers answer it without a statement (the semantic provider without embedding either).
 *
 * How long "no chunks" is kept, NO_CHUNKS_TTL_MS, 5 s: an upload is searchable only once the
 * indexing queue has taken it to READY, which is already seconds (the indexer polls every
 * second when idle, then chunks, embeds and stores); and it is only an organization's first
 * document that can wait on this, since an organization with chunks is never "without". In
 * this process the indexer says when it stored chunks (`chunksStored`), so a one-process
 * deployment finds a document the moment it is READY; another process's upload shows within 5 s.
 *
 * One per database per process (`documentCollectionsOf`): the search subgraph and the
 * knowledge-base subgraph's knowledge queries each build the documents providers, and only the
 * search subgraph runs the indexer, whose news both must hear.
 */
import type { PrismaClient } from "../../../generated/prisma/client.js";
import { BriefCache } from "../../../lib/cache/brief-cache.js";
import type { TenantReader } from "../../../lib/database/tenant-reads.js";

/** Large organizations' statistics are kept this long: counting 100,000 chunk lengths costs more than the rest of a search. */
const STATISTICS_TTL_MS = 10_000;
/** Below this many chunks the statistics cost well under a millisecond: read them live. */
const KEEP_STATISTICS_FROM_CHUNKS = 5_000;
/** How long "this organization has no chunks" is kept (see above). */
export const NO_CHUNKS_TTL_MS = 5_000;

export interface CollectionStatistics {
  chunks: number;
  averageLength: number;
}

export interface DocumentCollectionsOptions {
  /** The clock the TTLs are measured on (tests move it instead of sleeping). */
  clock?: { now(): number };
}

export class DocumentCollections {
  /**
   * One read per organization at a time, on the first caller's tenant reader (pinned to that
   * organization, so its answer is every caller's); a caller whose shared read failed on
   * another's connection (that caller's timeout or abort) reads again on its own.
   */
  private readonly statistics: BriefCache<string, CollectionStatistics>;

  constructor(options: DocumentCollectionsOptions = {}) {
    this.statistics = new BriefCache({
      ttlMs: STATISTICS_TTL_MS,
      keepFor: ({ chunks }) => (chunks === 0 ? NO_CHUNKS_TTL_MS : chunks >= KEEP_STATISTICS_FROM_CHUNKS ? STATISTICS_TTL_MS : 0),
      callerBound: true,
      ...(options.clock ? { clock: options.clock } : {}),
    });
  }

  /** True when the organization is known, for the last few seconds, to have no chunk: searching it needs no statement. */
  knownEmpty(organizationId: string): boolean {
    return this.statistics.peek(organizationId)?.chunks === 0;
  }

  /** The organization's statistics, kept or read on `db` (the caller's tenant reader; one statement). */
  read(db: TenantReader, organizationId: string): Promise<CollectionStatistics> {
    return this.statistics.get(organizationId, async () => {
      const [row] = await db.$queryRaw<{ chunks: number; average_length: number }[]>`
        SELECT count(*)::float8 AS chunks, greatest(coalesce(avg(keyword_length), 1), 1)::float8 AS average_length
        FROM document_chunks WHERE organization_id = ${organizationId}`;
      return { chunks: Number(row?.chunks ?? 0), averageLength: Number(row?.average_length ?? 1) };
    });
  }

  /** The indexer of this process stored chunks for the organization: what was kept of it (and any read in flight) is stale. */
  chunksStored(organizationId: string): void {
    this.statistics.invalidate(organizationId);
  }
}

const byDatabase = new WeakMap<PrismaClient, DocumentCollections>();

/** The process's DocumentCollections for the database `prisma` opens. */
export function documentCollectionsOf(prisma: PrismaClient): DocumentCollections {
  let collections = byDatabase.get(prisma);
  if (!collections) {
    collections = new DocumentCollections();
    byDatabase.set(prisma, collections);
  }
  return collections;
}
